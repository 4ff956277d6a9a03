//! The result envelope `{"schema_version":…,"status":…,"value":…}` in its two versions:
//! `apizr.execution-result/v1` (the worker's frames, the local backend) and
//! `apizr.execution-result/v2` (the container backend: the v1 statuses plus four).
//!
//! One type for both: the envelope is a status and a value, and the version is chosen when it
//! is encoded ([`ResultSchema`]). A v1 envelope can only carry v1 statuses ([`Status::is_v1`]).
//!
//! The envelope is encoded with the canonical encoder of `apizr_ir::json` (sorted keys, Python
//! float repr, one trailing newline), which is the encoding the worker frames carry and the one
//! the `max_output_bytes` limit is measured on. The CLI's pydantic-style stdout form is a
//! different serializer and lives with the CLI.

use std::collections::BTreeMap;

use apizr_ir::json::{CanonicalError, Value};

use crate::status::Status;

/// `schema_version` of every v1 envelope.
pub const RESULT_SCHEMA_V1: &str = "apizr.execution-result/v1";
/// `schema_version` of every v2 envelope.
pub const RESULT_SCHEMA_V2: &str = "apizr.execution-result/v2";

/// The envelope version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResultSchema {
    /// `apizr.execution-result/v1`: the ten v1 statuses.
    V1,
    /// `apizr.execution-result/v2`: all fourteen statuses.
    V2,
}

impl ResultSchema {
    /// The `schema_version` literal.
    pub fn wire_name(self) -> &'static str {
        match self {
            ResultSchema::V1 => RESULT_SCHEMA_V1,
            ResultSchema::V2 => RESULT_SCHEMA_V2,
        }
    }
}

/// A result envelope. Invariant kept by the constructors: `value` is `Null` unless success.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    pub status: Status,
    pub value: Value,
}

/// Why a decoded document is not a valid v1 envelope.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    #[error("envelope is not an object with exactly schema_version, status and value")]
    Shape,
    #[error("unknown schema_version")]
    Schema,
    #[error("unknown status")]
    Status,
    #[error("non-success envelope carries a non-null value")]
    ValueOnFailure,
}

impl Envelope {
    /// A successful call returning `value`.
    pub fn success(value: Value) -> Self {
        Envelope {
            status: Status::Success,
            value,
        }
    }

    /// Any status with a null value (for `Success` this means the function returned `None`).
    pub fn status(status: Status) -> Self {
        Envelope {
            status,
            value: Value::Null,
        }
    }

    pub fn is_success(&self) -> bool {
        self.status == Status::Success
    }

    /// The v1 envelope as a JSON value (what a worker frame carries).
    pub fn to_value(&self) -> Value {
        self.to_value_in(ResultSchema::V1)
    }

    /// The envelope in the given version. (The caller picks the version its backend speaks; a
    /// v1 envelope with a container-only status is not produced by any backend.)
    pub fn to_value_in(&self, schema: ResultSchema) -> Value {
        let mut map = BTreeMap::new();
        map.insert(
            "schema_version".to_string(),
            Value::Str(schema.wire_name().into()),
        );
        map.insert(
            "status".to_string(),
            Value::Str(self.status.wire_name().into()),
        );
        map.insert("value".to_string(), self.value.clone());
        Value::Object(map)
    }

    /// Canonical v1 bytes (document + `\n`): what a worker frame carries and what
    /// `max_output_bytes` is measured on.
    pub fn canonical_bytes(&self) -> Result<Vec<u8>, CanonicalError> {
        self.to_value().canonical_bytes()
    }

    /// Canonical bytes in the given version.
    pub fn canonical_bytes_in(&self, schema: ResultSchema) -> Result<Vec<u8>, CanonicalError> {
        self.to_value_in(schema).canonical_bytes()
    }

    /// Validate a decoded envelope document.
    pub fn from_value(doc: Value) -> Result<Self, EnvelopeError> {
        let Value::Object(mut map) = doc else {
            return Err(EnvelopeError::Shape);
        };
        if map.len() != 3 {
            return Err(EnvelopeError::Shape);
        }
        let schema = map.remove("schema_version").ok_or(EnvelopeError::Shape)?;
        let status = map.remove("status").ok_or(EnvelopeError::Shape)?;
        let value = map.remove("value").ok_or(EnvelopeError::Shape)?;
        if schema != Value::Str(RESULT_SCHEMA_V1.into()) {
            return Err(EnvelopeError::Schema);
        }
        let Value::Str(name) = status else {
            return Err(EnvelopeError::Status);
        };
        let status = Status::from_wire_v1(&name).ok_or(EnvelopeError::Status)?;
        if status != Status::Success && value != Value::Null {
            return Err(EnvelopeError::ValueOnFailure);
        }
        Ok(Envelope { status, value })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_bytes_and_the_77_byte_overhead() {
        let env = Envelope::success(Value::Str("x".repeat(51)));
        let bytes = env.canonical_bytes().unwrap();
        assert_eq!(
            bytes.len(),
            128,
            "77 + 51 bytes, as observed on the reference"
        );
        assert!(bytes.starts_with(
            b"{\"schema_version\":\"apizr.execution-result/v1\",\"status\":\"success\",\"value\":\""
        ));
        assert_eq!(
            Envelope::status(Status::Timeout).canonical_bytes().unwrap(),
            b"{\"schema_version\":\"apizr.execution-result/v1\",\"status\":\"timeout\",\"value\":null}\n"
        );
    }

    #[test]
    fn decoding_rejects_values_on_failure_and_unknown_statuses() {
        let ok = Envelope::success(Value::Float(36.0));
        assert_eq!(Envelope::from_value(ok.to_value()), Ok(ok));
        let mut bad = Envelope::status(Status::ExecutionFailed).to_value();
        if let Value::Object(m) = &mut bad {
            m.insert("value".into(), Value::Int(1));
        }
        assert_eq!(
            Envelope::from_value(bad),
            Err(EnvelopeError::ValueOnFailure)
        );
        let mut unknown = Envelope::status(Status::Timeout).to_value();
        if let Value::Object(m) = &mut unknown {
            m.insert("status".into(), Value::Str("resource_limit".into()));
        }
        assert_eq!(Envelope::from_value(unknown), Err(EnvelopeError::Status));
    }

    #[test]
    fn v2_envelopes_carry_every_status() {
        assert_eq!(
            Envelope::status(Status::ResourceLimit)
                .canonical_bytes_in(ResultSchema::V2)
                .unwrap(),
            b"{\"schema_version\":\"apizr.execution-result/v2\",\"status\":\"resource_limit\",\"value\":null}\n"
        );
        let ok = Envelope::success(Value::Int(3));
        assert!(ok.is_success());
        assert_eq!(
            ok.canonical_bytes_in(ResultSchema::V2).unwrap(),
            b"{\"schema_version\":\"apizr.execution-result/v2\",\"status\":\"success\",\"value\":3}\n"
        );
    }
}
