//! The container for one docker-tier run (or session): the `POST /containers/create` body.
//!
//! `docker`: the oci-container backend's controls (uid 65532, `CapDrop: ALL`,
//! `no-new-privileges`, read-only root, no network unless the policy allows it, memory+swap,
//! pids, a bounded `/tmp`, private IPC and cgroup namespaces), checked afterwards against the
//! engine's own record by `oci::verify`. `docker_unsafe`: the engine's defaults (root in the
//! container, the engine's network, no limits) — labelled unsafe in every result.
//!
//! Both: the code's workspace `/workspace` is an anonymous tmpfs volume of bounded size (the
//! engine can archive a volume, not a plain tmpfs, and the volume is removed with the
//! container), `/bundle` is a read-only bind (the package directory, or an empty one), and the
//! container carries the oci backend's owner and expiry labels so its start-up sweep reclaims
//! what a killed caller left.

use std::path::Path;

use serde_json::{Value as Json, json};

use super::super::bootstrap;
use super::super::policy::CapabilityPolicy;
use super::super::tier::Tier;
use crate::oci::container::{CONTAINER_USER, EXECUTION_LABEL, EXPIRES_LABEL, PYTHON};
use crate::oci::sweep::OWNER_LABEL;
use crate::owner::Owner;

/// The workspace inside the container.
pub const WORKSPACE: &str = "/workspace";
/// Defaults of the docker tier where the policy says nothing.
pub const DEFAULT_PIDS: u64 = 1024;
pub const SCRATCH_BYTES: u64 = 64 * 1024 * 1024;
pub const WORKSPACE_BYTES: u64 = 256 * 1024 * 1024;

/// What the body depends on besides the policy.
pub(crate) struct Inputs<'a> {
    pub image: &'a str,
    pub bundle: &'a Path,
    pub env: Vec<String>,
    /// Unix time after which a sweep may remove the container.
    pub expires: u64,
    pub runtime: Option<&'a str>,
    /// A session container (the bootstrap with its session part).
    pub session: bool,
}

pub(crate) fn create_body(
    tier: Tier,
    policy: Option<&CapabilityPolicy>,
    inputs: &Inputs<'_>,
) -> Json {
    let mut labels =
        json!({ EXECUTION_LABEL.0: EXECUTION_LABEL.1, EXPIRES_LABEL: inputs.expires.to_string() });
    if let Some(owner) = Owner::current() {
        labels[OWNER_LABEL] = json!(owner.encode());
    }
    let safe = tier == Tier::Docker;
    let uid = if safe { "65532" } else { "0" };
    let mut mounts = vec![
        json!({
            "Type": "bind", "Source": inputs.bundle.to_string_lossy(), "Target": "/bundle",
            "ReadOnly": true, "BindOptions": { "Propagation": "rprivate" }
        }),
        json!({
            "Type": "volume", "Target": WORKSPACE,
            "VolumeOptions": { "DriverConfig": { "Name": "local", "Options": {
                "type": "tmpfs", "device": "tmpfs",
                "o": format!("size={WORKSPACE_BYTES},uid={uid},gid={uid},mode=0700,nosuid,nodev")
            }}}
        }),
    ];
    if let Some(p) = policy.filter(|_| safe) {
        for (roots, read_only) in [
            (&p.filesystem_read_roots, true),
            (&p.filesystem_write_roots, false),
        ] {
            for root in roots.iter().flatten() {
                mounts.push(json!({
                    "Type": "bind", "Source": root.to_string_lossy(), "Target": root.to_string_lossy(),
                    "ReadOnly": read_only, "BindOptions": { "Propagation": "rprivate" }
                }));
            }
        }
    }
    let mut body = json!({
        "Image": inputs.image,
        "AttachStdin": true, "AttachStdout": true, "AttachStderr": true,
        "OpenStdin": true, "StdinOnce": true, "Tty": false,
        "Env": inputs.env,
        "Entrypoint": [PYTHON],
        "Cmd": if inputs.session { bootstrap::session_python_args() } else { bootstrap::python_args() },
        "WorkingDir": WORKSPACE,
        "Labels": labels,
        "Healthcheck": { "Test": ["NONE"] },
        "HostConfig": {
            "RestartPolicy": { "Name": "no" },
            "LogConfig": { "Type": "none" },
            "Mounts": mounts,
            // The engine removes the container (and its anonymous volume) once it exits:
            // off the result path, and also when the caller died after starting it.
            "AutoRemove": true,
            "Privileged": false,
        }
    });
    if !safe {
        body["User"] = json!("0:0");
        return body;
    }
    let network = policy.is_some_and(|p| p.network_access);
    let memory = policy
        .and_then(|p| p.memory_bytes)
        .map_or(0, |m| i64::try_from(m).unwrap_or(i64::MAX));
    let pids = policy.and_then(|p| p.pids).unwrap_or(DEFAULT_PIDS);
    body["User"] = json!(CONTAINER_USER);
    body["NetworkDisabled"] = json!(!network);
    let host = &mut body["HostConfig"];
    host["NetworkMode"] = json!(if network { "default" } else { "none" });
    host["ReadonlyRootfs"] = json!(true);
    host["CapDrop"] = json!(["ALL"]);
    host["SecurityOpt"] = json!(["no-new-privileges"]);
    host["IpcMode"] = json!("private");
    host["CgroupnsMode"] = json!("private");
    host["Memory"] = json!(memory);
    host["MemorySwap"] = json!(memory);
    host["CpuPeriod"] = json!(0);
    host["CpuQuota"] = json!(0);
    host["PidsLimit"] = json!(pids);
    host["ShmSize"] = json!(65536);
    host["Tmpfs"] =
        json!({ "/tmp": format!("rw,nosuid,nodev,noexec,size={SCRATCH_BYTES},mode=1777") });
    if let Some(runtime) = inputs.runtime {
        host["Runtime"] = json!(runtime);
    }
    body
}
