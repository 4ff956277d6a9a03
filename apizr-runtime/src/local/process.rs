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
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use apizr_ir::policy::PolicyV1;

use crate::local::cgroup::{CallCgroups, Limits};
use crate::local::enforcement::{EnforcementPlan, IdentityPlan, ViewPlan};
use crate::local::host::{HostCapabilities, LazyHost};
use crate::local::identity::{self, CallId, IdRange};
use crate::local::launch::{LaunchInputs, SANDBOX_CWD, spawn_spec};
use crate::local::ownership::{self, Lent};
use crate::local::program::{CodeWorkspace, Program};
use crate::local::runtime::{LauncherLocation, RuntimeConfig};
use crate::local::spawn::{ProcessSpawner, SpawnSpec};
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
    /// A code program's workspace and write roots, lent to the per-call uid for the call.
    pub lent: Vec<Lent>,
    /// A code program's workspace (`None`: the v1 worker, which has none).
    pub workspace: Option<CodeWorkspace>,
}

/// What a started process holds on the host until every process of it is gone (a code
/// program supervises its process itself, then releases these).
#[derive(Debug)]
pub(crate) struct Held {
    workdir: Option<WorkDir>,
    cgroups: Option<CallCgroups>,
    call_id: Option<CallId>,
    lent: Vec<Lent>,
}

impl Held {
    pub fn uid(&self) -> Option<u32> {
        self.call_id.as_ref().map(|id| id.uid)
    }

