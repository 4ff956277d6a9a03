//! The Python object a JSON argument becomes after conversion, with just enough of Python's
//! data model to decide what the reference decides: numeric equality across `bool`/`int`/
//! `float` (`1 == 1.0 == True`), hashability (lists, dicts and sets are not; tuples are when
//! their members are) and set-member uniqueness.

use std::collections::BTreeMap;

use apizr_ir::Value;

/// A converted argument.
#[derive(Debug, Clone, PartialEq)]
pub enum PyValue {
    None,
    Bool(bool),
    /// `Value::Int` or `Value::BigInt`.
    Int(Value),
    Float(f64),
    Str(String),
    /// `bytes` / `bytearray` (readiness v2), decoded from canonical base64.
    Bytes(Vec<u8>),
    Bytearray(Vec<u8>),
    List(Vec<PyValue>),
    Tuple(Vec<PyValue>),
    Set(Vec<PyValue>),
    /// `frozenset[T]` (readiness v2): unique members like `Set`, but hashable.
    Frozenset(Vec<PyValue>),
    Dict(BTreeMap<String, PyValue>),
}

impl PyValue {
    /// The JSON form (tuples and sets become arrays).
    pub fn to_json(&self) -> Value {
        match self {
            PyValue::None => Value::Null,
            PyValue::Bool(b) => Value::Bool(*b),
            PyValue::Int(v) => v.clone(),
            PyValue::Float(f) => Value::Float(*f),
            PyValue::Str(s) => Value::Str(s.clone()),
            PyValue::Bytes(b) | PyValue::Bytearray(b) => Value::Str(crate::protocol::base64(b)),
            PyValue::List(items)
            | PyValue::Tuple(items)
            | PyValue::Set(items)
            | PyValue::Frozenset(items) => {
                Value::Array(items.iter().map(PyValue::to_json).collect())
            }
            PyValue::Dict(map) => {
                Value::Object(map.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
            }
        }
    }

    /// The JSON value as Python's `json.loads` builds it (no tuples, no sets).
    pub fn from_json(value: &Value) -> PyValue {
        match value {
            Value::Null => PyValue::None,
            Value::Bool(b) => PyValue::Bool(*b),
            Value::Int(_) | Value::BigInt(_) => PyValue::Int(value.clone()),
            Value::Float(f) => PyValue::Float(*f),
            Value::Str(s) => PyValue::Str(s.clone()),
            Value::Array(items) => PyValue::List(items.iter().map(PyValue::from_json).collect()),
            Value::Object(map) => PyValue::Dict(
                map.iter()
                    .map(|(k, v)| (k.clone(), PyValue::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// `hash(x)` succeeds.
    pub fn is_hashable(&self) -> bool {
        match self {
            PyValue::List(_) | PyValue::Set(_) | PyValue::Dict(_) | PyValue::Bytearray(_) => false,
            PyValue::Tuple(items) => items.iter().all(PyValue::is_hashable),
            _ => true,
        }
    }

    /// Python `==` for hashable values (what set membership uses).
    pub fn py_eq(&self, other: &PyValue) -> bool {
        if let (Some(a), Some(b)) = (Number::of(self), Number::of(other)) {
            return a.equals(&b);
        }
        match (self, other) {
            (PyValue::None, PyValue::None) => true,
            (PyValue::Str(a), PyValue::Str(b)) => a == b,
            // `b"a" == bytearray(b"a")` in Python.
            (
                PyValue::Bytes(a) | PyValue::Bytearray(a),
                PyValue::Bytes(b) | PyValue::Bytearray(b),
            ) => a == b,
            (PyValue::Tuple(a), PyValue::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.py_eq(y))
            }
            // Set equality: the members of each are unique, so same size and every member of
            // one equal to one of the other.
            (PyValue::Frozenset(a), PyValue::Frozenset(b)) => {
                a.len() == b.len() && a.iter().all(|x| b.iter().any(|y| x.py_eq(y)))
            }
            _ => false,
        }
    }
}

/// A Python number: ints as canonical decimal digits, floats as they are.
#[derive(Debug, Clone, PartialEq)]
pub enum Number {
    Int(String),
    Float(f64),
}

impl Number {
    pub fn of(value: &PyValue) -> Option<Number> {
        match value {
            PyValue::Bool(b) => Some(Number::Int(if *b { "1" } else { "0" }.into())),
            PyValue::Int(Value::Int(i)) => Some(Number::Int(i.to_string())),
            PyValue::Int(Value::BigInt(d)) => Some(Number::Int(d.clone())),
            PyValue::Float(f) => Some(Number::Float(*f)),
            _ => None,
        }
    }

    /// Exact comparison, like CPython's mixed int/float `==`.
    pub fn equals(&self, other: &Number) -> bool {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => a == b,
            (Number::Float(a), Number::Float(b)) => a == b,
            (Number::Int(i), Number::Float(f)) | (Number::Float(f), Number::Int(i)) => {
                integral_digits(*f).is_some_and(|d| &d == i)
            }
        }
    }
}

/// The exact decimal digits of an integral finite float (`1e20` → `100000000000000000000`).
pub fn integral_digits(f: f64) -> Option<String> {
    if !f.is_finite() || f.fract() != 0.0 {
        return None;
    }
    let digits = format!("{f:.0}");
    Some(if digits == "-0" { "0".into() } else { digits })
}

/// The JSON integer for integral digits (`Int` when it fits in 64 bits).
pub fn int_value(digits: &str) -> Value {
    digits
        .parse::<i64>()
        .map_or_else(|_| Value::BigInt(digits.to_string()), Value::Int)
}
