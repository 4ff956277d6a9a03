//! The `oci-container` backend (policy `apizr.execution/v2`): one fresh container
//! per call through the Docker Engine API (Docker, or Podman's compatible service), running the
//! same v1 worker and framing over the attached stdin/stdout. Nothing is taken on the engine's
//! word: every container is checked after create and from inside before the call runs.
//!
//! * [`http`], [`engine`] — a small typed Engine API client over the unix socket
//!   (`DOCKER_HOST`), API version negotiation down to 1.41.
//! * [`engine_kind`] — Docker or Podman (detected), host capability checks, rootless refusal.
//! * [`image`] — [`RuntimeImage`] (full `sha256:` ID + platform) and the image check.
//! * [`container`], [`bundle`], [`stream`], `run`, `answer` — the container plan, the read-only
//!   source bundle, the attached exchange, one call with guaranteed removal, and how a started
//!   container's answer is classified.
//! * [`verify`], [`attest`] — the engine's record of each container compared with the request
//!   (before start), and the container's own view checked before the worker reads its request
//!   (identity, capabilities, `no_new_privs`, seccomp, gVisor when asked for).
//! * [`oom`] — memory-kill classification (the engine's flag, or the kernel's record).
//! * [`sweep`] — start-up removal of what dead callers left (never a live owner's).
//! * [`executor`] — [`OciExecutor`](executor::OciExecutor): the runtime, the v2 policy and the
//!   image behind the call API.
//! * [`pool`] — prepared (created, checked, started, attested), never-reused containers for
//!   servers, refilled in the background; a fresh container when none is ready.
//! * [`plan`] — the ContainerPlan (`apizr.runtime/v2`), byte-compatible with the reference.
//! * [`build`] — `apizr image build`: worker images from a local base image or a rootfs tar,
//!   offline.
//! * [`environment`] — worker images that carry a package's requirements (a virtual
//!   environment installed offline from a wheelhouse, hash-pinned, recorded in labels) and the
//!   rule that a package with requirements runs only in an image with exactly that set.
//! * [`layer`] — one layer of files on a local base image (helper container, `PUT /archive`,
//!   `POST /commit`): worker images and `apizr image build --project` server images.
//!
//! Callers reach this backend through the call API ([`executor::OciExecutor`] behind
//! [`AnyExecutor`](crate::call::AnyExecutor)); [`OciRuntime::execute`] is the per-call engine
//! work and [`OciPool`] can put pre-started containers in front of it.
//!
//! Differences from the reference, all deliberate:
//! * Engine API over the socket instead of the `docker` CLI; the API version is negotiated
//!   (1.41 … 1.47) and pinned in every path.
//! * Host checks look at the controls (memory+swap, CFS quota/period, pids, seccomp enabled
//!   with any profile) instead of string-matching `profile=builtin`, so stock Docker 20.10
//!   (Debian 12) works; the report lists what was found.
//! * The worker is the embedded v1 worker, sent with `python -I -S -c` (the same bytes as the
//!   local backend, so image and runtime cannot drift); images built by `apizr image build`
//!   also carry a copy and its digest label.
//! * Strict `subprocess.mode: deny` reuses the v1 worker's seccomp programs (fork, vfork,
//!   execve, execveat and non-thread clone → EPERM, clone3 → ENOSYS), installed before the
//!   module is compiled; threads keep working. ptrace/io_uring are left to the engine's
//!   default seccomp profile and `CapDrop: ALL`.
//! * Containers carry owner and expiry labels; each runtime sweeps leftovers of dead callers
//!   once (a guard removes them on every other path, panics included).
//! * Engines are checked, not trusted (the reference trusts `docker create`): rootless engines
//!   on cgroup v1 are refused, and a container whose record or own view differs from the
//!   request is refused (`backend_unavailable`, control named in the report).

mod answer;
pub mod attest;
pub mod build;
pub mod bundle;
pub mod container;
pub mod engine;
pub mod engine_kind;
pub mod environment;
pub mod executor;
pub mod http;
pub mod image;
pub mod layer;
pub mod oom;
pub mod plan;
pub mod pool;
mod run;
pub mod stream;
pub mod sweep;
pub mod verify;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use apizr_ir::policy_v2::PolicyV2;
use serde::Serialize;

pub use self::attest::Attestation;
pub use self::container::{ContainerGuard, ContainerOptions, EXECUTION_LABEL};
pub use self::engine::{Engine, EngineError};
pub use self::engine_kind::{EngineCapabilities, EngineKind};
pub use self::image::{ImageFacts, ImageRefError, Platform, RuntimeImage};
pub use self::plan::ContainerPlan;
pub use self::pool::{OciPool, PoolConfig, PoolStats, PoolWorkload};
pub use self::sweep::SweepReport;
pub use self::verify::{Refusal, Verified};
use crate::envelope::Envelope;
pub use crate::envelope::RESULT_SCHEMA_V2;
use crate::local::seccomp;
use crate::request::CallRequest;
use crate::status::Status;

