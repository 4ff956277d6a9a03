//! One call in one fresh container: launch, answer (`answer.rs`),
//! remove.
//!
//! Order (which status wins): input size → policy refusals → engine + host controls
//! (`backend_unavailable`) → image (`runtime_image_unavailable`) → bundle → create → **verify**
//! (the engine's record of every control; a mismatch is `backend_unavailable` and the container
//! never starts) → attach → start → exchange under the deadline → **attestation** (the
//! container's own view, checked before the worker reads its request; a failure is
//! `backend_unavailable`) → exit code → OOM classification (`resource_limit`) → removal
//! (`cleanup_failed` wins over everything). The deadline covers container creation and start,
//! like the reference. The [`ContainerGuard`] is armed before `create` is sent, so a container
//! is removed on every path, including a panic unwinding through the caller.
//!
//! A pooled container (`pool/`) goes through the same [`launch`] ahead of its call, has its
//! attestation read then, and is answered by the same `answer::answer`. Its removal happens
//! after the answer.

use std::path::Path;
use std::time::{Duration, Instant};

use apizr_ir::policy_v2::PolicyV2;

use super::answer;
use super::attest::Attestation;
use super::bundle::{Bundle, random_hex};
use super::container::{self, ContainerGuard, ContainerOptions};
use super::engine::EngineError;
use super::engine_kind::{EngineCapabilities, EngineKind};
use super::http::{Body, HttpError};
use super::stream::{self, Until};
use super::verify::{self, Expected, Refusal};
use super::{Connected, OciCall, OciReport, RuntimeImage};
use crate::envelope::Envelope;
use crate::protocol::{MAX_REQUEST_BYTES, encode_request};
use crate::status::Status;

pub(super) fn run_container(
    connected: &Connected,
    call: &OciCall<'_>,
    programs: Option<&[Vec<u8>]>,
    temp_root: &Path,
    deadline: Instant,
    report: &mut OciReport,
) -> Envelope {
    let payload = match encode_payload(call, programs) {
        Ok(p) => p,
        Err(envelope) => return envelope,
    };
    let path = call.call.executable_path();
    let workload = Workload::of(call, &path);
    fresh(connected, &workload, payload, temp_root, deadline, report)
}

/// One call in a fresh container: launch, answer `payload`, remove (before returning).
pub(super) fn fresh(
    connected: &Connected,
    workload: &Workload<'_>,
    payload: Vec<u8>,
    temp_root: &Path,
    deadline: Instant,
    report: &mut OciReport,
) -> Envelope {
    match launch(
        connected,
        workload,
        Life::OneCall,
        temp_root,
        deadline,
        report,
    ) {
        Ok(launched) => {
            let max_output = workload.policy.limits.max_output_bytes;
            let (envelope, leftover) = answer::answer(
                connected,
                launched,
                payload,
                max_output,
                deadline,
                Until::Eof,
                report,
            );
            leftover.remove(envelope, report)
        }
        Err(envelope) => envelope,
    }
}

/// What a container is made of: everything but the request (which travels on stdin).
#[derive(Debug, Clone, Copy)]
pub(super) struct Workload<'a> {
    pub policy: &'a PolicyV2,
    pub image: &'a RuntimeImage,
    pub executable: &'a [u8],
    /// The executable's bound digest (`sha256` hex).
    pub executable_digest: &'a str,
    /// `source/<module path>.py` in the bundle.
    pub executable_path: &'a str,
    /// The bytes the user passed (`.ipynb` for notebooks; else the executable).
    pub original: &'a [u8],
    /// The container's interpreter (`environment::interpreter`: a package with requirements
    /// runs the image's environment).
    pub python: &'a str,
}

impl<'a> Workload<'a> {
    pub fn of(call: &OciCall<'a>, executable_path: &'a str) -> Workload<'a> {
        let executable = call.call.executable.bytes.as_slice();
        Workload {
            policy: call.policy,
            image: call.image,
            executable,
            executable_digest: &call.call.executable.digest.value,
            executable_path,
            original: call.original.unwrap_or(executable),
            python: super::environment::interpreter(&call.call.executable),
        }
    }
}

/// How long a container may exist before its call: a fresh one is used at once, a pooled one
/// waits up to `max_idle` (its expiry label covers the wait).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Life {
    OneCall,
    Pooled { max_idle: Duration },
}

/// The worker request for `call` (its v1 policy is the v2 policy's worker policy).
pub(super) fn encode_payload(
    call: &OciCall<'_>,
    programs: Option<&[Vec<u8>]>,
) -> Result<Vec<u8>, Envelope> {
    let mut request = call.call.clone();
    request.policy = call.policy.worker_policy();
    match encode_request(&request, programs) {
        Ok(p) if p.len() <= MAX_REQUEST_BYTES => Ok(p),
        _ => Err(Envelope::status(Status::InvalidInput)),
    }
}

/// A started container whose worker waits for its one request. Fields drop in order: the
/// container is removed before its bundle directory.
pub(super) struct Launched {
    pub guard: ContainerGuard,
    /// The full container ID (kernel logs name it).
    pub id: String,
    pub attached: stream::Attached,
    /// The container's own view, when it was read before the request (pooled containers).
    pub attestation: Option<Attestation>,
    pub bundle: Bundle,
}

