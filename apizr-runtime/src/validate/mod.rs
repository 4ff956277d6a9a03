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
//! * [`temporal`] — the strict RFC 3339 grammar of `datetime` arguments (v2);
//! * [`pyvalue`] — the bits of Python's data model the rules depend on.
//!
//! The output keeps the caller's JSON values (validated, not converted): the runtime measures
//! `max_input_bytes` on their canonical form, which is what the reference measures.

pub mod base64;
pub mod convert;
pub mod error;
pub mod pyvalue;
pub mod temporal;

use std::collections::BTreeMap;

use apizr_ir::interface::{ContractParameter, var_positional_needs};
use apizr_ir::{ParameterKind, Value};

pub use error::{FieldError, Found, Reason, ValidationError};
pub use pyvalue::PyValue;

/// A validated call: positional-only arguments up to the last supplied one (with `*args`
/// present: every positional parameter before it), then the rest by name (`*args` as its array).
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
    let kwargs = parameters
        .iter()
        .find(|p| p.kind == ParameterKind::VarKeyword);
    let named = |key: &str| {
        parameters
            .iter()
            .any(|p| p.kind != ParameterKind::VarKeyword && p.name == key)
    };
    let mut call = ValidatedCall::default();
    // A key that names no parameter is an entry of `**kwargs` (its own name excepted: the
    // request schema's `propertyNames`), or refused when the function takes none.
    for (key, value) in map.iter().filter(|(k, _)| !named(k)) {
        let undeclared = |expected: String| {
            ValidationError::new(Reason::UnexpectedField, expected, Found::UndeclaredField)
                .under(key)
        };
        match kwargs {
            None => {
                let names = parameters.iter().map(|p| p.name.as_str());
                return Err(undeclared(convert::declared_fields(names)));
            }
            Some(kw) if &kw.name == key => {
                return Err(undeclared(format!(
                    "an entry of **{0} named anything but {0} (send its entries as fields)",
                    kw.name
                )));
            }
            Some(kw) => {
                let converted = convert::convert(&kw.type_spec, value).map_err(|e| e.under(key))?;
                call.converted.insert(key.clone(), converted);
            }
        }
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
    for p in parameters
        .iter()
        .filter(|p| p.kind != ParameterKind::VarKeyword)
    {
        if let Some(v) = map.get(&p.name) {
            let converted = convert::convert(&p.value_spec(), v).map_err(|e| e.under(&p.name))?;
            call.converted.insert(p.name.clone(), converted);
        }
    }
    // A present `*args` fills every positional parameter before it by position (the schema's
    // `dependentRequired`, the same `var_positional_needs`); otherwise positional-only ones
    // are passed by position up to the last supplied.
    let args = parameters
        .iter()
        .find(|p| p.kind == ParameterKind::VarPositional && map.contains_key(&p.name));
    if let Some(args) = args
        && let Some(gap) = var_positional_needs(parameters)
            .into_iter()
            .find(|p| !map.contains_key(&p.name))
    {
        let e = ValidationError::new(
            Reason::VarPositionalGap(gap.name.clone()),
            format!(
                "{} (*{} is given, so every positional field before it is)",
                error::describe(&gap.type_spec),
                args.name
            ),
            Found::Missing,
        );
        return Err(e.under(&gap.name));
    }
    let by_position: Vec<&ContractParameter> = parameters
        .iter()
        .filter(|p| match args {
            Some(_) => p.kind.is_named_positional(),
            None => p.kind == ParameterKind::PositionalOnly,
        })
        .collect();
    let supplied = by_position
        .iter()
        .rposition(|p| map.contains_key(&p.name))
        .map_or(0, |i| i + 1);
    for p in by_position.iter().take(supplied) {
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
    // Everything else by name: the `*args` array under its own name (the worker spreads it
    // after the positional values), keyword parameters, and `**kwargs` entries.
    let by_position: Vec<&str> = by_position.iter().map(|p| p.name.as_str()).collect();
    for (key, value) in map {
        if !by_position.contains(&key.as_str()) {
            call.keyword.insert(key.clone(), value.clone());
        }
    }
    Ok(call)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
