//! The OpenAPI 3.1 document of the REST server, for servers started without a bundle
//! (`apizr serve rest SOURCE`). A bundle's own `openapi.json` bytes are served as-is instead.
//!
//! The document is `apizr_ir::surface::openapi`, the one implementation the generator writes
//! `openapi.json` with; a test compares the bytes with the reference's generated file.

use apizr_ir::interface::InvocationContract;
use apizr_ir::surface::openapi;

use super::spec::ServedCapability;

/// Canonical bytes of the document (sorted keys, compact, one trailing newline).
pub fn bytes(capabilities: &[ServedCapability]) -> Vec<u8> {
    let contracts: Vec<InvocationContract> =
        capabilities.iter().map(|c| c.contract.clone()).collect();
    openapi::document(&contracts)
        .canonical_bytes()
        .unwrap_or_default()
}
