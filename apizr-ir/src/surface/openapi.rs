//! `openapi.json`: OpenAPI 3.1 of the REST server.
//!
//! Built as a [`Value`] so the canonical encoder gives the reference's bytes (sorted keys,
//! compact, raw UTF-8, Python floats). The document is the same in direct and governed mode:
//! statuses that only governed servers return (504, 503) are not declared, as in 0.4.6.

use std::collections::BTreeMap;

use crate::interface::{InvocationContract, type_schema};
use crate::json::{Value, obj, text};

/// `info.title`.
pub const TITLE: &str = "Apizr REST API";
/// `info.version`: the REST surface's version.
pub const REST_SCHEMA: &str = "apizr.rest/v1";

fn json_content(schema: Value) -> Value {
    obj(vec![("application/json", obj(vec![("schema", schema)]))])
}

fn described(description: &str) -> Value {
    obj(vec![("description", text(description))])
}

/// The route of a capability: `/capabilities/<function name>`.
pub fn route(contract: &InvocationContract) -> String {
    format!("/capabilities/{}", contract.name)
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

/// The whole document: `/health` and one operation per contract.
pub fn document(contracts: &[InvocationContract]) -> Value {
    let mut paths: BTreeMap<String, Value> =
        contracts.iter().map(|c| (route(c), operation(c))).collect();
    paths.insert("/health".into(), health());
    obj(vec![
        (
            "info",
            obj(vec![("title", text(TITLE)), ("version", text(REST_SCHEMA))]),
        ),
        ("openapi", text("3.1.0")),
        ("paths", Value::Object(paths)),
    ])
}
