//! `openapi.json`: OpenAPI 3.1 of the REST server, byte-identical to 0.4.6.
//!
//! The document and its routes are [`apizr_ir::surface::openapi`], the one implementation the
//! live REST server also answers `/openapi.json` with. This module adds the small value
//! builders the generator's other documents use.

use apizr_ir::Value;

pub use apizr_ir::surface::openapi::{REST_SCHEMA, TITLE, document, route};

/// A JSON object from pairs (keys are sorted by the map).
pub fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

pub fn text(s: &str) -> Value {
    Value::Str(s.to_string())
}
