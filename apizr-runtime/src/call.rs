//! The call API: one way to run a planned capability, whatever runs it.
//!
//! ```text
//! InvocationContract + Executable + module + arguments ──► Call
//! AnyPolicy (+ runtime image for v2) ──► AnyExecutor ── direct pool | local process | container
//! AnyExecutor::execute(&Call) / AnyExecutor::run(Call).await ──► Outcome
//! Outcome ──► v1 / v2 envelope (here) · HTTP status + body, MCP result (`serve::reply`)
//! ```
//!
//! * [`Call`] — a backend-neutral call: the binding shape from the contract, the exact
//!   executable bytes, the module name and validated arguments. Built from JSON text
//!   ([`Call::from_json`]), a decoded value ([`Call::from_value`]) or arguments validated
//!   elsewhere ([`Call::new`]). Bad arguments are an [`ArgumentError`]; nothing starts.
//! * [`executor`] — the [`Executor`] seam and [`AnyExecutor`], the registry of backends.
//! * [`outcome`] — [`Outcome`], the one type for "a call ended", and [`Report`].
//!
//! The policy belongs to the executor, not to the call: a policy chooses the backend (v1 →
//! local process, v2 → container) and a server or a CLI run applies one policy to many calls.

pub mod executor;
pub mod outcome;

use std::sync::Arc;

use apizr_ir::Value;
use apizr_ir::admission::{AdmissionError, parse_permissive, preflight};
use apizr_ir::interface::{ContractExecution, InvocationContract};
use apizr_ir::policy::PolicyV1;

pub use self::executor::{AnyExecutor, BackendKind, Executor, ExecutorError, HeldUntilEnd};
pub use self::outcome::{Outcome, Report};
use crate::request::{BindingParameter, CallRequest, Executable, ExecutionKind};
use crate::validate::{FieldError, ValidatedCall, ValidationError, validate_arguments};

/// Largest argument document [`Call::from_json`] admits (the REST body limit). Each policy's
/// `max_input_bytes` is enforced again by the executors on the canonical arguments.
pub const MAX_ARGUMENT_BYTES: usize = 64 * 1024 * 1024;

/// The caller-facing detail of the JSON admission refusal (size, nesting, encoding).
pub const ADMISSION_DETAIL: &str = "JSON admission limit or encoding rejected";

/// Why arguments were refused before any backend ran. `Display` is the reference's `detail`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentError {
    /// Over the byte, node or depth budget, or not UTF-8.
    #[error("{ADMISSION_DETAIL}")]
    Admission(#[source] AdmissionError),
    /// Not JSON; the message is the one Python's `json` module gives.
    #[error("{message}")]
    Syntax { message: String },
    /// Valid JSON that does not fit the contract.
    #[error(transparent)]
    Invalid(#[from] ValidationError),
}

impl ArgumentError {
    /// Where and what, beside the reference's detail: the validator's JSON-pointer location,
    /// or the whole document (`""`) for admission and syntax refusals.
    pub fn field_error(&self) -> FieldError {
        let whole = |expected: &str, found: String| FieldError {
            path: String::new(),
            expected: expected.into(),
            found,
        };
        match self {
            ArgumentError::Admission(e) => whole("JSON within the admission limits", e.to_string()),
            ArgumentError::Syntax { message } => {
                whole("a JSON document", format!("invalid JSON: {message}"))
            }
            ArgumentError::Invalid(e) => e.field_error(),
        }
    }
}

/// One planned call of one capability, ready for any executor.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    request: CallRequest,
    /// The caller's JSON text when the call was built from it (the direct backend forwards it
    /// to keep the caller's key order).
    arguments_json: Option<Arc<[u8]>>,
    keep_json: bool,
    original: Option<Arc<[u8]>>,
}

