//! The published surface of a set of contracts: what a REST or MCP server declares about its
//! capabilities, byte-identical to 0.4.6.
//!
//! Why here: the generator (`apizr-codegen`, which writes `openapi.json` and `mcp-tools.json`
//! into a project) and the live servers (`apizr-runtime`, which answer `/openapi.json` and
//! `tools/list`) must agree on every route, tool name and schema. Both depend on this crate
//! and neither on the other, so the one implementation of each rule lives here.
//!
//! * [`openapi`] — the OpenAPI 3.1 document of the REST server and its routes.
//! * [`mcp`] — the MCP tool naming rule and the `mcp-tools.json` document.

pub mod mcp;
pub mod openapi;

use crate::json::Value;

/// A JSON object from pairs (keys are sorted by the map).
pub(crate) fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

pub(crate) fn text(s: &str) -> Value {
    Value::Str(s.to_string())
}
