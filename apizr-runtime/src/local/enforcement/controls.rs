//! One function per control family; each pushes its report rows and sets what the launcher
//! must apply.

use apizr_ir::policy::{FilesystemMode, Mode, NetworkMode, PolicyV1, Resources, SubprocessMode};

use super::{DEFAULT_DISK_BYTES, EnforcementPlan, IdentityPlan, ViewPlan};
use crate::local::host::HostCapabilities;

/// The controls the reference tool has (always enforced by the supervisor).
pub(super) fn reference(p: &mut EnforcementPlan, policy: &PolicyV1) {
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
    let sandbox = policy.filesystem.mode == FilesystemMode::Sandbox;
    p.enforce(
        "working_directory",
        "fresh".into(),
        if sandbox {
            "the size-capped /tmp tmpfs of the call's private root, gone with its mount namespace"
        } else {
            "fresh directory (mode 0700, owned by the call's identity), removed after the call"
        },
    );
}

fn ns_suffix(host: &HostCapabilities) -> &'static str {
    if host.user_namespace {
        " (inside a user namespace)"
    } else {
        ""
    }
}

/// No privileges in any worker: a per-call uid (root host) or an unprivileged user
/// namespace (non-root host).
pub(super) fn identity(p: &mut EnforcementPlan, host: &HostCapabilities) {
    let requested = "unprivileged".to_string();
    let locked = "no supplementary groups, empty capability sets and bounding set, securebits \
                  locked (NOROOT, no setuid fix-up, no ambient raise), no_new_privs";
    if !p.use_launcher {
        if host.is_root {
            p.unenforced(
                "identity",
                requested,
                Some("no launcher: the worker runs as root"),
            );
        } else {
            p.enforce(
                "identity",
                requested,
                "the caller's uid (not root); no launcher, capabilities not checked",
            );
        }
        return;
    }
    if host.is_root && !host.user_namespace {
        if host.can_switch_ids && p.view.is_some() {
            p.identity = IdentityPlan::PerCallIds;
            p.enforce(
                "identity",
                requested,
                &format!("per-call uid and gid from the configured range; {locked}"),
            );
        } else {
            p.unenforced(
                "identity",
                requested,
                Some("root without CAP_SETUID/CAP_SETGID/CAP_SETPCAP or a mount namespace: the worker runs as root"),
            );
        }
    } else if host.is_root {
        p.unenforced(
            "identity",
            requested,
            Some("root inside a user namespace only: host files owned by root stay writable"),
        );
    } else if p.user_ns {
        p.identity = IdentityPlan::NamespaceRoot;
        p.enforce(
            "identity",
            requested,
            &format!(
                "uid {} of the host mapped to 0 in the call's user namespace; {locked}",
                nix::unistd::Uid::current()
            ),
        );
    } else {
        p.identity = IdentityPlan::Caller;
        p.enforce(
            "identity",
            requested,
            &format!(
                "the caller's uid {} (not root); no_new_privs",
                nix::unistd::Uid::current()
            ),
        );
    }
}

pub(super) fn network(p: &mut EnforcementPlan, policy: &PolicyV1, host: &HostCapabilities) {
    if policy.network.mode != NetworkMode::Deny {
        p.trivial("network", policy.network.mode.wire_name());
        return;
    }
    if p.use_launcher && host.network_namespace && p.baseline {
        p.net_ns = true;
        p.network_deny = true;
        p.enforce(
            "network",
            "deny".into(),
            &format!(
                "new network namespace without interfaces{}; socket() limited to AF_INET/AF_INET6 \
                 by seccomp, so no unix, netlink, packet or vsock socket (no host socket is \
                 reachable)",
                ns_suffix(host)
            ),
        );
    } else {
        p.refuse("network", "deny".into());
    }
}

pub(super) fn filesystem(p: &mut EnforcementPlan, policy: &PolicyV1, host: &HostCapabilities) {
    let disk = policy.resources.and_then(|r| r.disk_bytes);
    if policy.filesystem.mode != FilesystemMode::Sandbox {
        p.trivial("filesystem", policy.filesystem.mode.wire_name());
        if let Some(bytes) = disk {
            // Under `host` the worker can write wherever the host lets its uid write: a
            // size cap on one directory would be a claim, not a limit.
            p.refuse("disk", format!("{bytes} bytes"));
        }
        return;
    }
    let usable = p.view.is_some() && !host.python_prefixes.is_empty();
    if !usable {
        p.refuse("filesystem", "sandbox".into());
        if let Some(bytes) = disk {
            p.refuse("disk", format!("{bytes} bytes"));
        }
        return;
    }
    p.view = Some(ViewPlan::Sandbox);
    p.landlock = host.landlock_abi > 0;
    let second = if p.landlock {
        format!(
            "; Landlock ABI {}{} as a second layer (read-only everywhere but /tmp)",
            host.landlock_abi,
            if host.landlock_fully_enforced {
                ""
            } else {
                ", partial rights"
            }
        )
    } else {
        String::new()
    };
    let mut requested = "sandbox".to_string();
    if !policy.filesystem.read_roots.is_empty() {
        requested.push_str(&format!(
            " + read_roots [{}]",
            policy.filesystem.read_roots.join(", ")
        ));
    }
    p.enforce(
        "filesystem",
        requested,
        &format!(
            "mount namespace and pivot_root into a private root: read-only binds of the \
             system directories, the interpreter and the read roots, minimal /dev, fresh \
             /proc, writable tmpfs /tmp only; no /home, /root, /run, /sys or host socket{second}"
        ),
    );
    let bytes = disk.unwrap_or(DEFAULT_DISK_BYTES);
    p.disk_bytes = Some(bytes);
    p.enforce(
        "disk",
        match disk {
            Some(b) => format!("{b} bytes"),
            None => format!("{bytes} bytes (default)"),
        },
        "tmpfs size limit on /tmp, the only writable place (its pages also count against \
         the memory limit)",
    );
}

