//! A started container answers one request: the exchange over the attached stream, the
//! classification of its outcome (which status wins, see `run`), and what is left to remove.
//!
//! Two ways to end the read ([`Until`]):
//!
//! * **At the end of the stream** (fresh containers): the output is read until the container
//!   closes it, and the exit code is read before anything is decided.
//! * **At the first whole frame** (pooled containers): a whole, valid, canonical response frame
//!   is the answer as soon as it has arrived. The container's teardown (the worker's exit, the
//!   engine closing the stream and recording the exit) takes 40–100 ms here, which is more than
//!   the call itself. The rest is checked afterwards by [`Leftover::check_after`]: a non-zero
//!   exit, or output after the frame, is an *anomaly*, which the pool counts and reports. The
//!   worker writes its frame and calls `_exit(0)` at once, so nothing can follow the frame
//!   unless user code forged a frame. User code can do that in a fresh container too (then
//!   `os._exit(0)`), so answering early grants it nothing new. Anything that is not a whole,
//!   valid frame (a timeout, a crash, an OOM kill, garbage) is read to the end and classified
//!   exactly like a fresh call.

use std::time::{Duration, Instant};

use super::attest::{self, Attestation};
use super::bundle::Bundle;
use super::container::ContainerGuard;
use super::engine::PendingWait;
use super::oom;
use super::run::{Launched, removed_or_cleanup_failed};
use super::stream::{self, Rest, Streamed, Until};
use super::verify::{self, Refusal};
use super::{Connected, OciReport};
use crate::envelope::Envelope;
use crate::protocol::{self, FrameError, encode_frame};
use crate::status::Status;

/// How long the check after an early answer waits for the stream's end and the exit code.
const AFTER_ANSWER_WAIT: Duration = Duration::from_secs(10);

/// Exchange the request and classify the outcome. The container still exists (stopped, or
/// about to stop after an early answer): the [`Leftover`] removes it and its bundle.
pub(super) fn answer(
    connected: &Connected,
    launched: Launched,
    payload: Vec<u8>,
    max_output: u64,
    deadline: Instant,
    until: Until,
    report: &mut OciReport,
) -> (Envelope, Leftover) {
    let Launched {
        guard,
        id,
        attached,
        attestation,
        bundle,
    } = launched;
    let container = Container {
        name: guard.name().to_string(),
        id,
    };
    let exchange = Exchange {
        connected,
        container: &container,
        max_output,
        deadline,
    };
    let (envelope, after) = exchange.run(attached, attestation, payload, until, report);
    let leftover = Leftover {
        guard,
        after,
        _bundle: bundle,
    };
    (envelope, leftover)
}

impl Launched {
    /// The container and bundle, to be removed (the attach stream is closed).
    pub(super) fn into_leftover(self) -> Leftover {
        Leftover {
            guard: self.guard,
            after: None,
            _bundle: self.bundle,
        }
    }
}

/// A used (or refused) container and its bundle, to be removed. Fields drop in order: the
/// container before its bundle directory; dropping removes both.
pub(super) struct Leftover {
    guard: ContainerGuard,
    /// The rest of an early-answered exchange, still to be checked.
    after: Option<After>,
    /// Held only to be removed (on drop) after the container.
    _bundle: Bundle,
}

/// What an early answer left unread: the rest of the stream and the exit code.
struct After {
    rest: Rest,
    wait: Option<PendingWait>,
}

impl Leftover {
    /// Remove now. A removal that cannot be confirmed turns the answer into `cleanup_failed`.
    pub fn remove(mut self, envelope: Envelope, report: &mut OciReport) -> Envelope {
        removed_or_cleanup_failed(&mut self.guard, envelope, report)
    }

    /// Remove now and say whether the removal could be confirmed (pooled containers, after
    /// the answer).
    pub fn remove_quietly(mut self) -> Result<(), String> {
        self.guard.remove()
    }

    pub fn name(&self) -> &str {
        self.guard.name()
    }

