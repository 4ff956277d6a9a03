//! Starting one sandboxed worker process: the one implementation of every per-call control
//! that exists before the request (identity, working directory, cgroups, the launcher's
//! namespaces, Landlock and seccomp, the interpreter with the worker loaded).
//!
//! A cold call starts its process and hands it the request at once; the pre-start pool
//! ([`super::prestart`]) starts the same process ahead of a call. Both go through
//! [`Factory::start`], so a pre-started worker has exactly the controls of a cold one: its own
//! uid, working directory and `/tmp`, cgroups, namespaces, address-space layout and hash seed.
//! Each process serves one call and exits.

use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use apizr_ir::policy::PolicyV1;

use crate::local::cgroup::{CallCgroups, Limits};
use crate::local::enforcement::{EnforcementPlan, IdentityPlan, ViewPlan};
use crate::local::host::{HostCapabilities, LazyHost};
use crate::local::identity::{self, CallId, IdRange};
use crate::local::launch::{LaunchInputs, SANDBOX_CWD, spawn_spec};
use crate::local::runtime::{LauncherLocation, RuntimeConfig};
use crate::local::spawn::ProcessSpawner;
use crate::local::supervisor::{self, Started};
use crate::local::workdir::WorkDir;
use crate::protocol::encode_frame;

/// How long a freshly spawned worker may take to read the compiled worker before a
/// pre-started one is given up (a cold call waits for it under its own deadline instead).
pub const BOOT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a discarded idle worker may take to exit after its stdin is closed.
const END_GRACE: Duration = Duration::from_secs(2);

/// What starting workers needs, shared by the runtime and its pre-start pool's thread.
#[derive(Debug)]
pub(crate) struct Factory {
    pub config: RuntimeConfig,
    pub spawner: Arc<dyn ProcessSpawner>,
    pub host: LazyHost,
    pub ids: Result<IdRange, String>,
}

/// A sandboxed worker waiting for its one request, with everything the call owns.
#[derive(Debug)]
pub(crate) struct WorkerProcess {
    pub started: Started,
    pub workdir: WorkDir,
    pub cgroups: Option<CallCgroups>,
    /// The call's identity, held (a kernel lock) until every process of the call is gone.
    pub call_id: Option<CallId>,
    /// The launcher applies the controls (false: the interpreter runs directly).
    pub through_launcher: bool,
}

/// Why no worker process could be started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum StartError {
    /// A limit could not be set up: nothing ran, the call is refused (`control` is the
    /// refused control).
    #[error("cgroup: {why}")]
    Refused { control: &'static str, why: String },
    /// The host could not prepare the call (no interpreter, no free id, no directory).
    #[error("{0}")]
    Prepare(String),
    /// The process could not be spawned.
    #[error("spawn failed: {0}")]
    Spawn(String),
}

impl WorkerProcess {
    pub fn uid(&self) -> Option<u32> {
        self.call_id.as_ref().map(|id| id.uid)
    }

    /// Kill a worker that will never get a request and remove what it owned; the clean-up
    /// failures (never reported as removed).
    pub fn discard(self) -> Vec<String> {
        let WorkerProcess {
            started,
            workdir,
            cgroups,
            call_id,
            ..
        } = self;
        started.end(END_GRACE);
        let mut failed = Vec::new();
        if let Some(groups) = cgroups
            && let Err(e) = groups.destroy()
        {
            failed.extend(e);
        }
        if let Err(e) = workdir.remove() {
            failed.push(format!("working directory: {e}"));
        }
        drop(call_id);
        failed
    }
}

impl Factory {
    pub fn new(config: RuntimeConfig, spawner: Arc<dyn ProcessSpawner>) -> Factory {
        let launcher = match &config.launcher {
            LauncherLocation::None => None,
            LauncherLocation::CurrentExe => std::env::current_exe().ok(),
            LauncherLocation::Binary(path) => Some(path.clone()),
        };
        Factory {
            host: LazyHost::new(config.python.clone(), launcher),
            spawner,
            ids: config.ids.map_or_else(IdRange::from_env, Ok),
            config,
        }
    }

