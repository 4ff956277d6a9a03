//! Execution policy v1 (`apizr.execution/v1`): strict parsing, defaults and canonical bytes.
//!
//! Parsing follows the reference's strictness: every field optional, unknown fields rejected,
//! integers must be JSON integers (not floats, strings or booleans), booleans must be JSON
//! booleans, bounds checked, name lists sorted and de-duplicated. The canonical bytes of a parsed
//! policy are what `policy_digest` covers, so a document the reference accepts must produce the
//! same bytes here.
//!
//! Beyond the reference, an optional `resources` object (`memory_bytes`, `pids`, `cpu_millis`,
//! `disk_bytes`) and an optional `filesystem.read_roots` list are accepted; each is omitted from
//! the canonical bytes when absent (or empty) so that every reference document keeps its digest.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Map, Value as Json};

use crate::capability::Effects;
use crate::digest::Digest;

mod any;
mod mode;

pub use any::AnyPolicy;
pub use mode::{FilesystemMode, Mode, ModePolicy, NetworkMode, SubprocessMode};

pub const POLICY_V1_SCHEMA: &str = "apizr.execution/v1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyV1 {
    pub backend: &'static str,
    pub effects: EffectsPolicy,
    pub environment: EnvironmentPolicy,
    pub filesystem: FilesystemPolicy,
    pub limits: Limits,
    pub network: ModePolicy<NetworkMode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
    pub schema_version: &'static str,
    pub subprocess: ModePolicy<SubprocessMode>,
    pub working_directory: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EffectsPolicy {
    /// Sorted, de-duplicated effect names.
    pub require_known: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvironmentPolicy {
    /// Sorted, de-duplicated variable names.
    pub allow: Vec<String>,
    pub inherit: bool,
}

/// `filesystem`: the mode, plus (beyond the reference, `sandbox` only) host paths the call may
/// read. Empty `read_roots` serializes as nothing, so reference documents keep their bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FilesystemPolicy {
    pub mode: FilesystemMode,
    /// Absolute, normalised host paths, sorted and de-duplicated; bound read-only at the same
    /// path inside the sandbox's private root.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub read_roots: Vec<String>,
}

/// At most this many `filesystem.read_roots`.
pub const MAX_READ_ROOTS: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Limits {
    pub max_input_bytes: u64,
    pub max_output_bytes: u64,
    pub wall_time_ms: u64,
}

/// Optional resource limits (beyond the reference).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Resources {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_millis: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pids: Option<u64>,
    /// Size of the call's writable tmpfs (working directory and `/tmp`) under
    /// `filesystem.mode: sandbox`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_bytes: Option<u64>,
}

/// Why a policy document was rejected: a dotted field path and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {expected}")]
pub struct PolicyError {
    pub path: String,
    pub expected: String,
}

impl Default for PolicyV1 {
    fn default() -> Self {
        PolicyV1 {
            backend: "local-process",
            effects: EffectsPolicy {
                require_known: vec![],
            },
            environment: EnvironmentPolicy {
                allow: vec![],
                inherit: false,
            },
            filesystem: FilesystemPolicy {
                mode: FilesystemMode::Host,
                read_roots: vec![],
            },
            limits: Limits {
                max_input_bytes: 1_048_576,
                max_output_bytes: 1_048_576,
                wall_time_ms: 5000,
            },
            network: ModePolicy::new(NetworkMode::Inherit),
            resources: None,
            schema_version: POLICY_V1_SCHEMA,
            subprocess: ModePolicy::new(SubprocessMode::Allow),
            working_directory: "fresh",
        }
    }
}

