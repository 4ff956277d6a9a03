//! The launcher: a small, single-threaded re-exec'd entry point that applies Linux controls
//! with safe APIs and then starts the Python worker.
//!
//! Why a re-exec: `unshare(CLONE_NEWUSER)` fails in a multi-threaded process, and doing the
//! setup between fork and exec (`pre_exec`) needs `unsafe`, which the workspace denies. So the
//! supervisor spawns `<launcher> __apizr_launch__ run <config-json>` (a `[[bin]] apizr-launch`,
//! or any binary that calls [`run_if_requested`] first in `main`). The launcher, in order:
//! joins the per-call cgroup, unshares namespaces (user when not root, then network and PID),
//! sets rlimits, applies Landlock, spawns Python — which becomes PID 1 of the new PID
//! namespace, so every descendant dies with it, detached or not — points its own stdio at
//! `/dev/null` so the pipes close with the worker, waits, and exits with the worker's code
//! (`128 + signal` when it was killed). Any setup failure exits [`SETUP_FAILED`] before Python
//! runs: a control is never silently dropped.

mod probe;
mod sandbox;

use std::ffi::OsString;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use probe::ProbeReport;
pub use sandbox::CPU_LIMIT_EXIT;

/// `argv[1]` that selects launcher mode.
pub const LAUNCH_ARG: &str = "__apizr_launch__";
/// Exit code of the launcher when a control could not be applied (Python never ran).
pub const SETUP_FAILED: i32 = 125;

/// Everything the launcher applies, serialized as JSON into its argument vector.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchConfig {
    /// The interpreter and its arguments.
    pub program: PathBuf,
    pub args: Vec<String>,
    /// A `cgroup.procs` file the launcher writes its own PID into before anything else.
    pub cgroup_procs: Option<PathBuf>,
    /// Create a user namespace first (non-root hosts), mapping the caller to root inside.
    pub user_ns: bool,
    pub net_ns: bool,
    pub pid_ns: bool,
    /// `RLIMIT_AS` in bytes.
    pub rlimit_as: Option<u64>,
    /// `RLIMIT_CPU` in whole seconds (soft; hard is one second more).
    pub rlimit_cpu_secs: Option<u64>,
    pub landlock: Option<LandlockConfig>,
}

/// Landlock rules: everything under `read_only` readable and executable, everything under
/// `read_write` fully accessible, `write_files` (e.g. `/dev/null`) readable and writable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LandlockConfig {
    pub read_only: Vec<PathBuf>,
    pub read_write: Vec<PathBuf>,
    pub write_files: Vec<PathBuf>,
}

/// Call first in `main` of any binary that the runtime may re-exec as its launcher. Returns
/// normally (doing nothing) unless `argv[1]` is [`LAUNCH_ARG`]; in launcher mode it never
/// returns.
pub fn run_if_requested() {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(std::ffi::OsStr::new(LAUNCH_ARG)) {
        return;
    }
    let rest: Vec<OsString> = args.collect();
    std::process::exit(main_with(&rest));
}

/// Launcher entry with the arguments after [`LAUNCH_ARG`]; returns the exit code.
pub fn main_with(args: &[OsString]) -> i32 {
    match args.first().and_then(|a| a.to_str()) {
        Some("probe") => probe::run(),
        Some("run") => {
            let config = args
                .get(1)
                .and_then(|a| a.to_str())
                .map(serde_json::from_str::<LaunchConfig>);
            match config {
                Some(Ok(config)) => sandbox::run(&config),
                _ => {
                    eprintln!("apizr-launch: missing or invalid launch configuration");
                    SETUP_FAILED
                }
            }
        }
        _ => {
            eprintln!("apizr-launch: expected `probe` or `run <config>`");
            SETUP_FAILED
        }
    }
}

/// The argument vector (after the program) that runs `config` through a launcher.
pub fn launch_args(config: &LaunchConfig) -> Result<Vec<OsString>, serde_json::Error> {
    Ok(vec![
        LAUNCH_ARG.into(),
        "run".into(),
        serde_json::to_string(config)?.into(),
    ])
}
