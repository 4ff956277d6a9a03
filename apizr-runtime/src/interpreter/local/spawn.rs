//! The one place the local tiers start their process: the local backend's launcher, through
//! the backend's own [`spawn_spec`] (the same code path as governed calls), with the
//! interpreter's bootstrap instead of the worker, the run's workspace as working directory
//! and, under a private filesystem view, the workspace and write roots bound read-write.
//! Faster start templates (zygotes) plug in here.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::local::enforcement::EnforcementPlan;
use crate::local::host::HostCapabilities;
use crate::local::launch::{LaunchInputs, spawn_spec as backend_spawn_spec};
use crate::local::spawn::SpawnSpec;
use crate::local::workdir::WorkDir;

/// What one local run needs besides the plan.
pub(crate) struct Inputs<'a> {
    pub python: PathBuf,
    pub args: Vec<String>,
    pub host: &'a HostCapabilities,
    /// The backend's per-call directory (the private root's mount point; swept if we die).
    pub workdir: &'a WorkDir,
    pub uid: Option<u32>,
    pub cgroup_procs: Vec<PathBuf>,
    pub read_roots: &'a [String],
    /// The workspace first, then the write roots.
    pub read_write: &'a [PathBuf],
    pub cwd: PathBuf,
    pub env: Vec<(OsString, OsString)>,
}

pub(crate) fn spawn_spec(plan: &EnforcementPlan, inputs: Inputs<'_>) -> Result<SpawnSpec, String> {
    backend_spawn_spec(
        plan,
        LaunchInputs {
            python: inputs.python,
            host: inputs.host,
            workdir: inputs.workdir,
            uid: inputs.uid,
            cgroup_procs: inputs.cgroup_procs,
            read_roots: inputs.read_roots,
            env: inputs.env,
            compiled: false,
            args: Some(inputs.args),
            read_write: inputs.read_write,
            cwd: Some(inputs.cwd),
        },
    )
    .map_err(|e| e.to_string())
}