impl PolicyV1 {
    /// Parse a decoded JSON document with the reference's strictness.
    pub fn from_json(doc: &Json) -> Result<Self, PolicyError> {
        let root = object(doc, "$")?;
        let mut fields = Fields::new(root, "");
        let mut policy = PolicyV1::default();
        fields.known(&[
            "schema_version",
            "backend",
            "limits",
            "environment",
            "network",
            "filesystem",
            "subprocess",
            "effects",
            "working_directory",
            "resources",
        ])?;
        if let Some(v) = fields.get("schema_version") {
            policy.schema_version = literal(v, "schema_version", &[POLICY_V1_SCHEMA])?;
        }
        if let Some(v) = fields.get("backend") {
            policy.backend = literal(v, "backend", &["local-process"])?;
        }
        if let Some(v) = fields.get("working_directory") {
            policy.working_directory = literal(v, "working_directory", &["fresh"])?;
        }
        if let Some(v) = fields.get("limits") {
            let mut limits = Fields::new(object(v, "limits")?, "limits");
            limits.known(&["wall_time_ms", "max_input_bytes", "max_output_bytes"])?;
            let l = &mut policy.limits;
            if let Some(v) = limits.get("wall_time_ms") {
                l.wall_time_ms = int_in(v, "limits.wall_time_ms", 1, 3_600_000)?;
            }
            if let Some(v) = limits.get("max_input_bytes") {
                l.max_input_bytes = int_in(v, "limits.max_input_bytes", 1, 16_777_216)?;
            }
            if let Some(v) = limits.get("max_output_bytes") {
                l.max_output_bytes = int_in(v, "limits.max_output_bytes", 128, 16_777_216)?;
            }
        }
        if let Some(v) = fields.get("environment") {
            let mut env = Fields::new(object(v, "environment")?, "environment");
            env.known(&["inherit", "allow"])?;
            if let Some(v) = env.get("inherit") {
                policy.environment.inherit = boolean(v, "environment.inherit")?;
            }
            if let Some(v) = env.get("allow") {
                policy.environment.allow = name_set(v, "environment.allow", is_env_name)?;
            }
            if policy.environment.inherit && !policy.environment.allow.is_empty() {
                return Err(PolicyError {
                    path: "environment".into(),
                    expected: "either inherit=true or an allow list, not both".into(),
                });
            }
        }
        if let Some(v) = fields.get("network") {
            policy.network.mode = section_mode(v, "network", policy.network.mode)?;
        }
        if let Some(v) = fields.get("filesystem") {
            let mut section = Fields::new(object(v, "filesystem")?, "filesystem");
            section.known(&["mode", "read_roots"])?;
            if let Some(m) = section.get("mode") {
                policy.filesystem.mode = mode_value(m, "filesystem")?;
            }
            if let Some(v) = section.get("read_roots") {
                policy.filesystem.read_roots = read_roots(v)?;
                if !policy.filesystem.read_roots.is_empty()
                    && policy.filesystem.mode != FilesystemMode::Sandbox
                {
                    return Err(PolicyError {
                        path: "filesystem.read_roots".into(),
                        expected: "only with filesystem.mode \"sandbox\" (under \"host\" the whole host is visible)".into(),
                    });
                }
            }
        }
        if let Some(v) = fields.get("subprocess") {
            policy.subprocess.mode = section_mode(v, "subprocess", policy.subprocess.mode)?;
        }
        if let Some(v) = fields.get("effects") {
            let mut effects = Fields::new(object(v, "effects")?, "effects");
            effects.known(&["require_known"])?;
            if let Some(v) = effects.get("require_known") {
                policy.effects.require_known =
                    name_set(v, "effects.require_known", |n| Effects::NAMES.contains(&n))?;
            }
        }
        if let Some(v) = fields.get("resources") {
            let mut res = Fields::new(object(v, "resources")?, "resources");
            res.known(&["memory_bytes", "pids", "cpu_millis", "disk_bytes"])?;
            let opt = |key: &str, min: u64, max: u64| -> Result<Option<u64>, PolicyError> {
                res.get(key)
                    .map(|v| int_in(v, &format!("resources.{key}"), min, max))
                    .transpose()
            };
            policy.resources = Some(Resources {
                memory_bytes: opt("memory_bytes", 1 << 20, 1 << 40)?,
                pids: opt("pids", 1, 65_536)?,
                cpu_millis: opt("cpu_millis", 1, 3_600_000)?,
                disk_bytes: opt("disk_bytes", 1 << 20, 1 << 40)?,
            });
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
}

struct Fields<'a> {
    map: &'a Map<String, Json>,
    prefix: &'a str,
}

impl<'a> Fields<'a> {
    fn new(map: &'a Map<String, Json>, prefix: &'a str) -> Self {
        Fields { map, prefix }
    }

