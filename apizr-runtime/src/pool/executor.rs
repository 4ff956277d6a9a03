//! [`DirectExecutor`]: the warm pool behind the call API (no policy, module state persists).
//!
//! The pool is bound to one executable and module and loads the served capabilities once per
//! worker, so a call for other bytes is `source_mismatch` and a call of a capability the pool
//! did not load is `binding_failed`, before any worker is used.

use std::collections::BTreeSet;
use std::sync::Arc;

use apizr_ir::Digest;
use apizr_ir::admission::parse_permissive;

use super::{Pool, PoolConfig, call_frame};
use crate::call::{BackendKind, Call, Executor, ExecutorError, Outcome};
use crate::status::Status;

/// A started warm pool of persistent workers.
///
/// ```
/// use apizr_inspect::{InspectOptions, interface, on_inspect_stack};
/// use apizr_runtime::ir::{SourceKind, Value};
/// use apizr_runtime::pool::executor::DirectExecutor;
/// use apizr_runtime::pool::{PoolConfig, SetResults};
/// use apizr_runtime::{AnyExecutor, Call, Executable, Status};
/// use std::sync::Arc;
///
/// let source = b"calls = 0\ndef count(step: int) -> int:\n    global calls\n    calls += step\n    return calls\n";
/// let contracts = on_inspect_stack(|| {
///     let (outcome, parsed) =
///         apizr_inspect::inspect_bytes_parsed(source, SourceKind::Python, "counter", InspectOptions::default())
///             .unwrap();
///     interface::plan_interfaces(&parsed, &outcome.inspection, None).unwrap()
/// })
/// .unwrap();
/// let executable = Executable::new(source.to_vec());
/// let direct = DirectExecutor::start_blocking(PoolConfig {
///     python: "python3".into(),
///     workers: 1,
///     timeout: None,
///     executable: executable.clone(),
///     module: "counter".into(),
///     path: "source/counter.py".into(),
///     capabilities: contracts.clone(),
///     sets: SetResults::ToList,
/// })
/// .unwrap();
/// let executor = AnyExecutor::Direct(Arc::new(direct));
/// for expected in [2, 4] {
///     // Module state persists between calls on a warm worker.
///     let call = Call::from_json(&contracts[0], executable.clone(), "counter", br#"{"step": 2}"#).unwrap();
///     let outcome = executor.execute(&call);
///     assert_eq!((outcome.status, outcome.value), (Status::Success, Value::Int(expected)));
/// }
/// ```
pub struct DirectExecutor {
    pool: Arc<Pool>,
    digest: Digest,
    module: String,
    capabilities: BTreeSet<String>,
    handle: tokio::runtime::Handle,
    /// The runtime the pool lives on when it was started with [`DirectExecutor::start_blocking`].
    owned: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for DirectExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectExecutor")
            .field("pool", &self.pool)
            .field("capabilities", &self.capabilities)
            .finish_non_exhaustive()
    }
}

impl DirectExecutor {
    /// Start the workers on the current tokio runtime and wait until each has imported the
    /// module and bound every capability.
    pub async fn start(config: PoolConfig) -> Result<DirectExecutor, ExecutorError> {
        let digest = config.executable.digest.clone();
        let module = config.module.clone();
        let capabilities = config.capabilities.iter().map(|c| c.name.clone()).collect();
        let pool = Pool::start(config).await?;
        Ok(DirectExecutor {
            pool,
            digest,
            module,
            capabilities,
            handle: tokio::runtime::Handle::current(),
            owned: None,
        })
    }

    /// Start the pool on a runtime of its own (for callers without one), so that
    /// [`Executor::execute`] can block on it.
    pub fn start_blocking(config: PoolConfig) -> Result<DirectExecutor, ExecutorError> {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(ExecutorError::BlockingInAsync);
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| ExecutorError::Pool(super::PoolError::Spawn(e)))?;
        let mut executor = runtime.block_on(DirectExecutor::start(config))?;
        executor.owned = Some(runtime);
        Ok(executor)
    }

    /// The pool (worker counts for metrics).
    pub fn pool(&self) -> &Arc<Pool> {
        &self.pool
    }

    /// Run one call on a warm worker. Dropping the future mid-call kills that worker.
    pub async fn call(&self, call: &Call) -> Outcome {
        let answer = |status| Outcome::status(status).with_backend(BackendKind::Direct);
        if call.executable().digest != self.digest || call.module() != self.module {
            return answer(Status::SourceMismatch);
        }
        if !self.capabilities.contains(call.function()) {
            return answer(Status::BindingFailed);
        }
        let frame = call
            .arguments_json()
            .ok()
            .and_then(|json| call_frame(call.function(), call.positional_count(), &json).ok());
        let Some(frame) = frame else {
            return Outcome::invalid_input("Expected a finite JSON value")
                .with_backend(BackendKind::Direct);
        };
        let reply = self.pool.call(&frame).await;
        if reply.status != Status::Success {
            return answer(reply.status);
        }
        let mut outcome = answer(Status::Success);
        if call.wants_json() {
            outcome.value_json = Some(reply.raw);
            return outcome;
        }
        match parse_permissive(&reply.raw) {
            Ok(value) => outcome.value = value,
            Err(_) => outcome.status = Status::WorkerFailed,
        }
        outcome
    }
}

impl Executor for DirectExecutor {
    fn kind(&self) -> BackendKind {
        BackendKind::Direct
    }

    /// The workers were started and loaded the module in `start`.
    fn check(&self) -> Result<(), ExecutorError> {
        Ok(())
    }

    /// Block on [`DirectExecutor::call`]. Inside a tokio runtime this would deadlock or panic,
    /// so there it answers `worker_failed`; async callers use `AnyExecutor::run`.
    fn execute(&self, call: &Call) -> Outcome {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Outcome::status(Status::WorkerFailed).with_backend(BackendKind::Direct);
        }
        self.handle.block_on(self.call(call))
    }
}

impl Drop for DirectExecutor {
    fn drop(&mut self) {
        // Dropping a runtime blocks until its tasks end, which is not allowed inside another
        // runtime; the pool's workers die with their process groups either way.
        if let Some(runtime) = self.owned.take() {
            runtime.shutdown_background();
        }
    }
}
