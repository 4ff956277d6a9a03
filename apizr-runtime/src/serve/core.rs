//! The serving core shared by the REST and MCP transports: what is served ([`ServeSpec`]),
//! how it runs ([`ExecutionMode`]) and one entry point per call ([`Invoker::call`]) whose
//! [`CallResult`] each transport maps to its own wire form (REST codes of contract 8.2/8.4/8.5,
//! MCP texts of 8.3).
//!
//! Why one core: admission, validation (with the reference's detail strings), concurrency
//! gates, the warm pool and governed execution must behave identically on every transport.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use apizr_ir::admission::{parse_permissive, preflight};
use apizr_ir::interface::{ContractExecution, InvocationContract};
use apizr_ir::policy::PolicyV1;
use apizr_ir::{Digest, Value};
use tokio::sync::{Semaphore, oneshot};

use super::metrics::Metrics;
use crate::pool::{Pool, PoolConfig, SetResults, call_frame};
use crate::request::{BindingParameter, CallRequest, Executable, ExecutionKind};
use crate::runtime::{LauncherLocation, LocalRuntime, RuntimeConfig};
use crate::status::Status;
use crate::validate::validate_arguments;

/// The generic admission detail (contract 8.2, 8.6).
pub const ADMISSION_DETAIL: &str = "JSON admission limit or encoding rejected";
/// Governed invalid-input detail (contract 8.4).
pub const GOVERNED_INVALID_DETAIL: &str = "Invalid request arguments";
/// Largest request body (REST 413 past it).
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("bundle: {0}")]
    Bundle(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("artifact digest mismatch: {0}")]
    Digest(String),
    #[error("policy: {0}")]
    Policy(String),
    #[error("worker pool: {0}")]
    Pool(#[from] crate::pool::PoolError),
    #[error("{0}")]
    Usage(String),
}

/// One capability as served.
#[derive(Debug, Clone)]
pub struct ServedCapability {
    /// The Python function name (REST route `/capabilities/<name>`).
    pub name: String,
    pub contract: InvocationContract,
    /// The request (tool input) schema of contract 5.3.
    pub request_schema: Value,
}

impl ServedCapability {
    pub fn new(contract: InvocationContract) -> Self {
        ServedCapability {
            name: contract.name.clone(),
            request_schema: contract.request_schema(),
            contract,
        }
    }
}

/// How calls run.
#[derive(Debug, Clone)]
pub enum ExecutionMode {
    /// Warm pool of persistent workers; state persists; `timeout` kills and respawns.
    Direct {
        workers: usize,
        timeout: Option<Duration>,
    },
    /// A fresh governed worker per call (`apizr.execution/v1`, local-process backend).
    Governed(PolicyV1),
}

/// The executable source and its bindings.
#[derive(Debug, Clone)]
pub struct ServeSource {
    pub executable: Executable,
    /// Logical dotted module name.
    pub module: String,
    /// `source/<module path>.py`
    pub executable_path: String,
    pub ir_digest: Option<Digest>,
    pub readiness_digest: Option<Digest>,
}

/// Per-capability admission: at most `concurrency` running, at most `queue` waiting.
#[derive(Debug, Clone, Copy)]
pub struct Gates {
    pub concurrency: usize,
    pub queue: usize,
    pub retry_after: Duration,
}

impl Default for Gates {
    fn default() -> Self {
        Gates {
            concurrency: 64,
            queue: 256,
            retry_after: Duration::from_secs(1),
        }
    }
}

/// Everything a transport needs to serve.
#[derive(Debug, Clone)]
pub struct ServeSpec {
    pub transport_title: String,
    pub capabilities: Vec<ServedCapability>,
    pub mode: ExecutionMode,
    pub source: ServeSource,
    /// The bundle's `openapi.json` bytes, served as-is (None: built on demand).
    pub openapi: Option<Vec<u8>>,
    /// The bundle's `mcp-tools.json` bytes, if any.
    pub mcp_tools: Option<Vec<u8>>,
    pub gates: Gates,
    /// Interpreter (`APIZR_PYTHON` or `python3`).
    pub python: PathBuf,
    /// Governed mode: where the launcher comes from (default: re-exec this binary, whose
    /// `main` calls `launcher::run_if_requested()` first).
    pub launcher: LauncherLocation,
}

