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
//! * [`transport`] — REST or MCP, and the file names of a project's manifest and documents.

pub mod mcp;
pub mod openapi;
pub mod transport;

pub use transport::Transport;