    fn known(&mut self, names: &[&str]) -> Result<(), PolicyError> {
        match self.map.keys().find(|k| !names.contains(&k.as_str())) {
            Some(unknown) => Err(PolicyError {
                path: join(self.prefix, unknown),
                expected: format!("unknown field; expected one of {}", names.join(", ")),
            }),
            None => Ok(()),
        }
    }

    fn get(&self, key: &str) -> Option<&'a Json> {
        self.map.get(key)
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn describe(v: &Json) -> String {
    match v {
        Json::Null => "null".into(),
        Json::Bool(b) => format!("boolean {b}"),
        Json::Number(n) if n.is_f64() => format!("float {n}"),
        Json::Number(n) => format!("integer {n}"),
        Json::String(s) => format!("string {s:?}"),
        Json::Array(_) => "an array".into(),
        Json::Object(_) => "an object".into(),
    }
}

fn object<'a>(v: &'a Json, path: &str) -> Result<&'a Map<String, Json>, PolicyError> {
    v.as_object().ok_or_else(|| PolicyError {
        path: path.into(),
        expected: format!("expected an object, got {}", describe(v)),
    })
}

/// A `{"mode": …}` section: only `mode`, one of `M`'s literals; absent keeps `default`.
fn section_mode<M: Mode>(v: &Json, key: &str, default: M) -> Result<M, PolicyError> {
    let mut section = Fields::new(object(v, key)?, key);
    section.known(&["mode"])?;
    let Some(m) = section.get("mode") else {
        return Ok(default);
    };
    mode_value(m, key)
}

/// The `mode` value `m` of section `key`.
fn mode_value<M: Mode>(m: &Json, key: &str) -> Result<M, PolicyError> {
    m.as_str()
        .and_then(M::from_wire)
        .ok_or_else(|| PolicyError {
            path: format!("{key}.mode"),
            expected: format!("expected one of {:?}, got {}", M::wire_names(), describe(m)),
        })
}

