//! How a call ended: the fourteen execution statuses with their exact wire names.
//!
//! The ten v1 statuses are what the worker and the local backend produce
//! (`apizr.execution-result/v1`); the container backend adds four that only it can produce
//! (`apizr.execution-result/v2` carries all fourteen). One enum for both, because "a call
//! ended with status X" means the same whatever ran it; the envelope version decides which
//! subset may appear ([`Status::is_v1`]).
//!
//! The wire name is what appears in the result envelope and therefore in every comparison with
//! the reference; the enum exists so that no backend can invent a status that the wire formats
//! do not have.

use std::fmt;

/// An execution status. An envelope's `value` is non-null only for [`Status::Success`].
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
    /// v2 only: no engine, an unsupported engine, or missing host controls.
    BackendUnavailable,
    /// v2 only: image absent, ID/platform mismatch, missing label, image volumes.
    RuntimeImageUnavailable,
    /// v2 only: the worker failed and the engine reports `OOMKilled`.
    ResourceLimit,
    /// v2 only: removal of the container could not be confirmed (wins over the call result).
    CleanupFailed,
}

impl Status {
    /// The v1 statuses, in the reference's order.
    pub const V1: [Status; 10] = [
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

    /// Every status: the v1 ones, then the four of the container backend.
    pub const ALL: [Status; 14] = [
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
        Status::BackendUnavailable,
        Status::RuntimeImageUnavailable,
        Status::ResourceLimit,
        Status::CleanupFailed,
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
            Status::BackendUnavailable => "backend_unavailable",
            Status::RuntimeImageUnavailable => "runtime_image_unavailable",
            Status::ResourceLimit => "resource_limit",
            Status::CleanupFailed => "cleanup_failed",
        }
    }

    /// Whether a v1 envelope (and the worker) can carry this status.
    pub fn is_v1(self) -> bool {
        Status::V1.contains(&self)
    }

    /// Parse any wire literal.
    pub fn from_wire(name: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.wire_name() == name)
    }

    /// Parse a v1 wire literal (None for the container-only statuses): what a worker or a v1
    /// envelope may say.
    pub fn from_wire_v1(name: &str) -> Option<Status> {
        Status::from_wire(name).filter(|s| s.is_v1())
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
        assert_eq!(names.len(), 14);
        for s in Status::ALL {
            assert_eq!(Status::from_wire(s.wire_name()), Some(s));
        }
        assert_eq!(Status::V1.iter().filter(|s| s.is_v1()).count(), 10);
        assert_eq!(Status::from_wire_v1("resource_limit"), None);
        assert_eq!(
            Status::from_wire("resource_limit"),
            Some(Status::ResourceLimit)
        );
        assert_eq!(Status::from_wire("resourcelimit"), None);
        assert_eq!(Status::Success.exit_code(), 0);
        assert_eq!(Status::Timeout.exit_code(), 1);
    }
}
