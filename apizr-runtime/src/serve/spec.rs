//! What a server serves: [`ServeSpec`] (capabilities, source, execution mode, gates), shared
//! by the REST and MCP transports and by `apizr serve`, bundles and generated projects.
//!
//! Plain data: loading a bundle (`bundle.rs`), running calls (`invoker.rs`) and answering them
//! (`reply.rs`) build on these types and never the other way round.

use std::path::PathBuf;
use std::time::Duration;

use apizr_ir::interface::InvocationContract;
use apizr_ir::policy::AnyPolicy;
use apizr_ir::{Digest, Value};
use tokio::sync::oneshot;

use crate::local::runtime::LauncherLocation;
use crate::oci::RuntimeImage;
use crate::request::Executable;

/// One capability as served.
#[derive(Debug, Clone)]
pub struct ServedCapability {
    /// The Python function name (REST route `/capabilities/<name>`).
    pub name: String,
    pub contract: InvocationContract,
    /// The request (tool input) schema.
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
#[expect(
    clippy::large_enum_variant,
    reason = "built once per server; boxing the policy would only complicate constructors"
)]
pub enum ExecutionMode {
    /// Warm pool of persistent workers; state persists; `timeout` kills and respawns.
    Direct {
        workers: usize,
        timeout: Option<Duration>,
    },
    /// Governed: a fresh sandboxed worker per call under a v1 policy, or a fresh container
    /// per call under a v2 policy in `image` (see `AnyExecutor::for_policy`).
    Governed {
        policy: AnyPolicy,
        image: Option<RuntimeImage>,
    },
}

impl ExecutionMode {
    /// A governed mode under a v1 policy.
    pub fn governed_v1(policy: apizr_ir::policy::PolicyV1) -> Self {
        ExecutionMode::Governed {
            policy: AnyPolicy::V1(policy),
            image: None,
        }
    }
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
    /// v2 policies: containers prepared ahead of calls (`oci::pool`); 0 creates a fresh
    /// container per call.
    pub oci_pool: usize,
    /// v1 policies: pre-started single-use workers kept per served module
    /// (`local::prestart`); 0 starts every call's worker cold.
    pub v1_prestart: usize,
    /// Governed modes: append one audit record per call (refusals included) to this file.
    pub audit: Option<PathBuf>,
}

/// Prepared containers a v2 server keeps ready unless told otherwise: enough for a call and
/// the one after it, while the idle containers cost only their interpreters' memory.
pub const DEFAULT_OCI_POOL: usize = 2;

impl ServeSpec {
    /// From an in-memory inspection (used by `apizr serve SOURCE`): the READY contracts the
    /// caller selected, the executable bytes and the module name.
    pub fn from_contracts(
        contracts: Vec<InvocationContract>,
        source: ServeSource,
        mode: ExecutionMode,
    ) -> Self {
        ServeSpec {
            capabilities: contracts.into_iter().map(ServedCapability::new).collect(),
            mode,
            source,
            openapi: None,
            mcp_tools: None,
            gates: Gates::default(),
            python: default_python(),
            launcher: LauncherLocation::CurrentExe,
            oci_pool: DEFAULT_OCI_POOL,
            v1_prestart: crate::local::prestart::DEFAULT_SIZE,
            audit: None,
        }
    }

    pub fn capability(&self, name: &str) -> Option<&ServedCapability> {
        self.capabilities.iter().find(|c| c.name == name)
    }
}

/// `APIZR_PYTHON` or `python3`.
pub fn default_python() -> PathBuf {
    std::env::var_os("APIZR_PYTHON").map_or_else(|| PathBuf::from("python3"), PathBuf::from)
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

    pub(crate) async fn cancelled(self) {
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
