//! Per-TypeSpec conversion of one JSON value (contract 5.5): strict scalars, numeric
//! literals, unions in declared order, closed objects, fixed-length tuples, hashable and unique
//! set members. Iterative depth is bounded by the admission budget (depth 64) and by the
//! TypeSpec itself, so recursion here cannot run away.

use std::collections::BTreeMap;

use apizr_ir::admission::{DEFAULT_VALUE_BYTES, check_budget};
use apizr_ir::{TypeKind, TypeSpec, Value};

use super::ValidationError;
use super::pyvalue::{Number, PyValue, int_value, integral_digits};

static ANY: TypeSpec = TypeSpec {
    items: Vec::new(),
    kind: TypeKind::Any,
    values: Vec::new(),
    variadic: false,
    fields: None,
};

fn item(spec: &TypeSpec, index: usize) -> &TypeSpec {
    spec.items.get(index).unwrap_or(&ANY)
}

fn mismatch() -> ValidationError {
    ValidationError::Mismatch
}

/// Convert `value` to the Python object `spec` describes.
pub fn convert(spec: &TypeSpec, value: &Value) -> Result<PyValue, ValidationError> {
    match (spec.kind, value) {
        // `any` is deep-copied finite JSON; typed members reject non-finite floats as a type
        // mismatch instead (as the reference does).
        (TypeKind::Any, v) => check_budget(v, DEFAULT_VALUE_BYTES)
            .map(|()| PyValue::from_json(v))
            .map_err(|_| ValidationError::NotFinite),
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
        (TypeKind::Bool, Value::Bool(b)) => Ok(PyValue::Bool(*b)),
        (TypeKind::Null, Value::Null) => Ok(PyValue::None),
        (TypeKind::List, Value::Array(items)) => items
            .iter()
            .map(|v| convert(item(spec, 0), v))
            .collect::<Result<_, _>>()
            .map(PyValue::List),
        (TypeKind::Dict, Value::Object(map)) => map
            .iter()
            .map(|(k, v)| Ok((k.clone(), convert(item(spec, 0), v)?)))
            .collect::<Result<_, _>>()
            .map(PyValue::Dict),
        (TypeKind::Tuple, Value::Array(items)) => tuple(spec, items),
        (TypeKind::Set, Value::Array(items)) => set(spec, items),
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

fn tuple(spec: &TypeSpec, items: &[Value]) -> Result<PyValue, ValidationError> {
    if spec.variadic {
        return items
            .iter()
            .map(|v| convert(item(spec, 0), v))
            .collect::<Result<_, _>>()
            .map(PyValue::Tuple);
    }
    if items.len() != spec.items.len() {
        return Err(ValidationError::TupleLength);
    }
    spec.items
        .iter()
        .zip(items)
        .map(|(s, v)| convert(s, v))
        .collect::<Result<_, _>>()
        .map(PyValue::Tuple)
}

fn set(spec: &TypeSpec, items: &[Value]) -> Result<PyValue, ValidationError> {
    let mut out: Vec<PyValue> = Vec::with_capacity(items.len());
    for v in items {
        let member = convert(item(spec, 0), v)?;
        if !member.is_hashable() {
            return Err(ValidationError::SetUnhashable);
        }
        if out.iter().any(|m| m.py_eq(&member)) {
            return Err(ValidationError::SetDuplicate);
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
    Err(mismatch())
}

/// A closed object: extra fields refused, required fields present, optional ones stay absent.
fn object(spec: &TypeSpec, map: &BTreeMap<String, Value>) -> Result<PyValue, ValidationError> {
    let fields = spec.fields.as_deref().unwrap_or(&[]);
    if map.keys().any(|k| !fields.iter().any(|f| &f.name == k)) {
        return Err(ValidationError::UnexpectedObjectField);
    }
    let mut out = BTreeMap::new();
    for field in fields {
        match map.get(&field.name) {
            Some(v) => {
                out.insert(field.name.clone(), convert(&field.type_spec, v)?);
            }
            None if field.required => {
                return Err(ValidationError::MissingObjectField(field.name.clone()));
            }
            None => {}
        }
    }
    Ok(PyValue::Dict(out))
}
