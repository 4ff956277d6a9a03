//! Execution policy v2 (`apizr.execution/v2`): the OCI container backend.
//!
//! Same strictness as v1 (every field optional, unknown fields rejected, strict integers and
//! booleans), with the v2 shape: `backend` is `oci-container`, `filesystem` is the plain string
//! `"container"`, `resources` always appears in the canonical bytes (with defaults), and there
//! is no `working_directory`. `limits`, `environment` and `effects` are validated by the v1
//! parser itself (on a sub-document holding just those keys), so both schemas report the same
//! errors for them and cannot drift.
//!
//! Two things parse but are refused later (`policy_refused`, see [`PolicyV2::refusal`]), as in
//! the reference: `network.mode: inherit` and `environment.inherit: true`, and with the strict
//! subprocess profile any allow-listed name that could steer the dynamic loader or Python.
//! Note the observed quirk kept here: the top-level default is `{"mode":"deny"}`, but a
//! `network` object without `mode` means `inherit` (the v1 section default) and is refused.

use serde::Serialize;
use serde_json::{Map, Value as Json};

use crate::digest::Digest;
use crate::policy::{
    EffectsPolicy, EnvironmentPolicy, Limits, Mode, ModePolicy, NetworkMode, PolicyError, PolicyV1,
    SubprocessMode,
};

pub const POLICY_V2_SCHEMA: &str = "apizr.execution/v2";
pub const OCI_BACKEND: &str = "oci-container";

/// The v2 policy. Field names are wire literals; the canonical encoder sorts keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyV2 {
    pub backend: &'static str,
    pub effects: EffectsPolicy,
    pub environment: EnvironmentPolicy,
    /// Always `"container"`.
    pub filesystem: &'static str,
    pub limits: Limits,
    pub network: ModePolicy<NetworkMode>,
    pub resources: ResourcesV2,
    pub schema_version: &'static str,
    pub subprocess: ModePolicy<SubprocessMode>,
}

/// Container resources; every field has a default and bounds (the reference's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ResourcesV2 {
    /// Thousandths of a CPU: 10 ..= 64,000.
    pub cpu_millis: u64,
    /// Memory and memory+swap: 64 MiB ..= 8 GiB.
    pub memory_bytes: u64,
    /// 8 ..= 1024.
    pub pids: u64,
    /// Size of the `/tmp` tmpfs: 1 MiB ..= 1 GiB and at most `memory_bytes / 2`.
    pub scratch_bytes: u64,
}

impl Default for ResourcesV2 {
    fn default() -> Self {
        ResourcesV2 {
            cpu_millis: 1000,
            memory_bytes: 268_435_456,
            pids: 64,
            scratch_bytes: 16_777_216,
        }
    }
}

/// Why a valid v2 policy cannot be honoured (`policy_refused`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum V2Refusal {
    #[error("network.mode inherit is not supported by the oci-container backend")]
    NetworkInherit,
    #[error("environment.inherit is not supported by the oci-container backend")]
    EnvironmentInherit,
    #[error("subprocess deny forbids allow-listing loader/interpreter variable {0}")]
    UnsafeEnvironmentName(String),
}

/// Prefixes (and one exact name) refused in the allow-list under `subprocess.mode: deny`.
const UNSAFE_ENV_PREFIXES: [&str; 4] = ["LD_", "DYLD_", "PYTHON", "GLIBC_"];
const UNSAFE_ENV_NAME: &str = "GCONV_PATH";

const FIELDS: [&str; 9] = [
    "schema_version",
    "backend",
    "limits",
    "resources",
    "environment",
    "network",
    "filesystem",
    "subprocess",
    "effects",
];

impl Default for PolicyV2 {
    fn default() -> Self {
        let v1 = PolicyV1::default();
        PolicyV2 {
            backend: OCI_BACKEND,
            effects: v1.effects,
            environment: v1.environment,
            filesystem: "container",
            limits: v1.limits,
            network: ModePolicy::new(NetworkMode::Deny),
            resources: ResourcesV2::default(),
            schema_version: POLICY_V2_SCHEMA,
            subprocess: ModePolicy::new(SubprocessMode::Allow),
        }
    }
}

