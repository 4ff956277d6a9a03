//! The `local` backend: one fresh worker process per call, under the policy's controls.
//!
//! Order (which status wins): input size → enforcement plan (refusals) → request encoding →
//! fresh directory and cgroup → spawn through the launcher → supervise → cleanup → audit.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::audit::{AUDIT_SCHEMA, AuditRecord, AuditSink};
use crate::envelope::Envelope;
use crate::local::cgroup::{self, CallCgroups, Limits};
use crate::local::enforcement::{self, ControlReport, EnforcementPlan, IdentityPlan, ViewPlan};
use crate::local::host::{HostCapabilities, LazyHost};
use crate::local::identity::{self, IdRange};
use crate::local::launch::{LaunchInputs, SANDBOX_CWD, spawn_spec};
use crate::local::spawn::{LocalSpawner, ProcessSpawner};
use crate::local::supervisor::{describe_exit, supervise};
use crate::local::workdir::{self, WorkDir};
use crate::local::{launcher, seccomp};
use crate::protocol::{MAX_REQUEST_BYTES, encode_frame, encode_request};
use crate::request::CallRequest;
use crate::status::Status;

/// Where the launcher comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LauncherLocation {
    /// No launcher: only the reference's controls; every Linux control is refused.
    None,
    /// Re-exec the current executable (its `main` must call `launcher::run_if_requested`).
    CurrentExe,
    /// A launcher binary such as `apizr-launch`.
    Binary(PathBuf),
}

/// How the runtime is set up (not part of any hashed artifact).
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// The interpreter command; resolved once to the real executable. Default: `$APIZR_PYTHON`,
    /// else `python3`.
    pub python: PathBuf,
    pub launcher: LauncherLocation,
    /// Parent of the per-call working directories.
    pub temp_root: PathBuf,
    /// Per-call ids on a root host (`None`: `APIZR_ID_RANGE`, else the default range).
    pub ids: Option<IdRange>,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            python: std::env::var_os("APIZR_PYTHON")
                .filter(|p| !p.is_empty())
                .map_or_else(|| PathBuf::from("python3"), PathBuf::from),
            launcher: LauncherLocation::CurrentExe,
            temp_root: std::env::temp_dir(),
            ids: None,
        }
    }
}

/// The envelope plus what happened, for `apizr doctor`, logs and the audit record.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    pub envelope: Envelope,
    pub report: CallReport,
}

/// Enforcement and timing of one call. Never contains argument or environment values.
///
/// Trust: `status_source` says who decided the envelope's status. `limits_hit`, `exit`,
/// `protocol_error`, `cleanup` and the timings are what the supervisor itself observed;
/// `worker_status` is what the worker's frame claimed — written by the same process that ran
/// the user's code, so it is evidence of nothing the supervisor did not also see.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CallReport {
    pub controls: Vec<ControlReport>,
    /// Controls that made the call `policy_refused` before launch.
    pub refused: Vec<&'static str>,
    pub limits_hit: Vec<String>,
    /// `supervisor` or `worker` (empty only for a report that never reached a decision).
    pub status_source: &'static str,
    /// The status the worker's frame claimed, even when the supervisor overruled it.
    pub worker_status: Option<&'static str>,
    /// `exit N` / `signal N` of the launcher or worker.
    pub exit: Option<String>,
    pub protocol_error: Option<String>,
    /// Clean-up that failed (working directory, cgroups, leftovers of dead supervisors):
    /// never reported as removed.
    pub cleanup: Vec<String>,
    /// Bounded worker stderr (user prints and tracebacks), lossily decoded.
    pub stderr: String,
    pub stderr_truncated: bool,
    /// The whole call; `total_ms` in reports.
    #[serde(rename = "total_ms", serialize_with = "whole_millis")]
    pub total: Duration,
    /// Spawn to response; `worker_ms` in reports.
    #[serde(rename = "worker_ms", serialize_with = "whole_millis")]
    pub worker: Duration,
}

