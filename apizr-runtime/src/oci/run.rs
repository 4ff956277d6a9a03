//! One call in one fresh container (contract 7.3 steps 3–7), and how the outcome is classified.
//!
//! Order (which status wins): input size → policy refusals → engine + host controls
//! (`backend_unavailable`) → image (`runtime_image_unavailable`) → bundle → create → attach →
//! start → exchange under the deadline → exit code → OOM classification (`resource_limit`) →
//! removal (`cleanup_failed` wins over everything). The deadline covers container creation and
//! start, like the reference. The [`ContainerGuard`] is armed before `create` is sent, so a
//! container is removed on every path, including a panic unwinding through the caller.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use super::bundle::{Bundle, random_hex};
use super::container::{self, ContainerGuard};
use super::engine::{Engine, EngineError};
use super::http::{Body, HttpError};
use super::status::{EnvelopeV2, OciStatus};
use super::stream;
use super::{OciCall, OciReport};
use crate::envelope::Envelope;
use crate::protocol::{self, FrameError, MAX_REQUEST_BYTES, encode_frame, encode_request};
use crate::status::Status;

/// OOM classification polls the container state this long (reference: 1 s, 50 ms sleeps).
const OOM_POLL: Duration = Duration::from_secs(1);
const OOM_TICK: Duration = Duration::from_millis(50);

pub(super) fn run_container(
    engine: &Engine,
    call: &OciCall<'_>,
    programs: Option<&[Vec<u8>]>,
    temp_root: &Path,
    deadline: Instant,
    report: &mut OciReport,
) -> EnvelopeV2 {
    let payload = match encode_payload(call, programs) {
        Ok(p) => p,
        Err(envelope) => return envelope,
    };
    match launch(engine, call, temp_root, deadline, report) {
        Ok(launched) => finish(engine, launched, payload, call, deadline, report),
        Err(envelope) => envelope,
    }
}

/// The worker request for `call` (its v1 policy is the v2 policy's worker policy).
pub(super) fn encode_payload(
    call: &OciCall<'_>,
    programs: Option<&[Vec<u8>]>,
) -> Result<Vec<u8>, EnvelopeV2> {
    let mut request = call.call.clone();
    request.policy = call.policy.worker_policy();
    match encode_request(&request, programs) {
        Ok(p) if p.len() <= MAX_REQUEST_BYTES => Ok(p),
        _ => Err(EnvelopeV2::status(OciStatus::V1(Status::InvalidInput))),
    }
}

/// A started container whose worker waits for its one request. Fields drop in order: the
/// container is removed before its bundle directory.
pub(super) struct Launched {
    pub guard: ContainerGuard,
    pub attached: stream::Attached,
    pub bundle: Bundle,
}

/// Bundle → create → attach → start. Every failure removes what was created.
pub(super) fn launch(
    engine: &Engine,
    call: &OciCall<'_>,
    temp_root: &Path,
    deadline: Instant,
    report: &mut OciReport,
) -> Result<Launched, EnvelopeV2> {
    let started = Instant::now();
    let executable = &call.call.executable.bytes;
    let original = call.original.unwrap_or(executable);
    let bundle = Bundle::create(
        temp_root,
        original,
        &call.call.executable_path(),
        executable,
    )
    .map_err(|e| {
        report.detail = Some(format!("bundle: {e}"));
        EnvelopeV2::status(OciStatus::V1(Status::WorkerFailed))
    })?;
    let name = random_hex()
        .map(|hex| format!("apizr-oci-{hex}"))
        .map_err(|e| {
            report.detail = Some(format!("container name: {e}"));
            EnvelopeV2::status(OciStatus::V1(Status::WorkerFailed))
        })?;
    report.container = Some(name.clone());
    // Armed before `create` is sent: a create that succeeds after our deadline is removed too.
    let mut guard = ContainerGuard::new(engine.clone(), name.clone());
    let env = container::allowed_env(call.policy);
    let body = container::create_body(&call.image.image, call.policy, bundle.path(), &env);
    let platform = call.image.platform.as_str();
    if let Err(e) = container::create(engine, &name, platform, &body, deadline) {
        report.detail = Some(format!("create: {e}"));
        let envelope = match e {
            EngineError::Unreachable(HttpError::Deadline) => {
                report.limits_hit.push("wall_time".into());
                EnvelopeV2::status(OciStatus::V1(Status::Timeout))
            }
            EngineError::Api { status: 404, .. } => {
                EnvelopeV2::status(OciStatus::RuntimeImageUnavailable)
            }
            _ => EnvelopeV2::status(OciStatus::V1(Status::WorkerFailed)),
        };
        return Err(removed_or_cleanup_failed(&mut guard, envelope, report));
    }
    report.timings.create_ms = millis(started.elapsed());
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
            Some(EnvelopeV2::status(OciStatus::V1(Status::WorkerFailed)))
        }
        Err(e) => Some(transport_failure(report, "start", e)),
    };
    if let Some(envelope) = failure {
        return Err(removed_or_cleanup_failed(&mut guard, envelope, report));
    }
    report.timings.start_ms = millis(started.elapsed());
    Ok(Launched {
        guard,
        attached,
        bundle,
    })
}

