//! JSON admission, shared by `apizr execute`, HTTP and MCP surfaces.
//!
//! Three pure steps, in the order callers apply them:
//!
//! 1. [`preflight`] — a lexical scan of the raw bytes before any parser runs: byte limit, node
//!    count (openers, strings and scalar runs) and depth, so hostile input is refused in linear
//!    time and bounded memory. It is not a syntax validator.
//! 2. [`parse_permissive`] — the workspace's JSON reader ([`crate::json::parse`]) in its
//!    Python dialect: `NaN` / `Infinity` literals accepted (so they can be *rejected as
//!    non-finite* by step 3, exactly like the reference, instead of failing as syntax errors),
//!    exact integers ([`Value::BigInt`]), last duplicate key wins, CPython's 4300-digit limit.
//! 3. [`check_budget`] — the value-graph budget: finite floats, at most 100,000 nodes (keys
//!    count), depth 64, and a compact wire size limit.

use crate::json::{Dialect, ParseError, Value};

/// Step 2: decode one document with Python `json.loads` semantics (see the module docs).
pub fn parse_permissive(bytes: &[u8]) -> Result<Value, AdmissionError> {
    crate::json::parse(bytes, Dialect::Python).map_err(|e| match e {
        ParseError::Syntax { offset, reason } => AdmissionError::Syntax { offset, reason },
        ParseError::TooDeep { .. } => AdmissionError::StructureLimit,
        ParseError::IntDigits { digits } => AdmissionError::IntDigits { digits },
    })
}

/// Node limit of both the lexical preflight and the value budget.
pub const MAX_NODES: usize = 100_000;
/// Depth limit of both the lexical preflight and the value budget.
pub const MAX_DEPTH: usize = 64;
/// Default wire-size limit of the value budget (64 MiB).
pub const DEFAULT_VALUE_BYTES: u64 = 64 * 1024 * 1024;
/// CPython's default `sys.get_int_max_str_digits()`.
pub const MAX_INT_DIGITS: usize = crate::json::MAX_INT_DIGITS;

/// Why a JSON document was not admitted. `code()` gives the wire code where one exists.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdmissionError {
    #[error("JSON document exceeds {limit} bytes")]
    ByteLimit { limit: u64 },
    #[error("JSON document exceeds the structure budget (100000 nodes, depth 64)")]
    StructureLimit,
    #[error("JSON document has unbalanced closing brackets")]
    StructureInvalid,
    #[error("invalid JSON at byte {offset}: {reason}")]
    Syntax { offset: usize, reason: &'static str },
    #[error("Expected a finite JSON value")]
    NonFinite,
    /// CPython refuses to convert integers longer than 4300 digits.
    #[error(
        "Exceeds the limit (4300 digits) for integer string conversion: value has {digits} digits; use sys.set_int_max_str_digits() to increase the limit"
    )]
    IntDigits { digits: usize },
}

impl AdmissionError {
    /// The reference's admission code (`json_byte_limit`, …), or `json_syntax` / `json_value`.
    pub fn code(&self) -> &'static str {
        match self {
            AdmissionError::ByteLimit { .. } => "json_byte_limit",
            AdmissionError::StructureLimit => "json_structure_limit",
            AdmissionError::StructureInvalid => "json_structure_invalid",
            AdmissionError::Syntax { .. } | AdmissionError::IntDigits { .. } => "json_syntax",
            AdmissionError::NonFinite => "json_value",
        }
    }
}

impl AdmissionError {
    /// The message Python's `json.loads` gives for `doc` (`Expecting value: line 1 column 1
    /// (char 0)`): positions count characters, lines and columns are 1-based. Direct REST
    /// surfaces show it as the 422 detail.
    pub fn python_message(&self, doc: &[u8]) -> String {
        let AdmissionError::Syntax { offset, reason } = self else {
            return self.to_string();
        };
        let before = String::from_utf8_lossy(doc.get(..*offset).unwrap_or(doc));
        let pos = before.chars().count();
        let line = before.matches('\n').count() + 1;
        let column = match before.rfind('\n') {
            Some(nl) => before[nl + 1..].chars().count() + 1,
            None => pos + 1,
        };
        format!("{reason}: line {line} column {column} (char {pos})")
    }
}

/// Step 1: the lexical preflight over raw bytes.
pub fn preflight(bytes: &[u8], byte_limit: u64) -> Result<(), AdmissionError> {
    if bytes.len() as u64 > byte_limit {
        return Err(AdmissionError::ByteLimit { limit: byte_limit });
    }
    let mut nodes = 0usize;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut in_scalar = false;
    let count = |nodes: &mut usize| {
        *nodes += 1;
        if *nodes > MAX_NODES {
            Err(AdmissionError::StructureLimit)
        } else {
            Ok(())
        }
    };
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => {
                in_scalar = false;
                in_string = true;
                count(&mut nodes)?;
            }
            b'[' | b'{' => {
                in_scalar = false;
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(AdmissionError::StructureLimit);
                }
                count(&mut nodes)?;
            }
            b']' | b'}' => {
                in_scalar = false;
                depth = depth
                    .checked_sub(1)
                    .ok_or(AdmissionError::StructureInvalid)?;
            }
            b',' | b':' | b' ' | b'\t' | b'\n' | b'\r' => in_scalar = false,
            _ => {
                if !in_scalar {
                    in_scalar = true;
                    count(&mut nodes)?;
                }
            }
        }
    }
    Ok(())
}

/// Step 3: the value-graph budget. `byte_limit` bounds the compact wire size.
pub fn check_budget(value: &Value, byte_limit: u64) -> Result<(), AdmissionError> {
    let mut nodes = 0usize;
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((v, depth)) = stack.pop() {
        nodes += 1;
        if nodes > MAX_NODES || depth > MAX_DEPTH {
            return Err(AdmissionError::StructureLimit);
        }
        match v {
            Value::Float(f) if !f.is_finite() => return Err(AdmissionError::NonFinite),
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, depth + 1))),
            Value::Object(map) => {
                nodes += map.len();
                stack.extend(map.values().map(|i| (i, depth + 1)));
            }
            _ => {}
        }
    }
    let size = value
        .canonical_string()
        .map_err(|_| AdmissionError::NonFinite)?
        .len() as u64;
    if size > byte_limit {
        return Err(AdmissionError::ByteLimit { limit: byte_limit });
    }
    Ok(())
}

/// Nesting depth of a value (a scalar is 1, `[]` is 1, `[[]]` is 2).
pub fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    deepest
}

/// All three steps: what every surface applies to an untrusted JSON body.
pub fn admit(bytes: &[u8], byte_limit: u64) -> Result<Value, AdmissionError> {
    preflight(bytes, byte_limit)?;
    let value = parse_permissive(bytes)?;
    check_budget(&value, DEFAULT_VALUE_BYTES)?;
    Ok(value)
}

#[cfg(test)]
#[path = "admission_tests.rs"]
mod tests;
