//! The container plan as an Engine API create body, and the guard that
//! always removes the container (step 7).
//!
//! Controls, mirroring the reference's `docker create` vector: never pull (the image is named
//! by ID and checked first), label `org.apizr.execution=oci-v1`, platform, read-only rootfs,
//! `CapDrop: ALL`, `no-new-privileges`, UID/GID 65532, network `none`, private IPC and cgroup
//! namespaces, no restart, no healthcheck, no log driver, memory = memory+swap, CFS quota from
//! `cpu_millis`, pids limit, 64 KiB `/dev/shm`, `/tmp` tmpfs of `scratch_bytes`, the bundle
//! bind-mounted read-only at `/bundle`, and only allow-listed environment variables.
//!
//! The worker is the embedded v1 worker, sent as `python -I -S -c` after a short prelude that
//! drops every environment variable the engine or image added (`PATH`, `HOSTNAME`, `HOME`…)
//! except the allow-listed names, exactly what the reference's entrypoint module does.

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use apizr_ir::policy_v2::PolicyV2;
use serde_json::{Value as Json, json};

use super::attest;
use super::engine::{Engine, EngineError};
use super::engine_kind::EngineKind;
use super::sweep::OWNER_LABEL;
use crate::owner::Owner;
use crate::worker::WORKER_SOURCE;

pub const EXECUTION_LABEL: (&str, &str) = ("org.apizr.execution", "oci-v1");
/// Unix time after which a container of ours is certainly abandoned (its call's deadline plus
/// a margin); `sweep` removes such leftovers when their owner cannot be checked.
pub const EXPIRES_LABEL: &str = "org.apizr.expires";
/// Marks a container created ahead of its call by a server's pool (`oci::pool`); its value is
/// the longest it may wait for that call, in seconds. `apizr doctor` lists them by owner.
pub const POOL_LABEL: &str = "org.apizr.pool";
const EXPIRY_MARGIN_SECS: u64 = 60;
/// After three failed removal attempts, how long an in-progress removal may take to finish.
const REMOVAL_GRACE: Duration = Duration::from_secs(30);
const REMOVAL_POLL: Duration = Duration::from_millis(100);
pub const CONTAINER_USER: &str = "65532:65532";
pub const PYTHON: &str = "/usr/local/bin/python";
pub const CPU_PERIOD: u64 = 100_000;

/// Runs before the worker's first line: keep only the names given as arguments.
pub const ENTRY_PRELUDE: &str = concat!(
    "import os as _o, sys as _s\n",
    "_k = frozenset(_s.argv[1:])\n",
    "_n = None\n",
    "for _n in list(_o.environ):\n",
    "    if _n not in _k:\n",
    "        del _o.environ[_n]\n",
    "_o.chdir('/bundle')\n",
    "_s.argv[1:] = []\n",
    "del _o, _s, _k, _n\n",
);

/// The uid and gid the worker runs as (the numeric half of [`CONTAINER_USER`]).
pub const CONTAINER_UID: u32 = 65532;

/// The interpreter arguments: isolated, no site, attestation + prelude + worker, then the kept
/// names. `gvisor`: the attestation requires gVisor's kernel.
pub fn worker_command(env_names: &[String], gvisor: bool) -> Vec<String> {
    let attest = attest::prelude(CONTAINER_UID, gvisor);
    let mut cmd = vec![
        "-I".to_string(),
        "-S".to_string(),
        "-c".to_string(),
        format!("{attest}{ENTRY_PRELUDE}{WORKER_SOURCE}"),
    ];
    cmd.extend(env_names.iter().cloned());
    cmd
}

/// `NAME=value` for allow-listed names present in this process's environment.
pub fn allowed_env(policy: &PolicyV2) -> Vec<String> {
    policy
        .environment
        .allow
        .iter()
        .filter_map(|name| {
            let value = std::env::var_os(name)?;
            Some(format!("{name}={}", value.to_string_lossy()))
        })
        .collect()
}

/// What the create body depends on besides the call: the engine and the OCI runtime.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerOptions {
    pub engine: EngineKind,
    /// `HostConfig.Runtime` (e.g. `runsc`); `None` leaves the engine's default.
    pub runtime: Option<String>,
}

