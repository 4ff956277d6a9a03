//! From an enforcement plan to the launcher's configuration and the process to spawn.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::local::enforcement::{EnforcementPlan, IdentityPlan, ViewPlan};
use crate::local::host::HostCapabilities;
use crate::local::launcher::{
    Identity, LandlockConfig, LaunchConfig, SeccompConfig, View, ViewMode, launch_args,
};
use crate::local::spawn::SpawnSpec;
use crate::local::workdir::WorkDir;
use crate::worker;

/// The working directory inside the private root (the `/tmp` tmpfs).
pub const SANDBOX_CWD: &str = "/tmp";

/// What one launch needs besides the plan.
pub(crate) struct LaunchInputs<'a> {
    pub python: PathBuf,
    pub host: &'a HostCapabilities,
    pub workdir: &'a WorkDir,
    pub uid: Option<u32>,
    pub cgroup_procs: Vec<PathBuf>,
    pub read_roots: &'a [String],
    pub env: Vec<(OsString, OsString)>,
    /// The worker arrives compiled on stdin ([`worker::BOOT_SOURCE`]).
    pub compiled: bool,
    /// Another program's interpreter arguments instead of the worker's (the code
    /// interpreter's bootstrap).
    pub args: Option<Vec<String>>,
    /// Host directories the call may write besides its tmpfs, bound read-write at the same
    /// path under `filesystem: sandbox` (an interpreter run's workspace and write roots).
    pub read_write: &'a [PathBuf],
    /// The working directory (a host path; default: the sandbox's `/tmp`, or the call's
    /// working directory under `filesystem: host`).
    pub cwd: Option<PathBuf>,
}

/// The process to spawn: the launcher with its configuration, or (no launcher) Python itself.
pub(crate) fn spawn_spec(
    plan: &EnforcementPlan,
    inputs: LaunchInputs<'_>,
) -> Result<SpawnSpec, serde_json::Error> {
    let cwd = inputs
        .cwd
        .clone()
        .unwrap_or_else(|| inputs.workdir.path().to_path_buf());
    let (Some(launcher), true) = (&inputs.host.launcher, plan.use_launcher) else {
        let args = python_args(&inputs)
            .into_iter()
            .map(OsString::from)
            .collect();
        return Ok(SpawnSpec {
            program: inputs.python,
            args,
            env: inputs.env,
            cwd,
        });
    };
    let config = launch_config(plan, &inputs);
    Ok(SpawnSpec {
        program: launcher.clone(),
        args: launch_args(&config)?,
        env: inputs.env,
        cwd,
    })
}

fn launch_config(plan: &EnforcementPlan, inputs: &LaunchInputs<'_>) -> LaunchConfig {
    let sandbox = plan.view == Some(ViewPlan::Sandbox);
    let identity = match (plan.identity, inputs.uid) {
        (IdentityPlan::PerCallIds, Some(uid)) => Identity::Ids { uid, gid: uid },
        (IdentityPlan::NamespaceRoot, _) => Identity::NamespaceRoot,
        _ => Identity::Caller,
    };
    let tmp_owner = match &identity {
        Identity::Ids { uid, gid } => (*uid, *gid),
        Identity::NamespaceRoot => (0, 0),
        Identity::Caller => (
            nix::unistd::Uid::current().as_raw(),
            nix::unistd::Gid::current().as_raw(),
        ),
    };
    let view = plan.view.map(|mode| {
        let mut read_only = inputs.host.python_prefixes.clone();
        if mode == ViewPlan::Sandbox {
            read_only.extend(inputs.read_roots.iter().map(PathBuf::from));
        }
        View {
            mode: match mode {
                ViewPlan::Host => ViewMode::Host,
                ViewPlan::Sandbox => ViewMode::Sandbox,
            },
            root: inputs.workdir.path().to_path_buf(),
            read_only,
            read_write: if mode == ViewPlan::Sandbox {
                inputs.read_write.to_vec()
            } else {
                Vec::new()
            },
            tmp_bytes: plan.disk_bytes.unwrap_or(0),
            tmp_owner,
        }
    });
    LaunchConfig {
        program: inputs.python.clone(),
        args: python_args(inputs),
        cgroup_procs: inputs.cgroup_procs.clone(),
        supervisor: i32::try_from(std::process::id()).ok(),
        user_ns: plan.user_ns,
        net_ns: plan.net_ns,
        pid_ns: plan.pid_ns,
        ipc_uts_ns: plan.ipc_uts_ns,
        identity,
        view,
        cwd: match (&inputs.cwd, sandbox) {
            (Some(cwd), _) => cwd.clone(),
            (None, true) => PathBuf::from(SANDBOX_CWD),
            (None, false) => inputs.workdir.path().to_path_buf(),
        },
        rlimit_as: plan.rlimit_as,
        rlimit_cpu_secs: plan.rlimit_cpu_secs,
        landlock: (sandbox && plan.landlock).then(|| LandlockConfig {
            read_only: vec![PathBuf::from("/")],
            read_write: std::iter::once(PathBuf::from(SANDBOX_CWD))
                .chain(inputs.read_write.iter().cloned())
                .collect(),
            write_files: vec![PathBuf::from("/dev/null")],
        }),
        landlock_scope: plan.landlock_scope,
        seccomp: plan.baseline.then_some(SeccompConfig {
            network_deny: plan.network_deny,
        }),
        leftovers: vec![inputs.workdir.path().to_path_buf()],
    }
}

fn python_args(inputs: &LaunchInputs<'_>) -> Vec<String> {
    if let Some(args) = &inputs.args {
        return args.clone();
    }
    if inputs.compiled {
        worker::python_args_compiled()
    } else {
        worker::python_args()
    }
}
