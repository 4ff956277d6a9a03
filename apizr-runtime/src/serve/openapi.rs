//! The OpenAPI 3.1 document of the REST server, for servers started without a bundle
//! (`apizr serve rest SOURCE`). A bundle's own `openapi.json` bytes are served as-is instead.
//!
//! Canonical JSON (sorted keys, compact, one trailing newline), as the reference writes it; a
//! test compares the bytes with the reference's generated file.

use apizr_ir::Value;
use apizr_ir::interface::type_schema;

use super::spec::ServedCapability;

fn obj<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn s(text: &str) -> Value {
    Value::Str(text.to_string())
}

fn json_content(schema: Value) -> Value {
    obj([("application/json", obj([("schema", schema)]))])
}

/// The document as a value.
pub fn document(capabilities: &[ServedCapability]) -> Value {
    let mut paths = std::collections::BTreeMap::new();
    paths.insert(
        "/health".to_string(),
        obj([(
            "get",
            obj([
                ("operationId", s("apizr_health")),
                (
                    "responses",
                    obj([(
                        "200",
                        obj([
                            (
                                "content",
                                json_content(obj([
                                    ("properties", obj([("status", obj([("const", s("ok"))]))])),
                                    ("required", Value::Array(vec![s("status")])),
                                    ("type", s("object")),
                                ])),
                            ),
                            ("description", s("Service health")),
                        ]),
                    )]),
                ),
            ]),
        )]),
    );
    for c in capabilities {
        let id = s(&c.contract.capability_id);
        let mut op = std::collections::BTreeMap::new();
        if let Some(d) = &c.contract.description {
            op.insert("description".to_string(), s(d));
        }
        op.insert("operationId".to_string(), id.clone());
        op.insert(
            "requestBody".to_string(),
            obj([
                ("content", json_content(c.request_schema.clone())),
                ("required", Value::Bool(true)),
            ]),
        );
        op.insert(
            "responses".to_string(),
            obj([
                (
                    "200",
                    obj([
                        ("content", json_content(type_schema(&c.contract.returns))),
                        (
                            "description",
                            s("Function result (return enforcement: none)"),
                        ),
                    ]),
                ),
                ("422", obj([("description", s("Invalid request"))])),
                ("500", obj([("description", s("Internal server error"))])),
            ]),
        );
        op.insert("x-apizr-capability-id".to_string(), id);
        paths.insert(
            format!("/capabilities/{}", c.name),
            obj([("post", Value::Object(op))]),
        );
    }
    obj([
        (
            "info",
            obj([
                ("title", s("Apizr REST API")),
                ("version", s("apizr.rest/v1")),
            ]),
        ),
        ("openapi", s("3.1.0")),
        ("paths", Value::Object(paths)),
    ])
}

/// Canonical bytes of [`document`].
pub fn bytes(capabilities: &[ServedCapability]) -> Vec<u8> {
    document(capabilities).canonical_bytes().unwrap_or_default()
}
