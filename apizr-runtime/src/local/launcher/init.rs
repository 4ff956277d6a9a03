//! Stage 2 (`init`): PID 1 of the call. Filesystem view, rlimits, identity, death signal,
//! Landlock, baseline seccomp, then exec Python.

use std::os::unix::process::CommandExt;
use std::process::Command;

use nix::sys::resource::{Resource, setrlimit};
use nix::sys::signal::Signal;

use super::{LaunchConfig, SETUP_FAILED, identity, landlock, view};
use crate::local::seccomp::{BaselineOptions, baseline_programs};

pub(super) fn init(config: &LaunchConfig) -> i32 {
    // Armed at once (before the identity change resets it, armed again below): stage 1's
    // only thread is the one that started us, so this follows stage 1's whole life.
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    if let Err(message) = prepare(config) {
        eprintln!("apizr-launch: {message}");
        return SETUP_FAILED;
    }
    let error = Command::new(&config.program).args(&config.args).exec();
    eprintln!(
        "apizr-launch: cannot start {}: {error}",
        config.program.display()
    );
    SETUP_FAILED
}

fn prepare(config: &LaunchConfig) -> Result<(), String> {
    let last_cap = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .unwrap_or(40);
    if let Some(view) = &config.view {
        view::build(view, config.pid_ns)?;
    }
    std::env::set_current_dir(&config.cwd)
        .map_err(|e| format!("chdir {}: {e}", config.cwd.display()))?;
    if let Some(bytes) = config.rlimit_as {
        setrlimit(Resource::RLIMIT_AS, bytes, bytes).map_err(|e| format!("RLIMIT_AS: {e}"))?;
    }
    if let Some(secs) = config.rlimit_cpu_secs {
        // Soft limit: SIGXCPU, handled by the worker; one second later SIGKILL, which no
        // handler can ignore.
        setrlimit(Resource::RLIMIT_CPU, secs, secs.saturating_add(1))
            .map_err(|e| format!("RLIMIT_CPU: {e}"))?;
    }
    // Files the worker creates are private to its identity by default (0600/0700), so a
    // concurrent call cannot read what this one leaves in a shared host directory.
    nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o077));
    identity::drop_privileges(&config.identity, last_cap)?;
    // Changing credentials cleared the death signal: arm it again.
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(|e| format!("pdeathsig: {e}"))?;
    nix::sys::prctl::set_no_new_privs().map_err(|e| format!("no_new_privs: {e}"))?;
    landlock::apply(config.landlock.as_ref(), config.landlock_scope)?;
    if let Some(seccomp) = config.seccomp {
        let programs = baseline_programs(BaselineOptions {
            network_deny: seccomp.network_deny,
        })
        .map_err(|e| e.to_string())?;
        for program in &programs {
            seccompiler::apply_filter(program).map_err(|e| format!("seccomp: {e}"))?;
        }
    }
    Ok(())
}
