//! Decoding the contract files of a generated project back into [`InvocationContract`]s.
//!
//! Why hand-written: the contract types in `apizr-ir` are serialize-only (they are produced by
//! inspection, never parsed). A bundle's manifest carries the contracts as JSON; we decode them
//! strictly here and the caller re-encodes each one canonically and compares it with the
//! manifest's bytes, so a decoder bug can only refuse a bundle, never serve a wrong contract.

use apizr_ir::interface::{ContractExecution, ContractParameter, InvocationContract};
use apizr_ir::readiness::{ObjectField, PythonClass, PythonClassKind, TypeKind, TypeSpec};
use apizr_ir::{ParameterKind, Value};

/// A contract entry that is not a well-formed contract: the field that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed contract: {field}")]
pub struct ContractError {
    pub field: &'static str,
}

fn bad(field: &'static str) -> ContractError {
    ContractError { field }
}

fn field<'a>(v: &'a Value, key: &'static str) -> Result<&'a Value, ContractError> {
    v.get(key).ok_or_else(|| bad(key))
}

fn string(v: &Value, key: &'static str) -> Result<String, ContractError> {
    match field(v, key)? {
        Value::Str(s) => Ok(s.clone()),
        _ => Err(bad(key)),
    }
}

fn boolean(v: &Value, key: &'static str) -> Result<bool, ContractError> {
    match field(v, key)? {
        Value::Bool(b) => Ok(*b),
        _ => Err(bad(key)),
    }
}

fn array<'a>(v: &'a Value, key: &'static str) -> Result<&'a [Value], ContractError> {
    match field(v, key)? {
        Value::Array(a) => Ok(a),
        _ => Err(bad(key)),
    }
}

fn kind(name: &str) -> Result<TypeKind, ContractError> {
    Ok(match name {
        "any" => TypeKind::Any,
        "int" => TypeKind::Int,
        "str" => TypeKind::Str,
        "float" => TypeKind::Float,
        "bool" => TypeKind::Bool,
        "null" => TypeKind::Null,
        "list" => TypeKind::List,
        "dict" => TypeKind::Dict,
        "tuple" => TypeKind::Tuple,
        "set" => TypeKind::Set,
        "frozenset" => TypeKind::Frozenset,
        "union" => TypeKind::Union,
        "literal" => TypeKind::Literal,
        "object" => TypeKind::Object,
        "bytes" => TypeKind::Bytes,
        "bytearray" => TypeKind::Bytearray,
        "date" => TypeKind::Date,
        "datetime" => TypeKind::Datetime,
        "time" => TypeKind::Time,
        "timedelta" => TypeKind::Timedelta,
        _ => return Err(bad("type kind")),
    })
}

/// A TypeSpec (`{items, kind, values, variadic[, fields]}`).
pub fn type_spec(v: &Value) -> Result<TypeSpec, ContractError> {
    let items = array(v, "items")?
        .iter()
        .map(type_spec)
        .collect::<Result<Vec<_>, _>>()?;
    let fields = match v.get("fields") {
        None => None,
        Some(Value::Array(list)) => Some(
            list.iter()
                .map(|f| {
                    Ok(ObjectField {
                        name: string(f, "name")?,
                        required: boolean(f, "required")?,
                        type_spec: type_spec(field(f, "type")?)?,
                    })
                })
                .collect::<Result<Vec<_>, ContractError>>()?,
        ),
        Some(_) => return Err(bad("fields")),
    };
    // Present only in readiness v2 contracts (a class the worker converts to).
    let python = match v.get("python") {
        None => None,
        Some(p) => Some(PythonClass {
            kind: PythonClassKind::from_wire(&string(p, "kind")?).ok_or(bad("python kind"))?,
            module: string(p, "module")?,
            name: string(p, "name")?,
        }),
    };
    Ok(TypeSpec {
        items,
        kind: kind(&string(v, "kind")?)?,
        values: array(v, "values")?.to_vec(),
        variadic: boolean(v, "variadic")?,
        fields,
        python,
    })
}

fn parameter_kind(name: &str) -> Result<ParameterKind, ContractError> {
    Ok(match name {
        "positional_only" => ParameterKind::PositionalOnly,
        "positional_or_keyword" => ParameterKind::PositionalOrKeyword,
        "keyword_only" => ParameterKind::KeywordOnly,
        "var_positional" => ParameterKind::VarPositional,
        "var_keyword" => ParameterKind::VarKeyword,
        _ => return Err(bad("parameter kind")),
    })
}

/// One manifest entry (extra keys such as `route`, `method`, `tool_name` are ignored here).
pub fn contract(v: &Value) -> Result<InvocationContract, ContractError> {
    let execution = match string(v, "execution")?.as_str() {
        "sync" => ContractExecution::Sync,
        "async" => ContractExecution::Async,
        _ => return Err(bad("execution")),
    };
    let description = match field(v, "description")? {
        Value::Null => None,
        Value::Str(s) => Some(s.clone()),
        _ => return Err(bad("description")),
    };
    let parameters = array(v, "parameters")?
        .iter()
        .map(|p| {
            Ok(ContractParameter {
                kind: parameter_kind(&string(p, "kind")?)?,
                name: string(p, "name")?,
                required: boolean(p, "required")?,
                type_spec: type_spec(field(p, "type")?)?,
            })
        })
        .collect::<Result<Vec<_>, ContractError>>()?;
    Ok(InvocationContract {
        capability_id: string(v, "capability_id")?,
        description,
        execution,
        name: string(v, "name")?,
        parameters,
        returns: type_spec(field(v, "returns")?)?,
    })
}
