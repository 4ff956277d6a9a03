//! The report of one local call: enforcement, who decided the status, timings, and how the
//! worker process was obtained.

use std::time::Duration;

use serde::Serialize;

use crate::local::enforcement::ControlReport;
use crate::local::prestart::{ColdReason, ProcessSource};

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
    /// How the worker process was obtained (`cold` or `prestarted`; `null`: none ran).
    pub process: Option<ProcessSource>,
    /// A pre-started worker: whether it had imported the module before the call (pre-import,
    /// only for a module whose readiness shows no import-time effects).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preimported: Option<bool>,
    /// Why the call went cold although the runtime keeps pre-started workers; for a
    /// pre-started worker that did not import the module ahead, why not (`import_effects`,
    /// `import_unknown`, `import_failed`, `import_timed_out`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cold_reason: Option<ColdReason>,
    /// What was abnormal after the call was answered on its frame (the process had to be
    /// killed, ended non-zero, or wrote after its frame). It never changes the status. Known
    /// only when the call's end was awaited before `execute` returned (not in servers, where
    /// it is counted in `/metrics` and logged instead).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_answer: Option<String>,
    /// The whole call; `total_ms` in reports.
    #[serde(rename = "total_ms", serialize_with = "whole_millis")]
    pub total: Duration,
    /// Request hand-over to response; `worker_ms` in reports.
    #[serde(rename = "worker_ms", serialize_with = "whole_millis")]
    pub worker: Duration,
}

/// Durations in reports are whole milliseconds (like the OCI report's `*_ms`), not serde's
/// `{"secs", "nanos"}` form of a `Duration`.
fn whole_millis<S: serde::Serializer>(duration: &Duration, out: S) -> Result<S::Ok, S::Error> {
    out.serialize_u64(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}
