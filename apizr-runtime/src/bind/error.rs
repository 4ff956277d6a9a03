//! [`CallError`]: a bound call that did not succeed.

use std::fmt;

use crate::status::Status;

/// Why a call of a `#[python]` binding failed. [`CallError::status`] is the status of the
/// result envelope the same call gets from `apizr execute` (`invalid_input`, `timeout`,
/// `policy_refused`, `source_mismatch`, …; v2 calls also `backend_unavailable`,
/// `runtime_image_unavailable`, `resource_limit`, `cleanup_failed`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError {
    status: Status,
    detail: String,
}

impl CallError {
    pub(crate) fn new(status: Status, detail: impl Into<String>) -> Self {
        CallError {
            status,
            detail: detail.into(),
        }
    }

    /// The error of an outcome that is not a success: its status, and as detail the
    /// argument error, else the limits hit, else the last line of the worker's stderr
    /// (a traceback's exception line).
    pub(crate) fn from_outcome(outcome: &crate::call::Outcome) -> Self {
        let detail = match (
            &outcome.detail,
            outcome.limits_hit(),
            outcome.worker_stderr(),
        ) {
            (Some(detail), _, _) => detail.clone(),
            (None, limits, _) if !limits.is_empty() => format!("limits hit: {}", limits.join(", ")),
            (None, _, Some((stderr, _))) => stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_string(),
            (None, _, None) => String::new(),
        };
        CallError::new(outcome.status, detail)
    }

    /// The envelope status (its wire name).
    pub fn status(&self) -> &'static str {
        self.status.wire_name()
    }

    /// What went wrong, for people (never argument values).
    pub fn detail(&self) -> &str {
        &self.detail
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.detail.is_empty() {
            f.write_str(self.status())
        } else {
            write!(f, "{}: {}", self.status(), self.detail)
        }
    }
}

impl std::error::Error for CallError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names_the_envelope_status() {
        let error = CallError::new(Status::Timeout, "wall time 100 ms exceeded");
        assert_eq!(error.status(), "timeout");
        assert_eq!(error.to_string(), "timeout: wall time 100 ms exceeded");
        let error = CallError::new(Status::BackendUnavailable, "");
        assert_eq!(error.to_string(), "backend_unavailable");
    }
}