    /// Start one worker for `policy` under `plan`: allocate its identity, create its working
    /// directory and cgroups, spawn it through the launcher, and send it the compiled worker.
    pub fn start(
        &self,
        policy: &PolicyV1,
        plan: &EnforcementPlan,
        host: &HostCapabilities,
    ) -> Result<WorkerProcess, StartError> {
        let python = host
            .python
            .clone()
            .ok_or_else(|| StartError::Prepare("no Python interpreter".into()))?;
        let call_id = if plan.identity == IdentityPlan::PerCallIds {
            let range = self.ids.clone().map_err(StartError::Prepare)?;
            let id = identity::allocate(range)
                .map_err(|e| StartError::Prepare(format!("identity: {e}")))?;
            Some(id)
        } else {
            None
        };
        let uid = call_id.as_ref().map(|id| id.uid);
        let workdir = WorkDir::create(&self.config.temp_root)
            .map_err(|e| StartError::Prepare(format!("working directory: {e}")))?;
        if let (Some(uid), Some(ViewPlan::Host)) = (uid, plan.view) {
            workdir
                .chown(uid, uid)
                .map_err(|e| StartError::Prepare(format!("working directory: chown: {e}")))?;
        }
        let cgroups = if plan.pids.is_some() || plan.memory.is_some() {
            let limits = Limits {
                pids: plan.pids.map(|p| p.saturating_add(1)),
                memory: plan.memory,
            };
            let (pids, memory) = (host.pids_hierarchy(), host.memory_hierarchy());
            let groups =
                CallCgroups::create(pids.as_ref(), memory.as_ref(), limits).map_err(|e| {
                    StartError::Refused {
                        control: if plan.memory.is_some() {
                            "memory"
                        } else {
                            "pids"
                        },
                        why: e.to_string(),
                    }
                })?;
            Some(groups)
        } else {
            None
        };
        let compiled = self.host.compiled_worker();
        let spec = spawn_spec(
            plan,
            LaunchInputs {
                python: python.clone(),
                host,
                workdir: &workdir,
                uid,
                cgroup_procs: cgroups
                    .as_ref()
                    .map(CallCgroups::procs_files)
                    .unwrap_or_default(),
                read_roots: &policy.filesystem.read_roots,
                env: environment(policy, plan),
                compiled: compiled.is_some(),
                args: None,
                read_write: &[],
                cwd: None,
            },
        );
        let cleanup = |cgroups: Option<CallCgroups>, workdir: WorkDir| {
            if let Some(groups) = cgroups {
                let _ = groups.destroy();
            }
            let _ = workdir.remove();
        };
        let spec = match spec {
            Ok(spec) => spec,
            Err(e) => {
                cleanup(cgroups, workdir);
                return Err(StartError::Prepare(format!("launch configuration: {e}")));
            }
        };
        let boot = compiled.map(|code| encode_frame(&code));
        match supervisor::start(self.spawner.as_ref(), &spec, boot) {
            Ok(started) => Ok(WorkerProcess {
                started,
                workdir,
                cgroups,
                call_id,
                through_launcher: spec.program != python,
            }),
            Err(e) => {
                cleanup(cgroups, workdir);
                Err(StartError::Spawn(e.to_string()))
            }
        }
    }
}

/// The worker's environment: what the policy lets through, and `TMPDIR` inside a sandbox.
fn environment(policy: &PolicyV1, plan: &EnforcementPlan) -> Vec<(OsString, OsString)> {
    let policy = &policy.environment;
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, _)| {
            policy.inherit
                || name
                    .to_str()
                    .is_some_and(|n| policy.allow.iter().any(|a| a == n))
        })
        .collect();
    if plan.view == Some(ViewPlan::Sandbox) {
        env.retain(|(k, _)| k != "TMPDIR");
        env.push(("TMPDIR".into(), SANDBOX_CWD.into()));
    }
    env
}
