//! [`Invoker`]: runs the calls of one [`ServeSpec`] — the call API's [`Call::from_json`]
//! (admission, decoding and validation with the reference's detail strings), the admission
//! gates of `gate.rs` (per-capability concurrency and queue; governed: server-wide workers and
//! memory), then one [`AnyExecutor`] (the warm pool, a fresh governed worker, or a fresh
//! container per call).
//!
//! Why separate from `spec`: the spec is plain data both transports share; this is the one
//! stateful piece, and the only one that talks to backends. It decides nothing about backends
//! itself: the execution mode becomes an executor in [`Invoker::start`], once.

use std::sync::Arc;
use std::time::Instant;

use super::error::ServeError;
use super::gate::{Admission, GaugeGuard, GovernedBudget, GovernedClaim, Refused};
use super::metrics::Metrics;
use super::reply::{self, Answer, GOVERNED_INVALID_DETAIL, MISMATCH_DETAIL, Rejected};
use super::spec::{CancelOnDrop, ExecutionMode, Gates, ServeSpec};
use crate::audit::{AuditSink, FileAuditSink};
use crate::call::{AnyExecutor, ArgumentError, BackendKind, Call, ExecutorError, Outcome, Report};
use crate::local::enforcement::Unenforceable;
use crate::local::runtime::RuntimeConfig;
use crate::oci::executor::OciExecutor;
use crate::oci::pool::PoolConfig as OciPoolConfig;
use crate::pool::executor::DirectExecutor;
use crate::pool::{PoolConfig, SetResults};
use crate::status::Status;

/// Runs calls for one [`ServeSpec`].
pub struct Invoker {
    spec: Arc<ServeSpec>,
    executor: AnyExecutor,
    admission: Admission,
    pub metrics: Arc<Metrics>,
    /// Governed v1: the policy's controls this host cannot enforce. While not empty the
    /// server is not ready and every call is answered as a refusal.
    unenforceable: Vec<Unenforceable>,
}

impl std::fmt::Debug for Invoker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Invoker")
            .field("capabilities", &self.spec.capabilities.len())
            .field("backend", &self.executor.kind())
            .finish()
    }
}

impl Invoker {
    /// Start the backend and check that it can run calls (direct: spawn and load every
    /// worker; governed: probe the host, or the engine and the image).
    /// `sets`: how direct mode returns set results (REST: arrays; MCP: rejected).
    pub async fn start(spec: ServeSpec, sets: SetResults) -> Result<Invoker, ServeError> {
        Invoker::start_inner(spec, sets, None, None).await
    }

    /// As [`Invoker::start`], counting into a server's shared `metrics` (which must have a
    /// series for each of this spec's capabilities; see `serve::service`).
    pub async fn start_with(
        spec: ServeSpec,
        sets: SetResults,
        metrics: Arc<Metrics>,
    ) -> Result<Invoker, ServeError> {
        Invoker::start_inner(spec, sets, Some(metrics), None).await
    }

    /// As [`Invoker::start_with`], on a server's shared governed `budget`.
    pub(crate) async fn start_shared(
        spec: ServeSpec,
        sets: SetResults,
        metrics: Arc<Metrics>,
        budget: Arc<GovernedBudget>,
    ) -> Result<Invoker, ServeError> {
        Invoker::start_inner(spec, sets, Some(metrics), Some(budget)).await
    }

