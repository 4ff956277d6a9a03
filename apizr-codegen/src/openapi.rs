//! `openapi.json`: OpenAPI 3.1 of the REST server, byte-identical to 0.4.6.
//!
//! Built as an [`apizr_ir::Value`] so the canonical encoder gives the reference's bytes (sorted
//! keys, compact, raw UTF-8, Python floats). The document is the same in direct and governed
//! mode: statuses that only governed servers return (504, 503) are not declared, as in 0.4.6.

use std::collections::BTreeMap;

use apizr_ir::Value;
use apizr_ir::interface::{InvocationContract, type_schema};

pub const TITLE: &str = "Apizr REST API";

/// A JSON object from pairs (keys are sorted by the map).
pub fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

pub fn text(s: &str) -> Value {
    Value::Str(s.to_string())
}

fn json_content(schema: Value) -> Value {
    obj(vec![("application/json", obj(vec![("schema", schema)]))])
}

fn described(description: &str) -> Value {
    obj(vec![("description", text(description))])
}

/// `POST /capabilities/<name>` of one contract.
fn operation(contract: &InvocationContract) -> Value {
    let mut pairs = vec![
        ("operationId", text(&contract.capability_id)),
        (
            "requestBody",
            obj(vec![
                ("content", json_content(contract.request_schema())),
                ("required", Value::Bool(true)),
            ]),
        ),
        (
            "responses",
            obj(vec![
                (
                    "200",
                    obj(vec![
                        ("content", json_content(type_schema(&contract.returns))),
                        (
                            "description",
                            text("Function result (return enforcement: none)"),
                        ),
                    ]),
                ),
                ("422", described("Invalid request")),
                ("500", described("Internal server error")),
            ]),
        ),
        ("x-apizr-capability-id", text(&contract.capability_id)),
    ];
    // An empty docstring gives no `description` here (but an empty one in mcp-tools.json).
    if let Some(description) = contract.description.as_deref().filter(|d| !d.is_empty()) {
        pairs.push(("description", text(description)));
    }
    obj(vec![("post", obj(pairs))])
}

fn health() -> Value {
    let schema = obj(vec![
        (
            "properties",
            obj(vec![("status", obj(vec![("const", text("ok"))]))]),
        ),
        ("required", Value::Array(vec![text("status")])),
        ("type", text("object")),
    ]);
    obj(vec![(
        "get",
        obj(vec![
            ("operationId", text("apizr_health")),
            (
                "responses",
                obj(vec![(
                    "200",
                    obj(vec![
                        ("content", json_content(schema)),
                        ("description", text("Service health")),
                    ]),
                )]),
            ),
        ]),
    )])
}

/// The route of a capability.
pub fn route(contract: &InvocationContract) -> String {
    format!("/capabilities/{}", contract.name)
}

/// The whole document.
pub fn document(contracts: &[InvocationContract]) -> Value {
    let mut paths: BTreeMap<String, Value> =
        contracts.iter().map(|c| (route(c), operation(c))).collect();
    paths.insert("/health".into(), health());
    obj(vec![
        (
            "info",
            obj(vec![
                ("title", text(TITLE)),
                ("version", text("apizr.rest/v1")),
            ]),
        ),
        ("openapi", text("3.1.0")),
        ("paths", Value::Object(paths)),
    ])
}
