//! The `local` backend: one fresh worker process per call, under the policy's controls.
//!
//! Order (which status wins): input size → enforcement plan (refusals) → request encoding →
//! fresh directory and cgroup → spawn through the launcher → supervise → cleanup → audit.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::audit::{AUDIT_SCHEMA, AuditRecord, AuditSink};
use crate::envelope::Envelope;
use crate::local::cgroup::CallCgroup;
use crate::local::enforcement::{self, ControlReport, EnforcementPlan};
use crate::local::host::{HostCapabilities, LazyHost};
use crate::local::launcher::{LandlockConfig, LaunchConfig, launch_args};
use crate::local::seccomp;
use crate::local::spawn::{LocalSpawner, ProcessSpawner, SpawnSpec};
use crate::local::supervisor::{describe_exit, supervise};
use crate::local::workdir::WorkDir;
use crate::protocol::{MAX_REQUEST_BYTES, encode_frame, encode_request};
use crate::request::CallRequest;
use crate::status::Status;
use crate::worker;

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
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            python: std::env::var_os("APIZR_PYTHON")
                .filter(|p| !p.is_empty())
                .map_or_else(|| PathBuf::from("python3"), PathBuf::from),
            launcher: LauncherLocation::CurrentExe,
            temp_root: std::env::temp_dir(),
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
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CallReport {
    pub controls: Vec<ControlReport>,
    /// Controls that made the call `policy_refused` before launch.
    pub refused: Vec<&'static str>,
    pub limits_hit: Vec<String>,
    /// `exit N` / `signal N` of the launcher or worker.
    pub exit: Option<String>,
    pub protocol_error: Option<String>,
    /// Bounded worker stderr (user prints and tracebacks), lossily decoded.
    pub stderr: String,
    pub stderr_truncated: bool,
    pub total: Duration,
    /// Spawn to response.
    pub worker: Duration,
}

/// The local-process backend.
#[derive(Debug)]
pub struct LocalRuntime {
    config: RuntimeConfig,
    spawner: Arc<dyn ProcessSpawner>,
    audit: Option<Arc<dyn AuditSink>>,
    host: LazyHost,
    seccomp: OnceLock<Option<Vec<Vec<u8>>>>,
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
            config,
            spawner: Arc::new(LocalSpawner),
            audit: None,
            seccomp: OnceLock::new(),
        }
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
        let deadline = start + Duration::from_millis(call.policy.limits.wall_time_ms);
        let host = self.host.for_policy(&call.policy);
        let plan = enforcement::plan(&call.policy, &host);
        let mut report = CallReport {
            controls: plan.controls.clone(),
            refused: plan.refused.clone(),
            ..CallReport::default()
        };
        let envelope = self.run(call, &host, &plan, deadline, &mut report);
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
        let workdir = match WorkDir::create(&self.config.temp_root) {
            Ok(w) => w,
            Err(e) => {
                report.protocol_error = Some(format!("working directory: {e}"));
                return Envelope::status(Status::WorkerFailed);
            }
        };
        let cgroup = match (plan.pids, host.pids_hierarchy()) {
            (Some(pids), Some(h)) => match CallCgroup::create(&h, pids.saturating_add(1)) {
                Ok(g) => Some(g),
                Err(e) => {
                    report.protocol_error = Some(format!("cgroup: {e}"));
                    return Envelope::status(Status::WorkerFailed);
                }
            },
            _ => None,
        };
        let env = self.environment(call, plan, &workdir);
        let python_path = python.clone();
        let spec = match (&host.launcher, plan.use_launcher) {
            (Some(launcher), true) => {
                let config = LaunchConfig {
                    program: python,
                    args: worker::python_args(),
                    cgroup_procs: cgroup.as_ref().map(CallCgroup::procs_file),
                    user_ns: plan.user_ns,
                    net_ns: plan.net_ns,
                    pid_ns: plan.pid_ns,
                    rlimit_as: plan.rlimit_as,
                    rlimit_cpu_secs: plan.rlimit_cpu_secs,
                    landlock: plan.landlock.then(|| LandlockConfig {
                        read_only: vec![PathBuf::from("/")],
                        read_write: vec![workdir.path().to_path_buf()],
                        write_files: vec![PathBuf::from("/dev/null")],
                    }),
                };
                let Ok(args) = launch_args(&config) else {
                    return Envelope::status(Status::WorkerFailed);
                };
                SpawnSpec {
                    program: launcher.clone(),
                    args,
                    env,
                    cwd: workdir.path().to_path_buf(),
                }
            }
            _ => SpawnSpec {
                program: python,
                args: worker::python_args()
                    .into_iter()
                    .map(OsString::from)
                    .collect(),
                env,
                cwd: workdir.path().to_path_buf(),
            },
        };
        let outcome = supervise(
            self.spawner.as_ref(),
            &spec,
            encode_frame(&payload),
            deadline,
            call.policy.limits.max_output_bytes,
        );
        report.worker = outcome.elapsed;
        report.exit = outcome.exit.map(describe_exit);
        report.protocol_error = outcome.protocol_error;
        report.stderr = String::from_utf8_lossy(&outcome.stderr).into_owned();
        if spec.program != python_path
            && outcome.exit.and_then(|s| s.code()) == Some(crate::local::launcher::SETUP_FAILED)
            && report.stderr.starts_with("apizr-launch:")
        {
            // The launcher could not apply a control the (possibly cached) probe promised:
            // Python never ran. Observe the host again next time.
            self.host.invalidate_launcher_probe();
        }
        report.stderr_truncated = outcome.stderr_truncated;
        if let Some(group) = cgroup {
            if group.limit_hit() {
                report.limits_hit.push("pids".into());
            }
            let _ = group.destroy();
        }
        if plan.rlimit_cpu_secs.is_some()
            && outcome.exit.and_then(|s| s.code()) == Some(crate::local::launcher::CPU_LIMIT_EXIT)
        {
            report.limits_hit.push("cpu".into());
        }
        drop(workdir);
        outcome.envelope
    }

    fn environment(
        &self,
        call: &CallRequest,
        plan: &EnforcementPlan,
        workdir: &WorkDir,
    ) -> Vec<(OsString, OsString)> {
        let policy = &call.policy.environment;
        let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
            .filter(|(name, _)| {
                policy.inherit
                    || name
                        .to_str()
                        .is_some_and(|n| policy.allow.iter().any(|a| a == n))
            })
            .collect();
        if plan.landlock {
            env.retain(|(k, _)| k != "TMPDIR");
            env.push(("TMPDIR".into(), workdir.tmp().into_os_string()));
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
        };
        let _ = sink.record(&record);
    }
}
