//! From a policy and the host's capabilities to an enforcement plan: for each control either a
//! named mechanism that enforces it, or a refusal before launch (`policy_refused`). Nothing is
//! ever "best effort" silently; the per-call report says what was requested and how it was
//! enforced.

use apizr_ir::policy::{FilesystemMode, Mode, NetworkMode, PolicyV1, SubprocessMode};
use serde::Serialize;

use crate::local::host::HostCapabilities;

/// One line of the per-call enforcement report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ControlReport {
    pub control: &'static str,
    pub requested: String,
    pub enforced: bool,
    pub mechanism: Option<String>,
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
    pub landlock: bool,
    pub seccomp: bool,
    pub rlimit_as: Option<u64>,
    pub rlimit_cpu_secs: Option<u64>,
    /// `pids.max` of the per-call cgroup (the worker's tree; the launcher's slot is added).
    pub pids: Option<u64>,
}

/// Plan the enforcement of `policy` on `host`.
pub fn plan(policy: &PolicyV1, host: &HostCapabilities) -> EnforcementPlan {
    let launcher = host.launcher.is_some();
    let mut p = EnforcementPlan {
        use_launcher: launcher,
        pid_ns: launcher && host.pid_namespace,
        ..EnforcementPlan::default()
    };
    let limits = &policy.limits;
    p.enforce(
        "wall_timeout",
        format!("{} ms", limits.wall_time_ms),
        "supervisor deadline covering start-up; SIGKILL of the process group",
    );
    p.enforce(
        "input_limit",
        format!("{} bytes", limits.max_input_bytes),
        "canonical argument size checked before spawn and in the worker",
    );
    p.enforce(
        "output_limit",
        format!("{} bytes", limits.max_output_bytes),
        "bounded pipe read in the supervisor; size check in the worker",
    );
    if policy.environment.inherit {
        p.enforce("environment", "inherit".into(), "parent environment passed");
    } else {
        p.enforce(
            "environment",
            format!("allow [{}]", policy.environment.allow.join(", ")),
            "cleared environment with allow-listed names only",
        );
    }
    p.enforce(
        "working_directory",
        "fresh".into(),
        "fresh private temporary directory, removed after the call",
    );
    let ns_suffix = if host.user_namespace {
        " (inside a user namespace)"
    } else {
        ""
    };
    if policy.network.mode == NetworkMode::Deny {
        if launcher && host.network_namespace {
            p.net_ns = true;
            p.enforce(
                "network",
                "deny".into(),
                &format!("new network namespace without interfaces{ns_suffix}"),
            );
        } else {
            p.refuse("network", "deny".into());
        }
    } else {
        p.trivial("network", policy.network.mode.wire_name());
    }
    if policy.filesystem.mode == FilesystemMode::Sandbox {
        if launcher && host.landlock_abi > 0 {
            p.landlock = true;
            let scope = if host.landlock_fully_enforced {
                ""
            } else {
                ", partial rights on this kernel"
            };
            p.enforce(
                "filesystem",
                "sandbox".into(),
                &format!(
                    "landlock ABI {}{scope}: read-only host, writable working directory and private tmp",
                    host.landlock_abi
                ),
            );
        } else {
            p.refuse("filesystem", "sandbox".into());
        }
    } else {
        p.trivial("filesystem", policy.filesystem.mode.wire_name());
    }
    if policy.subprocess.mode == SubprocessMode::Deny {
        if host.seccomp_filter {
            p.seccomp = true;
            p.enforce(
                "subprocess",
                "deny".into(),
                "seccomp-bpf installed by the worker before user code: fork, vfork, execve, execveat and non-thread clone fail with EPERM",
            );
        } else {
            p.refuse("subprocess", "deny".into());
        }
    } else {
        p.trivial("subprocess", policy.subprocess.mode.wire_name());
    }
    let resources = policy.resources.unwrap_or(apizr_ir::policy::Resources {
        cpu_millis: None,
        memory_bytes: None,
        pids: None,
    });
    if let Some(bytes) = resources.memory_bytes {
        if launcher {
            p.rlimit_as = Some(bytes);
            p.enforce(
                "memory",
                format!("{bytes} bytes"),
                "RLIMIT_AS (address space) on the worker",
            );
        } else {
            p.refuse("memory", format!("{bytes} bytes"));
        }
    }
    if let Some(pids) = resources.pids {
        match (&host.cgroup_pids, launcher) {
            (Some(cg), true) => {
                p.pids = Some(pids);
                p.enforce(
                    "pids",
                    pids.to_string(),
                    &format!("cgroup {} pids.max on a per-call group", cg.version),
                );
            }
            _ => p.refuse("pids", pids.to_string()),
        }
    }
    if let Some(ms) = resources.cpu_millis {
        if launcher {
            let secs = ms.div_ceil(1000);
            p.rlimit_cpu_secs = Some(secs);
            p.enforce(
                "cpu",
                format!("{ms} ms"),
                &format!("RLIMIT_CPU {secs} s (whole seconds, rounded up)"),
            );
        } else {
            p.refuse("cpu", format!("{ms} ms"));
        }
    }
    p.user_ns = host.user_namespace && (p.net_ns || p.pid_ns);
    let descendants = if p.pid_ns {
        ControlReport {
            control: "descendants",
            requested: "terminated with the call".into(),
            enforced: true,
            mechanism: Some(format!("PID namespace with the worker as PID 1{ns_suffix}")),
        }
    } else {
        ControlReport {
            control: "descendants",
            requested: "terminated with the call".into(),
            enforced: false,
            mechanism: Some("process-group kill only; detached descendants may escape".into()),
        }
    };
    p.controls.push(descendants);
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

    fn refuse(&mut self, control: &'static str, requested: String) {
        self.refused.push(control);
        self.controls.push(ControlReport {
            control,
            requested,
            enforced: false,
            mechanism: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(text: &str) -> PolicyV1 {
        PolicyV1::from_json(&serde_json::from_str(text).unwrap()).unwrap()
    }

    #[test]
    fn without_a_launcher_every_linux_control_is_refused() {
        let host = HostCapabilities::default();
        let p = plan(
            &policy(
                r#"{"network":{"mode":"deny"},"filesystem":{"mode":"sandbox"},"subprocess":{"mode":"deny"},"resources":{"memory_bytes":268435456,"pids":8,"cpu_millis":1000}}"#,
            ),
            &host,
        );
        assert_eq!(
            p.refused,
            vec![
                "network",
                "filesystem",
                "subprocess",
                "memory",
                "pids",
                "cpu"
            ]
        );
        assert!(plan(&policy("{}"), &host).refused.is_empty());
    }

    #[test]
    fn a_capable_host_enforces_everything_by_name() {
        let host = HostCapabilities {
            launcher: Some("/x".into()),
            network_namespace: true,
            pid_namespace: true,
            landlock_abi: 7,
            landlock_fully_enforced: true,
            seccomp_filter: true,
            cgroup_pids: Some(crate::local::host::CgroupPids {
                version: "v1",
                base: "/sys/fs/cgroup/pids".into(),
            }),
            ..HostCapabilities::default()
        };
        let p = plan(
            &policy(
                r#"{"network":{"mode":"deny"},"filesystem":{"mode":"sandbox"},"subprocess":{"mode":"deny"},"resources":{"memory_bytes":268435456,"pids":8,"cpu_millis":1500}}"#,
            ),
            &host,
        );
        assert!(p.refused.is_empty());
        assert!(p.controls.iter().all(|c| c.enforced));
        assert_eq!(p.rlimit_cpu_secs, Some(2));
        assert!(p.net_ns && p.pid_ns && p.landlock && p.seccomp && !p.user_ns);
    }
}
