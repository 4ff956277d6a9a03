//! The execution seam: [`Executor`], implemented once per backend, and [`AnyExecutor`], the
//! registry that callers hold.
//!
//! Why a blocking trait plus an enum: the fresh-process and fresh-container backends are
//! blocking by nature (threads, pipes, a unix socket) and the direct pool is async (tokio). A
//! blocking [`Executor::execute`] is the one method every backend can implement without a
//! runtime; [`AnyExecutor::run`] is the async entry for servers, which moves blocking backends
//! onto tokio's blocking pool and awaits the direct pool natively. Dispatch is an enum (as
//! libcgroups dispatches cgroup versions) rather than `Box<dyn Executor>`: no boxed futures, no
//! `async-trait`, and a backend whose cargo feature is off does not exist as a variant. The
//! trait still exists so that each backend states the same contract and tests can drive one
//! directly.
//!
//! Adding a backend: one module with a type implementing [`Executor`], and one registration
//! here: a [`BackendKind`] and an [`AnyExecutor`] variant with their arms in
//! [`AnyExecutor::executor`] and (when a policy selects it) [`AnyExecutor::for_policy_audited`];
//! an async backend also gets an arm in `AnyExecutor::run`. The checklist is ARCHITECTURE.md,
//! "Adding a backend".

use std::sync::Arc;

#[cfg(feature = "oci")]
use apizr_ir::policy::AnyPolicy;
use apizr_ir::policy::PolicyV1;
#[cfg(feature = "oci")]
use apizr_ir::policy_v2::V2Refusal;

use super::{Call, Outcome};
#[cfg(feature = "oci")]
use crate::audit::AuditSink;
use crate::local::executor::LocalExecutor;
use crate::local::runtime::RuntimeConfig;
#[cfg(feature = "oci")]
use crate::oci::{OciConfig, RuntimeImage, executor::OciExecutor};
#[cfg(feature = "serve")]
use crate::pool::executor::DirectExecutor;

/// Which backend runs the calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BackendKind {
    /// Warm pool of persistent workers; module state persists (no policy).
    Direct,
    /// A fresh supervised process per call (`apizr.execution/v1`).
    LocalProcess,
    /// A fresh container per call (`apizr.execution/v2`).
    OciContainer,
}

impl BackendKind {
    /// The policy's `backend` literal (`direct` has no policy).
    pub fn wire_name(self) -> &'static str {
        match self {
            BackendKind::Direct => "direct",
            BackendKind::LocalProcess => "local-process",
            BackendKind::OciContainer => "oci-container",
        }
    }
}