impl ServeSpec {
    /// From an in-memory inspection (used by `apizr serve SOURCE`): the READY contracts the
    /// caller selected, the executable bytes and the module name.
    pub fn from_contracts(
        contracts: Vec<InvocationContract>,
        source: ServeSource,
        mode: ExecutionMode,
    ) -> Self {
        ServeSpec {
            transport_title: "Apizr REST API".into(),
            capabilities: contracts.into_iter().map(ServedCapability::new).collect(),
            mode,
            source,
            openapi: None,
            mcp_tools: None,
            gates: Gates::default(),
            python: default_python(),
            launcher: LauncherLocation::CurrentExe,
        }
    }

    /// Read a generated project's contract files and verify every artifact digest.
    pub fn from_bundle_dir(dir: &Path) -> Result<ServeSpec, ServeError> {
        super::bundle::load(dir)
    }

    pub fn capability(&self, name: &str) -> Option<&ServedCapability> {
        self.capabilities.iter().find(|c| c.name == name)
    }
}

/// `APIZR_PYTHON` or `python3`.
pub fn default_python() -> PathBuf {
    std::env::var_os("APIZR_PYTHON").map_or_else(|| PathBuf::from("python3"), PathBuf::from)
}

/// The outcome of one call, before a transport maps it.
#[derive(Debug, Clone, PartialEq)]
pub enum CallResult {
    Success(Value),
    /// The wire detail (mode-specific: a 5.5 message in direct mode, the generic one governed).
    InvalidInput(String),
    Timeout,
    ResourceLimit,
    Busy {
        retry_after: Duration,
    },
    Unknown,
    /// Anything else, with the runtime status when there was one.
    Failed(Option<Status>),
}

impl CallResult {
    /// A short label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            CallResult::Success(_) => "success",
            CallResult::InvalidInput(_) => "invalid_input",
            CallResult::Timeout => "timeout",
            CallResult::ResourceLimit => "resource_limit",
            CallResult::Busy { .. } => "busy",
            CallResult::Unknown => "unknown",
            CallResult::Failed(_) => "failed",
        }
    }
}

/// A cancellation signal: fires when its [`CancelGuard`] is dropped (or cancelled).
/// Dropping the `call` future also cancels; this is for transports that learn about
/// cancellation separately (e.g. MCP `notifications/cancelled`).
#[derive(Debug)]
pub struct CancelOnDrop(Option<oneshot::Receiver<()>>);

/// The sending side of [`CancelOnDrop`].
#[derive(Debug)]
pub struct CancelGuard(Option<oneshot::Sender<()>>);

impl CancelOnDrop {
    pub fn pair() -> (CancelGuard, CancelOnDrop) {
        let (tx, rx) = oneshot::channel();
        (CancelGuard(Some(tx)), CancelOnDrop(Some(rx)))
    }

    /// Never cancelled.
    pub fn never() -> Self {
        CancelOnDrop(None)
    }

    async fn cancelled(self) {
        match self.0 {
            Some(rx) => {
                let _ = rx.await;
            }
            None => std::future::pending::<()>().await,
        }
    }
}

