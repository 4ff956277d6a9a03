//! The `local` backend: one fresh worker process per call, under the policy's controls.
//!
//! Order (which status wins): input size → enforcement plan (refusals) → request encoding →
//! a worker process (pre-started by the pool, or started now: fresh identity, directory,
//! cgroups, launcher) → hand over the request → supervise → answer → cleanup → audit.
//!
//! A call whose worker wrote a complete, well-formed response frame is answered on that
//! frame (the rule is on [`supervise_to_frame`]); its process's exit and the clean-up follow
//! ([`AfterAnswer`]), inline by default, on a thread of their own in servers
//! ([`LocalRuntime::answer_before_exit`]). A call decided without a frame (timeout, output
//! bound, exit, malformed frame, refusal) is cleaned up before it is answered, as always.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use apizr_ir::import_time::ImportTime;

use crate::audit::AuditSink;
use crate::call::HeldUntilEnd;
use crate::envelope::Envelope;
use crate::local::after::{AfterAnswer, AfterAnswerStats, End, Tails};
use crate::local::answer::{audit_record, decide};
use crate::local::cgroup;
use crate::local::enforcement::{self, EnforcementPlan};
use crate::local::host::HostCapabilities;
use crate::local::prestart::{ColdReason, Pool, PrestartConfig, PrestartStats, ProcessSource};
use crate::local::process::{Factory, StartError, WorkerProcess};
use crate::local::program::Program;
use crate::local::spawn::{LocalSpawner, ProcessSpawner};
use crate::local::supervisor::{describe_exit, supervise_to_frame};
use crate::local::workdir;
use crate::local::{launcher, seccomp};
use crate::protocol::{MAX_REQUEST_BYTES, encode_frame, encode_prepare, encode_request};
use crate::request::CallRequest;
use crate::status::Status;

pub use crate::local::config::{LauncherLocation, RuntimeConfig};
pub use crate::local::report::CallReport;

/// The envelope plus what happened, for `apizr doctor`, logs and the audit record.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    pub envelope: Envelope,
    pub report: CallReport,
}

/// The local-process backend.
#[derive(Debug)]
pub struct LocalRuntime {
    factory: Arc<Factory>,
    audit: Option<Arc<dyn AuditSink>>,
    seccomp: OnceLock<Option<Vec<Vec<u8>>>>,
    /// Failures of the start-up sweep, reported with the first call.
    swept: OnceLock<Mutex<Vec<String>>>,
    /// Pre-started workers (servers; see [`prestart`](crate::local::prestart)).
    prestart: OnceLock<Pool>,
    /// Calls answered on their frame whose end is still awaited, and their counters.
    tails: Arc<Tails>,
    /// Await a call's end after answering it (servers) instead of before.
    background: AtomicBool,
}

impl LocalRuntime {
    pub fn new(config: RuntimeConfig) -> Self {
        LocalRuntime {
            factory: Arc::new(Factory::new(config, Arc::new(LocalSpawner))),
            audit: None,
            seccomp: OnceLock::new(),
            swept: OnceLock::new(),
            prestart: OnceLock::new(),
            tails: Arc::new(Tails::default()),
            background: AtomicBool::new(false),
        }
    }

    /// Answer a call as soon as its worker's response frame is final, and await the process's
    /// exit and the clean-up on a thread of their own (servers). Without this, `execute`
    /// returns only once the call's process is gone (the status is the same either way).
    pub fn answer_before_exit(&self) {
        self.background.store(true, Ordering::Relaxed);
    }

    /// Wait until every call answered before its end has ended and been cleaned up, at most
    /// `timeout`; true when none is left.
    pub fn settle(&self, timeout: Duration) -> bool {
        self.tails.settle(timeout)
    }

    /// Counters of calls answered on their frame.
    pub fn after_answer_stats(&self) -> AfterAnswerStats {
        self.tails.stats()
    }

    /// Remove what dead supervisors left: working directories under the temp root and
    /// per-call cgroups. Only leftovers whose owning process is gone are touched. Runs once
    /// per runtime (at its first call, or earlier when a server calls it at start); returns
    /// the failures.
    pub fn sweep(&self) -> Vec<String> {
        let failures = self.swept.get_or_init(|| {
            let (_, mut failed) = workdir::sweep(&self.factory.config.temp_root);
            for controller in ["pids", "memory"] {
                for h in cgroup::hierarchies(controller) {
                    failed.extend(cgroup::sweep(&h).1);
                }
            }
            Mutex::new(failed)
        });
        failures.lock().map(|f| f.clone()).unwrap_or_default()
    }

    /// Replace the process spawner (the test seam). Drops a pool started before.
    pub fn with_spawner(mut self, spawner: Arc<dyn ProcessSpawner>) -> Self {
        self.prestart = OnceLock::new();
        match Arc::get_mut(&mut self.factory) {
            Some(factory) => factory.spawner = spawner,
            None => self.factory = Arc::new(Factory::new(self.factory.config.clone(), spawner)),
        }
        self
    }

    pub fn with_audit(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.audit = Some(sink);
        self
    }