/// The `POST /containers/create` body.
pub fn create_body(
    image_id: &str,
    policy: &PolicyV2,
    bundle: &Path,
    env: &[String],
    options: &ContainerOptions,
) -> Json {
    let expires = expiry(policy, 0);
    let r = &policy.resources;
    let memory = i64::try_from(r.memory_bytes).unwrap_or(i64::MAX);
    let names: Vec<String> = policy.environment.allow.clone();
    let gvisor = options
        .runtime
        .as_deref()
        .is_some_and(attest::is_gvisor_runtime);
    let mut labels =
        json!({ EXECUTION_LABEL.0: EXECUTION_LABEL.1, EXPIRES_LABEL: expires.to_string() });
    if let Some(owner) = Owner::current() {
        labels[OWNER_LABEL] = json!(owner.encode());
    }
    let mut tmpfs = json!({
        "/tmp": format!("rw,nosuid,nodev,noexec,size={},mode=1777", r.scratch_bytes)
    });
    if options.engine == EngineKind::Podman {
        // Podman's read-only root adds unbounded writable tmpfs at /run and /var/tmp; an
        // explicit read-only mount at the same paths takes their place.
        for path in ["/run", "/var/tmp"] {
            tmpfs[path] = json!(SEALED_TMPFS);
        }
    }
    let mut body = json!({
        "Image": image_id,
        "User": CONTAINER_USER,
        "AttachStdin": true,
        "AttachStdout": true,
        "AttachStderr": true,
        "OpenStdin": true,
        "StdinOnce": true,
        "Tty": false,
        "Env": env,
        "Entrypoint": [PYTHON],
        "Cmd": worker_command(&names, gvisor),
        "WorkingDir": "/bundle",
        "NetworkDisabled": true,
        "Labels": labels,
        "Healthcheck": { "Test": ["NONE"] },
        "HostConfig": {
            "NetworkMode": "none",
            "ReadonlyRootfs": true,
            "CapDrop": ["ALL"],
            "SecurityOpt": ["no-new-privileges"],
            "IpcMode": "private",
            "CgroupnsMode": "private",
            "RestartPolicy": { "Name": "no" },
            "LogConfig": { "Type": "none" },
            "Memory": memory,
            "MemorySwap": memory,
            "CpuPeriod": CPU_PERIOD,
            "CpuQuota": r.cpu_millis.saturating_mul(CPU_PERIOD / 1000),
            "PidsLimit": r.pids,
            "ShmSize": 65536,
            "Tmpfs": tmpfs,
            "Mounts": [{
                "Type": "bind",
                "Source": bundle.to_string_lossy(),
                "Target": "/bundle",
                "ReadOnly": true,
                "BindOptions": { "Propagation": "rprivate" }
            }],
            "AutoRemove": false,
            "Privileged": false
        }
    });
    if let Some(runtime) = &options.runtime {
        body["HostConfig"]["Runtime"] = json!(runtime);
    }
    body
}

/// Make `body` (from [`create_body`]) a pooled container's: it may wait up to `max_idle` for
/// its call, so its expiry label moves by that much, and it carries [`POOL_LABEL`].
pub fn pooled(body: &mut Json, policy: &PolicyV2, max_idle: Duration) {
    body["Labels"][EXPIRES_LABEL] = json!(expiry(policy, max_idle.as_secs()).to_string());
    body["Labels"][POOL_LABEL] = json!(max_idle.as_secs().to_string());
}

/// Unix time after which a container of ours is certainly abandoned: creation, the longest
/// wait for its call, the call's deadline, and a margin.
fn expiry(policy: &PolicyV2, wait_secs: u64) -> u64 {
    unix_now()
        .saturating_add(wait_secs)
        .saturating_add(policy.limits.wall_time_ms / 1000 + 1)
        .saturating_add(EXPIRY_MARGIN_SECS)
}

/// A read-only, 4 KiB tmpfs: masks a path without giving the call anything to write.
const SEALED_TMPFS: &str = "ro,nosuid,nodev,noexec,size=4k";