/// Exchange the request, classify the outcome, and always remove the container.
pub(super) fn finish(
    engine: &Engine,
    launched: Launched,
    payload: Vec<u8>,
    call: &OciCall<'_>,
    deadline: Instant,
    report: &mut OciReport,
) -> EnvelopeV2 {
    let Launched {
        mut guard,
        attached,
        bundle,
    } = launched;
    let name = guard.name().to_string();
    let result = exchange(engine, attached, &name, payload, call, deadline, report);
    let envelope = removed_or_cleanup_failed(&mut guard, result, report);
    drop(guard);
    drop(bundle);
    envelope
}

fn removed_or_cleanup_failed(
    guard: &mut ContainerGuard,
    envelope: EnvelopeV2,
    report: &mut OciReport,
) -> EnvelopeV2 {
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
            EnvelopeV2::status(OciStatus::CleanupFailed)
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn exchange(
    engine: &Engine,
    attached: stream::Attached,
    name: &str,
    payload: Vec<u8>,
    call: &OciCall<'_>,
    deadline: Instant,
    report: &mut OciReport,
) -> EnvelopeV2 {
    let started = Instant::now();
    let max_output = call.policy.limits.max_output_bytes;
    let out = attached.exchange(encode_frame(&payload), max_output, deadline);
    report.stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    report.stderr_truncated = out.stderr_truncated;
    report.timings.worker_ms = report.timings.start_ms + millis(started.elapsed());
    if out.timed_out {
        report.limits_hit.push("wall_time".into());
        return EnvelopeV2::status(OciStatus::V1(Status::Timeout));
    }
    if out.overflow {
        report.limits_hit.push("output".into());
        return EnvelopeV2::status(OciStatus::V1(Status::OutputLimit));
    }
    if let Some(error) = out.error {
        report.protocol_error = Some(error);
    }
    let exit = wait_exit(engine, name, deadline);
    report.exit = exit;
    let envelope = match exit {
        None if Instant::now() >= deadline => {
            report.limits_hit.push("wall_time".into());
            return EnvelopeV2::status(OciStatus::V1(Status::Timeout));
        }
        Some(0) => match protocol::decode_response(&out.stdout, max_output) {
            Ok(envelope) => envelope,
            Err(e @ FrameError::Oversized(_)) => {
                report.protocol_error = Some(e.to_string());
                report.limits_hit.push("output".into());
                Envelope::status(Status::OutputLimit)
            }
            Err(e) => {
                report.protocol_error = Some(e.to_string());
                Envelope::status(Status::WorkerFailed)
            }
        },
        other => {
            report.protocol_error.get_or_insert_with(|| {
                other.map_or("exit status unknown".into(), |c| format!("exit {c}"))
            });
            Envelope::status(Status::WorkerFailed)
        }
    };
    if envelope.status == Status::WorkerFailed && oom_killed(engine, name, report) {
        report.limits_hit.push("memory".into());
        return EnvelopeV2::status(OciStatus::ResourceLimit);
    }
    EnvelopeV2::from_worker(envelope)
}

fn transport_failure(report: &mut OciReport, step: &str, e: HttpError) -> EnvelopeV2 {
    report.detail = Some(format!("{step}: {e}"));
    if matches!(e, HttpError::Deadline) {
        report.limits_hit.push("wall_time".into());
        EnvelopeV2::status(OciStatus::V1(Status::Timeout))
    } else {
        EnvelopeV2::status(OciStatus::V1(Status::WorkerFailed))
    }
}

/// `POST /containers/{id}/wait?condition=not-running` → exit code, within the deadline.
fn wait_exit(engine: &Engine, name: &str, deadline: Instant) -> Option<i64> {
    let path = format!("/containers/{name}/wait?condition=not-running");
    let resp = engine.call("POST", &path, Body::None, deadline).ok()?;
    let doc: Json = serde_json::from_slice(&resp.body).ok()?;
    if !resp.is_success() {
        return None;
    }
    doc.get("StatusCode").and_then(Json::as_i64)
}

/// Poll the container state for up to [`OOM_POLL`]: terminal with `OOMKilled` → true. Exit
/// codes 0 and 137 keep polling (the flag can lag the exit), other terminal codes stop.
fn oom_killed(engine: &Engine, name: &str, report: &mut OciReport) -> bool {
    let until = Instant::now() + OOM_POLL;
    loop {
        let state = engine
            .container_inspect(name, Duration::from_millis(250))
            .ok()
            .flatten()
            .and_then(|doc| doc.get("State").cloned());
        if let Some(state) = state {
            let running = state.get("Running").and_then(Json::as_bool) == Some(true);
            let status = state.get("Status").and_then(Json::as_str).unwrap_or("");
            let terminal = !running && matches!(status, "exited" | "dead");
            if terminal && state.get("OOMKilled").and_then(Json::as_bool) == Some(true) {
                report.oom_killed = true;
                return true;
            }
            let code = state.get("ExitCode").and_then(Json::as_i64);
            if terminal && !matches!(code, Some(0 | 137)) {
                return false;
            }
        }
        if Instant::now() + OOM_TICK > until {
            return false;
        }
        std::thread::sleep(OOM_TICK);
    }
}
