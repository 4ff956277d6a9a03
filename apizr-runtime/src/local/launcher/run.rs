//! Stage 1 (`run`): cgroups, namespaces, start PID 1, wait on the lifeline, tear down.

use std::ffi::OsString;
use std::fs;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{Child, Command};

use nix::sched::{CloneFlags, unshare};
use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::signal::{Signal, kill};
use nix::unistd::{Gid, Pid, Uid};
use rustix::event::{PollFd, PollFlags, poll};
use rustix::process::{PidfdFlags, pidfd_open};

use super::{LAUNCH_ARG, LaunchConfig, SETUP_FAILED};

/// Exit code of a worker stopped by its CPU limit: the worker turns SIGXCPU into
/// `_exit(128 + SIGXCPU)` (as PID 1 the default action would be dropped), and when the hard
/// limit's SIGKILL came first, stage 1 reports the same code from the child's CPU time.
pub const CPU_LIMIT_EXIT: i32 = 128 + Signal::SIGXCPU as i32;

pub(super) fn run(config: &LaunchConfig, args: &[OsString]) -> i32 {
    let lifeline = match setup(config) {
        Ok(lifeline) => lifeline,
        Err(message) => {
            eprintln!("apizr-launch: {message}");
            orphan_teardown(config);
            return SETUP_FAILED;
        }
    };
    let child = Command::new("/proc/self/exe")
        .arg(LAUNCH_ARG)
        .arg("init")
        .args(args.get(1))
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => {
            eprintln!("apizr-launch: cannot start the call's first process: {e}");
            orphan_teardown(config);
            return SETUP_FAILED;
        }
    };
    // The call's first process is in the call's cgroups (it was forked inside them); this
    // launcher leaves them at once. A sweep by any other apizr process kills every task of a
    // dead owner's cgroups, and the launcher must outlive its supervisor long enough to end
    // the call and remove the working directory.
    leave_cgroups(config);
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
    if let Some(lifeline) = lifeline
        && !wait_either(&child, &lifeline)
    {
        // The supervisor is gone: nobody will read the answer. End the call and clean up
        // what the supervisor would have removed.
        let _ = child.kill();
        let _ = child.wait();
        teardown(config);
        return SETUP_FAILED;
    }
    match child.wait() {
        Ok(status) => exit_code(config, status),
        Err(_) => SETUP_FAILED,
    }
}