/// One v2 call: the planned request (its `policy` is ignored: the v2 policy's derived worker
/// policy is used), the v2 policy, the image, and the original bytes (`.ipynb` for notebooks;
/// defaults to the executable).
#[derive(Debug, Clone, Copy)]
pub struct OciCall<'a> {
    pub call: &'a CallRequest,
    pub policy: &'a PolicyV2,
    pub image: &'a RuntimeImage,
    pub original: Option<&'a [u8]>,
}

/// Milliseconds since the call started, at the end of each step.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OciTimings {
    pub engine_ms: u64,
    pub image_ms: u64,
    pub create_ms: u64,
    pub start_ms: u64,
    pub worker_ms: u64,
    /// From the request being sent to the container closing its output (the worker's own
    /// run, its exit, and the engine passing the output on).
    pub exchange_ms: u64,
    /// From the request being sent to the engine reporting the exit code.
    pub exit_ms: u64,
    /// Duration of the removal itself.
    pub remove_ms: u64,
    pub total_ms: u64,
}

/// Which container answered a call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ContainerPath {
    /// Created, checked and started for this call.
    #[default]
    Fresh,
    /// Prepared (created, checked, started, attested) by a server's [`OciPool`] before the call.
    Pooled,
}

/// What happened, for `--report`, logs and tests. No argument or environment values.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OciReport {
    /// Fresh or pooled container.
    pub path: ContainerPath,
    /// Why a call through a pool ran in a fresh container.
    pub pool_miss: Option<String>,
    pub engine: Option<EngineCapabilities>,
    pub image: Option<ImageFacts>,
    pub container: Option<String>,
    pub removed: bool,
    /// Pooled: the worker's whole, valid frame was the answer; its exit code, any output after
    /// the frame, and the removal were checked by the pool after the answer (anomalies are
    /// counted in [`PoolStats`]), so `exit` and `removed` are not known here.
    pub checked_after_answer: bool,
    pub exit: Option<i64>,
    pub oom_killed: bool,
    pub limits_hit: Vec<String>,
    pub protocol_error: Option<String>,
    /// The controls the engine's record of the container was checked for (before start).
    pub verified: Option<Verified>,
    /// What the container reported about itself (before the request was read).
    pub attestation: Option<Attestation>,
    /// The control that did not hold: the call was refused (`backend_unavailable`).
    pub refused: Option<Refusal>,
    /// The start-up sweep of this runtime (leftovers of killed callers).
    pub sweep: Option<SweepReport>,
    /// Why the call ended before or outside the worker.
    pub detail: Option<String>,
    pub stderr: String,
    pub stderr_truncated: bool,
    pub timings: OciTimings,
}

/// The envelope plus the report.
#[derive(Debug, Clone, PartialEq)]
pub struct OciOutcome {
    pub envelope: Envelope,
    pub report: OciReport,
}

/// Where the engine is and where bundles go.
#[derive(Debug, Clone)]
pub struct OciConfig {
    /// The engine socket; `None` reads `DOCKER_HOST` (default `/var/run/docker.sock`).
    pub socket: Option<PathBuf>,
    /// Parent of the per-call bundles; must be visible to the engine at the same path.
    pub temp_root: PathBuf,
    /// The OCI runtime to ask the engine for (`HostConfig.Runtime`); `runsc` (or any name
    /// containing it) also requires gVisor's kernel inside the container. Default: the
    /// `APIZR_OCI_RUNTIME` environment variable, else the engine's default runtime.
    pub runtime: Option<String>,
}

impl Default for OciConfig {
    fn default() -> Self {
        OciConfig {
            socket: None,
            temp_root: std::env::temp_dir(),
            runtime: std::env::var("APIZR_OCI_RUNTIME")
                .ok()
                .filter(|r| !r.is_empty()),
        }
    }
}

/// A probed engine: the engine, its capabilities, the create options derived from them and the
/// configuration, and what the start-up sweep did.
#[derive(Debug)]
pub(crate) struct Connected {
    pair: (Engine, EngineCapabilities),
    options: ContainerOptions,
    sweep: SweepReport,
}

/// The container backend. The engine is connected and probed once per runtime.
#[derive(Debug, Default)]
pub struct OciRuntime {
    config: OciConfig,
    engine: OnceLock<Result<Connected, String>>,
    seccomp: OnceLock<Option<Vec<Vec<u8>>>>,
}

impl OciRuntime {
    pub fn new(config: OciConfig) -> Self {
        OciRuntime {
            config,
            engine: OnceLock::new(),
            seccomp: OnceLock::new(),
        }
    }