    /// Keep pre-started single-use workers for calls (servers). Sweeps first, so a crashed
    /// predecessor's leftovers are gone before new workers start. False when `size` is 0, a
    /// pool already runs, or its thread could not start (calls then stay cold).
    pub fn start_prestart(&self, config: PrestartConfig) -> bool {
        if config.size == 0 || self.prestart.get().is_some() {
            return false;
        }
        let _ = self.sweep();
        match Pool::start(self.factory.clone(), config) {
            Ok(pool) => self.prestart.set(pool).is_ok(),
            Err(e) => {
                eprintln!("apizr: cannot start the pre-start pool: {e}");
                false
            }
        }
    }

    /// The pre-start pool's counters, when one runs.
    pub fn prestart_stats(&self) -> Option<PrestartStats> {
        self.prestart.get().map(Pool::stats)
    }

    /// Every host fact, probed once per runtime on first use. Calls observe only what their
    /// policy needs (see [`LazyHost`](crate::local::host::LazyHost)).
    pub fn host_capabilities(&self) -> &HostCapabilities {
        self.factory.host.full()
    }

    /// Execute one call. Never panics; every failure is a status.
    pub fn execute(&self, call: &CallRequest) -> CallOutcome {
        self.execute_holding(call, Box::new(()))
    }

    /// [`LocalRuntime::execute`], keeping `held` until the call's process has ended and been
    /// cleaned up, also when the call is answered on its frame before that (servers).
    pub fn execute_holding(&self, call: &CallRequest, held: HeldUntilEnd) -> CallOutcome {
        let start = Instant::now();
        let first_sweep = self.swept.get().is_none();
        let sweep_failures = self.sweep();
        let deadline = start + Duration::from_millis(call.policy.limits.wall_time_ms);
        let host = self.factory.host.for_policy(&call.policy);
        let plan = enforcement::plan(&call.policy, &host);
        let mut report = CallReport {
            controls: plan.controls.clone(),
            refused: plan.refused.clone(),
            ..CallReport::default()
        };
        if first_sweep {
            report.cleanup.extend(sweep_failures);
        }
        let (envelope, after) = self.run(call, &host, &plan, deadline, &mut report);
        if report.status_source.is_empty() {
            report.status_source = "supervisor";
        }
        report.total = start.elapsed();
        if envelope.status == Status::Timeout {
            report.limits_hit.push("wall_time".into());
        }
        if envelope.status == Status::OutputLimit {
            report.limits_hit.push("output".into());
        }
        let Some(after) = after else {
            self.write_audit(call, &envelope, &report);
            return CallOutcome { envelope, report };
        };
        let record = self
            .audit
            .as_ref()
            .map(|sink| (sink.clone(), audit_record(call, &envelope, &report)));
        let background = self.background.load(Ordering::Relaxed);
        let end = End {
            after,
            tails: self.tails.clone(),
            record,
            capability: call.capability_id.clone(),
            held,
        };
        if let Some(reaped) = end.run(background) {
            report.exit = reaped.exit;
            report.after_answer = reaped.anomaly;
            report.cleanup.extend(reaped.cleanup);
        }
        CallOutcome { envelope, report }
    }

    fn run(
        &self,
        call: &CallRequest,
        host: &HostCapabilities,
        plan: &EnforcementPlan,
        deadline: Instant,
        report: &mut CallReport,
    ) -> (Envelope, Option<AfterAnswer>) {
        let input_ok = call
            .arguments_object()
            .canonical_bytes()
            .is_ok_and(|b| b.len() as u64 <= call.policy.limits.max_input_bytes);
        if !input_ok {
            report.limits_hit.push("input".into());
            return (Envelope::status(Status::InvalidInput), None);
        }
        if !plan.refused.is_empty() {
            return (Envelope::status(Status::PolicyRefused), None);
        }
        let programs = if plan.seccomp {
            match self
                .seccomp
                .get_or_init(|| seccomp::subprocess_deny_programs().ok())
            {
                Some(p) => Some(p.as_slice()),
                None => {
                    report.refused.push("subprocess");
                    return (Envelope::status(Status::PolicyRefused), None);
                }
            }
        } else {
            None
        };
        let payload = match encode_request(call, programs) {
            Ok(p) if p.len() <= MAX_REQUEST_BYTES => p,
            _ => return (Envelope::status(Status::InvalidInput), None),
        };
        let process = match self.obtain(call, host, plan, programs, report) {
            Ok(process) => process,
            Err(StartError::Refused { control, why }) => {
                // Nothing ran: the limit could not be set up, so the call is refused.
                report.refused.push(control);
                report.protocol_error = Some(format!("cgroup: {why}"));
                return (Envelope::status(Status::PolicyRefused), None);
            }
            Err(e @ StartError::Spawn(_)) => {
                report.stderr = e.to_string();
                return (Envelope::status(Status::WorkerFailed), None);
            }
            Err(StartError::Prepare(why)) => {
                report.protocol_error = Some(why);
                return (Envelope::status(Status::WorkerFailed), None);
            }
        };
        let deadline = if report.process == Some(ProcessSource::Prestarted) {
            // A pre-started worker's deadline counts from the hand-over of the request (a
            // pool configured to wait may have held the call for a worker).
            Instant::now() + Duration::from_millis(call.policy.limits.wall_time_ms)
        } else {
            deadline
        };
        self.finish(call, process, &payload, deadline, plan, report)
    }