impl PolicyV2 {
    /// Parse a decoded JSON document with the reference's strictness.
    pub fn from_json(doc: &Json) -> Result<Self, PolicyError> {
        let root = doc
            .as_object()
            .ok_or_else(|| err("$", "expected an object"))?;
        if let Some(unknown) = root.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            return Err(err(
                unknown,
                format!("unknown field; expected one of {}", FIELDS.join(", ")),
            ));
        }
        let mut policy = PolicyV2::default();
        if let Some(v) = root.get("schema_version") {
            policy.schema_version = literal(v, "schema_version", POLICY_V2_SCHEMA)?;
        }
        if let Some(v) = root.get("backend") {
            policy.backend = literal(v, "backend", OCI_BACKEND)?;
        }
        if let Some(v) = root.get("filesystem") {
            policy.filesystem = literal(v, "filesystem", "container")?;
        }
        // limits, environment, effects: exactly the v1 rules.
        let mut shared = Map::new();
        for key in ["limits", "environment", "effects"] {
            if let Some(v) = root.get(key) {
                shared.insert(key.to_string(), v.clone());
            }
        }
        let v1 = PolicyV1::from_json(&Json::Object(shared))?;
        policy.limits = v1.limits;
        policy.environment = v1.environment;
        policy.effects = v1.effects;
        if let Some(v) = root.get("network") {
            // A present section without `mode` takes the v1 section default (`inherit`).
            policy.network.mode = mode(v, "network", NetworkMode::Inherit)?;
        }
        if let Some(v) = root.get("subprocess") {
            policy.subprocess.mode = mode(v, "subprocess", SubprocessMode::Allow)?;
        }
        if let Some(v) = root.get("resources") {
            policy.resources = resources(v)?;
        }
        Ok(policy)
    }

    /// Canonical bytes (document + `\n`).
    pub fn canonical_bytes(&self) -> Result<Vec<u8>, crate::json::CanonicalError> {
        crate::json::canonical_bytes(self)
    }

    /// `policy_digest`.
    pub fn digest(&self) -> Result<Digest, crate::json::CanonicalError> {
        Ok(Digest::sha256(&self.canonical_bytes()?))
    }

    /// Whether the strict subprocess-deny profile applies (seccomp in the container, no
    /// loader variables).
    pub fn subprocess_deny(&self) -> bool {
        self.subprocess.mode == SubprocessMode::Deny
    }

    /// The first reason this policy is refused, in the reference's order.
    pub fn refusal(&self) -> Option<V2Refusal> {
        if self.network.mode != NetworkMode::Deny {
            return Some(V2Refusal::NetworkInherit);
        }
        if self.environment.inherit {
            return Some(V2Refusal::EnvironmentInherit);
        }
        if self.subprocess_deny() {
            let unsafe_name = self.environment.allow.iter().find(|name| {
                name.as_str() == UNSAFE_ENV_NAME
                    || UNSAFE_ENV_PREFIXES.iter().any(|p| name.starts_with(p))
            });
            if let Some(name) = unsafe_name {
                return Some(V2Refusal::UnsafeEnvironmentName(name.clone()));
            }
        }
        None
    }

    /// The inner worker's v1 policy: limits, environment and effects copied,
    /// v1 defaults for everything else (the container enforces the rest).
    pub fn worker_policy(&self) -> PolicyV1 {
        PolicyV1 {
            limits: self.limits,
            environment: self.environment.clone(),
            effects: self.effects.clone(),
            ..PolicyV1::default()
        }
    }
}

fn err(path: &str, expected: impl Into<String>) -> PolicyError {
    PolicyError {
        path: path.into(),
        expected: expected.into(),
    }
}