pub(super) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A created container that is removed when the guard is dropped (normal return, early
/// return, timeout, or a panic unwinding through the caller).
#[derive(Debug)]
pub struct ContainerGuard {
    engine: Engine,
    name: String,
    done: Option<Result<(), String>>,
}

impl ContainerGuard {
    /// Take ownership of the container `name` (which may not exist yet: removal of a missing
    /// container succeeds).
    pub fn new(engine: Engine, name: String) -> Self {
        ContainerGuard {
            engine,
            name,
            done: None,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Hand the container to the engine (created with `AutoRemove`, it is removed when it
    /// exits): dropping the guard no longer removes it.
    pub fn leave_to_engine(mut self) {
        self.done = Some(Ok(()));
    }

    /// Remove now (see [`remove_confirmed`], with a 30 s grace). `Err` means removal could not
    /// be confirmed (`cleanup_failed`).
    pub fn remove(&mut self) -> Result<(), String> {
        if let Some(done) = &self.done {
            return done.clone();
        }
        let outcome = remove_confirmed(&self.engine, &self.name, REMOVAL_GRACE);
        self.done = Some(outcome.clone());
        outcome
    }
}

/// Up to three `DELETE ?force=1&v=1`, then a lookup that must be (or within `grace` become)
/// empty: a removal the engine is still performing, or that another process did (a DELETE
/// that outlived our timeout, or a concurrent sweep, answers 409 on retry), counts once the
/// container is gone. `Err` says why removal could not be confirmed.
pub fn remove_confirmed(engine: &Engine, name: &str, grace: Duration) -> Result<(), String> {
    let mut last = String::new();
    for _ in 0..3 {
        match engine.remove_container(name) {
            Ok(()) => return Ok(()),
            Err(e) => last = e.to_string(),
        }
    }
    let until = Instant::now() + grace;
    loop {
        match engine.container_exists(name) {
            Ok(false) => return Ok(()),
            Ok(true) if Instant::now() < until => thread::sleep(REMOVAL_POLL),
            Ok(true) => return Err(format!("container {name} still exists: {last}")),
            Err(e) => return Err(format!("{last}; lookup failed: {e}")),
        }
    }
}

impl Drop for ContainerGuard {
    fn drop(&mut self) {
        let _ = self.remove();
    }
}

/// `POST /containers/create?name=…&platform=…` for `body`; the new container's full ID.
pub fn create(
    engine: &Engine,
    name: &str,
    platform: &str,
    body: &Json,
    deadline: std::time::Instant,
) -> Result<String, EngineError> {
    let path = format!(
        "/containers/create?name={}&platform={}",
        super::http::encode_query(name),
        super::http::encode_query(platform)
    );
    let resp = engine.call("POST", &path, super::http::Body::Json(body), deadline)?;
    let created = super::engine::json_ok(resp, "POST /containers/create")?;
    Ok(created
        .get("Id")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn create_body_carries_every_control() {
        let policy = PolicyV2::from_json(&serde_json::json!({
            "resources": {"memory_bytes": 67108864, "cpu_millis": 500, "pids": 8, "scratch_bytes": 1048576},
            "environment": {"allow": ["LANG", "HOME"]}
        }))
        .unwrap();
        let body = create_body(
            "sha256:x",
            &policy,
            Path::new("/tmp/apizr-oci-1"),
            &[],
            &ContainerOptions::default(),
        );
        let host = &body["HostConfig"];
        assert_eq!(host["Memory"], 67108864);
        assert_eq!(host["MemorySwap"], 67108864);
        assert_eq!(host["CpuQuota"], 50_000);
        assert_eq!(host["CpuPeriod"], 100_000);
        assert_eq!(host["PidsLimit"], 8);
        assert_eq!(host["NetworkMode"], "none");
        assert_eq!(host["ReadonlyRootfs"], true);
        assert_eq!(host["CapDrop"], json!(["ALL"]));
        assert_eq!(
            host["Tmpfs"]["/tmp"],
            "rw,nosuid,nodev,noexec,size=1048576,mode=1777"
        );
        assert_eq!(host["Mounts"][0]["ReadOnly"], true);
        assert_eq!(body["User"], "65532:65532");
        assert_eq!(body["Labels"]["org.apizr.execution"], "oci-v1");
        let cmd = body["Cmd"].as_array().unwrap();
        assert_eq!(cmd[cmd.len() - 2], "HOME");
        assert_eq!(cmd[cmd.len() - 1], "LANG");
        assert!(cmd[3].as_str().unwrap().ends_with(WORKER_SOURCE));
        assert!(cmd[3].as_str().unwrap().starts_with("def _apizr_attest("));
        assert_eq!(
            body["Labels"][OWNER_LABEL].as_str(),
            Owner::current().map(Owner::encode).as_deref()
        );
        assert!(host.get("Runtime").is_none());
        assert_eq!(host["Tmpfs"].as_object().unwrap().len(), 1);
        // Podman: its writable /run and /var/tmp are sealed; a runtime is asked for by name.
        let podman = ContainerOptions {
            engine: EngineKind::Podman,
            runtime: Some("runsc".into()),
        };
        let body = create_body("sha256:x", &policy, Path::new("/b"), &[], &podman);
        assert_eq!(body["HostConfig"]["Tmpfs"]["/run"], SEALED_TMPFS);
        assert_eq!(body["HostConfig"]["Tmpfs"]["/var/tmp"], SEALED_TMPFS);
        assert_eq!(body["HostConfig"]["Runtime"], "runsc");
        let cmd = body["Cmd"][3].as_str().unwrap();
        assert!(cmd.contains("_apizr_attest(True, '65532')"), "{cmd}");
    }
}