    /// The negotiated engine and its capabilities, probed on first use.
    pub fn engine(&self) -> Result<&(Engine, EngineCapabilities), &str> {
        self.connected().map(|c| &c.pair)
    }

    /// What the start-up sweep (run with the first engine probe) removed and failed to remove.
    pub fn sweep_report(&self) -> Option<&SweepReport> {
        self.connected().ok().map(|c| &c.sweep)
    }

    pub(crate) fn connected(&self) -> Result<&Connected, &str> {
        self.engine
            .get_or_init(|| {
                let engine = match &self.config.socket {
                    Some(socket) => Engine::connect(socket),
                    None => Engine::from_env(),
                }
                .map_err(|e| e.to_string())?;
                let caps = engine.capabilities().map_err(|e| e.to_string())?;
                // Once per runtime: reclaim what killed callers left (never a live owner's).
                let sweep = sweep::sweep(&engine, &self.config.temp_root);
                let options = ContainerOptions {
                    engine: engine.kind,
                    runtime: self.config.runtime.clone(),
                };
                Ok(Connected {
                    pair: (engine, caps),
                    options,
                    sweep,
                })
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// Execute one call in a fresh container. Never panics; every failure is a status.
    pub fn execute(&self, call: OciCall<'_>) -> OciOutcome {
        let start = Instant::now();
        let deadline = start + Duration::from_millis(call.policy.limits.wall_time_ms);
        let mut report = OciReport::default();
        let envelope = self.run(call, deadline, start, &mut report);
        report.timings.total_ms = ms(start);
        OciOutcome { envelope, report }
    }

    fn run(
        &self,
        call: OciCall<'_>,
        deadline: Instant,
        start: Instant,
        report: &mut OciReport,
    ) -> Envelope {
        match self.precheck(&call, start, report) {
            Ok((connected, programs)) => run::run_container(
                connected,
                &call,
                programs,
                &self.config.temp_root,
                deadline,
                report,
            ),
            Err(envelope) => envelope,
        }
    }

    /// Everything before a container exists: input size, refusals, engine and host controls,
    /// the image, the strict profile's seccomp programs.
    #[allow(clippy::type_complexity)]
    fn precheck(
        &self,
        call: &OciCall<'_>,
        start: Instant,
        report: &mut OciReport,
    ) -> Result<(&Connected, Option<&[Vec<u8>]>), Envelope> {
        let fail = |s| Err(Envelope::status(s));
        let input_ok = call
            .call
            .arguments_object()
            .canonical_bytes()
            .is_ok_and(|b| b.len() as u64 <= call.policy.limits.max_input_bytes);
        if !input_ok {
            report.limits_hit.push("input".into());
            return fail(Status::InvalidInput);
        }
        if let Some(refusal) = call.policy.refusal() {
            report.detail = Some(refusal.to_string());
            return fail(Status::PolicyRefused);
        }
        let connected = match self.connected() {
            Ok(connected) => connected,
            Err(e) => {
                report.detail = Some(e.to_string());
                return fail(Status::BackendUnavailable);
            }
        };
        let (engine, caps) = &connected.pair;
        report.engine = Some(caps.clone());
        report.sweep = Some(connected.sweep.clone());
        report.timings.engine_ms = ms(start);
        if !caps.usable() {
            report.detail = Some(format!("engine lacks {}", caps.missing.join(", ")));
            return fail(Status::BackendUnavailable);
        }
        if let Some(refusal) = run::unknown_runtime(caps, &connected.options) {
            report.detail = Some(refusal.to_string());
            report.refused = Some(refusal);
            return fail(Status::BackendUnavailable);
        }
        let strict = call.policy.subprocess_deny();
        match image::check_image(engine, call.image, strict) {
            Ok(Ok(facts)) => report.image = Some(facts),
            Ok(Err(e)) => {
                report.detail = Some(e.to_string());
                return fail(Status::RuntimeImageUnavailable);
            }
            Err(e) => {
                report.detail = Some(e.to_string());
                return fail(Status::BackendUnavailable);
            }
        }
        report.timings.image_ms = ms(start);
        if !strict {
            return Ok((connected, None));
        }
        let host_arch = match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            other => other,
        };
        if call.image.platform.architecture() != host_arch {
            report.detail = Some("subprocess deny needs the host architecture".into());
            return fail(Status::PolicyRefused);
        }
        match self
            .seccomp
            .get_or_init(|| seccomp::subprocess_deny_programs().ok())
        {
            Some(p) => Ok((connected, Some(p.as_slice()))),
            None => {
                report.detail = Some("seccomp filter unavailable".into());
                fail(Status::PolicyRefused)
            }
        }
    }
}

fn ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}
