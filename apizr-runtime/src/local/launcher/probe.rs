//! Launcher `probe` mode: try each mechanism once in a throwaway single-threaded process and
//! print what worked as one JSON line. The supervisor caches the answer for the process.

use landlock::{ABI, Access, AccessFs, LandlockStatus, Ruleset, RulesetAttr, RulesetStatus};
use nix::sched::{CloneFlags, unshare};
use serde::{Deserialize, Serialize};

/// What the probe found. `user_ns` is true when namespaces needed (and got) a user namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeReport {
    pub is_root: bool,
    pub user_ns: bool,
    pub net_ns: bool,
    pub pid_ns: bool,
    /// Kernel Landlock ABI (0 = unavailable).
    pub landlock_abi: u32,
    /// True when our requested rights are fully enforced (not best-effort partial).
    pub landlock_full: bool,
    pub seccomp_filter: bool,
    /// New IPC and UTS namespaces.
    #[serde(default)]
    pub ipc_uts_ns: bool,
    /// A private mount namespace in which a tmpfs could be mounted (the filesystem view).
    #[serde(default)]
    pub mount_ns: bool,
    /// A fresh `/proc` could be mounted by PID 1 of a new PID namespace. Container engines
    /// mask parts of their `/proc` (Docker's masked paths), and the kernel then refuses a new
    /// `proc` mount to anyone below the container's user namespace owner ("too revealing").
    #[serde(default)]
    pub fresh_proc: bool,
    /// The launcher's effective capabilities (`CapEff`): a root host needs `CAP_SETUID`,
    /// `CAP_SETGID` and `CAP_SETPCAP` to drop to the per-call identity.
    #[serde(default)]
    pub cap_eff: u64,
    pub errors: Vec<String>,
}

pub(super) fn run() -> i32 {
    let report = probe();
    match serde_json::to_string(&report) {
        Ok(line) => {
            println!("{line}");
            0
        }
        Err(_) => super::SETUP_FAILED,
    }
}

fn probe() -> ProbeReport {
    let mut report = ProbeReport {
        is_root: nix::unistd::Uid::effective().is_root(),
        ..ProbeReport::default()
    };
    let both = CloneFlags::CLONE_NEWNET | CloneFlags::CLONE_NEWPID;
    match unshare(both) {
        Ok(()) => {
            report.net_ns = true;
            report.pid_ns = true;
        }
        Err(first) => match super::run::enter_user_namespace() {
            Ok(()) => {
                report.user_ns = true;
                report.net_ns = unshare(CloneFlags::CLONE_NEWNET).is_ok();
                report.pid_ns = unshare(CloneFlags::CLONE_NEWPID).is_ok();
            }
            Err(second) => report.errors.push(format!(
                "namespaces: {first}; with a user namespace: {second}"
            )),
        },
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    report.seccomp_filter = status.contains("Seccomp_filters:");
    report.cap_eff = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0);
    if report.net_ns || report.pid_ns {
        report.ipc_uts_ns = unshare(CloneFlags::CLONE_NEWIPC | CloneFlags::CLONE_NEWUTS).is_ok();
        match mount_namespace() {
            Ok(()) => report.mount_ns = true,
            Err(e) => report.errors.push(e),
        }
        if report.mount_ns && report.pid_ns {
            match fresh_proc() {
                Ok(()) => report.fresh_proc = true,
                Err(e) => report.errors.push(e),
            }
        }
    }
    let abi = super::landlock::LANDLOCK_ABI;
    let restricted = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.create())
        .and_then(|r| r.restrict_self());
    match restricted {
        Ok(status) => {
            report.landlock_full = status.ruleset == RulesetStatus::FullyEnforced;
            if let LandlockStatus::Available {
                effective_abi,
                kernel_abi,
            } = status.landlock
            {
                report.landlock_abi = kernel_abi
                    .and_then(|v| u32::try_from(v).ok())
                    .unwrap_or_else(|| abi_number(effective_abi));
            }
        }
        Err(e) => report.errors.push(format!("landlock: {e}")),
    }
    report
}

/// A private mount namespace with a tmpfs mounted in it (undone when the probe exits).
fn mount_namespace() -> Result<(), String> {
    use rustix::mount::{MountFlags, MountPropagationFlags, mount, mount_change};
    unshare(CloneFlags::CLONE_NEWNS).map_err(|e| format!("mount namespace: {e}"))?;
    mount_change(
        "/",
        MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
    )
    .map_err(|e| format!("mount namespace: making / private: {e}"))?;
    mount(
        "tmpfs",
        std::env::temp_dir(),
        "tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV,
        None,
    )
    .map_err(|e| format!("mount namespace: tmpfs: {e}"))
}

/// Start PID 1 of the new PID namespace (this binary, `probe-proc`) and let it mount a
/// `proc` on a directory of the probe's tmpfs: exactly what the launcher's `init` does.
fn fresh_proc() -> Result<(), String> {
    let target = std::env::temp_dir().join("proc");
    std::fs::create_dir(&target).map_err(|e| format!("fresh /proc: {e}"))?;
    let out = std::process::Command::new("/proc/self/exe")
        .arg(super::LAUNCH_ARG)
        .arg("probe-proc")
        .arg(&target)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|e| format!("fresh /proc: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// `probe-proc DIR`: as PID 1 of the probe's PID namespace, mount a fresh `proc` on `DIR`.
pub(super) fn mount_proc(target: &std::path::Path) -> i32 {
    match super::view::mount_proc(target) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!(
                "fresh /proc: {e} (the container engine masks parts of its /proc, or no PID \
                 namespace)"
            );
            super::SETUP_FAILED
        }
    }
}

fn abi_number(abi: ABI) -> u32 {
    (1..=64)
        .find(|n| ABI::from(*n) == abi)
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0)
}