    /// A pre-started worker when the pool has one, else a cold start (the report says which,
    /// whether the module was imported ahead, and why cold).
    fn obtain(
        &self,
        call: &CallRequest,
        host: &HostCapabilities,
        plan: &EnforcementPlan,
        programs: Option<&[Vec<u8>]>,
        report: &mut CallReport,
    ) -> Result<WorkerProcess, StartError> {
        if let Some(pool) = self.prestart.get() {
            // Only a module whose import readiness shows harmless is imported ahead, with the
            // seccomp programs its request would install first.
            let preimport = || match call.executable.import_time {
                ImportTime::Harmless => {
                    encode_prepare(call, programs).map_err(|_| ColdReason::ImportFailed)
                }
                ImportTime::Effects => Err(ColdReason::ImportEffects),
                ImportTime::Unknown => Err(ColdReason::ImportUnknown),
            };
            match pool.take(call, plan, host, preimport) {
                Ok(taken) => {
                    report.process = Some(ProcessSource::Prestarted);
                    report.preimported = Some(taken.preimport.is_ok());
                    report.cold_reason = taken.preimport.err();
                    return Ok(taken.process);
                }
                Err(reason) => report.cold_reason = Some(reason),
            }
        }
        let process = self
            .factory
            .start(&call.policy, plan, host, &Program::Worker)?;
        report.process = Some(ProcessSource::Cold);
        Ok(process)
    }

    /// Hand the worker its request and supervise it to its answer. A call answered on its
    /// frame returns what it still owns ([`AfterAnswer`]); any other call is cleaned up here.
    fn finish(
        &self,
        call: &CallRequest,
        process: WorkerProcess,
        payload: &[u8],
        deadline: Instant,
        plan: &EnforcementPlan,
        report: &mut CallReport,
    ) -> (Envelope, Option<AfterAnswer>) {
        if let Some(uid) = process.uid() {
            annotate(report, "identity", &format!("uid {uid} gid {uid}"));
        }
        let WorkerProcess {
            started,
            workdir,
            cgroups,
            call_id,
            through_launcher,
            ..
        } = process;
        let (outcome, tail) = supervise_to_frame(
            started,
            encode_frame(payload),
            deadline,
            call.policy.limits.max_output_bytes,
        );
        report.worker = outcome.elapsed;
        report.exit = outcome.exit.map(describe_exit);
        report.protocol_error = outcome.protocol_error;
        report.stderr = String::from_utf8_lossy(&outcome.stderr).into_owned();
        report.stderr_truncated = outcome.stderr_truncated;
        if let Some(groups) = &cgroups {
            // Read when the answer is decided: at the frame, or after the exit.
            if groups.pids_hit() {
                report.limits_hit.push("pids".into());
            }
            if groups.memory_hit() {
                report.limits_hit.push("memory".into());
            }
        }
        let envelope = decide(outcome.envelope, outcome.from_worker, plan, report);
        if let Some(tail) = tail {
            let after = AfterAnswer {
                tail,
                cgroups,
                workdir,
                call_id,
            };
            return (envelope, Some(after));
        }
        let exit_code = outcome.exit.and_then(|s| s.code());
        if through_launcher
            && exit_code == Some(launcher::SETUP_FAILED)
            && report.stderr.starts_with("apizr-launch:")
        {
            // The launcher could not apply a control the (possibly cached) probe promised:
            // Python never ran. Observe the host again next time, and serve no worker
            // started on the old facts.
            self.factory.host.invalidate_launcher_probe();
            if let Some(pool) = self.prestart.get() {
                pool.invalidate();
            }
        }
        if let Some(groups) = cgroups
            && let Err(failed) = groups.destroy()
        {
            report.cleanup.extend(failed);
        }
        if plan.rlimit_cpu_secs.is_some() && exit_code == Some(launcher::CPU_LIMIT_EXIT) {
            report.limits_hit.push("cpu".into());
        }
        if let Err(e) = workdir.remove() {
            report.cleanup.push(format!("working directory: {e}"));
        }
        drop(call_id);
        (envelope, None)
    }

    fn write_audit(&self, call: &CallRequest, envelope: &Envelope, report: &CallReport) {
        if let Some(sink) = &self.audit {
            let _ = sink.record(&audit_record(call, envelope, report));
        }
    }
}

impl Drop for LocalRuntime {
    /// Calls answered before their end are awaited (bounded by their grace), so a runtime
    /// that is dropped leaves no process, cgroup or directory of its calls behind.
    fn drop(&mut self) {
        self.tails.settle(Duration::from_secs(30));
    }
}

fn annotate(report: &mut CallReport, control: &str, detail: &str) {
    if let Some(row) = report.controls.iter_mut().find(|c| c.control == control)
        && let Some(mechanism) = &mut row.mechanism
    {
        *mechanism = format!("{detail}: {mechanism}");
    }
}
