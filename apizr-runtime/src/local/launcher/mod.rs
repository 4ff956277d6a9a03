//! The launcher: a small, single-threaded re-exec'd entry point that applies Linux controls
//! with safe APIs and then becomes the Python worker.
//!
//! Why a re-exec: `unshare(CLONE_NEWUSER)` fails in a multi-threaded process, and doing the
//! setup between fork and exec (`pre_exec`) needs `unsafe`, which the workspace denies. So the
//! supervisor spawns `<launcher> __apizr_launch__ run <config-json>` (a `[[bin]] apizr-launch`,
//! or any binary that calls [`run_if_requested`] first in `main`). Two stages:
//!
//! 1. **`run`** ([`run`]), outside the call's namespaces: joins the per-call cgroups, enters a
//!    user namespace (non-root hosts only), unshares the PID, network, IPC and UTS namespaces,
//!    and starts stage 2 (`/proc/self/exe … init`) — the namespace's PID 1. It then points its
//!    own stdio at `/dev/null` and waits on two pidfds: its child and the supervisor. The
//!    supervisor's pidfd is the *lifeline*: it follows the supervisor process (not one of its
//!    threads, unlike `PR_SET_PDEATHSIG`), so when the supervisor dies — even by `kill -9` —
//!    stage 1 kills PID 1 (and with it the whole PID namespace), removes the call's working
//!    directory and cgroups, and exits. It exits with the worker's code (`128 + signal` when
//!    killed; [`CPU_LIMIT_EXIT`] when the CPU limit killed it).
//! 2. **`init`** ([`init`]), PID 1 of the call: builds the filesystem view in a new mount
//!    namespace ([`view`]: a fresh `/proc`; under `filesystem: sandbox` a private root of
//!    read-only binds and size-capped tmpfs), sets rlimits, drops to the unprivileged identity
//!    ([`identity`]), arms `PR_SET_PDEATHSIG` (stage 1 is single-threaded, so its one thread
//!    is the process), applies Landlock, installs the baseline seccomp filter and execs Python.
//!
//! Any setup failure exits [`SETUP_FAILED`] before Python runs: a control is never silently
//! dropped.

mod identity;
mod init;
mod landlock;
mod probe;
mod run;
mod view;

use std::ffi::OsString;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use probe::ProbeReport;
pub use run::CPU_LIMIT_EXIT;

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
    /// `cgroup.procs` files stage 1 writes its own PID into before anything else.
    pub cgroup_procs: Vec<PathBuf>,
    /// The supervisor's PID: the lifeline (see the module docs). `None` only for probes.
    pub supervisor: Option<i32>,
    /// Create a user namespace first (non-root hosts), mapping the caller to root inside.
    pub user_ns: bool,
    pub net_ns: bool,
    pub pid_ns: bool,
    /// New IPC and UTS namespaces (System V IPC and POSIX queues, host name).
    pub ipc_uts_ns: bool,
    /// Who the worker runs as.
    pub identity: Identity,
    /// The filesystem view (a new mount namespace), when the host can build one.
    pub view: Option<View>,
    /// The worker's working directory, as seen inside the view.
    pub cwd: PathBuf,
    /// `RLIMIT_AS` in bytes.
    pub rlimit_as: Option<u64>,
    /// `RLIMIT_CPU` in whole seconds (soft; hard is one second more).
    pub rlimit_cpu_secs: Option<u64>,
    /// Landlock rules, as paths inside the view.
    pub landlock: Option<LandlockConfig>,
    /// Landlock scopes (ABI 6+): no abstract unix socket or signal outside the call.
    pub landlock_scope: bool,
    /// The baseline seccomp filter (installed last, right before exec).
    pub seccomp: Option<SeccompConfig>,
    /// Host directories stage 1 removes when the supervisor dies (the working directory).
    pub leftovers: Vec<PathBuf>,
}

/// The worker's identity.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Identity {
    /// Keep the caller's (a non-root caller without a user namespace: already unprivileged;
    /// `no_new_privs` still applies).
    #[default]
    Caller,
    /// A root host: switch to this uid and gid with no supplementary groups, after emptying
    /// the capability bounding set and locking the securebits.
    Ids { uid: u32, gid: u32 },
    /// Inside the call's own user namespace (non-root host): keep the mapped id, but empty
    /// every capability set and lock `SECBIT_NOROOT`, so exec grants nothing back.
    NamespaceRoot,
}

/// How the call sees the filesystem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct View {
    pub mode: ViewMode,
    /// `Sandbox`: the empty host directory the private root is mounted on.
    pub root: PathBuf,
    /// `Sandbox`: host paths bound read-only at the same path (system directories are added
    /// by the launcher). `Host`: paths the worker must reach although an ancestor is not
    /// traversable by its uid (the interpreter prefix under `/root`): the blocking ancestor is
    /// covered by an empty tmpfs into which only these paths are bound, read-only.
    pub read_only: Vec<PathBuf>,
    /// `Sandbox`: host directories bound read-write at the same path (an interpreter run's
    /// workspace and write roots); nothing else of the host is writable. `Host`: unused.
    #[serde(default)]
    pub read_write: Vec<PathBuf>,
    /// `Sandbox`: size of the `/tmp` tmpfs (the working directory).
    pub tmp_bytes: u64,
    /// Owner of the `/tmp` tmpfs, as ids inside the call's user namespace (if any).
    pub tmp_owner: (u32, u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ViewMode {
    /// The host tree, a fresh `/proc`, and the `read_only` reach binds.
    Host,
    /// A private root (see [`view`]).
    Sandbox,
}

/// Landlock rules: everything under `read_only` readable and executable, everything under
/// `read_write` fully accessible, `write_files` (e.g. `/dev/null`) readable and writable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LandlockConfig {
    pub read_only: Vec<PathBuf>,
    pub read_write: Vec<PathBuf>,
    pub write_files: Vec<PathBuf>,
}

/// What the baseline seccomp filter depends on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeccompConfig {
    pub network_deny: bool,
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
    let config = || {
        args.get(1)
            .and_then(|a| a.to_str())
            .map(serde_json::from_str::<LaunchConfig>)
    };
    match args.first().and_then(|a| a.to_str()) {
        Some("probe") => probe::run(),
        Some("probe-proc") => match args.get(1) {
            Some(dir) => probe::mount_proc(std::path::Path::new(dir)),
            None => SETUP_FAILED,
        },
        Some(stage @ ("run" | "init")) => match config() {
            Some(Ok(config)) if stage == "run" => run::run(&config, args),
            Some(Ok(config)) => init::init(&config),
            _ => {
                eprintln!("apizr-launch: missing or invalid launch configuration");
                SETUP_FAILED
            }
        },
        _ => {
            eprintln!("apizr-launch: expected `probe`, `run <config>` or `init <config>`");
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
