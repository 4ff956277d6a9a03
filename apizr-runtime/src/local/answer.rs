//! How a v1 call's answer is decided and recorded: the worker's claim against what only the
//! supervisor may decide, the audit record, and the log line of an abnormal end.

use std::sync::Mutex;

use crate::audit::{AUDIT_SCHEMA, AuditRecord, ProcessRecord};
use crate::envelope::Envelope;
use crate::local::after::Reaped;
use crate::local::enforcement::EnforcementPlan;
use crate::local::report::CallReport;
use crate::request::CallRequest;
use crate::status::Status;

/// The one-shot job out of its shared slot (whoever takes it first runs it).
pub(crate) fn take<T>(slot: &Mutex<Option<T>>) -> Option<T> {
    slot.lock().unwrap_or_else(|p| p.into_inner()).take()
}

pub(crate) fn audit_record(
    call: &CallRequest,
    envelope: &Envelope,
    report: &CallReport,
) -> AuditRecord {
    AuditRecord {
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
        process: process_record(report),
    }
}

/// Only a runtime with pre-started workers (a server) says how it obtained the worker: its
/// calls have `preimported` or a `cold_reason`.
fn process_record(report: &CallReport) -> Option<ProcessRecord> {
    let pooled = report.preimported.is_some() || report.cold_reason.is_some();
    match report.process {
        Some(source) if pooled => Some(ProcessRecord {
            source,
            preimported: report.preimported,
            cold_reason: report.cold_reason,
        }),
        _ => None,
    }
}

/// The frame's envelope, unless it claims a status only the supervisor decides.
pub(crate) fn decide(
    envelope: Envelope,
    from_worker: bool,
    plan: &EnforcementPlan,
    report: &mut CallReport,
) -> Envelope {
    if !from_worker {
        return envelope;
    }
    report.worker_status = Some(envelope.status.wire_name());
    if worker_may_report(envelope.status, plan) {
        report.status_source = "worker";
        envelope
    } else {
        report.protocol_error = Some(format!(
            "the worker claimed `{}`, a status only the supervisor decides",
            envelope.status
        ));
        Envelope::status(Status::WorkerFailed)
    }
}

/// An anomaly after an answer, or a failed clean-up, goes to the server's log.
pub(crate) fn log_after_answer(reaped: &Reaped, who: &str) {
    if let Some(anomaly) = &reaped.anomaly {
        eprintln!("apizr: {who}: the worker {anomaly} (the answer stands)");
    }
    for failure in &reaped.cleanup {
        eprintln!("apizr: {who}: clean-up after the answer: {failure}");
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