impl CancelGuard {
    /// Cancel now (the same as dropping the guard).
    pub fn cancel(mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

enum Backend {
    Direct(Arc<Pool>),
    Governed {
        runtime: Arc<LocalRuntime>,
        policy: Box<PolicyV1>,
    },
}

struct Gate {
    running: Semaphore,
    waiting: AtomicUsize,
}

/// Runs calls for one [`ServeSpec`].
pub struct Invoker {
    spec: Arc<ServeSpec>,
    backend: Backend,
    gates: BTreeMap<String, Gate>,
    pub metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Invoker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Invoker")
            .field("capabilities", &self.spec.capabilities.len())
            .finish()
    }
}

impl Invoker {
    /// Start the backend (direct: spawn and load every worker; governed: probe the host).
    /// `sets`: how direct mode returns set results (REST: arrays; MCP: rejected).
    pub async fn start(spec: ServeSpec, sets: SetResults) -> Result<Invoker, ServeError> {
        let backend = match &spec.mode {
            ExecutionMode::Direct { workers, timeout } => {
                let pool = Pool::start(PoolConfig {
                    python: spec.python.clone(),
                    workers: *workers,
                    timeout: *timeout,
                    executable: spec.source.executable.clone(),
                    module: spec.source.module.clone(),
                    path: spec.source.executable_path.clone(),
                    capabilities: spec
                        .capabilities
                        .iter()
                        .map(|c| c.contract.clone())
                        .collect(),
                    sets,
                })
                .await?;
                Backend::Direct(pool)
            }
            ExecutionMode::Governed(policy) => {
                let runtime = Arc::new(LocalRuntime::new(RuntimeConfig {
                    python: spec.python.clone(),
                    launcher: spec.launcher.clone(),
                    temp_root: std::env::temp_dir(),
                }));
                let probe = runtime.clone();
                tokio::task::spawn_blocking(move || {
                    let _ = probe.host_capabilities();
                })
                .await
                .map_err(|e| ServeError::Usage(e.to_string()))?;
                Backend::Governed {
                    runtime,
                    policy: Box::new(policy.clone()),
                }
            }
        };
        let gates = spec
            .capabilities
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    Gate {
                        running: Semaphore::new(spec.gates.concurrency.max(1)),
                        waiting: AtomicUsize::new(0),
                    },
                )
            })
            .collect();
        let names = spec.capabilities.iter().map(|c| c.name.clone()).collect();
        Ok(Invoker {
            spec: Arc::new(spec),
            backend,
            gates,
            metrics: Arc::new(Metrics::new(names)),
        })
    }

    pub fn spec(&self) -> &ServeSpec {
        &self.spec
    }

    pub fn is_governed(&self) -> bool {
        matches!(self.backend, Backend::Governed { .. })
    }

    /// Workers killed by the pool (direct mode).
    pub fn kills(&self) -> u64 {
        match &self.backend {
            Backend::Direct(pool) => pool.kills(),
            Backend::Governed { .. } => 0,
        }
    }

    /// One call: admission → decode → validation → gate → execution.
    pub async fn call(&self, name: &str, arguments: &[u8], cancel: CancelOnDrop) -> CallResult {
        self.run(name, arguments, cancel, true).await.0
    }

    /// As [`Invoker::call`], but in direct mode a success carries the worker's own JSON bytes
    /// of the value (dict insertion order kept, as the reference's direct REST answers) and
    /// the value itself is not decoded (`Success(Null)`). Governed successes carry the value
    /// and no bytes.
    pub async fn call_json(
        &self,
        name: &str,
        arguments: &[u8],
        cancel: CancelOnDrop,
    ) -> (CallResult, Option<Vec<u8>>) {
        self.run(name, arguments, cancel, false).await
    }

    async fn run(
        &self,
        name: &str,
        arguments: &[u8],
        cancel: CancelOnDrop,
        decode: bool,
    ) -> (CallResult, Option<Vec<u8>>) {
        let started = Instant::now();
        self.metrics.in_flight.fetch_add(1, Ordering::Relaxed);
        let result = tokio::select! {
            r = self.call_inner(name, arguments, decode) => r,
            () = cancel.cancelled() => (CallResult::Failed(None), None),
        };
        self.metrics.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.metrics
            .observe(name, result.0.label(), started.elapsed());
        result
    }

    async fn call_inner(
        &self,
        name: &str,
        arguments: &[u8],
        decode: bool,
    ) -> (CallResult, Option<Vec<u8>>) {
        let (Some(capability), Some(gate)) = (self.spec.capability(name), self.gates.get(name))
        else {
            return (CallResult::Unknown, None);
        };
        let governed = self.is_governed();
        let invalid = |detail: String| {
            CallResult::InvalidInput(if governed {
                GOVERNED_INVALID_DETAIL.to_string()
            } else {
                detail
            })
        };
        if preflight(arguments, MAX_BODY_BYTES as u64).is_err() {
            return (CallResult::InvalidInput(ADMISSION_DETAIL.into()), None);
        }
        let payload = match parse_permissive(arguments) {
            Ok(v) => v,
            Err(e) => return (invalid(e.python_message(arguments)), None),
        };
        let call = match validate_arguments(&capability.contract.parameters, &payload) {
            Ok(c) => c,
            Err(e) => return (invalid(e.to_string()), None),
        };
        // Gate: a bounded queue in front of a per-capability concurrency limit.
        let permit = match gate.running.try_acquire() {
            Ok(p) => p,
            Err(_) => {
                if gate.waiting.fetch_add(1, Ordering::AcqRel) >= self.spec.gates.queue {
                    gate.waiting.fetch_sub(1, Ordering::AcqRel);
                    let busy = CallResult::Busy {
                        retry_after: self.spec.gates.retry_after,
                    };
                    return (busy, None);
                }
                let acquired = gate.running.acquire().await;
                gate.waiting.fetch_sub(1, Ordering::AcqRel);
                match acquired {
                    Ok(p) => p,
                    Err(_) => return (CallResult::Failed(None), None),
                }
            }
        };
        let result = match &self.backend {
            Backend::Direct(pool) => {
                let frame = match call_frame(&capability.name, call.positional.len(), arguments) {
                    Ok(f) => f,
                    Err(_) => return (invalid("Expected a finite JSON value".into()), None),
                };
                let answer = pool.call(&frame).await;
                drop(permit);
                if answer.status != Status::Success {
                    return (map_status(answer.status, Value::Null, governed), None);
                }
                if !decode {
                    return (CallResult::Success(Value::Null), Some(answer.raw));
                }
                return match parse_permissive(&answer.raw) {
                    Ok(value) => (CallResult::Success(value), None),
                    Err(_) => (CallResult::Failed(Some(Status::WorkerFailed)), None),
                };
            }
            Backend::Governed { runtime, policy } => {
                let request = call_request(&self.spec.source, &capability.contract, call, policy);
                let runtime = runtime.clone();
                match tokio::task::spawn_blocking(move || runtime.execute(&request)).await {
                    Ok(outcome) => {
                        map_status(outcome.envelope.status, outcome.envelope.value, governed)
                    }
                    Err(_) => CallResult::Failed(None),
                }
            }
        };
        drop(permit);
        (result, None)
    }
}

fn map_status(status: Status, value: Value, governed: bool) -> CallResult {
    match status {
        Status::Success => CallResult::Success(value),
        Status::InvalidInput => CallResult::InvalidInput(if governed {
            GOVERNED_INVALID_DETAIL.into()
        } else {
            "Value does not match the declared input type".into()
        }),
        Status::Timeout => CallResult::Timeout,
        other => CallResult::Failed(Some(other)),
    }
}

fn call_request(
    source: &ServeSource,
    contract: &InvocationContract,
    call: crate::validate::ValidatedCall,
    policy: &PolicyV1,
) -> CallRequest {
    CallRequest {
        capability_id: contract.capability_id.clone(),
        executable: source.executable.clone(),
        module: source.module.clone(),
        function: contract.name.clone(),
        execution: match contract.execution {
            ContractExecution::Sync => ExecutionKind::Sync,
            ContractExecution::Async => ExecutionKind::Async,
        },
        parameters: contract
            .parameters
            .iter()
            .map(|p| BindingParameter {
                name: p.name.clone(),
                kind: p.kind,
                required: p.required,
                type_spec: p.type_spec.clone(),
            })
            .collect(),
        positional: call.positional,
        keyword: call.keyword,
        policy: policy.clone(),
    }
}
