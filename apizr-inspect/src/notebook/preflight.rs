//! Notebook bytes to a JSON object: UTF-8 (optional BOM), the reference's lexical budget
//! (16 MiB, 100,000 lexical nodes, depth 64; checked before any JSON parser
//! runs, so a hostile file cannot make the parser recurse or allocate much), then strict
//! JSON with line/column positions, and an object at the root.

use serde_json::{Map, Value};

use crate::error::InspectError;

pub const MAX_JSON_NODES: usize = 100_000;
pub const MAX_JSON_DEPTH: usize = 64;

fn invalid(message: String) -> InspectError {
    InspectError::Notebook { message }
}

/// Decode, budget-check and parse a notebook file.
pub fn parse(bytes: &[u8]) -> Result<Map<String, Value>, InspectError> {
    let body = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let text = std::str::from_utf8(body).map_err(|e| {
        let p = crate::decode::position_in_text(
            std::str::from_utf8(body.get(..e.valid_up_to()).unwrap_or(&[])).unwrap_or(""),
            e.valid_up_to(),
        );
        invalid(format!(
            "notebook is not valid UTF-8 (line {}, column {})",
            p.line, p.column
        ))
    })?;
    lexical_budget(text)?;
    let value: Value = serde_json::from_str(text).map_err(|e| {
        invalid(format!(
            "notebook is not valid JSON: {} (line {}, column {})",
            strip_position(&e.to_string()),
            e.line(),
            e.column()
        ))
    })?;
    match value {
        Value::Object(map) => Ok(map),
        other => Err(invalid(format!(
            "notebook JSON must be an object, not {}",
            kind_name(&other)
        ))),
    }
}

fn strip_position(message: &str) -> &str {
    message.split(" at line ").next().unwrap_or(message)
}

pub(super) fn kind_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The reference's node count: every `[`/`{`, every string and every scalar run is a node.
pub fn lexical_budget(text: &str) -> Result<(), InspectError> {
    let mut nodes = 0usize;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut in_scalar = false;
    for b in text.bytes() {
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
        let scalar_byte = !matches!(b, b'[' | b']' | b'{' | b'}' | b',' | b':' | b'"')
            && !b.is_ascii_whitespace();
        if scalar_byte {
            if !in_scalar {
                in_scalar = true;
                nodes += 1;
            }
        } else {
            in_scalar = false;
        }
        match b {
            b'"' => {
                in_string = true;
                nodes += 1;
            }
            b'[' | b'{' => {
                nodes += 1;
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Err(invalid(format!(
                        "json_structure_limit: notebook JSON is nested deeper than {MAX_JSON_DEPTH}"
                    )));
                }
            }
            b']' | b'}' => {
                depth = depth.checked_sub(1).ok_or_else(|| {
                    invalid("json_structure_invalid: unbalanced closing bracket".into())
                })?;
            }
            _ => {}
        }
        if nodes > MAX_JSON_NODES {
            return Err(invalid(format!(
                "json_structure_limit: notebook JSON has more than {MAX_JSON_NODES} nodes"
            )));
        }
    }
    Ok(())
}
