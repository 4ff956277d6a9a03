//! Per-TypeSpec conversion of one JSON value: strict scalars, numeric
//! literals, unions in declared order, closed objects, fixed-length tuples, hashable and unique
//! set members. Iterative depth is bounded by the admission budget (depth 64) and by the
//! TypeSpec itself, so recursion here cannot run away.

use std::collections::BTreeMap;

use apizr_ir::admission::{DEFAULT_VALUE_BYTES, check_budget};
use apizr_ir::{TypeKind, TypeSpec, Value};

use super::error::{Found, Reason, ValidationError, describe, kind_of};
use super::pyvalue::{Number, PyValue, int_value, integral_digits};

static ANY: TypeSpec = TypeSpec {
    items: Vec::new(),
    kind: TypeKind::Any,
    values: Vec::new(),
    variadic: false,
    fields: None,
    python: None,
};

fn item(spec: &TypeSpec, index: usize) -> &TypeSpec {
    spec.items.get(index).unwrap_or(&ANY)
}

/// Convert `value` to the Python object `spec` describes.
pub fn convert(spec: &TypeSpec, value: &Value) -> Result<PyValue, ValidationError> {
    let mismatch = || ValidationError::mismatch(spec, value);
    match (spec.kind, value) {
        // `any` is deep-copied finite JSON; typed members reject non-finite floats as a type
        // mismatch instead (as the reference does).
        (TypeKind::Any, v) => check_budget(v, DEFAULT_VALUE_BYTES)
            .map(|()| PyValue::from_json(v))
            .map_err(|_| non_finite(v)),
        (TypeKind::Int, Value::Int(_) | Value::BigInt(_)) => Ok(PyValue::Int(value.clone())),
        (TypeKind::Int, Value::Float(f)) => integral_digits(*f)
            .map(|d| PyValue::Int(int_value(&d)))
            .ok_or_else(mismatch),
        (TypeKind::Float, Value::Int(i)) => Ok(PyValue::Float(*i as f64)),
        (TypeKind::Float, Value::BigInt(d)) => d
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(PyValue::Float)
            .ok_or_else(mismatch),
        (TypeKind::Float, Value::Float(f)) if f.is_finite() => Ok(PyValue::Float(*f)),
        (TypeKind::Str, Value::Str(s)) => Ok(PyValue::Str(s.clone())),
        (TypeKind::Bytes | TypeKind::Bytearray, Value::Str(s)) => {
            let bytes = super::base64::decode(s).map_err(|e| {
                let found = Found::Value {
                    kind: "string",
                    text: format!("with {e}"),
                };
                ValidationError::new(Reason::Base64, describe(spec), found)
            })?;
            Ok(match spec.kind {
                TypeKind::Bytes => PyValue::Bytes(bytes),
                _ => PyValue::Bytearray(bytes),
            })
        }
        (TypeKind::Date | TypeKind::Datetime | TypeKind::Time, Value::Str(s)) => {
            super::temporal::check(spec.kind, s).map_err(|e| {
                let found = Found::Value {
                    kind: "string",
                    text: format!("with {e}"),
                };
                ValidationError::new(Reason::Temporal, describe(spec), found)
            })?;
            Ok(PyValue::Str(s.clone()))
        }
        (TypeKind::Timedelta, Value::Int(_) | Value::BigInt(_) | Value::Float(_)) => {
            let seconds = match value {
                Value::Int(i) => *i as f64,
                Value::Float(f) if f.is_finite() => *f,
                // Finite floats only; a big integer is out of range anyway.
                _ => f64::INFINITY,
            };
            if !super::temporal::seconds_in_range(seconds) {
                let found = Found::Value {
                    kind: "number",
                    text: format!(
                        "outside {}..{} seconds",
                        apizr_ir::temporal::TIMEDELTA_MIN_SECONDS,
                        apizr_ir::temporal::TIMEDELTA_MAX_SECONDS
                    ),
                };
                return Err(ValidationError::new(
                    Reason::Temporal,
                    describe(spec),
                    found,
                ));
            }
            Ok(match value {
                Value::Float(f) => PyValue::Float(*f),
                _ => PyValue::Int(value.clone()),
            })
        }
        (TypeKind::Bool, Value::Bool(b)) => Ok(PyValue::Bool(*b)),
        (TypeKind::Null, Value::Null) => Ok(PyValue::None),
        (TypeKind::List, Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| convert(item(spec, 0), v).map_err(|e| e.under(i)))
            .collect::<Result<_, _>>()
            .map(PyValue::List),
        (TypeKind::Dict, Value::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                Ok((
                    k.clone(),
                    convert(item(spec, 0), v).map_err(|e| e.under(k))?,
                ))
            })
            .collect::<Result<_, _>>()
            .map(PyValue::Dict),
        (TypeKind::Tuple, Value::Array(items)) => tuple(spec, items),
        (TypeKind::Set, Value::Array(items)) => set(spec, items),
        (TypeKind::Frozenset, Value::Array(items)) => match set(spec, items)? {
            PyValue::Set(members) => Ok(PyValue::Frozenset(members)),
            other => Ok(other),
        },
        (TypeKind::Union, v) => spec
            .items
            .iter()
            .find_map(|member| convert(member, v).ok())
            .ok_or_else(mismatch),
        (TypeKind::Literal, v) => literal(spec, v),
        (TypeKind::Object, Value::Object(map)) => object(spec, map),
        _ => Err(mismatch()),
    }
}