pub(super) fn subprocess(p: &mut EnforcementPlan, policy: &PolicyV1, host: &HostCapabilities) {
    if policy.subprocess.mode != SubprocessMode::Deny {
        p.trivial("subprocess", policy.subprocess.mode.wire_name());
        return;
    }
    if host.seccomp_filter {
        p.seccomp = true;
        p.enforce(
            "subprocess",
            "deny".into(),
            "seccomp-bpf installed by the worker before user code: fork, vfork, execve, \
             execveat and non-thread clone fail with EPERM",
        );
    } else {
        p.refuse("subprocess", "deny".into());
    }
}

/// The baseline filter every governed call gets.
pub(super) fn syscalls(p: &mut EnforcementPlan) {
    if p.baseline {
        p.enforce(
            "syscalls",
            "baseline".into(),
            "seccomp-bpf allow-list installed by the launcher right before exec (Docker's \
             default profile, tightened): no namespaces or mounts, ptrace, process_vm_*, bpf, \
             perf_event_open, io_uring, userfaultfd, keyrings, open_by_handle_at, module or \
             kexec calls, sethostname, device mknod; other architectures and x32 killed",
        );
    } else {
        p.unenforced(
            "syscalls",
            "baseline".into(),
            Some("no launcher or no seccomp filter support"),
        );
    }
}

pub(super) fn resources(p: &mut EnforcementPlan, policy: &PolicyV1, host: &HostCapabilities) {
    let resources = policy.resources.unwrap_or(Resources {
        disk_bytes: None,
        cpu_millis: None,
        memory_bytes: None,
        pids: None,
    });
    let launcher = p.use_launcher;
    if let Some(bytes) = resources.memory_bytes {
        match (&host.cgroup_memory, launcher) {
            (Some(cg), true) => {
                p.rlimit_as = Some(bytes);
                p.memory = Some(bytes);
                let limit = if cg.version == "v2" {
                    "memory.max and memory.swap.max 0"
                } else {
                    "memory.limit_in_bytes and memory.memsw.limit_in_bytes"
                };
                p.enforce(
                    "memory",
                    format!("{bytes} bytes"),
                    &format!(
                        "cgroup {} {limit} on a per-call group (counts memfd, shared memory \
                         and tmpfs pages), and RLIMIT_AS on the worker",
                        cg.version
                    ),
                );
            }
            _ => p.refuse("memory", format!("{bytes} bytes")),
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
                &format!(
                    "RLIMIT_CPU {secs} s (whole seconds, rounded up), SIGKILL one second later"
                ),
            );
        } else {
            p.refuse("cpu", format!("{ms} ms"));
        }
    }
}

/// Process visibility, descendants and lifetime.
pub(super) fn processes(p: &mut EnforcementPlan, host: &HostCapabilities) {
    let suffix = ns_suffix(host);
    if p.view.is_some() {
        p.enforce(
            "proc",
            "private".into(),
            &format!("fresh /proc of the call's PID namespace: no host process visible{suffix}"),
        );
    } else if p.pid_ns && host.mount_namespace {
        // Inside a container engine that masks parts of /proc, the kernel refuses new proc
        // mounts: the call sees the /proc of the place the server runs (in a container, the
        // container's processes).
        p.unenforced(
            "proc",
            "private".into(),
            Some("a fresh /proc cannot be mounted (see notes): the /proc where the server runs is visible"),
        );
    } else {
        p.unenforced(
            "proc",
            "private".into(),
            Some("no PID or mount namespace: the host's /proc is visible"),
        );
    }
    if p.pid_ns {
        p.enforce(
            "descendants",
            "terminated with the call".into(),
            &format!("PID namespace with the worker as PID 1{suffix}"),
        );
    } else {
        p.unenforced(
            "descendants",
            "terminated with the call".into(),
            Some("process-group kill only; detached descendants may escape"),
        );
    }
    if p.use_launcher {
        p.enforce(
            "lifetime",
            "ends with the supervisor".into(),
            "the launcher watches the supervisor through a pidfd: if it dies, the call's PID \
             namespace is killed and its working directory and cgroups removed; leftovers of \
             dead supervisors are swept at start",
        );
    } else {
        p.unenforced(
            "lifetime",
            "ends with the supervisor".into(),
            Some("no launcher: a worker outlives a killed supervisor"),
        );
    }
}