/// Open the lifeline, join the cgroups, enter the namespaces.
fn setup(config: &LaunchConfig) -> Result<Option<OwnedFd>, String> {
    let lifeline = match config.supervisor {
        Some(pid) => {
            let raw = rustix::process::Pid::from_raw(pid)
                .ok_or_else(|| format!("invalid supervisor pid {pid}"))?;
            let fd = pidfd_open(raw, PidfdFlags::empty())
                .map_err(|e| format!("pidfd_open(supervisor {pid}): {e}"))?;
            // The pidfd names the process with that PID now; it is our supervisor only if we
            // are still its child (a reused PID would not be our parent).
            if nix::unistd::getppid().as_raw() != pid {
                return Err("the supervisor exited before the call started".into());
            }
            Some(fd)
        }
        None => None,
    };
    for procs in &config.cgroup_procs {
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
    if config.ipc_uts_ns {
        flags |= CloneFlags::CLONE_NEWIPC | CloneFlags::CLONE_NEWUTS;
    }
    if !flags.is_empty() {
        unshare(flags).map_err(|e| format!("unshare({flags:?}): {e}"))?;
    }
    Ok(lifeline)
}

/// Map the caller to root inside a new user namespace (so the following unshares and the
/// mount namespace work without host privileges; stage 2 empties the capability sets before
/// the worker runs).
pub(super) fn enter_user_namespace() -> Result<(), String> {
    let uid = Uid::current();
    let gid = Gid::current();
    unshare(CloneFlags::CLONE_NEWUSER).map_err(|e| format!("unshare(user): {e}"))?;
    fs::write("/proc/self/setgroups", "deny").map_err(|e| format!("setgroups: {e}"))?;
    fs::write("/proc/self/uid_map", format!("0 {uid} 1")).map_err(|e| format!("uid_map: {e}"))?;
    fs::write("/proc/self/gid_map", format!("0 {gid} 1")).map_err(|e| format!("gid_map: {e}"))?;
    Ok(())
}

/// Block until the child exits while the supervisor lives (true) or the supervisor dies
/// (false).
fn wait_either(child: &Child, supervisor: &OwnedFd) -> bool {
    let Some(pid) = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return true;
    };
    let Ok(child_fd) = pidfd_open(pid, PidfdFlags::empty()) else {
        return true;
    };
    loop {
        let mut fds = [
            PollFd::new(&child_fd, PollFlags::IN),
            PollFd::new(supervisor, PollFlags::IN),
        ];
        match poll(&mut fds, None) {
            Ok(_) => {
                if !fds[0].revents().is_empty() {
                    // The child ended; the supervisor may have died just before. A killed
                    // server's pipes close before its pidfd reports the exit (the kernel
                    // closes a dying process's files first), so an idle worker's exit on
                    // EOF can win this poll: look at the lifeline once more, without
                    // waiting, so a dead supervisor's call is still torn down here.
                    return fds[1].revents().is_empty() && supervisor_alive(supervisor);
                }
                if !fds[1].revents().is_empty() {
                    return false;
                }
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return true,
        }
    }
}

/// The lifeline (the supervisor's pidfd) is not readable yet: the supervisor has not exited.
fn supervisor_alive(supervisor: &OwnedFd) -> bool {
    let mut fds = [PollFd::new(supervisor, PollFlags::IN)];
    let now = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match poll(&mut fds, Some(&now)) {
        Ok(_) => fds[0].revents().is_empty(),
        // Not known: keep the old answer (the supervisor cleans up after the child).
        Err(_) => true,
    }
}

/// A setup that failed tells a live supervisor, which removes the call's directory and
/// cgroups. A supervisor that died while this launcher was starting (a server killed while
/// its pool refilled) never will: the launcher is then the last one who knows them, so it
/// tears them down itself instead of leaving them for the next server's sweep.
fn orphan_teardown(config: &LaunchConfig) {
    if let Some(pid) = config.supervisor
        && nix::unistd::getppid().as_raw() != pid
    {
        teardown(config);
    }
}

/// After the supervisor died: remove the working directory, then leave the cgroups and
/// remove them (a cgroup with a live task cannot be removed).
fn teardown(config: &LaunchConfig) {
    for dir in &config.leftovers {
        let _ = fs::remove_dir_all(dir);
    }
    leave_cgroups(config);
    for procs in &config.cgroup_procs {
        let Some(group) = procs.parent() else {
            continue;
        };
        kill_members(group);
        let _ = fs::remove_dir(group);
    }
}

/// Move this launcher from the call's cgroups to their parents.
fn leave_cgroups(config: &LaunchConfig) {
    for procs in &config.cgroup_procs {
        if let Some(parent) = procs.parent().and_then(Path::parent) {
            let _ = fs::write(parent.join("cgroup.procs"), std::process::id().to_string());
        }
    }
}

fn kill_members(group: &Path) {
    if let Ok(procs) = fs::read_to_string(group.join("cgroup.procs")) {
        for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}

fn exit_code(config: &LaunchConfig, status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    if let (Some(limit), Some(signal)) = (config.rlimit_cpu_secs, status.signal()) {
        // The hard limit (soft + 1 s) delivers SIGKILL when the worker could not act on
        // SIGXCPU (e.g. inside one long C call): the child's CPU time tells the two apart.
        if let Ok(usage) = getrusage(UsageWho::RUSAGE_CHILDREN) {
            let used = usage.user_time().tv_sec() + usage.system_time().tv_sec();
            if (signal == Signal::SIGKILL as i32 || signal == Signal::SIGXCPU as i32)
                && u64::try_from(used).unwrap_or(0) >= limit
            {
                return CPU_LIMIT_EXIT;
            }
        }
    }
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(SETUP_FAILED)
}
