//! The OpenAPI 3.1 document of the REST server, for servers started without a bundle
//! (`apizr serve rest SOURCE`, programs serving registered bindings). A bundle's own
//! `openapi.json` bytes are served as-is instead.
//!
//! The Python part is `apizr_ir::surface::openapi`, the one implementation the generator writes
//! `openapi.json` with; a test compares the bytes with the reference's generated file. Native
//! endpoints add one `POST /capabilities/<name>` each, with the schemas of their Rust types
//! (schemars, draft 2020-12 — OpenAPI 3.1's own dialect, so `$schema` is dropped).

use apizr_ir::Value;
use apizr_ir::interface::InvocationContract;
use apizr_ir::json::{Dialect, obj, text};
use apizr_ir::surface::openapi;

use super::native::NativeEndpoint;
use super::spec::ServedCapability;

/// Canonical bytes of the document (sorted keys, compact, one trailing newline).
pub fn bytes(capabilities: &[ServedCapability]) -> Vec<u8> {
    let contracts: Vec<InvocationContract> =
        capabilities.iter().map(|c| c.contract.clone()).collect();
    bytes_with_native(&contracts, &[])
}

/// The document of Python contracts and native endpoints (without native endpoints: exactly
/// the generator's document).
pub fn bytes_with_native(contracts: &[InvocationContract], native: &[NativeEndpoint]) -> Vec<u8> {
    let mut document = openapi::document(contracts);
    if let Some(Value::Object(paths)) = match &mut document {
        Value::Object(map) => map.get_mut("paths"),
        _ => None,
    } {
        for endpoint in native {
            paths.insert(
                format!("/capabilities/{}", endpoint.name),
                native_operation(endpoint),
            );
        }
    }
    document.canonical_bytes().unwrap_or_default()
}

/// A serde_json schema as an apizr value, without `$schema`.
pub(crate) fn schema_value(schema: &serde_json::Value) -> Value {
    let mut schema = schema.clone();
    if let Some(map) = schema.as_object_mut() {
        map.remove("$schema");
    }
    let bytes = serde_json::to_vec(&schema).unwrap_or_default();
    apizr_ir::json::parse(&bytes, Dialect::Strict).unwrap_or(Value::Null)
}

fn content(schema: Value) -> Value {
    obj(vec![("application/json", obj(vec![("schema", schema)]))])
}

/// `POST /capabilities/<name>` of one native endpoint, with the answers its limits can give.
fn native_operation(endpoint: &NativeEndpoint) -> Value {
    let described = |d: &str| obj(vec![("description", text(d))]);
    let mut pairs = vec![
        ("operationId", text(&format!("native:{}", endpoint.name))),
        (
            "requestBody",
            obj(vec![
                ("content", content(schema_value(&(endpoint.input_schema)()))),
                ("required", Value::Bool(true)),
            ]),
        ),
        (
            "responses",
            obj(vec![
                (
                    "200",
                    obj(vec![
                        (
                            "content",
                            content(schema_value(&(endpoint.output_schema)())),
                        ),
                        ("description", text("Function result")),
                    ]),
                ),
                ("413", described("Input exceeds max_input_bytes")),
                ("422", described("Invalid request")),
                ("429", described("Too many requests (concurrency limit)")),
                ("500", described("Internal server error")),
                ("504", described("Execution timed out (wall_time_ms)")),
            ]),
        ),
        ("x-apizr-native", Value::Bool(true)),
    ];
    if let Some(description) = endpoint.description {
        pairs.push(("description", text(description)));
    }
    obj(vec![("post", obj(pairs))])
}
