//! [`Outcome`]: how one call ended, whatever backend ran it, and its mapping to the result
//! envelopes.
//!
//! Two channels, as in every wire format of the reference: the function's outcome is data (a
//! [`Status`] and a value), never an `Err`. A backend that cannot run at all (no engine, no
//! interpreter) still answers with a status (`backend_unavailable`, `worker_failed`) and says
//! why in its [`Report`]. The transports map an outcome once each: the envelope versions here,
//! HTTP and MCP in `serve::reply`.

use apizr_ir::Value;
use serde::Serialize;

use super::BackendKind;
use crate::envelope::{Envelope, ResultSchema};
use crate::local::runtime::CallReport;
#[cfg(feature = "oci")]
use crate::oci::OciReport;
use crate::status::Status;
use crate::validate::FieldError;

/// How one call ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Outcome {
    pub status: Status,
    /// The function's return value; `Null` unless `status` is success (and for `None`). A
    /// direct call made with [`Call::keep_json`](crate::Call::keep_json) leaves it `Null` and
    /// fills [`Outcome::value_json`] instead.
    pub value: Value,
    /// The worker's own JSON text of the value (dict insertion order and Python float text
    /// kept), when the backend has it and the call asked for it (direct backend only).
    pub value_json: Option<Vec<u8>>,
    /// For `invalid_input` found before any backend ran: the argument error, worded as the
    /// reference words it (the REST `detail`).
    pub detail: Option<String>,
    /// For `invalid_input` found before any backend ran: where and what (our addition to the
    /// reference's `detail`; the REST `errors`, MCP structured content).
    pub errors: Vec<FieldError>,
    /// The backend that answered; `None` when the call was refused before any backend.
    pub backend: Option<BackendKind>,
    /// What happened, per backend: enforcement, limits hit, exit, stderr, timings.
    pub report: Report,
}

/// What a backend observed during one call. Never holds argument or environment values.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum Report {
    /// Nothing ran (input refused before a backend), or the direct backend (whose warm
    /// workers are reported by the pool's metrics instead).
    #[default]
    None,
    /// The local-process backend (policy v1).
    Local(Box<CallReport>),
    /// The container backend (policy v2).
    #[cfg(feature = "oci")]
    Oci(Box<OciReport>),
}

impl Outcome {
    /// An outcome from a backend's envelope and report.
    pub fn from_envelope(backend: BackendKind, envelope: Envelope, report: Report) -> Outcome {
        Outcome {
            status: envelope.status,
            value: envelope.value,
            value_json: None,
            detail: None,
            errors: Vec::new(),
            backend: Some(backend),
            report,
        }
    }

    /// A call that ended with `status` and no value, before any backend ran.
    pub fn status(status: Status) -> Outcome {
        Outcome {
            status,
            value: Value::Null,
            value_json: None,
            detail: None,
            errors: Vec::new(),
            backend: None,
            report: Report::None,
        }
    }

    /// The controls that made this call `policy_refused` (as the backend named them).
    pub fn refused_controls(&self) -> Vec<&'static str> {
        match &self.report {
            Report::Local(report) => report.refused.clone(),
            _ => Vec::new(),
        }
    }

    /// The same outcome, answered on behalf of `backend` (its envelope version applies).
    #[must_use]
    pub fn with_backend(mut self, backend: BackendKind) -> Outcome {
        self.backend = Some(backend);
        self
    }

    /// Arguments refused before any backend ran; `detail` is the caller-facing reason.
    pub fn invalid_input(detail: impl Into<String>) -> Outcome {
        Outcome {
            detail: Some(detail.into()),
            ..Outcome::status(Status::InvalidInput)
        }
    }

    /// The same refusal with where and what ([`FieldError`]s).
    #[must_use]
    pub fn with_errors(mut self, errors: Vec<FieldError>) -> Outcome {
        self.errors = errors;
        self
    }

    /// The worker's captured stderr (prints, tracebacks) and whether it was cut, for the
    /// governed backends (the direct pool's workers write to the server's own stderr).
    pub fn worker_stderr(&self) -> Option<(&str, bool)> {
        match &self.report {
            Report::None => None,
            Report::Local(r) => Some((&r.stderr, r.stderr_truncated)),
            #[cfg(feature = "oci")]
            Report::Oci(r) => Some((&r.stderr, r.stderr_truncated)),
        }
    }

    pub fn is_success(&self) -> bool {
        self.status == Status::Success
    }

    /// The envelope version this outcome is answered in: v2 for the container backend, v1
    /// otherwise (the version follows the policy's, as in the reference).
    pub fn result_schema(&self) -> ResultSchema {
        match self.backend {
            Some(BackendKind::OciContainer) => ResultSchema::V2,
            _ => ResultSchema::V1,
        }
    }

    /// The status and value as an envelope (encode it with
    /// [`Envelope::to_value_in`]`(`[`Outcome::result_schema`]`)`).
    pub fn envelope(&self) -> Envelope {
        Envelope {
            status: self.status,
            value: self.value.clone(),
        }
    }

    /// The envelope document in this outcome's own version.
    pub fn envelope_value(&self) -> Value {
        self.envelope().to_value_in(self.result_schema())
    }

    /// Limits hit during the call (`wall_time`, `output`, `memory`, `pids`, `cpu`, `input`).
    pub fn limits_hit(&self) -> &[String] {
        match &self.report {
            Report::None => &[],
            Report::Local(r) => &r.limits_hit,
            #[cfg(feature = "oci")]
            Report::Oci(r) => &r.limits_hit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_version_follows_the_backend() {
        let local = Outcome::from_envelope(
            BackendKind::LocalProcess,
            Envelope::success(Value::Int(3)),
            Report::Local(Box::default()),
        );
        assert_eq!(local.result_schema(), ResultSchema::V1);
        assert_eq!(
            local.envelope_value().canonical_bytes().unwrap(),
            b"{\"schema_version\":\"apizr.execution-result/v1\",\"status\":\"success\",\"value\":3}\n"
        );
        #[cfg(feature = "oci")]
        {
            let oci = Outcome::from_envelope(
                BackendKind::OciContainer,
                Envelope::status(Status::ResourceLimit),
                Report::Oci(Box::default()),
            );
            assert_eq!(oci.result_schema(), ResultSchema::V2);
            assert_eq!(
                oci.envelope_value().canonical_bytes().unwrap(),
                b"{\"schema_version\":\"apizr.execution-result/v2\",\"status\":\"resource_limit\",\"value\":null}\n"
            );
        }
        let refused = Outcome::invalid_input("Missing required field: x");
        assert_eq!(refused.status, Status::InvalidInput);
        assert_eq!(refused.detail.as_deref(), Some("Missing required field: x"));
        assert!(refused.limits_hit().is_empty());
        assert_eq!(refused.result_schema(), ResultSchema::V1);
        let refused_v2 =
            Outcome::status(Status::PolicyRefused).with_backend(BackendKind::OciContainer);
        assert_eq!(refused_v2.result_schema(), ResultSchema::V2);
    }
}