/// Durations in reports are whole milliseconds (like the OCI report's `*_ms`), not serde's
/// `{"secs", "nanos"}` form of a `Duration`.
fn whole_millis<S: serde::Serializer>(duration: &Duration, out: S) -> Result<S::Ok, S::Error> {
    out.serialize_u64(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}

/// The local-process backend.
#[derive(Debug)]
pub struct LocalRuntime {
    config: RuntimeConfig,
    spawner: Arc<dyn ProcessSpawner>,
    audit: Option<Arc<dyn AuditSink>>,
    host: LazyHost,
    seccomp: OnceLock<Option<Vec<Vec<u8>>>>,
    ids: Result<IdRange, String>,
    /// Failures of the start-up sweep, reported with the first call.
    swept: OnceLock<Mutex<Vec<String>>>,
}

impl LocalRuntime {
    pub fn new(config: RuntimeConfig) -> Self {
        let launcher = match &config.launcher {
            LauncherLocation::None => None,
            LauncherLocation::CurrentExe => std::env::current_exe().ok(),
            LauncherLocation::Binary(path) => Some(path.clone()),
        };
        LocalRuntime {
            host: LazyHost::new(config.python.clone(), launcher),
            spawner: Arc::new(LocalSpawner),
            audit: None,
            seccomp: OnceLock::new(),
            ids: config.ids.map_or_else(IdRange::from_env, Ok),
            swept: OnceLock::new(),
            config,
        }
    }

    /// Remove what dead supervisors left: working directories under the temp root and
    /// per-call cgroups. Only leftovers whose owning process is gone are touched. Runs once
    /// per runtime (at its first call, or earlier when a server calls it at start); returns
    /// the failures.
    pub fn sweep(&self) -> Vec<String> {
        let failures = self.swept.get_or_init(|| {
            let (_, mut failed) = workdir::sweep(&self.config.temp_root);
            for controller in ["pids", "memory"] {
                for h in cgroup::hierarchies(controller) {
                    failed.extend(cgroup::sweep(&h).1);
                }
            }
            Mutex::new(failed)
        });
        failures.lock().map(|f| f.clone()).unwrap_or_default()
    }

    /// Replace the process spawner (the test seam).
    pub fn with_spawner(mut self, spawner: Arc<dyn ProcessSpawner>) -> Self {
        self.spawner = spawner;
        self
    }

    pub fn with_audit(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.audit = Some(sink);
        self
    }

    /// Every host fact, probed once per runtime on first use. Calls observe only what their
    /// policy needs (see [`LazyHost`]).
    pub fn host_capabilities(&self) -> &HostCapabilities {
        self.host.full()
    }

    /// Execute one call. Never panics; every failure is a status.
    pub fn execute(&self, call: &CallRequest) -> CallOutcome {
        let start = Instant::now();
        let first_sweep = self.swept.get().is_none();
        let sweep_failures = self.sweep();
        let deadline = start + Duration::from_millis(call.policy.limits.wall_time_ms);
        let host = self.host.for_policy(&call.policy);
        let plan = enforcement::plan(&call.policy, &host);
        let mut report = CallReport {
            controls: plan.controls.clone(),
            refused: plan.refused.clone(),
            ..CallReport::default()
        };
        if first_sweep {
            report.cleanup.extend(sweep_failures);
        }
        let envelope = self.run(call, &host, &plan, deadline, &mut report);
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
        self.write_audit(call, &envelope, &report);
        CallOutcome { envelope, report }
    }

    fn run(
        &self,
        call: &CallRequest,
        host: &HostCapabilities,
        plan: &EnforcementPlan,
        deadline: Instant,
        report: &mut CallReport,
    ) -> Envelope {
        let input_ok = call
            .arguments_object()
            .canonical_bytes()
            .is_ok_and(|b| b.len() as u64 <= call.policy.limits.max_input_bytes);
        if !input_ok {
            report.limits_hit.push("input".into());
            return Envelope::status(Status::InvalidInput);
        }
        if !plan.refused.is_empty() {
            return Envelope::status(Status::PolicyRefused);
        }
        let programs = if plan.seccomp {
            match self
                .seccomp
                .get_or_init(|| seccomp::subprocess_deny_programs().ok())
            {
                Some(p) => Some(p.as_slice()),
                None => {
                    report.refused.push("subprocess");
                    return Envelope::status(Status::PolicyRefused);
                }
            }
        } else {
            None
        };
        let payload = match encode_request(call, programs) {
            Ok(p) if p.len() <= MAX_REQUEST_BYTES => p,
            _ => return Envelope::status(Status::InvalidInput),
        };
        let Some(python) = host.python.clone() else {
            report.protocol_error = Some("no Python interpreter".into());
            return Envelope::status(Status::WorkerFailed);
        };
        let fail = |report: &mut CallReport, why: String| {
            report.protocol_error = Some(why);
            Envelope::status(Status::WorkerFailed)
        };
        // The call's identity is held (a kernel lock) until every process of the call is gone.
        let call_id = if plan.identity == IdentityPlan::PerCallIds {
            let range = match &self.ids {
                Ok(range) => *range,
                Err(e) => return fail(report, e.clone()),
            };
            match identity::allocate(range) {
                Ok(id) => Some(id),
                Err(e) => return fail(report, format!("identity: {e}")),
            }
        } else {
            None
        };
        let uid = call_id.as_ref().map(|id| id.uid);
        if let Some(uid) = uid {
            annotate(report, "identity", &format!("uid {uid} gid {uid}"));
        }
        let workdir = match WorkDir::create(&self.config.temp_root) {
            Ok(w) => w,
            Err(e) => return fail(report, format!("working directory: {e}")),
        };
        if let (Some(uid), Some(ViewPlan::Host)) = (uid, plan.view)
            && let Err(e) = workdir.chown(uid, uid)
        {
            return fail(report, format!("working directory: chown: {e}"));
        }
        let cgroups = if plan.pids.is_some() || plan.memory.is_some() {
            let limits = Limits {
                pids: plan.pids.map(|p| p.saturating_add(1)),
                memory: plan.memory,
            };
            let (pids, memory) = (host.pids_hierarchy(), host.memory_hierarchy());
            match CallCgroups::create(pids.as_ref(), memory.as_ref(), limits) {
                Ok(g) => Some(g),
                Err(e) => {
                    // Nothing ran: the limit could not be set up, so the call is refused.
                    report.refused.push(if plan.memory.is_some() {
                        "memory"
                    } else {
                        "pids"
                    });
                    report.protocol_error = Some(format!("cgroup: {e}"));
                    return Envelope::status(Status::PolicyRefused);
                }
            }
        } else {
            None
        };
        let env = self.environment(call, plan);
        let compiled = self.host.compiled_worker();
        let spec = spawn_spec(
            plan,
            LaunchInputs {
                python: python.clone(),
                host,
                workdir: &workdir,
                uid,
                cgroup_procs: cgroups
                    .as_ref()
                    .map(CallCgroups::procs_files)
                    .unwrap_or_default(),
                read_roots: &call.policy.filesystem.read_roots,
                env,
                compiled: compiled.is_some(),
                args: None,
                read_write: &[],
                cwd: None,
            },
        );
        let Ok(spec) = spec else {
            return Envelope::status(Status::WorkerFailed);
        };
        let mut frames = Vec::new();
        if let Some(code) = &compiled {
            frames.extend_from_slice(&encode_frame(code));
        }
        frames.extend_from_slice(&encode_frame(&payload));
        let outcome = supervise(
            self.spawner.as_ref(),
            &spec,
            frames,
            deadline,
            call.policy.limits.max_output_bytes,
        );
        report.worker = outcome.elapsed;
        report.exit = outcome.exit.map(describe_exit);
        report.protocol_error = outcome.protocol_error;
        report.stderr = String::from_utf8_lossy(&outcome.stderr).into_owned();
        report.stderr_truncated = outcome.stderr_truncated;
        let exit_code = outcome.exit.and_then(|s| s.code());
        if spec.program != python
            && exit_code == Some(launcher::SETUP_FAILED)
            && report.stderr.starts_with("apizr-launch:")
        {
            // The launcher could not apply a control the (possibly cached) probe promised:
            // Python never ran. Observe the host again next time.
            self.host.invalidate_launcher_probe();
        }
        if let Some(groups) = cgroups {
            if groups.pids_hit() {
                report.limits_hit.push("pids".into());
            }
            if groups.memory_hit() {
                report.limits_hit.push("memory".into());
            }
            if let Err(failed) = groups.destroy() {
                report.cleanup.extend(failed);
            }
        }
        if plan.rlimit_cpu_secs.is_some() && exit_code == Some(launcher::CPU_LIMIT_EXIT) {
            report.limits_hit.push("cpu".into());
        }
        if let Err(e) = workdir.remove() {
            report.cleanup.push(format!("working directory: {e}"));
        }
        drop(call_id);
        let mut envelope = outcome.envelope;
        if outcome.from_worker {
            report.worker_status = Some(envelope.status.wire_name());
            if worker_may_report(envelope.status, plan) {
                report.status_source = "worker";
            } else {
                report.protocol_error = Some(format!(
                    "the worker claimed `{}`, a status only the supervisor decides",
                    envelope.status
                ));
                envelope = Envelope::status(Status::WorkerFailed);
            }
        }
        envelope
    }

    fn environment(&self, call: &CallRequest, plan: &EnforcementPlan) -> Vec<(OsString, OsString)> {
        let policy = &call.policy.environment;
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

    fn write_audit(&self, call: &CallRequest, envelope: &Envelope, report: &CallReport) {
        let Some(sink) = &self.audit else {
            return;
        };
        let record = AuditRecord {
            schema_version: AUDIT_SCHEMA,
            capability_id: call.capability_id.clone(),
            executable_digest: call.executable.digest.prefixed(),
            policy_digest: call
                .policy
                .digest()
                .map(|d| d.prefixed())
                .unwrap_or_default(),
            status: envelope.status.wire_name(),
            duration_ms: u64::try_from(report.total.as_millis()).unwrap_or(u64::MAX),
            limits_hit: report.limits_hit.clone(),
            refused: report.refused.clone(),
            controls: report.controls.clone(),
            status_source: report.status_source,
            worker_status: report.worker_status,
            exit: report.exit.clone(),
        };
        let _ = sink.record(&record);
    }
}

/// Statuses a worker frame may carry. `timeout` is the supervisor's alone, and
/// `policy_refused` comes from a worker only when it was asked to install a seccomp program
/// and could not; anything else in a frame is a forgery and fails the call.
fn worker_may_report(status: Status, plan: &EnforcementPlan) -> bool {
    match status {
        Status::Timeout => false,
        Status::PolicyRefused => plan.seccomp,
        _ => true,
    }
}

fn annotate(report: &mut CallReport, control: &str, detail: &str) {
    if let Some(row) = report.controls.iter_mut().find(|c| c.control == control)
        && let Some(mechanism) = &mut row.mechanism
    {
        *mechanism = format!("{detail}: {mechanism}");
    }
}
