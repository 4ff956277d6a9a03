//! One audit record per interpreter run, through the same writer (`apizr.audit/v1`,
//! [`AuditSink`]) as governed calls, so one trail holds both.
//!
//! Identities and outcomes only, never the code or its output: `capability_id` is
//! `interpreter.<tier>`, `executable_digest` the sha256 of the code, `policy_digest` the
//! sha256 of the canonical policy (`none` without one). `status`: `success`, `failed` (it ran,
//! exit ≠ 0), `timeout`, `resource_limit` (an OOM kill), `policy_refused`, or `not_run`
//! (import check, set-up or package failure). `exit` is `exit N` or `signal N`.

use apizr_ir::Digest;

use super::policy::CapabilityPolicy;
use super::result::ExecutionResult;
use crate::audit::{AUDIT_SCHEMA, AuditRecord};

/// The audit record of `result`, a run of `code` under `policy`.
pub fn record(
    code: &str,
    policy: Option<&CapabilityPolicy>,
    result: &ExecutionResult,
) -> AuditRecord {
    let refused: Vec<&'static str> = result
        .enforcement
        .as_ref()
        .map(|e| e.refused.iter().map(|c| c.name()).collect())
        .unwrap_or_default();
    let status = if !refused.is_empty() {
        "policy_refused"
    } else if result.timed_out {
        "timeout"
    } else if result.oom_killed {
        "resource_limit"
    } else if result.success {
        "success"
    } else if result.skipped {
        "not_run"
    } else {
        "failed"
    };
    let mut limits_hit = Vec::new();
    if result.timed_out {
        limits_hit.push("timeout".to_string());
    }
    if result.oom_killed {
        limits_hit.push("memory".to_string());
    }
    if result.stdout_truncated || result.stderr_truncated {
        limits_hit.push("output".to_string());
    }
    let exit = match (result.exit_signal, result.exit_code) {
        (Some(signal), _) => Some(format!("signal {signal}")),
        (None, Some(code)) => Some(format!("exit {code}")),
        (None, None) => None,
    };
    AuditRecord {
        schema_version: AUDIT_SCHEMA,
        capability_id: format!("interpreter.{}", result.execution_mode.name()),
        executable_digest: Digest::sha256(code.as_bytes()).prefixed(),
        policy_digest: policy
            .and_then(|p| apizr_ir::json::canonical_bytes(p).ok())
            .map_or_else(|| "none".into(), |b| Digest::sha256(&b).prefixed()),
        status,
        duration_ms: result.duration_ms,
        limits_hit,
        refused,
        controls: Vec::new(),
        status_source: "supervisor",
        worker_status: None,
        exit,
        process: None,
    }
}