    /// After an early answer: read the rest of the stream and the exit code. `Some` describes
    /// what a fresh call would have refused the answer for (output after the frame, a
    /// non-zero or unknown exit).
    pub fn check_after(&mut self) -> Option<String> {
        let After { rest, wait } = self.after.take()?;
        let deadline = Instant::now() + AFTER_ANSWER_WAIT;
        let mut more = Streamed::default();
        rest.read_to_end(&mut more, deadline);
        let exit = wait.and_then(|w| w.exit_code(deadline));
        let mut odd = Vec::new();
        if !more.stdout.is_empty() {
            odd.push(format!(
                "{} bytes on stdout after the frame",
                more.stdout.len()
            ));
        }
        match exit {
            Some(0) => {}
            Some(code) => odd.push(format!("exit {code}")),
            None => odd.push("exit status unknown".into()),
        }
        (!odd.is_empty()).then(|| odd.join(", "))
    }
}

/// The started container's name and full ID.
struct Container {
    name: String,
    id: String,
}

/// One exchange's fixed parts.
struct Exchange<'a> {
    connected: &'a Connected,
    container: &'a Container,
    max_output: u64,
    deadline: Instant,
}

impl Exchange<'_> {
    fn run(
        &self,
        attached: stream::Attached,
        early_attestation: Option<Attestation>,
        payload: Vec<u8>,
        until: Until,
        report: &mut OciReport,
    ) -> (Envelope, Option<After>) {
        let engine = &self.connected.pair.0;
        let name = self.container.name.as_str();
        let started = Instant::now();
        // Sent before the request, so the engine answers as soon as it records the exit.
        let wait = engine.begin_wait(name, self.deadline).ok();
        let frame = encode_frame(&payload);
        let (mut out, rest) = attached.exchange_until(frame, self.max_output, self.deadline, until);
        report.timings.exchange_ms = millis(started.elapsed());
        let attestation = early_attestation.or_else(|| attest::take(&mut out.stderr));
        if let Some(rest) = rest {
            let answered = attestation
                .as_ref()
                .is_some_and(Attestation::ok)
                .then(|| protocol::decode_response(&out.stdout, self.max_output).ok())
                .flatten();
            match answered {
                Some(envelope) => {
                    report.attestation = attestation;
                    report.stderr = String::from_utf8_lossy(&out.stderr).into_owned();
                    report.stderr_truncated = out.stderr_truncated;
                    report.timings.worker_ms = millis(started.elapsed());
                    report.checked_after_answer = true;
                    return (envelope, Some(After { rest, wait }));
                }
                // Not an answer: read everything, as for a fresh container.
                None => rest.read_to_end(&mut out, self.deadline),
            }
        }
        let envelope = self.classify(out, attestation, wait, started, report);
        (envelope, None)
    }

    fn classify(
        &self,
        out: Streamed,
        attestation: Option<Attestation>,
        wait: Option<PendingWait>,
        started: Instant,
        report: &mut OciReport,
    ) -> Envelope {
        let (engine, caps) = &self.connected.pair;
        let name = self.container.name.as_str();
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
        let exit = match wait {
            Some(wait) => wait.exit_code(self.deadline),
            None => engine.wait_exit(name, self.deadline),
        };
        report.timings.exit_ms = millis(started.elapsed());
        report.exit = exit;
        let envelope = match exit {
            None if Instant::now() >= self.deadline => {
                report.limits_hit.push("wall_time".into());
                return Envelope::status(Status::Timeout);
            }
            Some(0) => match protocol::decode_response(&out.stdout, self.max_output) {
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
            && ((exit == Some(oom::SIGKILL_EXIT) && oom::kernel_logged_oom(&self.container.id))
                || (caps.engine.reports_oom(&caps.cgroup_version)
                    && oom::engine_says_oom(engine, name)));
        if oom {
            report.oom_killed = true;
            report.limits_hit.push("memory".into());
            return Envelope::status(Status::ResourceLimit);
        }
        envelope
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The container's own view contradicts the request: `backend_unavailable`, control named.
fn refuse_inside(report: &mut OciReport, control: &str, seen: Option<&Attestation>) -> Envelope {
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