    async fn start_inner(
        spec: ServeSpec,
        sets: SetResults,
        shared: Option<Arc<Metrics>>,
        budget: Option<Arc<GovernedBudget>>,
    ) -> Result<Invoker, ServeError> {
        let mut unenforceable = Vec::new();
        let executor = match &spec.mode {
            ExecutionMode::Direct { workers, timeout } => {
                let direct = DirectExecutor::start(PoolConfig {
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
                AnyExecutor::Direct(Arc::new(direct))
            }
            ExecutionMode::Governed { policy, image } => {
                let config = RuntimeConfig {
                    python: spec.python.clone(),
                    launcher: spec.launcher.clone(),
                    temp_root: std::env::temp_dir(),
                    ids: None,
                };
                let audit = match &spec.audit {
                    Some(path) => Some(open_audit(path)?),
                    None => None,
                };
                let executor =
                    AnyExecutor::for_policy_audited(policy.clone(), config, image.clone(), audit)?;
                executor.check_async().await?;
                if let AnyExecutor::Local(local) = &executor {
                    // A call is answered on its worker's response frame; the exit and the
                    // clean-up follow off the critical path (see `local::after`).
                    local.runtime().answer_before_exit();
                    let local = local.clone();
                    unenforceable = tokio::task::spawn_blocking(move || local.unenforceable())
                        .await
                        .map_err(|_| ExecutorError::CheckAborted)?;
                    announce_unenforceable(&unenforceable);
                }
                if let AnyExecutor::Oci(oci) = &executor {
                    let (checked, executable) = (oci.clone(), spec.source.executable.clone());
                    tokio::task::spawn_blocking(move || checked.check_requirements(&executable))
                        .await
                        .map_err(|_| ExecutorError::CheckAborted)??;
                    announce_sweep(oci);
                    start_pool(oci, &spec);
                }
                executor
            }
        };
        // What one governed call holds of the server-wide budget: its memory limit, if any.
        let claim = match &spec.mode {
            ExecutionMode::Direct { .. } => None,
            ExecutionMode::Governed { policy, .. } => Some(GovernedClaim {
                memory_bytes: policy.memory_bytes(),
            }),
        };
        let names: Vec<String> = spec.capabilities.iter().map(|c| c.name.clone()).collect();
        if let Some(claim) = claim {
            announce_governed_limits(&spec.gates, claim);
        }
        let metrics = shared.unwrap_or_else(|| {
            let metrics = Metrics::new(names.clone());
            Arc::new(match claim {
                Some(_) => {
                    metrics.with_governed_limits(spec.gates.workers, spec.gates.memory_bytes)
                }
                None => metrics,
            })
        });
        let admission = Admission::new(
            names.iter().map(String::as_str),
            &spec.gates,
            claim,
            budget,
            metrics.clone(),
        );
        if let AnyExecutor::Local(local) = &executor {
            start_prestart(local, &spec, &admission);
        }
        Ok(Invoker {
            spec: Arc::new(spec),
            executor,
            admission,
            metrics,
            unenforceable,
        })
    }

    /// Why this server is not ready although it started: the policy's controls that cannot
    /// be enforced where it runs (`None`: ready).
    pub fn not_ready(&self) -> Option<String> {
        not_ready_text(&self.unenforceable)
    }

    pub fn spec(&self) -> &ServeSpec {
        &self.spec
    }

    /// The backend behind this server.
    pub fn executor(&self) -> &AnyExecutor {
        &self.executor
    }

    /// Governed v1 or v2: invalid input answers with the generic detail.
    pub fn is_governed(&self) -> bool {
        self.executor.kind() != BackendKind::Direct
    }

    /// Workers killed by the pool (direct mode).
    pub fn kills(&self) -> u64 {
        match &self.executor {
            AnyExecutor::Direct(direct) => direct.pool().kills(),
            _ => 0,
        }
    }

    /// The pre-started v1 workers' counters (v1 with a pool).
    pub fn prestart_stats(&self) -> Option<crate::local::prestart::PrestartStats> {
        match &self.executor {
            AnyExecutor::Local(local) => local.runtime().prestart_stats(),
            _ => None,
        }
    }

    /// The counters of v1 calls answered on their frame (v1 governed).
    pub fn after_answer_stats(&self) -> Option<crate::local::after::AfterAnswerStats> {
        match &self.executor {
            AnyExecutor::Local(local) => Some(local.runtime().after_answer_stats()),
            _ => None,
        }
    }

    /// The Prometheus text of `/metrics`: the server's series, and the container pool's.
    pub fn metrics_text(&self) -> String {
        let mut text = self.metrics.render(self.kills());
        if let AnyExecutor::Oci(oci) = &self.executor
            && let Some(pool) = oci.pool()
        {
            super::metrics::render_oci_pool(&mut text, &pool.stats());
        }
        if let Some(stats) = self.prestart_stats() {
            super::metrics::render_v1_pool(&mut text, &stats);
        }
        if let Some(stats) = self.after_answer_stats() {
            super::metrics::render_v1_after_answer(&mut text, &stats);
        }
        text
    }

    /// One call: admission → decode → validation → gates → execution.
    pub async fn call(&self, name: &str, arguments: &[u8], cancel: CancelOnDrop) -> Answer {
        self.run(name, arguments, cancel, false).await
    }

    /// As [`Invoker::call`], but in direct mode a success carries the worker's own JSON bytes
    /// of the value ([`Outcome::value_json`]: dict insertion order kept, as the reference's
    /// direct REST answers) instead of a decoded value. Governed successes carry the value.
    pub async fn call_json(&self, name: &str, arguments: &[u8], cancel: CancelOnDrop) -> Answer {
        self.run(name, arguments, cancel, true).await
    }

    async fn run(&self, name: &str, arguments: &[u8], cancel: CancelOnDrop, json: bool) -> Answer {
        let started = Instant::now();
        let in_flight = GaugeGuard::enter(&self.metrics.in_flight);
        let answer = tokio::select! {
            answer = self.gated(name, arguments, json) => answer,
            () = cancel.cancelled() => Err(Rejected::Cancelled),
        };
        drop(in_flight);
        self.metrics
            .observe(name, reply::label(&answer), started.elapsed());
        answer
    }

    async fn gated(&self, name: &str, arguments: &[u8], json: bool) -> Answer {
        let Some(capability) = self.spec.capability(name) else {
            return Err(Rejected::UnknownCapability);
        };
        let governed = self.is_governed();
        let call = match Call::from_json(
            &capability.contract,
            self.spec.source.executable.clone(),
            self.spec.source.module.clone(),
            arguments,
        ) {
            Ok(call) if json => call.keep_json(),
            Ok(call) => call,
            // The detail is the reference's (per mode); the errors are ours, the same in both.
            Err(e) => {
                let detail = match &e {
                    ArgumentError::Admission(_) => e.to_string(),
                    _ if governed => GOVERNED_INVALID_DETAIL.to_string(),
                    _ => e.to_string(),
                };
                return Ok(Outcome::invalid_input(detail).with_errors(vec![e.field_error()]));
            }
        };
        let permit = match self.admission.enter(name).await {
            Ok(permit) => permit,
            Err(Refused::Busy { retry_after }) => return Err(Rejected::Busy { retry_after }),
            Err(Refused::OverCapacity) => return Err(Rejected::OverCapacity),
            Err(Refused::Unknown) => return Err(Rejected::UnknownCapability),
        };
        let function = call.function().to_string();
        // The capability's slot is free once the call is answered; the server-wide slot and
        // memory claim stay taken until the call's process has ended (`HeldUntilEnd`).
        let (capability, server) = permit.split();
        let mut outcome = self.executor.run_holding(call, Box::new(server)).await;
        drop(capability);
        if let Some((stderr, truncated)) = outcome.worker_stderr() {
            log_worker_stderr(&function, outcome.status.wire_name(), stderr, truncated);
        }
        if outcome.status == Status::PolicyRefused
            && let Report::Local(report) = &outcome.report
        {
            eprintln!(
                "apizr: call of {function} refused: the policy's {} cannot be enforced here",
                report.refused.join(", ")
            );
        }
        if let Report::Oci(report) = &outcome.report
            && let Some(refused) = &report.refused
        {
            // The client only sees a failure; the operator is told which control did not hold.
            eprintln!("apizr: call refused: {refused}");
        }
        if outcome.status == Status::InvalidInput {
            let detail = if governed {
                GOVERNED_INVALID_DETAIL
            } else {
                MISMATCH_DETAIL
            };
            outcome.detail.get_or_insert_with(|| detail.to_string());
        }
        Ok(outcome)
    }
}

/// The governed server's audit file (appended to; one JSON line per call).
pub(crate) fn open_audit(path: &std::path::Path) -> Result<Arc<dyn AuditSink>, ExecutorError> {
    let sink = FileAuditSink::open(path).map_err(|e| ExecutorError::Audit {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    Ok(Arc::new(sink))
}

/// `Policy cannot be enforced here: network (deny): <why>; …`, or `None` when it can.
fn not_ready_text(unenforceable: &[Unenforceable]) -> Option<String> {
    if unenforceable.is_empty() {
        return None;
    }
    let controls: Vec<String> = unenforceable.iter().map(ToString::to_string).collect();
    Some(format!(
        "Policy cannot be enforced here: {}",
        controls.join("; ")
    ))
}

/// Say at start, loudly, that this server will refuse every call (and why).
fn announce_unenforceable(unenforceable: &[Unenforceable]) {
    if let Some(text) = not_ready_text(unenforceable) {
        eprintln!("apizr: NOT READY (every call is refused): {text}");
    }
}

/// Governed calls capture their worker's stderr (prints and tracebacks) instead of sharing
/// the server's: pass it on, as a direct-mode worker's own stderr is, with a header that says
/// which call it belongs to (governed calls run side by side).
fn log_worker_stderr(function: &str, status: &str, stderr: &str, truncated: bool) {
    if stderr.is_empty() {
        return;
    }
    let mut text = format!("apizr: {function} ({status}), worker stderr:\n{stderr}");
    if !text.ends_with('\n') {
        text.push('\n');
    }
    if truncated {
        text.push_str("apizr: [worker stderr truncated]\n");
    }
    // One write, so concurrent calls' logs do not interleave line by line.
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// v2: keep `spec.oci_pool` containers prepared for this server's module (after the
/// start-up sweep, so a killed predecessor's containers are gone first).
fn start_pool(oci: &OciExecutor, spec: &ServeSpec) {
    if spec.oci_pool == 0 {
        return;
    }
    let config = OciPoolConfig::with_size(spec.oci_pool);
    oci.start_pool(config, spec.source.executable.clone(), &spec.source.module);
    eprintln!(
        "apizr: keeping {} prepared container(s) ready (--oci-pool; 0 for a fresh container per call)",
        config.size
    );
}

/// v1: keep `spec.v1_prestart` pre-started workers per served module (after the start-up
/// sweep, which `start_prestart` runs first), as many as the governed memory budget holds
/// while they wait (each counts its policy's memory limit; see `Admission::reserve_idle`).
fn start_prestart(
    local: &crate::local::executor::LocalExecutor,
    spec: &ServeSpec,
    admission: &Admission,
) {
    if spec.v1_prestart == 0 {
        return;
    }
    let size = admission.reserve_idle(spec.v1_prestart);
    if size < spec.v1_prestart {
        eprintln!(
            "apizr: the governed memory budget ({} MiB) holds {size} of {} pre-started worker(s) \
             next to a running call (each idle worker counts its policy's memory limit)",
            spec.gates.memory_bytes >> 20,
            spec.v1_prestart
        );
    }
    if size == 0 {
        return;
    }
    let config = crate::local::prestart::PrestartConfig::with_size(size);
    if local.runtime().start_prestart(config) {
        eprintln!(
            "apizr: keeping {} pre-started worker(s) per module ready (--v1-prestart; 0 to start each call's worker cold)",
            config.size
        );
    }
}

/// What killed servers or calls left behind and the start-up sweep removed; a failed removal
/// is said, never hidden.
fn announce_sweep(oci: &OciExecutor) {
    let Some(sweep) = oci.runtime().sweep_report() else {
        return;
    };
    let removed = sweep.removed.len() + sweep.bundles_removed.len();
    if removed > 0 {
        eprintln!("apizr: start-up sweep removed {removed} leftover(s) of dead callers");
    }
    for failed in &sweep.failed {
        eprintln!(
            "apizr: start-up sweep could not remove {}: {}",
            failed.item, failed.reason
        );
    }
}

/// Say at start what the server-wide governed gate enforces (and what it cannot).
fn announce_governed_limits(gates: &Gates, claim: GovernedClaim) {
    let mib = |b: u64| b >> 20;
    match claim.memory_bytes {
        Some(bytes) if bytes > gates.memory_bytes => eprintln!(
            "apizr: a governed call's memory limit ({} MiB) exceeds the server's governed memory \
             budget ({} MiB): every call will be answered 503",
            mib(bytes),
            mib(gates.memory_bytes)
        ),
        Some(_) => {}
        None => eprintln!(
            "apizr: the policy sets no memory limit, so the governed memory budget ({} MiB) \
             cannot count its workers; only the worker cap ({}) applies",
            mib(gates.memory_bytes),
            gates.workers
        ),
    }
}
