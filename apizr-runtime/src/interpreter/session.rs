//! Persistent sessions: one interpreter process that keeps its state (variables, imports,
//! files in its workspace) between calls, under the one policy of the [`Environment`] it was
//! opened from.
//!
//! Rules:
//! * Every executing tier. The process is started exactly as a one-shot run of the tier is
//!   (local: the same plan, launcher, identity, cgroups, seccomp, import guard; docker: one
//!   container with the same body, controls checked in the engine's record, labels), once,
//!   and each call runs in it (docker: `docker/session.rs`).
//! * A session has its own fresh private workspace, never a caller's directory; files move in
//!   and out only through [`Session::copy_in`] and [`Session::copy_out`], beneath the workspace
//!   and never through a symbolic link (docker: the workspace is in the container; copies go
//!   through the engine's attach stream and archive API).
//! * A call that times out kills the whole process tree: the session ends (its state is not
//!   trustworthy half-way through a call) and says so in every later result.
//! * Idle expiry (no call for `idle_timeout`) and [`Session::close`] (also on drop) kill the
//!   tree, release the identity, cgroups and directories, and remove the workspace: nothing is
//!   left behind. A host process killed with sessions open leaves their workspaces; the next
//!   session start sweeps those whose owner is dead ([`sweep`]).
//! * [`Session::reset`] starts over: the process (and every variable) is replaced by a fresh
//!   one under the same policy and the workspace is emptied.

mod copy;
mod start;
pub mod sweep;

pub use copy::Copied;
use start::{Worker, empty_dir, start};

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::thread;
use std::time::{Duration, Instant};

use super::artifacts::{self, Snapshot};
use super::enforcement::EnforcementReport;
use super::environment::Environment;
use super::local;
use super::local::persistent::Persistent;
use super::outcome::{self, Context, Produced};
use super::packages::PackageReport;
use super::process;
use super::result::ExecutionResult;
use super::tier::Tier;

/// The idle time after which a session expires by default.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// How a session is opened.
#[derive(Debug, Clone, Copy)]
pub struct SessionOptions {
    /// No call for this long ends the session.
    pub idle_timeout: Duration,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
        }
    }
}

/// Why a session could not be opened, or a copy was refused.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("sessions exist for the executing tiers only, not `{0}`")]
    Tier(Tier),
    #[error(
        "a session has its own workspace; open it without working_directory and use copy_in/copy_out"
    )]
    WorkingDirectory,
    /// The policy was refused, or packages failed: the result says why.
    #[error("the session could not start: {}", .0.skip_message.as_deref().unwrap_or("refused"))]
    Refused(Box<ExecutionResult>),
    #[error("the session could not start: {0}")]
    Start(String),
    #[error("the session is closed: {0}")]
    Closed(String),
    #[error("{path}: {reason}")]
    Path { path: String, reason: String },
}

/// A persistent interpreter session. Cheap to share (`Arc`); calls are serialized.
#[derive(Clone)]
pub struct Session {
    shared: Arc<Shared>,
}

struct Shared {
    environment: Environment,
    workspace: PathBuf,
    idle: Duration,
    enforcement: EnforcementReport,
    packages: Option<PackageReport>,
    timeout: Duration,
    state: Mutex<State>,
}

enum State {
    Live { process: Worker, last_used: Instant },
    Closed(String),
}