    /// Whether the memory cgroup recorded an OOM kill (read before [`Held::release`]).
    #[cfg_attr(
        not(feature = "interpreter"),
        allow(dead_code, reason = "read only by the code interpreter")
    )]
    pub fn oom_killed(&self) -> bool {
        self.cgroups.as_ref().is_some_and(CallCgroups::memory_hit)
    }

    /// Destroy the cgroups, remove the working directory, give the lent directories back,
    /// free the identity (in that order: the uid is free only once nothing of it is left).
    /// Returns what could not be cleaned up.
    pub fn release(mut self) -> Vec<String> {
        let mut failed = Vec::new();
        if let Some(groups) = self.cgroups.take()
            && let Err(e) = groups.destroy()
        {
            failed.extend(e);
        }
        if let Some(workdir) = self.workdir.take()
            && let Err(e) = workdir.remove()
        {
            failed.push(format!("working directory: {e}"));
        }
        for lent in std::mem::take(&mut self.lent) {
            if let Err(e) = lent.give_back() {
                failed.push(e);
            }
        }
        drop(self.call_id.take());
        failed
    }
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

    /// The process (to hand its request), what it holds, and a code program's workspace.
    pub fn split(self) -> (Started, Held, Option<CodeWorkspace>) {
        let WorkerProcess {
            started,
            workdir,
            cgroups,
            call_id,
            lent,
            workspace,
            ..
        } = self;
        let held = Held {
            workdir: Some(workdir),
            cgroups,
            call_id,
            lent,
        };
        (started, held, workspace)
    }

    /// Kill a worker that will never get a request and remove what it owned; the clean-up
    /// failures (never reported as removed).
    pub fn discard(self) -> Vec<String> {
        let (started, held, workspace) = self.split();
        started.end(END_GRACE);
        let mut failed = held.release();
        if let Some(workspace) = workspace
            && let Err(e) = workspace.discard()
        {
            failed.push(e);
        }
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

    /// Start `program` for `policy` under `plan`: allocate its identity, create its working
    /// directory (and a code program's workspace, lent to that identity) and cgroups, spawn
    /// it through the launcher, and send the v1 worker its compiled source.
    pub fn start(
        &self,
        policy: &PolicyV1,
        plan: &EnforcementPlan,
        host: &HostCapabilities,
        program: &Program,
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
        let workdir = WorkDir::create(&self.config.temp_root)
            .map_err(|e| StartError::Prepare(format!("working directory: {e}")))?;
        let mut held = Held {
            workdir: Some(workdir),
            cgroups: None,
            call_id,
            lent: Vec::new(),
        };
        let mut workspace = None;
        let result = self.prepare(policy, plan, host, program, &mut held, &mut workspace);
        let fail = |held: Held, workspace: Option<CodeWorkspace>, e: StartError| {
            let _ = held.release();
            if let Some(w) = workspace {
                let _ = w.discard();
            }
            Err(e)
        };
        let (spec, boot) = match result {
            Ok(ready) => ready,
            Err(e) => return fail(held, workspace, e),
        };
        match supervisor::start(self.spawner.as_ref(), &spec, boot) {
            Ok(started) => {
                let Held {
                    workdir,
                    cgroups,
                    call_id,
                    lent,
                } = held;
                let Some(workdir) = workdir else {
                    started.end(END_GRACE);
                    return Err(StartError::Prepare("working directory: missing".into()));
                };
                Ok(WorkerProcess {
                    started,
                    workdir,
                    cgroups,
                    call_id,
                    through_launcher: spec.program != python,
                    lent,
                    workspace,
                })
            }
            Err(e) => fail(held, workspace, StartError::Spawn(e.to_string())),
        }
    }

    /// Everything between the identity and the spawn: the working directory's owner, a code
    /// program's workspace (lent), the cgroups, the launch configuration and the boot frame.
    fn prepare(
        &self,
        policy: &PolicyV1,
        plan: &EnforcementPlan,
        host: &HostCapabilities,
        program: &Program,
        held: &mut Held,
        workspace: &mut Option<CodeWorkspace>,
    ) -> Result<(SpawnSpec, Option<Vec<u8>>), StartError> {
        let python = host
            .python
            .clone()
            .ok_or_else(|| StartError::Prepare("no Python interpreter".into()))?;
        let uid = held.uid();
        let Some(workdir) = held.workdir.as_ref() else {
            return Err(StartError::Prepare("working directory: missing".into()));
        };
        if let (Some(uid), Some(ViewPlan::Host)) = (uid, plan.view) {
            workdir
                .chown(uid, uid)
                .map_err(|e| StartError::Prepare(format!("working directory: chown: {e}")))?;
        }
        let sandbox = plan.view == Some(ViewPlan::Sandbox);
        // A code program: its workspace and write roots, bound read-write and lent to the uid.
        let mut read_write = Vec::new();
        let code = match program {
            Program::Worker => None,
            Program::Code(code) => {
                let made = code
                    .workspace()
                    .map_err(|e| StartError::Prepare(format!("workspace: {e}")))?;
                read_write.push(made.path.clone());
                read_write.extend(code.write_roots());
                let cwd = made.path.clone();
                *workspace = Some(made);
                if let Some(uid) = uid {
                    for dir in &read_write {
                        let lent = ownership::lend(dir, uid)
                            .map_err(|e| StartError::Prepare(format!("workspace: {e}")))?;
                        held.lent.push(lent);
                    }
                }
                let scratch = if sandbox {
                    PathBuf::from(SANDBOX_CWD)
                } else {
                    workdir.tmp()
                };
                Some((code.args(), code.environment(&cwd, &scratch), cwd))
            }
        };
        if plan.pids.is_some() || plan.memory.is_some() {
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
            held.cgroups = Some(groups);
        }
        let compiled = match program {
            Program::Worker => self.host.compiled_worker(),
            Program::Code(_) => None,
        };
        let cgroup_procs = held
            .cgroups
            .as_ref()
            .map(CallCgroups::procs_files)
            .unwrap_or_default();
        let (args, env, cwd) = match code {
            Some((args, env, cwd)) => (Some(args), env, Some(cwd)),
            None => (None, environment(policy, plan), None),
        };
        let spec = spawn_spec(
            plan,
            LaunchInputs {
                python,
                host,
                workdir,
                uid,
                cgroup_procs,
                read_roots: &policy.filesystem.read_roots,
                env,
                compiled: compiled.is_some(),
                args,
                read_write: &read_write,
                cwd,
            },
        )
        .map_err(|e| StartError::Prepare(format!("launch configuration: {e}")))?;
        Ok((spec, compiled.map(|code| encode_frame(&code))))
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
