//! Why the planner refused a requested control on this host, in words an operator can act on.
//! `apizr doctor`, the servers' readiness (`/readyz`, start-up log) and refused calls all use
//! these texts, so they never disagree.

use apizr_ir::policy::{FilesystemMode, PolicyV1};

use super::plan;
use crate::local::host::HostCapabilities;

/// A requested control this host cannot enforce: what was asked and why it cannot be given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unenforceable {
    pub control: &'static str,
    pub requested: String,
    pub reason: String,
}

impl std::fmt::Display for Unenforceable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.control, self.requested, self.reason)
    }
}

/// Every control of `policy` that `host` cannot enforce (empty: every call can run).
pub fn unenforceable(policy: &PolicyV1, host: &HostCapabilities) -> Vec<Unenforceable> {
    let planned = plan(policy, host);
    planned
        .refused
        .iter()
        .map(|control| Unenforceable {
            control,
            requested: planned
                .controls
                .iter()
                .find(|c| c.control == *control)
                .map(|c| c.requested.clone())
                .unwrap_or_default(),
            reason: if *control == "disk" && policy.filesystem.mode != FilesystemMode::Sandbox {
                "a disk cap needs `filesystem: sandbox` (under `host` the worker writes \
                 wherever its uid may, so a cap on one directory would be a claim)"
                    .into()
            } else {
                refusal_reason(control, host)
            },
        })
        .collect()
}

/// Why the planner refused `control` on `host`: the missing mechanism, the probe's own error
/// where it has one.
pub fn refusal_reason(control: &str, host: &HostCapabilities) -> String {
    let no_launcher = "no working launcher (see notes)".to_string();
    if host.launcher.is_none() && control != "subprocess" {
        return no_launcher;
    }
    let namespaces = || {
        host.notes
            .iter()
            .find(|n| n.starts_with("namespaces:"))
            .map(|n| format!(" ({n})"))
            .unwrap_or_default()
    };
    match control {
        "network" if !host.network_namespace => format!(
            "cannot create a network namespace, even inside a user namespace{}; in a \
             container, the engine's seccomp profile must allow unshare (apizr generate \
             writes one)",
            namespaces()
        ),
        "network" => "no seccomp filter to refuse unix, netlink and packet sockets".into(),
        "filesystem" | "disk" if !host.pid_namespace || !host.mount_namespace => format!(
            "cannot create a private mount namespace with a PID namespace{}",
            namespaces()
        ),
        "filesystem" | "disk" if !host.fresh_proc => {
            let why = host
                .notes
                .iter()
                .find(|n| n.starts_with("fresh /proc"))
                .cloned()
                .unwrap_or_else(|| "fresh /proc: not mountable".into());
            format!(
                "a fresh /proc cannot be mounted for the call ({why}); container engines mask \
                 parts of /proc, and the kernel then refuses new proc mounts"
            )
        }
        "filesystem" | "disk" => {
            "the interpreter's installation prefixes are unknown (sys.prefix did not answer)".into()
        }
        "subprocess" => "the kernel does not support seccomp filters".into(),
        "memory" => "no writable cgroup memory hierarchy (RLIMIT_AS alone does not count memfd, \
                     shared memory or tmpfs pages)"
            .into(),
        "pids" => "no writable cgroup pids hierarchy (v2 delegation or v1 group)".into(),
        "descendants" => {
            "cannot create a PID namespace: process-group kill only, detached descendants may escape"
                .into()
        }
        _ => no_launcher,
    }
}
