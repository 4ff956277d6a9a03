//! Launcher `run` mode: apply the controls of a [`LaunchConfig`] in order, then start Python.

use std::fs;
use std::process::Command;

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus,
};
use nix::sched::{CloneFlags, unshare};
use nix::sys::resource::{Resource, setrlimit};
use nix::unistd::{Gid, Uid};

use super::{LandlockConfig, LaunchConfig, SETUP_FAILED};

/// The Landlock ABI whose access rights we ask for (best effort below it, reported as partial).
pub(crate) const LANDLOCK_ABI: ABI = ABI::V5;

pub(super) fn run(config: &LaunchConfig) -> i32 {
    if let Err(message) = apply(config) {
        eprintln!("apizr-launch: {message}");
        return SETUP_FAILED;
    }
    let mut child = match Command::new(&config.program).args(&config.args).spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!(
                "apizr-launch: cannot start {}: {e}",
                config.program.display()
            );
            return SETUP_FAILED;
        }
    };
    // The worker holds the pipes now; drop ours so EOF follows the worker's exit.
    if let Ok(null) = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        let _ = nix::unistd::dup2_stdin(&null);
        let _ = nix::unistd::dup2_stdout(&null);
        let _ = nix::unistd::dup2_stderr(&null);
    }
    match child.wait() {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt;
            status
                .code()
                .or_else(|| status.signal().map(|s| 128 + s))
                .unwrap_or(SETUP_FAILED)
        }
        Err(_) => SETUP_FAILED,
    }
}

/// Exit code of a worker stopped at its RLIMIT_CPU soft limit: the worker turns SIGXCPU into
/// `_exit(128 + SIGXCPU)` (as PID 1 of its namespace, the default action would be dropped).
pub const CPU_LIMIT_EXIT: i32 = 128 + nix::sys::signal::Signal::SIGXCPU as i32;

fn apply(config: &LaunchConfig) -> Result<(), String> {
    let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL);
    if let Some(procs) = &config.cgroup_procs {
        fs::write(procs, std::process::id().to_string())
            .map_err(|e| format!("joining cgroup {}: {e}", procs.display()))?;
    }
    if config.user_ns {
        enter_user_namespace()?;
    }
    let mut flags = CloneFlags::empty();
    if config.net_ns {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    if config.pid_ns {
        flags |= CloneFlags::CLONE_NEWPID;
    }
    if !flags.is_empty() {
        unshare(flags).map_err(|e| format!("unshare({flags:?}): {e}"))?;
    }
    if let Some(bytes) = config.rlimit_as {
        setrlimit(Resource::RLIMIT_AS, bytes, bytes).map_err(|e| format!("RLIMIT_AS: {e}"))?;
    }
    if let Some(secs) = config.rlimit_cpu_secs {
        // Soft limit: SIGXCPU, handled by the worker; one second later SIGKILL, which no
        // handler can ignore.
        setrlimit(Resource::RLIMIT_CPU, secs, secs.saturating_add(1))
            .map_err(|e| format!("RLIMIT_CPU: {e}"))?;
    }
    if let Some(rules) = &config.landlock {
        apply_landlock(rules)?;
    }
    Ok(())
}

/// Map the caller to root inside a new user namespace (so the following unshares work
/// without host privileges).
pub(super) fn enter_user_namespace() -> Result<(), String> {
    let uid = Uid::current();
    let gid = Gid::current();
    unshare(CloneFlags::CLONE_NEWUSER).map_err(|e| format!("unshare(user): {e}"))?;
    fs::write("/proc/self/setgroups", "deny").map_err(|e| format!("setgroups: {e}"))?;
    fs::write("/proc/self/uid_map", format!("0 {uid} 1")).map_err(|e| format!("uid_map: {e}"))?;
    fs::write("/proc/self/gid_map", format!("0 {gid} 1")).map_err(|e| format!("gid_map: {e}"))?;
    Ok(())
}

fn apply_landlock(rules: &LandlockConfig) -> Result<(), String> {
    let abi = LANDLOCK_ABI;
    let err = |e: landlock::RulesetError| format!("landlock: {e}");
    let mut created = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(err)?
        .create()
        .map_err(err)?;
    let read = AccessFs::from_read(abi);
    let file_rw = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate;
    for (paths, access) in [
        (&rules.read_only, read),
        (&rules.read_write, AccessFs::from_all(abi)),
        (&rules.write_files, file_rw),
    ] {
        for path in paths {
            let fd = PathFd::new(path).map_err(|e| format!("landlock {}: {e}", path.display()))?;
            created = created
                .add_rule(PathBeneath::new(fd, access))
                .map_err(err)?;
        }
    }
    let status = created.restrict_self().map_err(err)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err("landlock: ruleset not enforced by this kernel".into());
    }
    Ok(())
}
