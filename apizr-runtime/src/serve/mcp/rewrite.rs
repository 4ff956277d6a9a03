//! Carrying `tools/call` arguments past rmcp exactly as the client sent them.
//!
//! Why: rmcp decodes messages with serde_json, which turns integers beyond 64 bits into floats
//! (an integral float then passes `int` validation: a silently wrong answer) and rejects the
//! `NaN`/`Infinity` literals that Python's decoder accepts (the reference answers those with
//! `Invalid tool arguments`). Both transports therefore decode each admitted message with
//! Python semantics first, move an object `arguments` into a private `_meta` entry as
//! canonical text (or `NaN` when it holds a non-finite number, which the invoker then rejects
//! as invalid input), and hand rmcp `arguments: {}`. The handler prefers the private entry.
//! `arguments` that are present but neither an object nor null get a private flag instead,
//! and the handler answers JSON-RPC `-32602` (rmcp alone would fail to decode the request and
//! answer `-32601`). Client-supplied entries of these names are removed first, so they cannot
//! be forged.

use std::collections::BTreeMap;

use apizr_ir::json::Value;

/// Private `_meta` key holding the canonical text of the original `arguments`.
pub const RAW_ARGUMENTS_META: &str = "sh.outerspace.apizr/raw-arguments";
/// Private `_meta` key marking `arguments` that were present but not an object (nor null):
/// the handler answers JSON-RPC `-32602`, as the Python SDK does.
pub const NOT_AN_OBJECT_META: &str = "sh.outerspace.apizr/arguments-not-an-object";

/// Text standing for arguments that contain a non-finite number (the invoker's admission
/// refuses it as invalid input, like the reference).
const NON_FINITE: &str = "NaN";

/// Whether `value` looks like a JSON-RPC 2.0 message (the stdio filter drops anything else
/// without a reply, like the reference).
pub fn is_jsonrpc(value: &Value) -> bool {
    matches!(value.get("jsonrpc"), Some(Value::Str(v)) if v == "2.0")
}

fn set_meta(params: &mut BTreeMap<String, Value>, key: &str, value: Value) {
    let meta = params
        .entry("_meta".to_string())
        .or_insert_with(|| Value::Object(BTreeMap::new()));
    if let Value::Object(meta) = meta {
        meta.insert(key.into(), value);
    }
}

fn strip_private(params: &mut BTreeMap<String, Value>) {
    if let Some(Value::Object(meta)) = params.get_mut("_meta") {
        meta.remove(RAW_ARGUMENTS_META);
        meta.remove(NOT_AN_OBJECT_META);
    }
}

fn rewrite_params(params: &mut BTreeMap<String, Value>) {
    strip_private(params);
    match params.get("arguments") {
        Some(Value::Object(_)) => {}
        None | Some(Value::Null) => return,
        Some(_) => {
            params.insert("arguments".into(), Value::Object(BTreeMap::new()));
            set_meta(params, NOT_AN_OBJECT_META, Value::Bool(true));
            return;
        }
    }
    let Some(arguments) = params.insert("arguments".into(), Value::Object(BTreeMap::new())) else {
        return;
    };
    let text = arguments
        .canonical_string()
        .unwrap_or_else(|_| NON_FINITE.to_string());
    set_meta(params, RAW_ARGUMENTS_META, Value::Str(text));
}

/// Rewrite one decoded message (or a batch) for rmcp; None when it has no JSON encoding left
/// (a non-finite number outside `arguments`).
pub fn rewrite(mut message: Value) -> Option<String> {
    match &mut message {
        Value::Object(map) => {
            let is_call = matches!(map.get("method"), Some(Value::Str(m)) if m == "tools/call");
            if let Some(Value::Object(params)) = map.get_mut("params") {
                if is_call {
                    rewrite_params(params);
                } else {
                    strip_private(params);
                }
            }
            message.canonical_string().ok()
        }
        Value::Array(items) => {
            let parts: Option<Vec<String>> = items.drain(..).map(rewrite).collect();
            Some(format!("[{}]", parts?.join(",")))
        }
        _ => message.canonical_string().ok(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use apizr_ir::admission::parse_permissive;

    fn run(text: &str) -> String {
        rewrite(parse_permissive(text.as_bytes()).unwrap()).unwrap()
    }

    #[test]
    fn moves_arguments_exactly() {
        let out = run(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":123456789012345678901234567890,"b":1e-07}}}"#,
        );
        assert_eq!(
            out,
            r#"{"id":1,"jsonrpc":"2.0","method":"tools/call","params":{"_meta":{"sh.outerspace.apizr/raw-arguments":"{\"a\":123456789012345678901234567890,\"b\":1e-07}"},"arguments":{},"name":"add"}}"#
        );
    }

    #[test]
    fn non_finite_and_forged_entries() {
        let out = run(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":NaN},"_meta":{"sh.outerspace.apizr/raw-arguments":"{}"}}}"#,
        );
        assert!(
            out.contains(r#""sh.outerspace.apizr/raw-arguments":"NaN""#),
            "{out}"
        );
        let forged = run(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","_meta":{"sh.outerspace.apizr/raw-arguments":"{\"a\":1}"}}}"#,
        );
        assert!(!forged.contains("raw-arguments"), "{forged}");
        // Non-object arguments are flagged (the handler answers -32602); null means none.
        let list = run(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":[1]}}"#,
        );
        assert_eq!(
            list,
            r#"{"id":1,"jsonrpc":"2.0","method":"tools/call","params":{"_meta":{"sh.outerspace.apizr/arguments-not-an-object":true},"arguments":{},"name":"add"}}"#
        );
        let null = run(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":null,"_meta":{"sh.outerspace.apizr/arguments-not-an-object":true}}}"#,
        );
        assert!(null.contains(r#""arguments":null"#), "{null}");
        assert!(!null.contains("not-an-object"), "{null}");
    }

    #[test]
    fn jsonrpc_detection() {
        assert!(is_jsonrpc(
            &parse_permissive(br#"{"jsonrpc":"2.0"}"#).unwrap()
        ));
        assert!(!is_jsonrpc(&parse_permissive(br#"{"hello":1}"#).unwrap()));
        assert!(!is_jsonrpc(&parse_permissive(b"[1]").unwrap()));
    }
}
