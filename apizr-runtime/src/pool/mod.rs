//! The direct warm pool: persistent Python workers that import the module once and then answer
//! many calls (`worker.py --serve`, protocol `apizr.worker-serve/v1`).
//!
//! Why: direct mode promises the reference's semantics (module-level state persists, no
//! per-call interpreter start) at many times its throughput. Each worker runs one call at a
//! time; the pool hands out idle workers under a semaphore sized to the worker count. A worker
//! that times out, breaks the protocol or is abandoned (the caller's future dropped, e.g. a
//! client disconnect) is killed with its whole process group and replaced in the background.
//!
//! Protocol `apizr.worker-serve/v2` (frames as `apizr.worker/v1`: u64 big-endian length, then
//! the payload; stdin stays open between calls):
//! * start-up, server → worker: canonical JSON `{"capabilities": {name: {"execution",
//!   "function", "parameters", "sets"}}, "executable": {"base64", "digest"}, "module", "nonce",
//!   "path", "protocol"}` (plus `"package"` for a module of a package, as in the single-shot
//!   request); the worker verifies the digests, imports the module once and binding-checks
//!   every capability;
//! * call, server → worker: `<nonce>\n<capability>\n<positional count>\n<caller's JSON
//!   text>` (already admitted and validated by the server; the worker re-decodes it to keep key
//!   order);
//! * every answer, worker → server: `<nonce>\n<status>\n<value JSON>\n` (`ensure_ascii=False`,
//!   compact, insertion order; the value is `null` unless the status is `success`).
//!
//! Trust: the module's code runs inside the worker and could write on the response pipe at any
//! time (a thread left behind by an earlier call, a C extension, a deliberate forgery). So
//! every request carries a fresh 128-bit nonce from the OS and the answer must echo it; an
//! answer with another nonce, bytes after an answer, or bytes while the worker is idle mean
//! the channel can no longer be trusted: the worker is killed and replaced, and the call
//! answers `worker_failed` — never another call's answer. This does not stop code that reads
//! the current nonce from the worker's own memory while it serves that very call: direct mode
//! gives no isolation from the module itself (see the threat model in the README).

pub mod executor;

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use apizr_ir::Value;
use apizr_ir::interface::InvocationContract;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{Mutex, Semaphore};

use crate::protocol::{MAX_REQUEST_BYTES, base64, encode_frame};
use crate::request::Executable;
use crate::status::Status;
use crate::worker::WORKER_SOURCE;

pub const SERVE_PROTOCOL: &str = "apizr.worker-serve/v2";

