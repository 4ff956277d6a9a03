//! From a policy and the host's capabilities to an enforcement plan: for each control either a
//! named mechanism that enforces it, or a refusal before launch (`policy_refused`). Nothing is
//! ever "best effort" silently; the per-call report says what was requested and how it was
//! enforced.
//!
//! Two kinds of rows: controls a policy requests (network, filesystem, subprocess, resources
//! — refused when this host cannot enforce them), and controls every governed call gets
//! (identity, syscalls, proc, descendants, lifetime — reported `enforced: false` with the
//! reason when the host cannot give them; they are never claimed).

mod controls;
mod reasons;
#[cfg(test)]
mod tests;

use apizr_ir::policy::PolicyV1;
use serde::Serialize;

use crate::local::host::HostCapabilities;

pub use reasons::{Unenforceable, refusal_reason, unenforceable};

/// Size of the sandbox's writable tmpfs when the policy does not set `resources.disk_bytes`.
pub const DEFAULT_DISK_BYTES: u64 = 64 << 20;

/// One line of the per-call enforcement report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ControlReport {
    pub control: &'static str,
    pub requested: String,
    pub enforced: bool,
    pub mechanism: Option<String>,
}

/// Who the worker runs as.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IdentityPlan {
    /// Not dropped (no launcher on a root host, or no way to switch ids): reported.
    #[default]
    Unchanged,
    /// A non-root caller without a user namespace: already unprivileged.
    Caller,
    /// A root host: a per-call uid/gid from the configured range.
    PerCallIds,
    /// A non-root host: uid 0 of the call's own user namespace, with no capabilities.
    NamespaceRoot,
}

/// The call's filesystem view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewPlan {
    /// Host tree, fresh `/proc`.
    Host,
    /// Private root (`filesystem: sandbox`).
    Sandbox,
}

/// What the supervisor and launcher must apply for one call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnforcementPlan {
    pub controls: Vec<ControlReport>,
    /// Requested controls this host cannot enforce; non-empty means `policy_refused`.
    pub refused: Vec<&'static str>,
    pub use_launcher: bool,
    pub user_ns: bool,
    pub net_ns: bool,
    pub pid_ns: bool,
    pub ipc_uts_ns: bool,
    pub identity: IdentityPlan,
    /// A mount namespace with this view (`None`: the host's, as is).
    pub view: Option<ViewPlan>,
    /// Landlock filesystem rules (sandbox second layer).
    pub landlock: bool,
    /// Landlock scopes: abstract unix sockets and signals stay inside the call (ABI 6+).
    pub landlock_scope: bool,
    /// `subprocess: deny` programs, installed by the worker.
    pub seccomp: bool,
    /// The baseline filter, installed by the launcher.
    pub baseline: bool,
    pub network_deny: bool,
    pub rlimit_as: Option<u64>,
    pub rlimit_cpu_secs: Option<u64>,
    /// `pids.max` of the per-call cgroup (the worker's tree; the launcher's slot is added).
    pub pids: Option<u64>,
    /// Memory limit of the per-call cgroup.
    pub memory: Option<u64>,
    /// Size of the sandbox's `/tmp` tmpfs.
    pub disk_bytes: Option<u64>,
}

/// Plan the enforcement of `policy` on `host`.
pub fn plan(policy: &PolicyV1, host: &HostCapabilities) -> EnforcementPlan {
    let launcher = host.launcher.is_some();
    let mut p = EnforcementPlan {
        use_launcher: launcher,
        user_ns: launcher && host.user_namespace,
        pid_ns: launcher && host.pid_namespace,
        ipc_uts_ns: launcher && host.ipc_uts_namespace,
        baseline: launcher && host.seccomp_filter,
        landlock_scope: launcher && host.landlock_abi >= 6,
        ..EnforcementPlan::default()
    };
    // The call's own view needs a fresh /proc (else it would show the host's processes).
    if p.pid_ns && host.mount_namespace && host.fresh_proc {
        p.view = Some(ViewPlan::Host);
    }
    controls::reference(&mut p, policy);
    controls::identity(&mut p, host);
    controls::network(&mut p, policy, host);
    controls::filesystem(&mut p, policy, host);
    controls::subprocess(&mut p, policy, host);
    controls::syscalls(&mut p);
    controls::resources(&mut p, policy, host);
    controls::processes(&mut p, host);
    p
}

impl EnforcementPlan {
    fn enforce(&mut self, control: &'static str, requested: String, mechanism: &str) {
        self.controls.push(ControlReport {
            control,
            requested,
            enforced: true,
            mechanism: Some(mechanism.to_string()),
        });
    }

    fn trivial(&mut self, control: &'static str, mode: &str) {
        self.controls.push(ControlReport {
            control,
            requested: mode.to_string(),
            enforced: true,
            mechanism: None,
        });
    }

    /// A requested control this host cannot enforce: the call is refused.
    fn refuse(&mut self, control: &'static str, requested: String) {
        self.refused.push(control);
        self.unenforced(control, requested, None);
    }

    /// An always-on control this host cannot give: reported, with why.
    fn unenforced(&mut self, control: &'static str, requested: String, why: Option<&str>) {
        self.controls.push(ControlReport {
            control,
            requested,
            enforced: false,
            mechanism: why.map(str::to_string),
        });
    }
}
