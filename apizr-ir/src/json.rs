//! The JSON value model of hashed artifacts, its canonical encoder and the one JSON reader
//! ([`parse`], with a Python and a strict [`Dialect`]).
//!
//! The canonical form is the one the reference tool hashes: Python's
//! `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)` plus one trailing
//! newline. That differs from serde_json in three places that matter for digests: floats are
//! written the way CPython's `repr` writes them (`1e-05`, `1e+16`, `36.0`), integers have
//! arbitrary precision, and only `"`, `\` and U+0000..U+001F are escaped.

use std::collections::BTreeMap;

mod float_repr;
mod parse;
mod serializer;

pub use float_repr::python_float_repr;
pub use parse::{Dialect, MAX_INT_DIGITS, ParseError, parse};
pub use serializer::to_value;

/// A JSON value with arbitrary-precision integers.
///
/// Objects are `BTreeMap`s: byte order of UTF-8 keys equals code-point order, which is what
/// Python's `sort_keys=True` produces.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// An integer that fits in 64 bits.
    Int(i64),
    /// An integer of any size, as canonical decimal digits with an optional leading `-`.
    BigInt(String),
    Float(f64),
    Str(String),
    Array(Vec<Value>),
    Object(BTreeMap<String, Value>),
}

/// Why a value has no canonical encoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CanonicalError {
    #[error("non-finite float {0} has no JSON encoding")]
    NonFinite(String),
    #[error("integer literal {0:?} is not canonical decimal digits")]
    BadInteger(String),
    #[error("value cannot be represented as JSON: {0}")]
    Unsupported(String),
}

impl Value {
    /// Canonical bytes: the document followed by exactly one `\n`.
    pub fn canonical_bytes(&self) -> Result<Vec<u8>, CanonicalError> {
        let mut out = String::with_capacity(256);
        write_value(&mut out, self)?;
        out.push('\n');
        Ok(out.into_bytes())
    }

    /// Canonical text without the trailing newline (used where a document is embedded in text,
    /// e.g. MCP text content).
    pub fn canonical_string(&self) -> Result<String, CanonicalError> {
        let mut out = String::with_capacity(256);
        write_value(&mut out, self)?;
        Ok(out)
    }

    /// Object member lookup (None for non-objects).
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(map) => map.get(key),
            _ => None,
        }
    }
}

/// Canonical bytes of any serializable value (document + `\n`).
pub fn canonical_bytes<T: serde::Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, CanonicalError> {
    to_value(value)?.canonical_bytes()
}

fn write_value(out: &mut String, value: &Value) -> Result<(), CanonicalError> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::BigInt(digits) => {
            if !is_canonical_integer(digits) {
                return Err(CanonicalError::BadInteger(digits.clone()));
            }
            out.push_str(digits);
        }
        Value::Float(f) => out.push_str(&python_float_repr(*f)?),
        Value::Str(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, item)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

fn is_canonical_integer(digits: &str) -> bool {
    let body = digits.strip_prefix('-').unwrap_or(digits);
    !body.is_empty()
        && body.bytes().all(|b| b.is_ascii_digit())
        && (body == "0" || !body.starts_with('0'))
        && digits != "-0"
}

/// A JSON object from pairs (the map sorts the keys). A builder for documents written in code
/// (`openapi.json`, `mcp-tools.json`, manifests).
pub fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// A JSON string.
pub fn text(s: &str) -> Value {
    Value::Str(s.to_string())
}

/// Python `json` string escaping with `ensure_ascii=False`.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(pairs: &[(&str, Value)]) -> Value {
        Value::Object(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn keys_sorted_by_code_point_and_compact() {
        let v = obj(&[
            ("é", Value::Int(1)),
            ("b", Value::Array(vec![Value::Null, Value::Bool(true)])),
            ("a", Value::Str("x".into())),
            ("Z", Value::Float(36.0)),
        ]);
        assert_eq!(
            String::from_utf8(v.canonical_bytes().unwrap()).unwrap(),
            "{\"Z\":36.0,\"a\":\"x\",\"b\":[null,true],\"é\":1}\n"
        );
    }

    #[test]
    fn escapes_only_what_python_escapes() {
        let mut out = String::new();
        write_string(&mut out, "\"\\\n\r\t\u{8}\u{c}\u{0}\u{1f}\u{7f}\u{2028}é😀");
        assert_eq!(
            out,
            "\"\\\"\\\\\\n\\r\\t\\b\\f\\u0000\\u001f\u{7f}\u{2028}é😀\""
        );
    }

    #[test]
    fn big_integers_are_plain_digits() {
        let v = Value::BigInt("1180591620717411303424".into());
        assert_eq!(v.canonical_bytes().unwrap(), b"1180591620717411303424\n");
        assert!(Value::BigInt("01".into()).canonical_bytes().is_err());
        assert!(Value::BigInt("-0".into()).canonical_bytes().is_err());
        assert!(Value::BigInt("".into()).canonical_bytes().is_err());
    }

    #[test]
    fn non_finite_floats_are_refused() {
        assert!(Value::Float(f64::NAN).canonical_bytes().is_err());
        assert!(Value::Float(f64::INFINITY).canonical_bytes().is_err());
    }
}