/// Largest response frame a pool worker may send (the REST body limit).
const MAX_RESPONSE_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    #[error("cannot start the Python worker: {0}")]
    Spawn(#[from] std::io::Error),
    #[error("the worker did not load the module: {0}")]
    Load(&'static str),
    #[error("worker protocol error: {0}")]
    Protocol(String),
    #[error("cannot encode the worker request: {0}")]
    Encode(String),
}

/// What the workers load.
#[derive(Debug, Clone)]
pub struct PoolConfig {
    pub python: PathBuf,
    pub workers: usize,
    /// Per-call deadline; past it the worker is killed and the call answers `timeout`.
    pub timeout: Option<Duration>,
    pub executable: Executable,
    pub module: String,
    /// `source/<module path>.py`, the file name in tracebacks.
    pub path: String,
    /// The served contracts; each worker resolves and binding-checks them once at start-up.
    pub capabilities: Vec<InvocationContract>,
    pub sets: SetResults,
}

struct Worker {
    child: Child,
    stdin: ChildStdin,
    /// Buffered: one read usually brings the whole response frame.
    stdout: BufReader<ChildStdout>,
}

impl Drop for Worker {
    fn drop(&mut self) {
        // A worker is dropped only when it is not returned to the pool: kill its group.
        if let Some(pid) = self.child.id().and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// A pool of persistent workers.
pub struct Pool {
    config: PoolConfig,
    /// The start-up document; each worker's gets its own `nonce`.
    init: Value,
    idle: Mutex<Vec<Worker>>,
    permits: Semaphore,
    kills: AtomicU64,
    spawned: AtomicU64,
    /// For background replacement of killed workers.
    me: Weak<Pool>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("workers", &self.config.workers)
            .field("module", &self.config.module)
            .finish()
    }
}

impl Pool {
    /// Start every worker and wait until each has imported the module.
    pub async fn start(config: PoolConfig) -> Result<Arc<Pool>, PoolError> {
        let package = match &config.executable.package {
            Some(package) => Some(
                crate::protocol::package_value(package)
                    .map_err(|e| PoolError::Encode(e.to_string()))?,
            ),
            None => None,
        };
        let init = Value::Object(
            [
                ("protocol".to_string(), Value::Str(SERVE_PROTOCOL.into())),
                ("module".to_string(), Value::Str(config.module.clone())),
                ("path".to_string(), Value::Str(config.path.clone())),
                ("capabilities".to_string(), capability_table(&config)?),
                (
                    "executable".to_string(),
                    Value::Object(
                        [
                            (
                                "base64".to_string(),
                                Value::Str(base64(&config.executable.bytes)),
                            ),
                            (
                                "digest".to_string(),
                                apizr_ir::to_value(&config.executable.digest)
                                    .map_err(|e| PoolError::Encode(e.to_string()))?,
                            ),
                        ]
                        .into_iter()
                        .collect(),
                    ),
                ),
            ]
            .into_iter()
            .chain(package.map(|p| ("package".to_string(), p)))
            .collect(),
        );
        let workers = config.workers.max(1);
        let pool = Arc::new_cyclic(|me| Pool {
            config,
            init,
            idle: Mutex::new(Vec::with_capacity(workers)),
            permits: Semaphore::new(workers),
            kills: AtomicU64::new(0),
            spawned: AtomicU64::new(0),
            me: me.clone(),
        });
        let mut started = Vec::with_capacity(workers);
        for _ in 0..workers {
            started.push(pool.spawn_worker());
        }
        let mut ready = Vec::with_capacity(workers);
        for w in started {
            ready.push(w.await?);
        }
        pool.idle.lock().await.extend(ready);
        Ok(pool)
    }

    /// Workers killed so far (timeouts, protocol errors, abandoned calls).
    pub fn kills(&self) -> u64 {
        self.kills.load(Ordering::Relaxed)
    }

    /// Workers started so far (initial ones included).
    pub fn spawned(&self) -> u64 {
        self.spawned.load(Ordering::Relaxed)
    }

    pub fn size(&self) -> usize {
        self.config.workers.max(1)
    }

    /// Start a replacement for a killed worker so the next call finds a warm one. Never grows
    /// the idle list past the pool size (a call may have spawned one lazily meanwhile).
    fn replace_in_background(&self) {
        let (Some(pool), Ok(runtime)) = (self.me.upgrade(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        runtime.spawn(async move {
            match pool.spawn_worker().await {
                Ok(worker) => {
                    let mut idle = pool.idle.lock().await;
                    if idle.len() < pool.size() {
                        idle.push(worker);
                    }
                }
                Err(e) => eprintln!("apizr serve: cannot replace a worker: {e}"),
            }
        });
    }

    async fn spawn_worker(&self) -> Result<Worker, PoolError> {
        let mut command = Command::new(&self.config.python);
        command
            .args(["-I", "-S", "-c", WORKER_SOURCE, "--serve"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        self.spawned.fetch_add(1, Ordering::Relaxed);
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(PoolError::Protocol("worker pipes missing".into()));
        };
        let mut worker = Worker {
            child,
            stdin,
            stdout: BufReader::with_capacity(64 * 1024, stdout),
        };
        let nonce = nonce()?;
        let mut init = self.init.clone();
        if let Value::Object(fields) = &mut init {
            fields.insert("nonce".to_string(), Value::Str(nonce.clone()));
        }
        let payload = init
            .canonical_bytes()
            .map_err(|e| PoolError::Encode(e.to_string()))?;
        let answer = exchange(&mut worker, &encode_frame(&payload), &nonce).await?;
        if answer.status != Status::Success {
            return Err(PoolError::Load(answer.status.wire_name()));
        }
        Ok(worker)
    }

    /// Run one call. `request` is the call frame payload (see [`call_frame`]).
    /// Dropping the returned future mid-call kills the worker it was using.
    pub async fn call(&self, request: &[u8]) -> PoolAnswer {
        let Ok(_permit) = self.permits.acquire().await else {
            return PoolAnswer::status(Status::WorkerFailed);
        };
        let pooled = self.idle.lock().await.pop();
        let pooled = match pooled {
            Some(mut w) => {
                if idle_and_quiet(&mut w) {
                    Some(w)
                } else {
                    // It wrote while nobody asked (or died): its channel cannot be trusted.
                    self.kills.fetch_add(1, Ordering::Relaxed);
                    drop(w);
                    None
                }
            }
            None => None,
        };
        let worker = match pooled {
            Some(w) => w,
            None => match self.spawn_worker().await {
                Ok(w) => w,
                Err(e) => {
                    eprintln!("apizr serve: {e}");
                    return PoolAnswer::status(Status::WorkerFailed);
                }
            },
        };
        // From here until the worker is handed back, dropping this future (client gone) drops
        // the lease, which counts the kill; dropping the worker kills its process group.
        let mut lease = Lease {
            worker: Some(worker),
            pool: self,
        };
        let Ok(nonce) = nonce() else {
            return PoolAnswer::status(Status::WorkerFailed);
        };
        let mut payload = Vec::with_capacity(nonce.len() + 1 + request.len());
        payload.extend_from_slice(nonce.as_bytes());
        payload.push(b'\n');
        payload.extend_from_slice(request);
        let frame = encode_frame(&payload);
        let Some(worker) = lease.worker.as_mut() else {
            return PoolAnswer::status(Status::WorkerFailed);
        };
        let exchanged = match self.config.timeout {
            Some(limit) => tokio::time::timeout(limit, exchange(worker, &frame, &nonce))
                .await
                .unwrap_or(Err(PoolError::Protocol("timeout".into()))),
            None => exchange(worker, &frame, &nonce).await,
        };
        match exchanged {
            Ok(answer) => {
                if let Some(w) = lease.worker.take() {
                    let mut idle = self.idle.lock().await;
                    if idle.len() < self.size() {
                        idle.push(w);
                    }
                }
                answer
            }
            Err(PoolError::Protocol(reason)) if reason == "timeout" => {
                PoolAnswer::status(Status::Timeout)
            }
            Err(e) => {
                eprintln!("apizr serve: {e}");
                PoolAnswer::status(Status::WorkerFailed)
            }
        }
    }
}

/// A worker out of the pool for one call; dropped with its worker still inside = killed.
struct Lease<'a> {
    worker: Option<Worker>,
    pool: &'a Pool,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if self.worker.take().is_some() {
            self.pool.kills.fetch_add(1, Ordering::Relaxed);
            self.pool.replace_in_background();
        }
    }
}

/// What a pool worker answered: the status and the value as the worker's own JSON bytes
/// (dict insertion order kept, Python float formatting; `null` unless success).
#[derive(Debug, Clone, PartialEq)]
pub struct PoolAnswer {
    pub status: Status,
    pub raw: Vec<u8>,
}

impl PoolAnswer {
    fn status(status: Status) -> Self {
        PoolAnswer {
            status,
            raw: b"null".to_vec(),
        }
    }
}

/// Send one frame and read one response frame (`<nonce>\n<status>\n<value JSON>\n`). The
/// answer must echo `nonce` and be the only bytes the worker wrote.
async fn exchange(worker: &mut Worker, frame: &[u8], nonce: &str) -> Result<PoolAnswer, PoolError> {
    let io = |e: std::io::Error| PoolError::Protocol(e.to_string());
    worker.stdin.write_all(frame).await.map_err(io)?;
    worker.stdin.flush().await.map_err(io)?;
    let mut header = [0u8; 8];
    worker.stdout.read_exact(&mut header).await.map_err(io)?;
    let size = u64::from_be_bytes(header);
    if size > MAX_RESPONSE_BYTES || size == 0 {
        return Err(PoolError::Protocol(format!("response of {size} bytes")));
    }
    let len = usize::try_from(size).map_err(|e| PoolError::Protocol(e.to_string()))?;
    let mut body = vec![0u8; len];
    worker.stdout.read_exact(&mut body).await.map_err(io)?;
    if !worker.stdout.buffer().is_empty() {
        return Err(PoolError::Protocol("bytes after the answer".into()));
    }
    let bad = || PoolError::Protocol("malformed response".into());
    let text = body.strip_suffix(b"\n").ok_or_else(bad)?;
    let mut parts = text.splitn(3, |b| *b == b'\n');
    let (Some(echo), Some(status), Some(raw)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(bad());
    };
    if echo != nonce.as_bytes() {
        return Err(PoolError::Protocol(
            "an answer without this call's nonce".into(),
        ));
    }
    let status = std::str::from_utf8(status)
        .ok()
        .and_then(Status::from_wire_v1)
        .ok_or_else(bad)?;
    Ok(PoolAnswer {
        status,
        raw: raw.to_vec(),
    })
}

/// A fresh 128-bit nonce from the OS, as 32 hex digits.
fn nonce() -> Result<String, PoolError> {
    let mut bytes = [0u8; 16];
    let mut filled = 0;
    while filled < bytes.len() {
        let rest = bytes.get_mut(filled..).unwrap_or_default();
        filled += rustix::rand::getrandom(rest, rustix::rand::GetRandomFlags::empty())
            .map_err(|e| PoolError::Protocol(format!("getrandom: {e}")))?;
    }
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// An idle worker must have written nothing since its last answer (and still be alive):
/// checked without waiting, by polling its stdout once with a no-op waker.
fn idle_and_quiet(worker: &mut Worker) -> bool {
    use tokio::io::AsyncBufRead;
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    std::pin::Pin::new(&mut worker.stdout)
        .poll_fill_buf(&mut cx)
        .is_pending()
}

/// How a set result is normalised: direct REST turns sets into arrays, MCP rejects them (a
/// set has no JSON form the MCP result schema allows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetResults {
    ToList,
    Reject,
}

/// The start-up table `{name: {execution, function, parameters, sets}}` sent to each worker.
fn capability_table(config: &PoolConfig) -> Result<Value, PoolError> {
    let enc = |e: apizr_ir::CanonicalError| PoolError::Encode(e.to_string());
    let sets = Value::Str(
        match config.sets {
            SetResults::ToList => "list",
            SetResults::Reject => "reject",
        }
        .into(),
    );
    let mut table = std::collections::BTreeMap::new();
    for contract in &config.capabilities {
        let mut entry: std::collections::BTreeMap<String, Value> = [
            (
                "execution".to_string(),
                apizr_ir::to_value(&contract.execution).map_err(enc)?,
            ),
            ("function".to_string(), Value::Str(contract.name.clone())),
            (
                "parameters".to_string(),
                apizr_ir::to_value(&contract.parameters).map_err(enc)?,
            ),
            ("sets".to_string(), sets.clone()),
        ]
        .into_iter()
        .collect();
        // As in the single-shot request: only a return type holding a class travels.
        if contract.returns.has_python_class() {
            let returns = apizr_ir::to_value(&contract.returns).map_err(enc)?;
            entry.insert("returns".to_string(), returns);
        }
        table.insert(contract.name.clone(), Value::Object(entry));
    }
    Ok(Value::Object(table))
}

/// The call payload: `<capability>\n<positional count>\n<the caller's JSON text>` (the count
/// of leading positional parameters passed by position: positional-only ones, or with `*args`
/// given every one before it).
/// The text must already have passed admission and validation; the worker decodes it again
/// (keeping the caller's key order) and converts each value per TypeSpec.
pub fn call_frame(name: &str, positional_count: usize, body: &[u8]) -> Result<Vec<u8>, PoolError> {
    let count = positional_count.to_string();
    let len = name.len() + count.len() + body.len() + 2;
    if len > MAX_REQUEST_BYTES || name.contains('\n') {
        return Err(PoolError::Encode("request frame too large".into()));
    }
    let mut frame = Vec::with_capacity(len);
    frame.extend_from_slice(name.as_bytes());
    frame.push(b'\n');
    frame.extend_from_slice(count.as_bytes());
    frame.push(b'\n');
    frame.extend_from_slice(body);
    Ok(frame)
}
