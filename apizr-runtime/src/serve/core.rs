//! The serving core shared by the REST and MCP transports: what is served ([`ServeSpec`]),
//! how it runs ([`ExecutionMode`]) and one entry point per call ([`Invoker::call`], in
//! `invoker.rs`) whose
//! [`CallResult`] each transport maps to its own wire form (REST codes of contract 8.2/8.4/8.5,
//! MCP texts of 8.3).
//!
//! Why one core: admission, validation (with the reference's detail strings), concurrency
//! gates, the warm pool and governed execution must behave identically on every transport.

use std::path::{Path, PathBuf};
use std::time::Duration;

use apizr_ir::interface::InvocationContract;
use apizr_ir::policy::PolicyV1;
use apizr_ir::policy_v2::PolicyV2;
use apizr_ir::{Digest, Value};
use tokio::sync::oneshot;

pub use super::invoker::Invoker;
use crate::local::runtime::LauncherLocation;
use crate::oci::RuntimeImage;
use crate::request::Executable;
use crate::status::Status;

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
    #[error("container backend: {0}")]
    Backend(String),
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
    /// A fresh container per call (`apizr.execution/v2`, oci-container backend).
    Oci {
        policy: Box<PolicyV2>,
        image: RuntimeImage,
    },
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

/// Admission limits (`serve/gate.rs`): per capability, at most `concurrency` running and at
/// most `queue` waiting; in the governed modes also, server-wide, at most `workers` worker
/// processes (or containers) and at most `memory_bytes` of their summed memory limits.
#[derive(Debug, Clone, Copy)]
pub struct Gates {
    pub concurrency: usize,
    pub queue: usize,
    pub retry_after: Duration,
    /// Governed modes: workers running at once, all capabilities together.
    pub workers: usize,
    /// Governed modes: the sum of the running workers' memory limits.
    pub memory_bytes: u64,
}

impl Default for Gates {
    fn default() -> Self {
        Gates {
            concurrency: 64,
            queue: 256,
            retry_after: Duration::from_secs(1),
            workers: default_governed_workers(),
            memory_bytes: default_governed_memory(),
        }
    }
}

/// Four governed workers per core (at least 4): a governed call mostly waits on its worker's
/// start-up, so a few per core keep the CPUs busy without an unbounded process count.
pub fn default_governed_workers() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores * 4).max(4)
}

/// Half the host's memory (`MemTotal` of `/proc/meminfo`), else 4 GiB: the governed workers'
/// limits together never promise more than the host can give while the server runs too.
pub fn default_governed_memory() -> u64 {
    const FALLBACK: u64 = 4 << 30;
    let Ok(text) = std::fs::read_to_string("/proc/meminfo") else {
        return FALLBACK;
    };
    text.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse::<u64>().ok())
        .map_or(FALLBACK, |kib| kib.saturating_mul(1024) / 2)
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
    /// One call's memory limit exceeds the server's whole governed memory budget, so it can
    /// never be admitted (REST 503).
    OverCapacity,
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
            CallResult::OverCapacity => "over_capacity",
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

    pub(super) async fn cancelled(self) {
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