impl Session {
    /// Open a session of `environment`'s tier and policy.
    pub fn open(environment: &Environment, options: SessionOptions) -> Result<Self, SessionError> {
        let tier = environment.tier();
        if !tier.executes() {
            return Err(SessionError::Tier(tier));
        }
        if environment.working_directory().is_some() {
            return Err(SessionError::WorkingDirectory);
        }
        let parts = environment.parts();
        let _ = sweep::sweep(parts.temp_root);
        let workspace = artifacts::private_dir(parts.temp_root, &sweep::prefix())
            .map_err(|e| SessionError::Start(format!("workspace: {e}")))?;
        let started = match start(environment, &workspace, lifetime(options.idle_timeout)) {
            Ok(s) => s,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&workspace);
                return Err(e);
            }
        };
        let shared = Arc::new(Shared {
            environment: environment.clone(),
            workspace,
            idle: options.idle_timeout,
            enforcement: started.enforcement,
            packages: started.packages,
            timeout: started.timeout,
            state: Mutex::new(State::Live {
                process: started.process,
                last_used: Instant::now(),
            }),
        });
        reap_when_idle(Arc::downgrade(&shared));
        Ok(Session { shared })
    }

    /// Start over: end the process (every variable, import and child with it), empty the
    /// workspace, and start a fresh process under the same policy. A closed session stays
    /// closed; if the fresh process cannot start, the session ends and says why.
    pub fn reset(&self) -> Result<(), SessionError> {
        let mut state = self.shared.live()?;
        let old = std::mem::replace(&mut *state, State::Closed("resetting".into()));
        let mut cleanup = match old {
            State::Live { process, .. } => process.close(),
            State::Closed(_) => Vec::new(),
        };
        if let Err(e) = empty_dir(&self.shared.workspace) {
            cleanup.push(format!(
                "workspace {}: {e}",
                self.shared.workspace.display()
            ));
        }
        if !cleanup.is_empty() {
            let why = format!("reset could not clean up: {}", cleanup.join("; "));
            *state = State::Closed(why.clone());
            return Err(SessionError::Closed(why));
        }
        match start(
            &self.shared.environment,
            &self.shared.workspace,
            lifetime(self.shared.idle),
        ) {
            Ok(started) => {
                *state = State::Live {
                    process: started.process,
                    last_used: Instant::now(),
                };
                Ok(())
            }
            Err(e) => {
                let why = format!("reset could not start a fresh process: {e}");
                *state = State::Closed(why.clone());
                let _ = std::fs::remove_dir_all(&self.shared.workspace);
                Err(SessionError::Closed(why))
            }
        }
    }

    /// The session's workspace (local tiers), or the host directory of its calls' artifacts
    /// (docker tiers: the code's workspace is in the container). Removed when the session ends.
    pub fn workspace(&self) -> &Path {
        &self.shared.workspace
    }

    /// The host PID of the session's first process while it runs (local tiers).
    pub fn process_id(&self) -> Option<u32> {
        match &*self.shared.lock() {
            State::Live {
                process: Worker::Local(p),
                ..
            } => Some(p.pid()),
            _ => None,
        }
    }

    /// The session's container name while it runs (docker tiers).
    pub fn container(&self) -> Option<String> {
        match &*self.shared.lock() {
            State::Live {
                process: Worker::Docker(d),
                ..
            } => d.container().map(str::to_string),
            _ => None,
        }
    }

    /// Whether the session still runs (not closed, expired or ended by a timeout).
    pub fn is_live(&self) -> bool {
        matches!(*self.shared.lock(), State::Live { .. })
    }

    /// Run `code` in the session. Never panics; every failure is a result.
    pub fn execute(&self, code: &str) -> ExecutionResult {
        let result = self.call(code);
        self.shared.environment.audited(code, result)
    }

    fn call(&self, code: &str) -> ExecutionResult {
        let started = Instant::now();
        let env = &self.shared.environment;
        if let Some(result) = env.check(code, started) {
            return result;
        }
        let ctx = Context {
            tier: env.tier(),
            policy: env.policy(),
            enforcement: self.shared.enforcement.clone(),
            packages: self.shared.packages.clone(),
            started,
            timeout: self.shared.timeout.as_secs_f64(),
        };
        let mut state = self.shared.lock();
        if let State::Closed(why) = &*state {
            let message = format!("The session is closed: {why}");
            return outcome::skipped(ctx, message);
        }
        let State::Live { process, last_used } = &mut *state else {
            return outcome::skipped(ctx, "The session is closed".into());
        };
        let deadline = started + self.shared.timeout;
        let done = match process {
            Worker::Local(process) => Ok(call_local(process, code, deadline, &self.shared)),
            Worker::Docker(session) => session.call(code, deadline, env.policy()),
        };
        *last_used = Instant::now();
        let (mut produced, ended) = match done {
            Ok(done) => done,
            Err(e) => {
                let why = format!("the container exchange failed: {e}");
                let cleanup = self.shared.end(&mut state, why);
                let mut r = outcome::skipped(ctx, format!("Sandbox execution error: {e}"));
                r.cleanup.extend(cleanup);
                return r;
            }
        };
        if let Some(why) = ended {
            produced.cleanup = self.shared.end(&mut state, why);
            produced.working_directory = None;
        }
        outcome::finish(ctx, produced)
    }

    /// Copy the host file or directory `source` to `destination` (relative, beneath the
    /// workspace; its parent must exist). Never follows a link inside the workspace; an
    /// existing regular file is replaced; a link or special file in a host directory refuses
    /// the copy before anything is written (`session/copy.rs`). Returns the bytes copied.
    pub fn copy_in(&self, source: &Path, destination: &str) -> Result<u64, SessionError> {
        self.copy_in_tree(source, destination).map(|c| c.bytes)
    }

    /// [`Session::copy_in`], returning bytes and files copied.
    pub fn copy_in_tree(&self, source: &Path, destination: &str) -> Result<Copied, SessionError> {
        let mut state = self.shared.live()?;
        let copied = match &mut *state {
            State::Live {
                process: Worker::Local(p),
                ..
            } => copy::copy_in(&self.shared.workspace, source, destination, p.uid()),
            State::Live {
                process: Worker::Docker(d),
                ..
            } => copy::copy_in_through(source, destination, |rel, data| d.put(rel, data)),
            State::Closed(_) => Ok(Copied::default()),
        };
        copied.map_err(|(path, reason)| SessionError::Path { path, reason })
    }

    /// Copy the workspace's regular file `source` (relative; no link anywhere on the way) to
    /// the host path `destination`, which must not exist (nothing the caller had is
    /// overwritten). Returns the bytes copied.
    pub fn copy_out(&self, source: &str, destination: &Path) -> Result<u64, SessionError> {
        let state = self.shared.live()?;
        if let State::Live {
            process: Worker::Docker(d),
            ..
        } = &*state
        {
            copy::check_relative(source).map_err(|reason| SessionError::Path {
                path: source.to_string(),
                reason,
            })?;
            return d
                .copy_out(source, destination)
                .map_err(|reason| SessionError::Path {
                    path: source.to_string(),
                    reason,
                });
        }
        copy::copy_out(&self.shared.workspace, source, destination)
            .map_err(|(path, reason)| SessionError::Path { path, reason })
    }

    /// End the session now: kill the tree, release everything, remove the workspace. Returns
    /// what could not be cleaned up (empty when everything is gone).
    pub fn close(&self) -> Vec<String> {
        let mut state = self.shared.lock();
        self.shared.end(&mut state, "closed".into())
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("tier", &self.shared.environment.tier())
            .field("workspace", &self.shared.workspace)
            .finish_non_exhaustive()
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn live(&self) -> Result<MutexGuard<'_, State>, SessionError> {
        let state = self.lock();
        match &*state {
            State::Live { .. } => Ok(state),
            State::Closed(why) => Err(SessionError::Closed(why.clone())),
        }
    }

    /// Close a live session (`why` is reported to later calls); idempotent.
    fn end(&self, state: &mut State, why: String) -> Vec<String> {
        let old = std::mem::replace(state, State::Closed(why));
        let State::Live { process, .. } = old else {
            *state = old;
            return Vec::new();
        };
        let mut cleanup = process.close();
        if let Err(e) = std::fs::remove_dir_all(&self.workspace)
            && e.kind() != io::ErrorKind::NotFound
        {
            cleanup.push(format!("workspace {}: {e}", self.workspace.display()));
        }
        cleanup
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        let mut state = std::mem::replace(
            self.state.get_mut().unwrap_or_else(|e| e.into_inner()),
            State::Closed(String::new()),
        );
        if matches!(state, State::Live { .. }) {
            let _ = self.end(&mut state, "dropped".into());
        }
    }
}