fn literal(v: &Json, path: &str, only: &'static str) -> Result<&'static str, PolicyError> {
    match v.as_str() {
        Some(s) if s == only => Ok(only),
        _ => Err(err(path, format!("expected {only:?}, got {v}"))),
    }
}

fn mode<M: Mode>(v: &Json, key: &str, default: M) -> Result<M, PolicyError> {
    let section = v
        .as_object()
        .ok_or_else(|| err(key, format!("expected an object, got {v}")))?;
    if let Some(unknown) = section.keys().find(|k| k.as_str() != "mode") {
        return Err(err(
            &format!("{key}.{unknown}"),
            "unknown field; expected mode",
        ));
    }
    let Some(m) = section.get("mode") else {
        return Ok(default);
    };
    m.as_str().and_then(M::from_wire).ok_or_else(|| {
        err(
            &format!("{key}.mode"),
            format!("expected one of {:?}, got {m}", M::wire_names()),
        )
    })
}

fn resources(v: &Json) -> Result<ResourcesV2, PolicyError> {
    let section = v
        .as_object()
        .ok_or_else(|| err("resources", format!("expected an object, got {v}")))?;
    let known = ["memory_bytes", "cpu_millis", "pids", "scratch_bytes"];
    if let Some(unknown) = section.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(err(
            &format!("resources.{unknown}"),
            format!("unknown field; expected one of {}", known.join(", ")),
        ));
    }
    let mut r = ResourcesV2::default();
    let int = |key: &str, min: u64, max: u64, slot: &mut u64| -> Result<(), PolicyError> {
        let Some(v) = section.get(key) else {
            return Ok(());
        };
        match v {
            Json::Number(n) if !n.is_f64() => match n.as_u64() {
                Some(n) if (min..=max).contains(&n) => {
                    *slot = n;
                    Ok(())
                }
                _ => Err(err(
                    &format!("resources.{key}"),
                    format!("expected an integer from {min} to {max}, got {v}"),
                )),
            },
            _ => Err(err(
                &format!("resources.{key}"),
                format!("expected an integer, got {v}"),
            )),
        }
    };
    int(
        "memory_bytes",
        67_108_864,
        8_589_934_592,
        &mut r.memory_bytes,
    )?;
    int("cpu_millis", 10, 64_000, &mut r.cpu_millis)?;
    int("pids", 8, 1024, &mut r.pids)?;
    int(
        "scratch_bytes",
        1_048_576,
        1_073_741_824,
        &mut r.scratch_bytes,
    )?;
    if r.scratch_bytes > r.memory_bytes / 2 {
        return Err(err(
            "resources",
            "scratch must leave memory for the worker (scratch_bytes <= memory_bytes / 2)",
        ));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PolicyV2, PolicyError> {
        PolicyV2::from_json(&serde_json::from_str(text).unwrap())
    }

    const DEFAULT_BYTES: &str = "{\"backend\":\"oci-container\",\"effects\":{\"require_known\":[]},\"environment\":{\"allow\":[],\"inherit\":false},\"filesystem\":\"container\",\"limits\":{\"max_input_bytes\":1048576,\"max_output_bytes\":1048576,\"wall_time_ms\":5000},\"network\":{\"mode\":\"deny\"},\"resources\":{\"cpu_millis\":1000,\"memory_bytes\":268435456,\"pids\":64,\"scratch_bytes\":16777216},\"schema_version\":\"apizr.execution/v2\",\"subprocess\":{\"mode\":\"allow\"}}\n";

    #[test]
    fn default_bytes_and_digest_match_the_reference() {
        for doc in [
            r#"{"schema_version":"apizr.execution/v2"}"#,
            r#"{"schema_version":"apizr.execution/v2","subprocess":{},"resources":{},"limits":{}}"#,
            "{}",
        ] {
            let policy = parse(doc).unwrap();
            assert_eq!(
                String::from_utf8(policy.canonical_bytes().unwrap()).unwrap(),
                DEFAULT_BYTES,
                "{doc}"
            );
            assert_eq!(
                policy.digest().unwrap().value,
                "9858b46653e31aa8a4923b0dd939eddbeeab4f081ca1c2a21e085eddd7580fcb"
            );
        }
    }

    /// Digests of `execution/policy.json` written by the reference's `generate rest` (0.4.6).
    #[test]
    fn custom_policy_digests_match_the_reference() {
        for (doc, digest) in [
            (
                r#"{"schema_version":"apizr.execution/v2","subprocess":{"mode":"deny"},"environment":{"allow":["HOME","LANG","HOME"]},"resources":{"memory_bytes":67108864,"cpu_millis":500,"pids":8,"scratch_bytes":1048576},"limits":{"wall_time_ms":2000},"effects":{"require_known":[]}}"#,
                "d55022f5d9be98d6fe42cac71453fdffce7496c3a8a254b8ba2d69e2e5634c23",
            ),
            (
                r#"{"schema_version":"apizr.execution/v2","environment":{"allow":["ld_x","python"]},"subprocess":{"mode":"deny"}}"#,
                "0850c29e0ef06c1ed353ff4836c825b3e336e4b4fddc5c3bae27033b78b2f3ca",
            ),
            (
                r#"{"schema_version":"apizr.execution/v2","resources":{"memory_bytes":8589934592,"cpu_millis":64000,"pids":1024,"scratch_bytes":1073741824}}"#,
                "a035221178513f0181caed16d737d23459d025ce281beac8faa399ab825ec35b",
            ),
            (
                r#"{"schema_version":"apizr.execution/v2","resources":{"scratch_bytes":134217728}}"#,
                "2925688bccc8b879ea909480bc44dced3717ad98a3d451c1c3ed48266a14c83f",
            ),
        ] {
            let policy = parse(doc).unwrap();
            assert_eq!(policy.digest().unwrap().value, digest, "{doc}");
            assert_eq!(policy.refusal(), None, "{doc}");
        }
    }

    /// Each of these is `invalid_input` on the reference.
    #[test]
    fn strictness_matches_the_reference() {
        for bad in [
            r#"{"resources":{"pids":"64"}}"#,
            r#"{"resources":{"pids":64.0}}"#,
            r#"{"resources":{"pids":true}}"#,
            r#"{"resources":{"pids":7}}"#,
            r#"{"resources":{"pids":1025}}"#,
            r#"{"resources":{"cpu_millis":9}}"#,
            r#"{"resources":{"cpu_millis":64001}}"#,
            r#"{"resources":{"memory_bytes":67108863}}"#,
            r#"{"resources":{"memory_bytes":8589934593}}"#,
            r#"{"resources":{"scratch_bytes":1048575}}"#,
            r#"{"resources":{"memory_bytes":67108864,"scratch_bytes":33554433}}"#,
            r#"{"resources":{"scratch_bytes":134217729}}"#,
            r#"{"resources":{"x":1}}"#,
            r#"{"resources":null}"#,
            r#"{"filesystem":{"mode":"container"}}"#,
            r#"{"filesystem":null}"#,
            r#"{"working_directory":"fresh"}"#,
            r#"{"backend":"local-process"}"#,
            r#"{"schema_version":"apizr.execution/v1"}"#,
            r#"{"network":{"mode":"none"}}"#,
            r#"{"network":{"mode":"deny","x":1}}"#,
            r#"{"subprocess":{"mode":"sandbox"}}"#,
            r#"{"limits":{"max_output_bytes":127}}"#,
            r#"{"environment":{"inherit":true,"allow":["A"]}}"#,
            r#"{"effects":{"require_known":["telepathy"]}}"#,
            r#"[]"#,
        ] {
            assert!(parse(bad).is_err(), "{bad} must be rejected");
        }
        let ok = parse(r#"{"resources":{"memory_bytes":67108864,"scratch_bytes":33554432}}"#);
        assert_eq!(ok.unwrap().resources.scratch_bytes, 33_554_432);
    }

    /// Each of these is `policy_refused` on the reference (valid documents, refused controls).
    #[test]
    fn refusals_match_the_reference() {
        for (doc, refusal) in [
            (r#"{"network":{}}"#, V2Refusal::NetworkInherit),
            (
                r#"{"network":{"mode":"inherit"}}"#,
                V2Refusal::NetworkInherit,
            ),
            (
                r#"{"environment":{"inherit":true}}"#,
                V2Refusal::EnvironmentInherit,
            ),
            (
                r#"{"subprocess":{"mode":"deny"},"environment":{"allow":["LD_X"]}}"#,
                V2Refusal::UnsafeEnvironmentName("LD_X".into()),
            ),
            (
                r#"{"subprocess":{"mode":"deny"},"environment":{"allow":["PYTHONX"]}}"#,
                V2Refusal::UnsafeEnvironmentName("PYTHONX".into()),
            ),
            (
                r#"{"subprocess":{"mode":"deny"},"environment":{"allow":["GCONV_PATH"]}}"#,
                V2Refusal::UnsafeEnvironmentName("GCONV_PATH".into()),
            ),
            (
                r#"{"subprocess":{"mode":"deny"},"environment":{"allow":["GLIBC_TUNABLES"]}}"#,
                V2Refusal::UnsafeEnvironmentName("GLIBC_TUNABLES".into()),
            ),
            (
                r#"{"subprocess":{"mode":"deny"},"environment":{"allow":["DYLD_X"]}}"#,
                V2Refusal::UnsafeEnvironmentName("DYLD_X".into()),
            ),
        ] {
            assert_eq!(parse(doc).unwrap().refusal(), Some(refusal), "{doc}");
        }
        let allowed = parse(r#"{"subprocess":{"mode":"allow"},"environment":{"allow":["LD_X"]}}"#);
        assert_eq!(allowed.unwrap().refusal(), None);
    }

    #[test]
    fn worker_policy_copies_limits_environment_and_effects_only() {
        let policy = parse(
            r#"{"limits":{"wall_time_ms":100},"environment":{"allow":["B","A"]},"subprocess":{"mode":"deny"},"effects":{"require_known":["network"]}}"#,
        )
        .unwrap();
        let worker = policy.worker_policy();
        assert_eq!(worker.limits.wall_time_ms, 100);
        assert_eq!(worker.environment.allow, ["A", "B"]);
        assert_eq!(worker.effects.require_known, ["network"]);
        assert_eq!(
            worker.subprocess.mode,
            SubprocessMode::Allow,
            "v1 defaults for the rest"
        );
        assert_eq!(worker.network.mode, NetworkMode::Inherit);
        assert_eq!(worker.backend, "local-process");
        assert!(policy.subprocess_deny());
    }
}
