//! One call in one fresh container (contract 7.3 steps 3–7), and how the outcome is classified.
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

use std::path::Path;
use std::time::{Duration, Instant};

use super::attest;
use super::bundle::{Bundle, random_hex};
use super::container::{self, ContainerGuard, ContainerOptions};
use super::engine::EngineError;
use super::engine_kind::{EngineCapabilities, EngineKind};
use super::http::{Body, HttpError};
use super::oom;
use super::stream;
use super::verify::{self, Expected, Refusal};
use super::{Connected, OciCall, OciReport};
use crate::envelope::Envelope;
use crate::protocol::{self, FrameError, MAX_REQUEST_BYTES, encode_frame, encode_request};
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
    match launch(connected, call, temp_root, deadline, report) {
        Ok(launched) => finish(connected, launched, payload, call, deadline, report),
        Err(envelope) => envelope,
    }
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
    pub bundle: Bundle,
}

/// Bundle → create → verify → attach → start. Every failure removes what was created.
pub(super) fn launch(
    connected: &Connected,
    call: &OciCall<'_>,
    temp_root: &Path,
    deadline: Instant,
    report: &mut OciReport,
) -> Result<Launched, Envelope> {
    let started = Instant::now();
    let (engine, caps) = &connected.pair;
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
    let env = container::allowed_env(call.policy);
    let body = container::create_body(
        &call.image.image,
        call.policy,
        bundle.path(),
        &env,
        &connected.options,
    );
    let platform = call.image.platform.as_str();
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

/// Exchange the request, classify the outcome, and always remove the container.
pub(super) fn finish(
    connected: &Connected,
    launched: Launched,
    payload: Vec<u8>,
    call: &OciCall<'_>,
    deadline: Instant,
    report: &mut OciReport,
) -> Envelope {
    let Launched {
        mut guard,
        id,
        attached,
        bundle,
    } = launched;
    let container = Container {
        name: guard.name().to_string(),
        id,
    };
    let result = exchange(
        connected, attached, &container, payload, call, deadline, report,
    );
    let envelope = removed_or_cleanup_failed(&mut guard, result, report);
    drop(guard);
    drop(bundle);
    envelope
}

fn removed_or_cleanup_failed(
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

/// The started container's name and full ID.
struct Container {
    name: String,
    id: String,
}

fn exchange(
    connected: &Connected,
    attached: stream::Attached,
    container: &Container,
    payload: Vec<u8>,
    call: &OciCall<'_>,
    deadline: Instant,
    report: &mut OciReport,
) -> Envelope {
    let (engine, caps) = &connected.pair;
    let name = container.name.as_str();
    let started = Instant::now();
    let max_output = call.policy.limits.max_output_bytes;
    let mut out = attached.exchange(encode_frame(&payload), max_output, deadline);
    let attestation = attest::take(&mut out.stderr);
    report.attestation = attestation.clone();
    report.stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    report.stderr_truncated = out.stderr_truncated;
    report.timings.worker_ms = report.timings.start_ms + millis(started.elapsed());
    if let Some(failed) = attestation.as_ref().and_then(|a| a.failed.first()) {
        // The worker exited before reading the request: refused, nothing ran.
        return refuse_inside(report, failed, attestation.as_ref());
    }
    if out.timed_out {
        report.limits_hit.push("wall_time".into());
        return Envelope::status(Status::Timeout);
    }
    if out.overflow {
        report.limits_hit.push("output".into());
        return Envelope::status(Status::OutputLimit);
    }
    if attestation.is_none() {
        // Whatever answered did not run our checks first.
        return refuse_inside(report, "attestation", None);
    }
    if let Some(error) = out.error {
        report.protocol_error = Some(error);
    }
    let exit = engine.wait_exit(name, deadline);
    report.exit = exit;
    let envelope = match exit {
        None if Instant::now() >= deadline => {
            report.limits_hit.push("wall_time".into());
            return Envelope::status(Status::Timeout);
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
    // The kernel's record first (definitive, and no polling), then the engine's flag where
    // the engine sets one.
    let oom = envelope.status == Status::WorkerFailed
        && ((exit == Some(oom::SIGKILL_EXIT) && oom::kernel_logged_oom(&container.id))
            || (caps.engine.reports_oom(&caps.cgroup_version)
                && oom::engine_says_oom(engine, name)));
    if oom {
        report.oom_killed = true;
        report.limits_hit.push("memory".into());
        return Envelope::status(Status::ResourceLimit);
    }
    envelope
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

/// The container's own view contradicts the request: `backend_unavailable`, control named.
fn refuse_inside(
    report: &mut OciReport,
    control: &str,
    seen: Option<&attest::Attestation>,
) -> Envelope {
    let refusal = Refusal {
        control: verify::control_name(control),
        expected: "as requested (see verified)".into(),
        found: seen.map_or_else(
            || "no attestation line before the worker".into(),
            |a| format!("sandbox {} kernel {}", a.sandbox, a.kernel),
        ),
        checked: "inside",
    };
    report.detail = Some(refusal.to_string());
    report.refused = Some(refusal);
    Envelope::status(Status::BackendUnavailable)
}
