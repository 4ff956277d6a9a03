//! Do not take the engine's word: after `create` and before `start`, inspect the container and
//! compare every control with what was asked. A mismatch refuses the call (the container never
//! starts, so the user's code never runs) with the control named.
//!
//! Why: engines accept settings they then drop without an error. Rootless Podman on cgroup v1
//! accepts `Memory`, `PidsLimit` and `CpuQuota` and runs without them; Podman's compat API
//! accepts `HostConfig.Runtime` and runs the default runtime; a proxy or plugin in front of
//! the socket can rewrite anything. The answer to `create` says nothing about what was applied;
//! the engine's own record of the container (its inspect) is the closest statement of what
//! will run, and what the kernel enforces inside is checked again by `attest`.
//!
//! Controls (names as reported): `memory`, `memory_swap`, `pids`, `cpu`, `read_only_root`,
//! `network`, `capabilities`, `no_new_privileges`, `seccomp`, `privileged`, `user`, `tmpfs`,
//! `ipc`, `bundle_mount`, `runtime`. Engine differences that are not weaker are accepted:
//! Podman lists each dropped capability instead of `ALL` (checked against its default set),
//! reports IPC `shareable` for a private namespace, and names the runtime only in
//! `/libpod/containers/{id}/json` (`OCIRuntime`), which is what is inspected for Podman.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use serde_json::Value as Json;

use super::engine::{Engine, EngineError, json_ok};
use super::engine_kind::{EngineCapabilities, EngineKind};
use super::http::{Body, encode_query};

/// What was asked, read back from our own create body (one source for both).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    pub memory: i64,
    pub pids: i64,
    pub cpu_quota: i64,
    pub cpu_period: i64,
    pub user: String,
    pub scratch_bytes: u64,
    /// The OCI runtime asked for, if any.
    pub runtime: Option<String>,
}

impl Expected {
    /// From a `POST /containers/create` body built by `container::create_body`.
    pub fn from_create_body(body: &Json) -> Expected {
        let host = &body["HostConfig"];
        let int = |k: &str| host[k].as_i64().unwrap_or(-1);
        let scratch = host["Tmpfs"]["/tmp"]
            .as_str()
            .and_then(tmpfs_size)
            .unwrap_or(0);
        Expected {
            memory: int("Memory"),
            pids: int("PidsLimit"),
            cpu_quota: int("CpuQuota"),
            cpu_period: int("CpuPeriod"),
            user: body["User"].as_str().unwrap_or_default().to_string(),
            scratch_bytes: scratch,
            runtime: host["Runtime"].as_str().map(str::to_string),
        }
    }
}

/// A control the container does not carry as asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("engine did not apply {control}: asked {expected}, container has {found} ({checked})")]
pub struct Refusal {
    pub control: &'static str,
    pub expected: String,
    pub found: String,
    /// `inspect` (the engine's record, before start) or `inside` (seen by the container).
    pub checked: &'static str,
}

/// What the inspection established (for the report).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Verified {
    /// The OCI runtime the engine records for the container.
    pub runtime: String,
    /// Every control compared, in order.
    pub controls: Vec<&'static str>,
}

/// The engine's record of `name`: Docker's inspect, or Podman's own (it has `OCIRuntime`).
pub fn inspect(engine: &Engine, name: &str, deadline: Instant) -> Result<Json, EngineError> {
    let path = match engine.kind {
        EngineKind::Docker => format!("/containers/{}/json", encode_query(name)),
        EngineKind::Podman => format!("/libpod/containers/{}/json", encode_query(name)),
    };
    json_ok(
        engine.call("GET", &path, Body::None, deadline)?,
        "GET /containers/{id}/json",
    )
}