/// How long a session's container may be kept by a sweep whose owner is unknown: well past
/// its idle expiry (a live owner's container is never swept).
fn lifetime(idle: Duration) -> Duration {
    idle.saturating_add(Duration::from_secs(24 * 3600))
}

/// One call in a local session process: output, status, and (exit 0) the workspace's new or
/// changed files. `Some(why)` when the call ended the session.
fn call_local(
    process: &mut Persistent,
    code: &str,
    deadline: Instant,
    shared: &Shared,
) -> (Produced, Option<String>) {
    let policy = shared.environment.policy();
    let before = Snapshot::take(&shared.workspace);
    let output = process.call(code, deadline, local::keeps(policy));
    let mut produced = Produced {
        stdout: output.stdout,
        stderr: output.stderr,
        exit_code: output.status,
        timed_out: output.timed_out,
        working_directory: Some(shared.workspace.clone()),
        ..Produced::default()
    };
    let ended = if output.timed_out {
        Some("a call timed out and its process tree was killed".to_string())
    } else {
        output.died.map(|code| {
            produced.exit_code = code;
            produced.exit_signal = code.and_then(process::signal_of_code);
            produced.oom_killed = process.oom_killed();
            format!(
                "the interpreter exited during a call (exit code {})",
                code.map_or_else(|| "unknown".into(), |c| c.to_string())
            )
        })
    };
    if ended.is_none() && produced.exit_code == Some(0) {
        let (found, truncated) = local::new_artifacts(&before, &shared.workspace, policy);
        produced.artifacts = found;
        produced.artifacts_truncated = truncated;
    }
    (produced, ended)
}

/// Expire the session after `idle` without a call. The thread holds no strong reference: a
/// dropped session ends it.
fn reap_when_idle(shared: Weak<Shared>) {
    thread::spawn(move || {
        loop {
            let wait = {
                let Some(s) = shared.upgrade() else { return };
                let mut state = s.lock();
                let left = match &*state {
                    State::Closed(_) => return,
                    State::Live { last_used, .. } => s.idle.checked_sub(last_used.elapsed()),
                };
                match left {
                    Some(left) if !left.is_zero() => left,
                    _ => {
                        let idle = s.idle;
                        let _ = s.end(&mut state, format!("expired after {idle:?} idle"));
                        return;
                    }
                }
            };
            thread::sleep(wait.min(Duration::from_secs(1)));
        }
    });
}