/// Bundle → create → verify → attach → start. Every failure removes what was created.
pub(super) fn launch(
    connected: &Connected,
    workload: &Workload<'_>,
    life: Life,
    temp_root: &Path,
    deadline: Instant,
    report: &mut OciReport,
) -> Result<Launched, Envelope> {
    let started = Instant::now();
    let (engine, caps) = &connected.pair;
    let bundle = Bundle::create(
        temp_root,
        workload.original,
        workload.executable_path,
        workload.executable,
    )
    .map_err(|e| {
        report.detail = Some(format!("bundle: {e}"));
        Envelope::status(Status::WorkerFailed)
    })?;
    let name = random_hex()
        .map(|hex| format!("apizr-oci-{hex}"))
        .map_err(|e| {
            report.detail = Some(format!("container name: {e}"));
            Envelope::status(Status::WorkerFailed)
        })?;
    report.container = Some(name.clone());
    // Armed before `create` is sent: a create that succeeds after our deadline is removed too.
    let mut guard = ContainerGuard::new(engine.clone(), name.clone());
    let env = container::allowed_env(workload.policy);
    let mut body = container::create_body(
        &workload.image.image,
        workload.policy,
        bundle.path(),
        &env,
        &connected.options,
    );
    body["Entrypoint"] = serde_json::json!([workload.python]);
    if let Life::Pooled { max_idle } = life {
        container::pooled(&mut body, workload.policy, max_idle);
    }
    let platform = workload.image.platform.as_str();
    let created = container::create(engine, &name, platform, &body, deadline);
    if let Err(e) = &created {
        report.detail = Some(format!("create: {e}"));
        let envelope = match *e {
            EngineError::Unreachable(HttpError::Deadline) => {
                report.limits_hit.push("wall_time".into());
                Envelope::status(Status::Timeout)
            }
            EngineError::Api { status: 404, .. } => {
                Envelope::status(Status::RuntimeImageUnavailable)
            }
            _ => Envelope::status(Status::WorkerFailed),
        };
        return Err(removed_or_cleanup_failed(&mut guard, envelope, report));
    }
    let id = created.unwrap_or_default();
    report.timings.create_ms = millis(started.elapsed());
    // Do not take the engine's word: its record of the container, before anything runs.
    let expected = Expected::from_create_body(&body);
    let checked = verify::inspect(engine, &name, deadline)
        .map_err(|e| format!("inspect: {e}"))
        .and_then(|doc| {
            verify::check(&doc, &expected, caps, bundle.path()).map_err(|refusal| {
                let detail = refusal.to_string();
                report.refused = Some(refusal);
                detail
            })
        });
    match checked {
        Ok(verified) => report.verified = Some(verified),
        Err(detail) => {
            report.detail = Some(detail);
            let envelope = Envelope::status(Status::BackendUnavailable);
            return Err(removed_or_cleanup_failed(&mut guard, envelope, report));
        }
    }
    let attached = match stream::attach(engine, &name, deadline) {
        Ok(a) => a,
        Err(e) => {
            let envelope = transport_failure(report, "attach", e);
            return Err(removed_or_cleanup_failed(&mut guard, envelope, report));
        }
    };
    let start_path = format!("/containers/{name}/start");
    let failure = match engine.call("POST", &start_path, Body::None, deadline) {
        Ok(resp) if resp.is_success() || resp.status == 304 => None,
        Ok(resp) => {
            report.detail = Some(format!("start: {} {}", resp.status, resp.message()));
            Some(Envelope::status(Status::WorkerFailed))
        }
        Err(e) => Some(transport_failure(report, "start", e)),
    };
    if let Some(envelope) = failure {
        return Err(removed_or_cleanup_failed(&mut guard, envelope, report));
    }
    report.timings.start_ms = millis(started.elapsed());
    Ok(Launched {
        guard,
        id,
        attached,
        attestation: None,
        bundle,
    })
}

/// A runtime the engine does not list (Docker answers `create` with a 400 for it). Podman
/// lists runtimes it does not honour, which `verify` catches per container.
pub(super) fn unknown_runtime(
    caps: &EngineCapabilities,
    options: &ContainerOptions,
) -> Option<Refusal> {
    let want = options.runtime.as_ref()?;
    (caps.engine == EngineKind::Docker && !caps.runtimes.contains(want)).then(|| Refusal {
        control: "runtime",
        expected: want.clone(),
        found: format!("registered runtimes {:?}", caps.runtimes),
        checked: "engine",
    })
}

pub(super) fn removed_or_cleanup_failed(
    guard: &mut ContainerGuard,
    envelope: Envelope,
    report: &mut OciReport,
) -> Envelope {
    let started = Instant::now();
    let removal = guard.remove();
    report.timings.remove_ms = millis(started.elapsed());
    match removal {
        Ok(()) => {
            report.removed = true;
            envelope
        }
        Err(e) => {
            report.detail = Some(format!("cleanup: {e}"));
            Envelope::status(Status::CleanupFailed)
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn transport_failure(report: &mut OciReport, step: &str, e: HttpError) -> Envelope {
    report.detail = Some(format!("{step}: {e}"));
    if matches!(e, HttpError::Deadline) {
        report.limits_hit.push("wall_time".into());
        Envelope::status(Status::Timeout)
    } else {
        Envelope::status(Status::WorkerFailed)
    }
}
