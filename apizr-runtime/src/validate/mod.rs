//! Argument validation and call reconstruction (contract 5.5), before any worker is spawned.
//!
//! Why in the parent: bad input must never cost a process start (the reference spends ~1.2 s
//! starting a worker to reject it), and every surface (execute, REST, MCP) must apply the same
//! rules with the same detail strings. The worker repeats the (idempotent) conversion on the
//! values it receives, so a call built here is exactly the call the reference would make.
//!
//! * [`convert`] — per-TypeSpec conversion of one value into a [`PyValue`];
//! * [`pyvalue`] — the bits of Python's data model the rules depend on.
//!
//! The output keeps the caller's JSON values (validated, not converted): the runtime measures
//! `max_input_bytes` on their canonical form, which is what the reference measures.

pub mod convert;
pub mod pyvalue;

use std::collections::BTreeMap;

use apizr_ir::interface::ContractParameter;
use apizr_ir::{ParameterKind, Value};

pub use pyvalue::PyValue;

/// Why arguments were refused. `Display` is the reference's wire `detail` string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValidationError {
    #[error("Expected a JSON object")]
    NotAnObject,
    #[error("Expected a finite JSON value")]
    NotFinite,
    #[error("Unexpected request field")]
    UnexpectedField,
    #[error("Missing required field: {0}")]
    MissingField(String),
    #[error("Value does not match the declared input type")]
    Mismatch,
    #[error("Tuple length mismatch")]
    TupleLength,
    #[error("Set members must be hashable")]
    SetUnhashable,
    #[error("Set members must be unique")]
    SetDuplicate,
    #[error("Unexpected object field")]
    UnexpectedObjectField,
    #[error("Missing required object field: {0}")]
    MissingObjectField(String),
    #[error("Supply preceding positional-only field: {0}")]
    PositionalGap(String),
}

/// A validated call: positional-only arguments up to the last supplied one, then keywords.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ValidatedCall {
    pub positional: Vec<Value>,
    pub keyword: BTreeMap<String, Value>,
    /// The converted Python-side values by parameter name (tuples and sets kept distinct).
    pub converted: BTreeMap<String, PyValue>,
}

/// Validate a decoded payload against the contract's parameters (signature order).
pub fn validate_arguments(
    parameters: &[ContractParameter],
    payload: &Value,
) -> Result<ValidatedCall, ValidationError> {
    let Value::Object(map) = payload else {
        return Err(ValidationError::NotAnObject);
    };
    if map.keys().any(|k| !parameters.iter().any(|p| &p.name == k)) {
        return Err(ValidationError::UnexpectedField);
    }
    if let Some(missing) = parameters
        .iter()
        .find(|p| p.required && !map.contains_key(&p.name))
    {
        return Err(ValidationError::MissingField(missing.name.clone()));
    }
    let mut call = ValidatedCall::default();
    for p in parameters {
        if let Some(v) = map.get(&p.name) {
            call.converted
                .insert(p.name.clone(), convert::convert(&p.type_spec, v)?);
        }
    }
    let positional_only: Vec<&ContractParameter> = parameters
        .iter()
        .filter(|p| p.kind == ParameterKind::PositionalOnly)
        .collect();
    let supplied = positional_only
        .iter()
        .rposition(|p| map.contains_key(&p.name))
        .map_or(0, |i| i + 1);
    for p in positional_only.iter().take(supplied) {
        match map.get(&p.name) {
            Some(v) => call.positional.push(v.clone()),
            None => return Err(ValidationError::PositionalGap(p.name.clone())),
        }
    }
    for p in parameters
        .iter()
        .filter(|p| p.kind != ParameterKind::PositionalOnly)
    {
        if let Some(v) = map.get(&p.name) {
            call.keyword.insert(p.name.clone(), v.clone());
        }
    }
    Ok(call)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