fn literal(v: &Json, path: &str, allowed: &[&'static str]) -> Result<&'static str, PolicyError> {
    if let Some(hit) = v.as_str().and_then(|s| allowed.iter().find(|a| **a == s)) {
        return Ok(hit);
    }
    Err(PolicyError {
        path: path.into(),
        expected: format!("expected one of {:?}, got {}", allowed, describe(v)),
    })
}

fn boolean(v: &Json, path: &str) -> Result<bool, PolicyError> {
    v.as_bool().ok_or_else(|| PolicyError {
        path: path.into(),
        expected: format!("expected a boolean, got {}", describe(v)),
    })
}

fn int_in(v: &Json, path: &str, min: u64, max: u64) -> Result<u64, PolicyError> {
    let n = match v {
        Json::Number(n) if !n.is_f64() => n.as_u64(),
        _ => None,
    };
    match n {
        Some(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(PolicyError {
            path: path.into(),
            expected: format!(
                "expected an integer from {min} to {max}, got {}",
                describe(v)
            ),
        }),
    }
}

fn name_set(
    v: &Json,
    path: &str,
    valid: impl Fn(&str) -> bool,
) -> Result<Vec<String>, PolicyError> {
    let items = v.as_array().ok_or_else(|| PolicyError {
        path: path.into(),
        expected: format!("expected an array of names, got {}", describe(v)),
    })?;
    let mut names = BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        match item.as_str() {
            Some(s) if valid(s) => {
                names.insert(s.to_string());
            }
            _ => {
                return Err(PolicyError {
                    path: format!("{path}[{i}]"),
                    expected: format!("not an accepted name: {}", describe(item)),
                });
            }
        }
    }
    Ok(names.into_iter().collect())
}

/// `filesystem.read_roots`: absolute paths in normal form (no `.`/`..`/empty components, no
/// trailing `/`, no NUL), not `/` itself (that is `mode: host`), at most [`MAX_READ_ROOTS`];
/// returned sorted and de-duplicated.
fn read_roots(v: &Json) -> Result<Vec<String>, PolicyError> {
    let path = "filesystem.read_roots";
    let items = v.as_array().ok_or_else(|| PolicyError {
        path: path.into(),
        expected: format!("expected an array of absolute paths, got {}", describe(v)),
    })?;
    if items.len() > MAX_READ_ROOTS {
        return Err(PolicyError {
            path: path.into(),
            expected: format!("at most {MAX_READ_ROOTS} paths, got {}", items.len()),
        });
    }
    let mut roots = BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        match item.as_str() {
            Some(s) if is_normal_absolute(s) => {
                roots.insert(s.to_string());
            }
            _ => {
                return Err(PolicyError {
                    path: format!("{path}[{i}]"),
                    expected: format!(
                        "an absolute path in normal form other than \"/\" (no \".\", \"..\", \"//\", trailing \"/\" or NUL), got {}",
                        describe(item)
                    ),
                });
            }
        }
    }
    Ok(roots.into_iter().collect())
}

fn is_normal_absolute(path: &str) -> bool {
    let Some(rest) = path.strip_prefix('/') else {
        return false;
    };
    path.len() <= 4096
        && !rest.is_empty()
        && !path.contains('\0')
        && rest
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

/// `[A-Za-z_][A-Za-z0-9_]*`
fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PolicyV1, PolicyError> {
        PolicyV1::from_json(&serde_json::from_str(text).unwrap())
    }

    #[test]
    fn default_policy_bytes_and_digest_match_the_reference() {
        let policy = parse("{}").unwrap();
        let bytes = policy.canonical_bytes().unwrap();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "{\"backend\":\"local-process\",\"effects\":{\"require_known\":[]},\"environment\":{\"allow\":[],\"inherit\":false},\"filesystem\":{\"mode\":\"host\"},\"limits\":{\"max_input_bytes\":1048576,\"max_output_bytes\":1048576,\"wall_time_ms\":5000},\"network\":{\"mode\":\"inherit\"},\"schema_version\":\"apizr.execution/v1\",\"subprocess\":{\"mode\":\"allow\"},\"working_directory\":\"fresh\"}\n"
        );
        assert_eq!(
            policy.digest().unwrap().value,
            "e8b05fb2d6f3c81bb27a3a9fe4bca7d4ab28b001b3a73c2230e19314c5201d6b"
        );
    }

    #[test]
    fn strictness_matches_the_reference() {
        for bad in [
            r#"{"limits":{"wall_time_ms":5000.0}}"#,
            r#"{"limits":{"wall_time_ms":1e3}}"#,
            r#"{"limits":{"wall_time_ms":true}}"#,
            r#"{"limits":{"wall_time_ms":"5000"}}"#,
            r#"{"limits":{"wall_time_ms":0}}"#,
            r#"{"limits":{"wall_time_ms":3600001}}"#,
            r#"{"limits":{"max_output_bytes":127}}"#,
            r#"{"limits":{"max_input_bytes":16777217}}"#,
            r#"{"limits":null}"#,
            r#"{"environment":{"allow":["1A"]}}"#,
            r#"{"environment":{"inherit":true,"allow":["A"]}}"#,
            r#"{"environment":{"inherit":1}}"#,
            r#"{"schema_version":"apizr.execution/v3"}"#,
            r#"{"x":1}"#,
            r#"{"limits":{"x":1}}"#,
            r#"[]"#,
            r#"{"effects":{"require_known":["telepathy"]}}"#,
            r#"{"network":{"mode":"none"}}"#,
            r#"{"resources":{"pids":0}}"#,
            r#"{"resources":{"disk_bytes":1024}}"#,
            r#"{"filesystem":{"mode":"sandbox","read_roots":["relative"]}}"#,
            r#"{"filesystem":{"mode":"sandbox","read_roots":["/"]}}"#,
            r#"{"filesystem":{"mode":"sandbox","read_roots":["/a/../b"]}}"#,
            r#"{"filesystem":{"mode":"sandbox","read_roots":["/a/"]}}"#,
            r#"{"filesystem":{"mode":"sandbox","read_roots":["/a//b"]}}"#,
            r#"{"filesystem":{"mode":"sandbox","read_roots":"/a"}}"#,
            r#"{"filesystem":{"read_roots":["/opt/data"]}}"#,
            r#"{"filesystem":{"mode":"sandbox","x":1}}"#,
        ] {
            assert!(parse(bad).is_err(), "{bad} must be rejected");
        }
    }

    #[test]
    fn lists_are_sorted_and_deduplicated() {
        let p = parse(r#"{"environment":{"allow":["B","A","A"]},"effects":{"require_known":["network","environment","network"]}}"#).unwrap();
        assert_eq!(p.environment.allow, vec!["A", "B"]);
        assert_eq!(p.effects.require_known, vec!["environment", "network"]);
    }

    #[test]
    fn errors_name_the_field() {
        let err = parse(r#"{"limits":{"wall_time_ms":5000.0}}"#).unwrap_err();
        assert_eq!(err.path, "limits.wall_time_ms");
        assert!(err.expected.contains("float"), "{err}");
    }

    #[test]
    fn resources_do_not_change_reference_bytes_when_absent() {
        let with = parse(r#"{"resources":{"memory_bytes":268435456}}"#).unwrap();
        let without = parse("{}").unwrap();
        assert_ne!(with.digest().unwrap(), without.digest().unwrap());
        assert!(
            String::from_utf8(with.canonical_bytes().unwrap())
                .unwrap()
                .contains("\"resources\":{\"memory_bytes\":268435456}")
        );
    }

    #[test]
    fn sandbox_keys_do_not_change_reference_bytes_when_absent() {
        let plain = parse(r#"{"filesystem":{"mode":"sandbox"}}"#).unwrap();
        let empty = parse(r#"{"filesystem":{"mode":"sandbox","read_roots":[]}}"#).unwrap();
        assert_eq!(
            plain.canonical_bytes().unwrap(),
            empty.canonical_bytes().unwrap()
        );
        assert!(
            String::from_utf8(plain.canonical_bytes().unwrap())
                .unwrap()
                .contains("\"filesystem\":{\"mode\":\"sandbox\"}")
        );
        let with = parse(
            r#"{"filesystem":{"mode":"sandbox","read_roots":["/opt/b","/opt/a","/opt/b"]},"resources":{"disk_bytes":1048576}}"#,
        )
        .unwrap();
        assert_eq!(with.filesystem.read_roots, vec!["/opt/a", "/opt/b"]);
        let text = String::from_utf8(with.canonical_bytes().unwrap()).unwrap();
        assert!(
            text.contains(
                "\"filesystem\":{\"mode\":\"sandbox\",\"read_roots\":[\"/opt/a\",\"/opt/b\"]}"
            ),
            "{text}"
        );
        assert!(
            text.contains("\"resources\":{\"disk_bytes\":1048576}"),
            "{text}"
        );
        let err =
            parse(r#"{"filesystem":{"mode":"sandbox","read_roots":["/ok","x"]}}"#).unwrap_err();
        assert_eq!(err.path, "filesystem.read_roots[1]");
    }
}
