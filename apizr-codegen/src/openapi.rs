//! `openapi.json`: OpenAPI 3.1 of the REST server, byte-identical to 0.4.6.
//!
//! The document and its routes are [`apizr_ir::surface::openapi`], the one implementation the
//! live REST server also answers `/openapi.json` with.

pub use apizr_ir::surface::openapi::{REST_SCHEMA, TITLE, document, route};
