//! Arguments for a call, generated from its request JSON Schema (shared by the tests that run
//! every ready function once: `execute_sandbox.rs`, `readiness_corpus.rs`).
#![allow(dead_code, clippy::unwrap_used)]

/// A value valid under a (request) JSON Schema: the first choice of every `anyOf`/`enum`,
/// zero values, and every required property.
pub fn example(schema: &serde_json::Value) -> serde_json::Value {
    use serde_json::{Value, json};
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
        return first.clone();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(first) = schema.get(key).and_then(|e| e.get(0)) {
            return example(first);
        }
    }
    let kind = match schema.get("type") {
        Some(Value::Array(kinds)) => kinds.first().and_then(Value::as_str).unwrap_or(""),
        Some(kind) => kind.as_str().unwrap_or(""),
        None => "",
    };
    match kind {
        "integer" | "number" => json!(0),
        "string" => json!(""),
        "boolean" => json!(false),
        "array" => Value::Array(
            schema
                .get("prefixItems")
                .and_then(Value::as_array)
                .map(|items| items.iter().map(example).collect())
                .unwrap_or_default(),
        ),
        "object" => {
            let mut out = serde_json::Map::new();
            for name in schema["required"].as_array().into_iter().flatten() {
                let name = name.as_str().unwrap();
                out.insert(name.into(), example(&schema["properties"][name]));
            }
            Value::Object(out)
        }
        _ => Value::Null,
    }
}
