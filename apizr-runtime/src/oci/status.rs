//! The v2 statuses (contract 6.7): the ten v1 statuses plus four that only the container
//! backend can produce, and the `apizr.execution-result/v2` envelope.

use std::fmt;

use apizr_ir::json::{CanonicalError, Value};

use crate::envelope::Envelope;
use crate::status::Status;

pub const RESULT_SCHEMA_V2: &str = "apizr.execution-result/v2";

/// A status of the OCI backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OciStatus {
    /// Anything the worker or the shared checks decide.
    V1(Status),
    /// No engine, an unsupported engine, or missing host controls.
    BackendUnavailable,
    /// Image absent, ID/platform mismatch, missing label, image volumes.
    RuntimeImageUnavailable,
    /// The worker failed and the engine reports `OOMKilled`.
    ResourceLimit,
    /// Removal of the container could not be confirmed (wins over the call result).
    CleanupFailed,
}

impl OciStatus {
    pub fn wire_name(self) -> &'static str {
        match self {
            OciStatus::V1(s) => s.wire_name(),
            OciStatus::BackendUnavailable => "backend_unavailable",
            OciStatus::RuntimeImageUnavailable => "runtime_image_unavailable",
            OciStatus::ResourceLimit => "resource_limit",
            OciStatus::CleanupFailed => "cleanup_failed",
        }
    }
}

impl fmt::Display for OciStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.wire_name())
    }
}

/// `{"schema_version":"apizr.execution-result/v2","status":…,"value":…}`.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvelopeV2 {
    pub status: OciStatus,
    /// Null unless `status` is success.
    pub value: Value,
}

impl EnvelopeV2 {
    pub fn status(status: OciStatus) -> Self {
        EnvelopeV2 {
            status,
            value: Value::Null,
        }
    }

    /// Re-label a worker's v1 envelope.
    pub fn from_worker(envelope: Envelope) -> Self {
        EnvelopeV2 {
            status: OciStatus::V1(envelope.status),
            value: envelope.value,
        }
    }

    pub fn is_success(&self) -> bool {
        self.status == OciStatus::V1(Status::Success)
    }

    pub fn to_value(&self) -> Value {
        crate::envelope::envelope_value(RESULT_SCHEMA_V2, self.status.wire_name(), &self.value)
    }

    pub fn canonical_bytes(&self) -> Result<Vec<u8>, CanonicalError> {
        self.to_value().canonical_bytes()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn v2_envelopes() {
        assert_eq!(
            EnvelopeV2::status(OciStatus::ResourceLimit)
                .canonical_bytes()
                .unwrap(),
            b"{\"schema_version\":\"apizr.execution-result/v2\",\"status\":\"resource_limit\",\"value\":null}\n"
        );
        let ok = EnvelopeV2::from_worker(Envelope::success(Value::Int(3)));
        assert!(ok.is_success());
        assert_eq!(ok.status.wire_name(), "success");
        let names: std::collections::BTreeSet<_> = [
            OciStatus::BackendUnavailable,
            OciStatus::RuntimeImageUnavailable,
            OciStatus::ResourceLimit,
            OciStatus::CleanupFailed,
        ]
        .iter()
        .map(|s| s.wire_name())
        .chain(Status::ALL.iter().map(|s| s.wire_name()))
        .collect();
        assert_eq!(names.len(), 14);
    }
}