/// Compare the inspected container `doc` with `expected`. The first mismatch is the refusal.
pub fn check(
    doc: &Json,
    expected: &Expected,
    caps: &EngineCapabilities,
    bundle: &Path,
) -> Result<Verified, Refusal> {
    let host = &doc["HostConfig"];
    let mut verified = Verified::default();
    let mut compare = |control: &'static str, ok: bool, want: String, found: &Json| {
        verified.controls.push(control);
        if ok {
            Ok(())
        } else {
            Err(Refusal {
                control,
                expected: want,
                found: found.to_string(),
                checked: "inspect",
            })
        }
    };
    let int = |k: &str| host[k].as_i64();
    compare(
        "privileged",
        host["Privileged"] == Json::Bool(false),
        "false".into(),
        &host["Privileged"],
    )?;
    let user = &doc["Config"]["User"];
    compare(
        "user",
        user.as_str() == Some(expected.user.as_str()),
        expected.user.clone(),
        user,
    )?;
    compare(
        "read_only_root",
        host["ReadonlyRootfs"] == Json::Bool(true),
        "true".into(),
        &host["ReadonlyRootfs"],
    )?;
    compare(
        "network",
        host["NetworkMode"].as_str() == Some("none"),
        "none".into(),
        &host["NetworkMode"],
    )?;
    compare(
        "memory",
        int("Memory") == Some(expected.memory),
        expected.memory.to_string(),
        &host["Memory"],
    )?;
    compare(
        "memory_swap",
        int("MemorySwap") == Some(expected.memory),
        expected.memory.to_string(),
        &host["MemorySwap"],
    )?;
    compare(
        "pids",
        int("PidsLimit") == Some(expected.pids),
        expected.pids.to_string(),
        &host["PidsLimit"],
    )?;
    let cpu = serde_json::json!([host["CpuQuota"], host["CpuPeriod"]]);
    compare(
        "cpu",
        int("CpuQuota") == Some(expected.cpu_quota)
            && int("CpuPeriod") == Some(expected.cpu_period),
        format!(
            "quota {} per {} µs",
            expected.cpu_quota, expected.cpu_period
        ),
        &cpu,
    )?;
    compare(
        "capabilities",
        capabilities_dropped(host, caps),
        "every capability dropped, none added".into(),
        &serde_json::json!({"CapAdd": host["CapAdd"], "CapDrop": host["CapDrop"]}),
    )?;
    let opts = string_list(&host["SecurityOpt"]);
    compare(
        "no_new_privileges",
        opts.iter().any(|o| {
            matches!(
                o.as_str(),
                "no-new-privileges" | "no-new-privileges:true" | "no-new-privileges=true"
            )
        }),
        "no-new-privileges".into(),
        &host["SecurityOpt"],
    )?;
    compare(
        "seccomp",
        !opts
            .iter()
            .any(|o| o.starts_with("seccomp") && o.ends_with("unconfined")),
        "the engine's seccomp profile".into(),
        &host["SecurityOpt"],
    )?;
    compare(
        "tmpfs",
        tmpfs_ok(&host["Tmpfs"], expected.scratch_bytes),
        format!(
            "/tmp rw,noexec,nosuid,nodev,size={}; any other tmpfs read-only",
            expected.scratch_bytes
        ),
        &host["Tmpfs"],
    )?;
    let ipc = host["IpcMode"].as_str().unwrap_or_default();
    compare(
        "ipc",
        matches!(ipc, "private" | "shareable"),
        "a private IPC namespace".into(),
        &host["IpcMode"],
    )?;
    compare(
        "bundle_mount",
        bundle_read_only(doc, bundle),
        format!("{} read-only at /bundle", bundle.display()),
        &doc["Mounts"],
    )?;
    let runtime = match caps.engine {
        EngineKind::Docker => &host["Runtime"],
        EngineKind::Podman => &doc["OCIRuntime"],
    };
    let runtime_name = runtime.as_str().unwrap_or_default();
    // Podman records the runtime as configured, which may be a path (`/usr/bin/runsc`).
    let base = runtime_name.rsplit('/').next().unwrap_or(runtime_name);
    if let Some(want) = &expected.runtime {
        compare("runtime", base == want.as_str(), want.clone(), runtime)?;
    }
    verified.runtime = base.to_string();
    Ok(verified)
}

/// The static name of a control reported by the container (unknown names: `attestation`).
pub fn control_name(name: &str) -> &'static str {
    const NAMES: [&str; 6] = [
        "runtime",
        "user",
        "capabilities",
        "no_new_privileges",
        "seccomp",
        "attestation",
    ];
    NAMES
        .into_iter()
        .find(|n| *n == name)
        .unwrap_or("attestation")
}

fn string_list(v: &Json) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// `CAP_X` and `X` name the same capability.
fn cap_name(c: &str) -> String {
    let upper = c.to_ascii_uppercase();
    upper.strip_prefix("CAP_").unwrap_or(&upper).to_string()
}

/// Nothing added, and either `ALL` dropped (Docker) or every default capability dropped
/// (Podman's record). An unknown default set with no `ALL` is not verified.
fn capabilities_dropped(host: &Json, caps: &EngineCapabilities) -> bool {
    let added = string_list(&host["CapAdd"]);
    let dropped: Vec<String> = string_list(&host["CapDrop"])
        .iter()
        .map(|c| cap_name(c))
        .collect();
    let all = dropped.iter().any(|c| c == "ALL");
    let defaults = !caps.default_capabilities.is_empty()
        && caps
            .default_capabilities
            .iter()
            .all(|c| dropped.contains(&cap_name(c)));
    added.is_empty() && (all || defaults)
}

fn tmpfs_size(options: &str) -> Option<u64> {
    options
        .split(',')
        .find_map(|o| o.strip_prefix("size="))
        .and_then(|s| s.parse().ok())
}

/// `/tmp` is the one writable tmpfs, bounded and non-executable; any other is read-only.
fn tmpfs_ok(tmpfs: &Json, scratch: u64) -> bool {
    let Some(map) = tmpfs.as_object() else {
        return false;
    };
    map.iter().all(|(path, options)| {
        let options = options.as_str().unwrap_or_default();
        let has = |flag: &str| options.split(',').any(|o| o == flag);
        if path == "/tmp" {
            tmpfs_size(options) == Some(scratch)
                && has("noexec")
                && has("nosuid")
                && has("nodev")
                && !has("exec")
        } else {
            has("ro")
        }
    }) && map.contains_key("/tmp")
}

/// The engine lists the bundle bind mount at `/bundle` from our directory, not writable.
fn bundle_read_only(doc: &Json, bundle: &Path) -> bool {
    let mounts = doc["Mounts"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let at_bundle: Vec<&Json> = mounts
        .iter()
        .filter(|m| m["Destination"].as_str() == Some("/bundle"))
        .collect();
    at_bundle.len() == 1
        && at_bundle
            .iter()
            .all(|m| m["RW"] == Json::Bool(false) && m["Source"].as_str() == bundle.to_str())
}

#[cfg(test)]
#[path = "verify_tests.rs"]
mod tests;