/// Why an executor cannot be built or cannot serve (start-up errors; a single call never
/// fails with an error, it ends with a status).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecutorError {
    #[error("an apizr.execution/v2 policy needs a runtime image")]
    MissingImage,
    #[error("a runtime image needs an apizr.execution/v2 policy")]
    ImageWithoutV2,
    #[cfg(feature = "oci")]
    #[error("policy refused: {0}")]
    Refused(#[from] V2Refusal),
    #[error("the policy requires a known {0} effect, but effects are never inferred")]
    UnknownEffect(String),
    #[error("no Python interpreter: {0}")]
    NoPython(String),
    /// The container engine could not be reached or negotiated (the cached reason).
    #[error("container engine unavailable: {reason}")]
    EngineUnavailable { reason: String },
    #[error("container engine lacks {}", .missing.join(", "))]
    EngineLacks { missing: Vec<&'static str> },
    #[cfg(feature = "oci")]
    #[error("runtime image: {0}")]
    Image(#[from] crate::oci::image::ImageError),
    #[cfg(feature = "serve")]
    #[error("worker pool: {0}")]
    Pool(#[from] crate::pool::PoolError),
    #[error("the direct backend cannot block inside an async runtime; use AnyExecutor::run")]
    BlockingInAsync,
    #[error("the backend check did not complete (its thread panicked or was cancelled)")]
    CheckAborted,
    #[error("audit file {path}: {reason}")]
    Audit { path: String, reason: String },
}

/// One backend. Implementations never panic and never return an error for a call: every
/// failure is a [`Status`](crate::Status) in the [`Outcome`].
/// What a caller holds for as long as a call's worker lives (a server's admission slot and
/// memory claim). A backend that answers before its process has ended (the local backend in
/// servers, answering on the response frame) keeps it until that process is gone, so a
/// process still running after its answer keeps counting against the server's caps: released
/// at the answer, code that keeps its process alive after the frame (e.g. by replacing the
/// worker's exit) would let the next call in while it still holds its memory, and the caps
/// would bound nothing. Every other backend drops it when it returns.
pub type HeldUntilEnd = Box<dyn Send>;

pub trait Executor: Send + Sync + std::fmt::Debug {
    /// Which backend this is.
    fn kind(&self) -> BackendKind;

    /// Whether calls can run at all (interpreter, host probe, engine, image). Blocking.
    /// Servers call it before they report ready; a one-shot caller may skip it, since
    /// [`Executor::execute`] answers the same problems with a status.
    fn check(&self) -> Result<(), ExecutorError>;

    /// Run one call to completion on this thread.
    fn execute(&self, call: &Call) -> Outcome;

    /// [`Executor::execute`], keeping `held` until the call's process has ended (see
    /// [`HeldUntilEnd`]); by default it is dropped when the call returns.
    fn execute_holding(&self, call: &Call, held: HeldUntilEnd) -> Outcome {
        let outcome = self.execute(call);
        drop(held);
        outcome
    }
}

/// Every backend this build has. Cheap to clone (each variant is an `Arc`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AnyExecutor {
    /// Policy v1: a fresh supervised process per call.
    Local(Arc<LocalExecutor>),
    /// Policy v2: a fresh container per call.
    #[cfg(feature = "oci")]
    Oci(Arc<OciExecutor>),
    /// No policy: the warm pool (feature `serve`).
    #[cfg(feature = "serve")]
    Direct(Arc<DirectExecutor>),
}

impl AnyExecutor {
    /// The executor a policy asks for: v1 → local process (configured by `config`), v2 →
    /// container in `image` (required for v2, refused for v1). A v2 policy that the container
    /// backend cannot honour is refused here, before anything runs.
    #[cfg(feature = "oci")]
    pub fn for_policy(
        policy: AnyPolicy,
        config: RuntimeConfig,
        image: Option<RuntimeImage>,
    ) -> Result<AnyExecutor, ExecutorError> {
        AnyExecutor::for_policy_audited(policy, config, image, None)
    }

    /// [`AnyExecutor::for_policy`], with every call recorded in `audit` (one record per call,
    /// including calls the backend refuses).
    #[cfg(feature = "oci")]
    pub fn for_policy_audited(
        policy: AnyPolicy,
        config: RuntimeConfig,
        image: Option<RuntimeImage>,
        audit: Option<Arc<dyn AuditSink>>,
    ) -> Result<AnyExecutor, ExecutorError> {
        match policy {
            AnyPolicy::V1(policy) => {
                if image.is_some() {
                    return Err(ExecutorError::ImageWithoutV2);
                }
                let mut local = LocalExecutor::new(policy, config);
                if let Some(sink) = audit {
                    local = local.with_audit(sink);
                }
                Ok(AnyExecutor::Local(Arc::new(local)))
            }
            AnyPolicy::V2(policy) => {
                let image = image.ok_or(ExecutorError::MissingImage)?;
                if let Some(refusal) = policy.refusal() {
                    return Err(ExecutorError::Refused(refusal));
                }
                let config = OciConfig {
                    temp_root: config.temp_root,
                    ..OciConfig::default()
                };
                let mut oci = OciExecutor::new(policy, image, config);
                if let Some(sink) = audit {
                    oci = oci.with_audit(sink);
                }
                Ok(AnyExecutor::Oci(Arc::new(oci)))
            }
        }
    }

    /// The local-process backend under a v1 policy.
    pub fn local(policy: PolicyV1, config: RuntimeConfig) -> AnyExecutor {
        AnyExecutor::Local(Arc::new(LocalExecutor::new(policy, config)))
    }

    /// The backend behind this executor.
    pub fn executor(&self) -> &dyn Executor {
        match self {
            AnyExecutor::Local(e) => e.as_ref(),
            #[cfg(feature = "oci")]
            AnyExecutor::Oci(e) => e.as_ref(),
            #[cfg(feature = "serve")]
            AnyExecutor::Direct(e) => e.as_ref(),
        }
    }

    pub fn kind(&self) -> BackendKind {
        self.executor().kind()
    }

    /// See [`Executor::check`]. Blocking.
    pub fn check(&self) -> Result<(), ExecutorError> {
        self.executor().check()
    }

    /// Run one call on this thread (blocking). The direct backend may not be driven this way
    /// from inside a tokio runtime (it answers `worker_failed`); use [`AnyExecutor::run`].
    pub fn execute(&self, call: &Call) -> Outcome {
        self.executor().execute(call)
    }

    /// Run one call from async code. Fresh-process and container calls run on tokio's
    /// blocking pool; direct calls are awaited on the pool. Dropping the future abandons a
    /// direct call (its worker is killed and replaced); a blocking call runs to its deadline.
    #[cfg(feature = "serve")]
    pub async fn run(&self, call: Call) -> Outcome {
        self.run_holding(call, Box::new(())).await
    }

    /// [`AnyExecutor::run`], keeping `held` until the call's process has ended (see
    /// [`HeldUntilEnd`]).
    #[cfg(feature = "serve")]
    pub async fn run_holding(&self, call: Call, held: HeldUntilEnd) -> Outcome {
        match self {
            AnyExecutor::Direct(direct) => {
                let outcome = direct.call(&call).await;
                drop(held);
                outcome
            }
            blocking => {
                let executor = blocking.clone();
                tokio::task::spawn_blocking(move || {
                    executor.executor().execute_holding(&call, held)
                })
                .await
                .unwrap_or_else(|_| Outcome::status(crate::Status::WorkerFailed))
            }
        }
    }

    /// [`AnyExecutor::check`] from async code (on the blocking pool).
    #[cfg(feature = "serve")]
    pub async fn check_async(&self) -> Result<(), ExecutorError> {
        let executor = self.clone();
        tokio::task::spawn_blocking(move || executor.check())
            .await
            .unwrap_or(Err(ExecutorError::CheckAborted))
    }
}