impl Call {
    /// A call from arguments already validated against `contract` (by
    /// [`validate_arguments`]).
    pub fn new(
        contract: &InvocationContract,
        executable: Executable,
        module: impl Into<String>,
        arguments: ValidatedCall,
    ) -> Call {
        Call {
            request: CallRequest {
                capability_id: contract.capability_id.clone(),
                executable,
                module: module.into(),
                function: contract.name.clone(),
                execution: match contract.execution {
                    ContractExecution::Sync => ExecutionKind::Sync,
                    ContractExecution::Async => ExecutionKind::Async,
                },
                parameters: contract
                    .parameters
                    .iter()
                    .map(|p| BindingParameter {
                        name: p.name.clone(),
                        kind: p.kind,
                        required: p.required,
                        type_spec: p.type_spec.clone(),
                    })
                    .collect(),
                returns: contract
                    .returns
                    .has_python_class()
                    .then(|| contract.returns.clone()),
                positional: arguments.positional,
                keyword: arguments.keyword,
                // Replaced by each executor with the policy it enforces.
                policy: PolicyV1::default(),
            },
            arguments_json: None,
            keep_json: false,
            original: None,
        }
    }

    /// Validate a decoded argument object against `contract`, with the reference's rules and
    /// detail strings.
    pub fn from_value(
        contract: &InvocationContract,
        executable: Executable,
        module: impl Into<String>,
        arguments: &Value,
    ) -> Result<Call, ArgumentError> {
        let validated = validate_arguments(&contract.parameters, arguments)?;
        Ok(Call::new(contract, executable, module, validated))
    }

    /// Admit, decode and validate JSON argument text (at most [`MAX_ARGUMENT_BYTES`]; numbers
    /// are decoded exactly, as Python would).
    pub fn from_json(
        contract: &InvocationContract,
        executable: Executable,
        module: impl Into<String>,
        json: &[u8],
    ) -> Result<Call, ArgumentError> {
        preflight(json, MAX_ARGUMENT_BYTES as u64).map_err(ArgumentError::Admission)?;
        let value = parse_permissive(json).map_err(|e| ArgumentError::Syntax {
            message: e.python_message(json),
        })?;
        let mut call = Call::from_value(contract, executable, module, &value)?;
        call.arguments_json = Some(json.into());
        Ok(call)
    }

    /// Ask the direct backend for the worker's own JSON text of the value
    /// ([`Outcome::value_json`]) instead of a decoded value (other backends decode anyway).
    #[must_use]
    pub fn keep_json(mut self) -> Self {
        self.keep_json = true;
        self
    }

    /// The original source bytes (a notebook's `.ipynb`) to place next to the executable in a
    /// container's bundle; defaults to the executable.
    #[must_use]
    pub fn with_original(mut self, bytes: impl Into<Arc<[u8]>>) -> Self {
        self.original = Some(bytes.into());
        self
    }

    /// `python:<module>:<symbol>`.
    pub fn capability_id(&self) -> &str {
        &self.request.capability_id
    }

    /// The Python function name.
    pub fn function(&self) -> &str {
        &self.request.function
    }

    pub fn module(&self) -> &str {
        &self.request.module
    }

    pub fn executable(&self) -> &Executable {
        &self.request.executable
    }

    /// The worker request under `policy` (the executors' view of a call).
    pub(crate) fn request_under(&self, policy: &PolicyV1) -> CallRequest {
        let mut request = self.request.clone();
        request.policy = policy.clone();
        request
    }

    /// The count of arguments passed by position (the direct backend's call frame).
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn positional_count(&self) -> usize {
        self.request.positional.len()
    }

    /// The argument object as JSON text: the caller's own bytes when the call was built from
    /// them, else canonical JSON.
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn arguments_json(&self) -> Result<Vec<u8>, apizr_ir::CanonicalError> {
        match &self.arguments_json {
            Some(bytes) => Ok(bytes.to_vec()),
            None => {
                let mut bytes = self.request.arguments_object().canonical_bytes()?;
                bytes.pop();
                Ok(bytes)
            }
        }
    }

    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn wants_json(&self) -> bool {
        self.keep_json
    }

    #[cfg_attr(not(feature = "oci"), allow(dead_code))]
    pub(crate) fn original(&self) -> Option<&[u8]> {
        self.original.as_deref()
    }
}
