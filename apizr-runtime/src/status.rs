//! The ten v1 execution statuses (contract 6.7) with their exact wire names.
//!
//! The wire name is what appears in the result envelope and therefore in every comparison with
//! the reference; the enum exists so that the supervisor and the worker mapping cannot invent a
//! status that the contract does not have.

use std::fmt;

/// A v1 execution status. `value` is non-null only for [`Status::Success`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    Success,
    InvalidInput,
    Timeout,
    WorkerFailed,
    BindingFailed,
    PolicyRefused,
    ResultInvalid,
    ExecutionFailed,
    OutputLimit,
    SourceMismatch,
}

impl Status {
    /// Every v1 status, in contract order.
    pub const ALL: [Status; 10] = [
        Status::Success,
        Status::InvalidInput,
        Status::Timeout,
        Status::WorkerFailed,
        Status::BindingFailed,
        Status::PolicyRefused,
        Status::ResultInvalid,
        Status::ExecutionFailed,
        Status::OutputLimit,
        Status::SourceMismatch,
    ];

    /// The exact wire literal.
    pub fn wire_name(self) -> &'static str {
        match self {
            Status::Success => "success",
            Status::InvalidInput => "invalid_input",
            Status::Timeout => "timeout",
            Status::WorkerFailed => "worker_failed",
            Status::BindingFailed => "binding_failed",
            Status::PolicyRefused => "policy_refused",
            Status::ResultInvalid => "result_invalid",
            Status::ExecutionFailed => "execution_failed",
            Status::OutputLimit => "output_limit",
            Status::SourceMismatch => "source_mismatch",
        }
    }

    /// Parse a wire literal (None for anything that is not a v1 status).
    pub fn from_wire(name: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.wire_name() == name)
    }

    /// `apizr execute` exits 0 only for success.
    pub fn exit_code(self) -> i32 {
        if self == Status::Success { 0 } else { 1 }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.wire_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip_and_are_distinct() {
        let names: std::collections::BTreeSet<_> =
            Status::ALL.iter().map(|s| s.wire_name()).collect();
        assert_eq!(names.len(), 10);
        for s in Status::ALL {
            assert_eq!(Status::from_wire(s.wire_name()), Some(s));
        }
        assert_eq!(Status::from_wire("resource_limit"), None);
        assert_eq!(Status::Success.exit_code(), 0);
        assert_eq!(Status::Timeout.exit_code(), 1);
    }
}
