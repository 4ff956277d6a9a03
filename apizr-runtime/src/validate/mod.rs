//! Argument validation and call reconstruction, before any worker is spawned.
//!
//! Why in the parent: bad input must never cost a process start (the reference spends ~1.2 s
//! starting a worker to reject it), and every surface (execute, REST, MCP) must apply the same
//! rules with the same detail strings. The worker repeats the (idempotent) conversion on the
//! values it receives, so a call built here is exactly the call the reference would make.
//!
//! * [`convert`] — per-TypeSpec conversion of one value into a [`PyValue`];
//! * [`error`] — [`ValidationError`]: the reference's detail ([`Reason`]) plus a JSON-pointer
//!   path, the expectation and what was found ([`FieldError`], the wire form);
//! * [`base64`] — the strict, canonical base64 of `bytes`/`bytearray` arguments (v2);
//! * [`pyvalue`] — the bits of Python's data model the rules depend on.
//!
//! The output keeps the caller's JSON values (validated, not converted): the runtime measures
//! `max_input_bytes` on their canonical form, which is what the reference measures.

pub mod base64;
pub mod convert;
pub mod error;
pub mod pyvalue;

use std::collections::BTreeMap;

use apizr_ir::interface::ContractParameter;
use apizr_ir::{ParameterKind, Value};

pub use error::{FieldError, Found, Reason, ValidationError};
pub use pyvalue::PyValue;

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
        return Err(ValidationError::new(
            Reason::NotAnObject,
            "object",
            Found::Kind(error::kind_of(payload)),
        ));
    };
    if let Some(extra) = map
        .keys()
        .find(|k| !parameters.iter().any(|p| &p.name == *k))
    {
        let expected = convert::declared_fields(parameters.iter().map(|p| p.name.as_str()));
        let e = ValidationError::new(Reason::UnexpectedField, expected, Found::UndeclaredField);
        return Err(e.under(extra));
    }
    if let Some(missing) = parameters
        .iter()
        .find(|p| p.required && !map.contains_key(&p.name))
    {
        let e = ValidationError::new(
            Reason::MissingField(missing.name.clone()),
            error::describe(&missing.type_spec),
            Found::Missing,
        );
        return Err(e.under(&missing.name));
    }
    let mut call = ValidatedCall::default();
    for p in parameters {
        if let Some(v) = map.get(&p.name) {
            let converted = convert::convert(&p.type_spec, v).map_err(|e| e.under(&p.name))?;
            call.converted.insert(p.name.clone(), converted);
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
            None => {
                let e = ValidationError::new(
                    Reason::PositionalGap(p.name.clone()),
                    format!(
                        "{} (a later positional-only field is given)",
                        error::describe(&p.type_spec)
                    ),
                    Found::Missing,
                );
                return Err(e.under(&p.name));
            }
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
