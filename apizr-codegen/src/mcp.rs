//! `mcp-tools.json` and the tool naming rule, byte-identical to 0.4.6.
//!
//! Both are [`apizr_ir::surface::mcp`], the one implementation the live MCP server's
//! `tools/list` also uses; the generator adds only the SDK requirement of its manifest.

pub use apizr_ir::surface::mcp::{
    CAPABILITY_ID_META, MCP_SCHEMA, PROTOCOL_TARGET, ToolNameCollision, tool_name, tool_names,
    tools_document,
};

/// The SDK requirement recorded in the reference's manifest.
pub const PROTOCOL_SDK: &str = "mcp>=2.2,<3";
