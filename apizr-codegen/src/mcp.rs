//! `mcp-tools.json` and the tool naming rule, byte-identical to 0.4.6.
//!
//! A tool is named after its function when the name is a valid MCP tool name
//! (`[A-Za-z0-9_.-]{1,64}`) and does not claim the reserved `apizr_` prefix; otherwise it is
//! `apizr_` + sha256 hex of the capability id, which is stable and collision-free in practice.
//! Two capabilities that still end up with the same name refuse generation.

use std::collections::BTreeSet;

use apizr_ir::interface::InvocationContract;
use apizr_ir::{Digest, Value};

use crate::openapi::{obj, text};

/// The MCP protocol revision the reference's documents declare.
pub const PROTOCOL_TARGET: &str = "2026-07-28";
/// The SDK requirement recorded in the reference's manifest.
pub const PROTOCOL_SDK: &str = "mcp>=2.2,<3";
pub const CAPABILITY_META_KEY: &str = "sh.outerspace.apizr/capability-id";

fn valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        && !name.starts_with("apizr_")
}

/// The tool name of one contract.
pub fn tool_name(contract: &InvocationContract) -> String {
    if valid_tool_name(&contract.name) {
        contract.name.clone()
    } else {
        format!(
            "apizr_{}",
            Digest::sha256(contract.capability_id.as_bytes()).value
        )
    }
}

/// Tool names in contract order; a duplicate is an error.
pub fn tool_names(contracts: &[InvocationContract]) -> Result<Vec<String>, String> {
    let mut seen = BTreeSet::new();
    contracts
        .iter()
        .map(|c| {
            let name = tool_name(c);
            if seen.insert(name.clone()) {
                Ok(name)
            } else {
                Err(format!("MCP tool name collision: {name}"))
            }
        })
        .collect()
}

/// The `mcp-tools.json` document (tools in contract order, i.e. sorted by capability id).
pub fn tools_document(contracts: &[InvocationContract], names: &[String]) -> Value {
    let tools = contracts
        .iter()
        .zip(names)
        .map(|(contract, name)| {
            let mut pairs = vec![
                (
                    "_meta",
                    obj(vec![(CAPABILITY_META_KEY, text(&contract.capability_id))]),
                ),
                ("inputSchema", contract.request_schema()),
                ("name", text(name)),
            ];
            if let Some(description) = &contract.description {
                pairs.push(("description", text(description)));
            }
            obj(pairs)
        })
        .collect();
    obj(vec![
        ("protocol", obj(vec![("target", text(PROTOCOL_TARGET))])),
        ("schema_version", text("apizr.mcp/v1")),
        ("tools", Value::Array(tools)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(valid_tool_name("total"));
        assert!(valid_tool_name("a.b-c_9"));
        assert!(!valid_tool_name("apizr_thing"));
        assert!(!valid_tool_name("ünïcode"));
        assert!(!valid_tool_name(&"x".repeat(65)));
        assert!(valid_tool_name(&"x".repeat(64)));
    }
}
