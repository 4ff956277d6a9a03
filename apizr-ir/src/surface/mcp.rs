//! The MCP tool naming rule and `mcp-tools.json`.
//!
//! A tool is named after its function when the name is a valid MCP tool name
//! (`[A-Za-z0-9_.-]{1,64}`) and does not claim the reserved `apizr_` prefix; otherwise it is
//! `apizr_` + sha256 hex of the capability id, which is stable and collision-free in practice.
//! Two capabilities that still end up with the same name are refused.

use std::collections::BTreeMap;

use crate::digest::Digest;
use crate::interface::InvocationContract;
use crate::json::{Value, obj, text};

/// `schema_version` of `mcp-tools.json` and of the MCP manifest.
pub const MCP_SCHEMA: &str = "apizr.mcp/v1";
/// The MCP protocol revision the reference's documents declare (`protocol.target`).
pub const PROTOCOL_TARGET: &str = "2026-07-28";
/// `_meta` key that carries the capability id of a tool.
pub const CAPABILITY_ID_META: &str = "sh.outerspace.apizr/capability-id";
/// Prefix reserved for derived tool names.
const RESERVED_PREFIX: &str = "apizr_";

/// Two capabilities with one tool name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("MCP tool name collision: {name:?} is used by {first} and {second}")]
pub struct ToolNameCollision {
    pub name: String,
    pub first: String,
    pub second: String,
}

fn valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        && !name.starts_with(RESERVED_PREFIX)
}

/// The tool name of a capability: its function name when valid, else `apizr_` + sha256 hex
/// of the UTF-8 capability id.
pub fn tool_name(function_name: &str, capability_id: &str) -> String {
    if valid_tool_name(function_name) {
        function_name.to_string()
    } else {
        format!(
            "{RESERVED_PREFIX}{}",
            Digest::sha256(capability_id.as_bytes()).value
        )
    }
}

/// Tool names in contract order; a name taken twice is refused.
pub fn tool_names(contracts: &[InvocationContract]) -> Result<Vec<String>, ToolNameCollision> {
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    contracts
        .iter()
        .map(|c| {
            let name = tool_name(&c.name, &c.capability_id);
            if let Some(first) = seen.get(&name) {
                return Err(ToolNameCollision {
                    name,
                    first: (*first).to_string(),
                    second: c.capability_id.clone(),
                });
            }
            seen.insert(name.clone(), &c.capability_id);
            Ok(name)
        })
        .collect()
}

/// One tool's entry in `mcp-tools.json` (no `outputSchema`, no annotations). An empty
/// docstring is kept as an empty `description`, as the reference does.
pub fn tool_entry(contract: &InvocationContract, name: &str) -> Value {
    let mut pairs = vec![
        (
            "_meta",
            obj(vec![(CAPABILITY_ID_META, text(&contract.capability_id))]),
        ),
        ("inputSchema", contract.request_schema()),
        ("name", text(name)),
    ];
    if let Some(description) = &contract.description {
        pairs.push(("description", text(description)));
    }
    obj(pairs)
}

/// The `mcp-tools.json` document, tools in the order given (the reference's is by capability
/// id, which is the contracts' planned order).
pub fn tools_document(contracts: &[InvocationContract], names: &[String]) -> Value {
    let tools = contracts
        .iter()
        .zip(names)
        .map(|(contract, name)| tool_entry(contract, name))
        .collect();
    obj(vec![
        ("protocol", obj(vec![("target", text(PROTOCOL_TARGET))])),
        ("schema_version", text(MCP_SCHEMA)),
        ("tools", Value::Array(tools)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names_keep_the_function_name() {
        assert!(valid_tool_name("total"));
        assert!(valid_tool_name("a.b-c_9"));
        assert!(!valid_tool_name("apizr_thing"));
        assert!(!valid_tool_name("ünïcode"));
        assert!(!valid_tool_name(&"x".repeat(65)));
        assert!(valid_tool_name(&"x".repeat(64)));
        assert!(!valid_tool_name(""));
    }
}