/// `any` refused a value: point at its first non-finite float (the budget itself cannot fail
/// otherwise after admission).
fn non_finite(value: &Value) -> ValidationError {
    fn find(value: &Value) -> Option<ValidationError> {
        match value {
            Value::Float(f) if !f.is_finite() => Some(ValidationError::new(
                Reason::NotFinite,
                "finite number",
                Found::Value {
                    kind: "number",
                    // The literal the client wrote (Python's decoder accepts these three).
                    text: match (f.is_nan(), *f > 0.0) {
                        (true, _) => "NaN",
                        (false, true) => "Infinity",
                        (false, false) => "-Infinity",
                    }
                    .to_string(),
                },
            )),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, v)| find(v).map(|e| e.under(i))),
            Value::Object(map) => map.iter().find_map(|(k, v)| find(v).map(|e| e.under(k))),
            _ => None,
        }
    }
    find(value).unwrap_or_else(|| {
        ValidationError::new(
            Reason::NotFinite,
            "JSON within the value budget",
            Found::Kind(kind_of(value)),
        )
    })
}

fn tuple(spec: &TypeSpec, items: &[Value]) -> Result<PyValue, ValidationError> {
    if spec.variadic {
        return items
            .iter()
            .enumerate()
            .map(|(i, v)| convert(item(spec, 0), v).map_err(|e| e.under(i)))
            .collect::<Result<_, _>>()
            .map(PyValue::Tuple);
    }
    if items.len() != spec.items.len() {
        return Err(ValidationError::new(
            Reason::TupleLength,
            format!("array of {} items ({})", spec.items.len(), describe(spec)),
            Found::Items(items.len()),
        ));
    }
    spec.items
        .iter()
        .zip(items)
        .enumerate()
        .map(|(i, (s, v))| convert(s, v).map_err(|e| e.under(i)))
        .collect::<Result<_, _>>()
        .map(PyValue::Tuple)
}

fn set(spec: &TypeSpec, items: &[Value]) -> Result<PyValue, ValidationError> {
    let mut out: Vec<PyValue> = Vec::with_capacity(items.len());
    for (i, v) in items.iter().enumerate() {
        let member = convert(item(spec, 0), v).map_err(|e| e.under(i))?;
        if !member.is_hashable() {
            let found = Found::Kind(kind_of(v));
            let e = ValidationError::new(Reason::SetUnhashable, "hashable value", found);
            return Err(e.under(i));
        }
        if let Some(earlier) = out.iter().position(|m| m.py_eq(&member)) {
            let found = Found::DuplicateOf(earlier);
            let e = ValidationError::new(Reason::SetDuplicate, "unique item", found);
            return Err(e.under(i));
        }
        out.push(member);
    }
    Ok(PyValue::Set(out))
}

/// Numeric choices match numerically equal ints/floats and return the declared choice;
/// booleans only match booleans; everything else needs the same type and equality.
fn literal(spec: &TypeSpec, value: &Value) -> Result<PyValue, ValidationError> {
    let given = PyValue::from_json(value);
    for choice in &spec.values {
        let declared = PyValue::from_json(choice);
        let matched = match (&declared, &given) {
            (PyValue::Bool(a), PyValue::Bool(b)) => a == b,
            (PyValue::Bool(_), _) | (_, PyValue::Bool(_)) => false,
            (PyValue::Int(_) | PyValue::Float(_), PyValue::Int(_) | PyValue::Float(_)) => {
                match (Number::of(&declared), Number::of(&given)) {
                    (Some(a), Some(b)) => a.equals(&b),
                    _ => false,
                }
            }
            (PyValue::Str(a), PyValue::Str(b)) => a == b,
            (PyValue::None, PyValue::None) => true,
            _ => false,
        };
        if matched {
            return Ok(declared);
        }
    }
    Err(ValidationError::mismatch(spec, value))
}

/// A closed object: extra fields refused, required fields present, optional ones stay absent.
fn object(spec: &TypeSpec, map: &BTreeMap<String, Value>) -> Result<PyValue, ValidationError> {
    let fields = spec.fields.as_deref().unwrap_or(&[]);
    if let Some(extra) = map.keys().find(|k| !fields.iter().any(|f| &f.name == *k)) {
        let e = ValidationError::new(
            Reason::UnexpectedObjectField,
            declared_fields(fields.iter().map(|f| f.name.as_str())),
            Found::UndeclaredField,
        );
        return Err(e.under(extra));
    }
    let mut out = BTreeMap::new();
    for field in fields {
        match map.get(&field.name) {
            Some(v) => {
                let converted = convert(&field.type_spec, v).map_err(|e| e.under(&field.name))?;
                out.insert(field.name.clone(), converted);
            }
            None if field.required => {
                let e = ValidationError::new(
                    Reason::MissingObjectField(field.name.clone()),
                    describe(&field.type_spec),
                    Found::Missing,
                );
                return Err(e.under(&field.name));
            }
            None => {}
        }
    }
    Ok(PyValue::Dict(out))
}

/// The expectation at an undeclared field: one of the declared names.
pub(crate) fn declared_fields<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    if names.is_empty() {
        "no fields".into()
    } else {
        format!("one of the declared fields: {}", names.join(", "))
    }
}
