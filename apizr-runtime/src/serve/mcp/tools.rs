//! The MCP tool surface of a set of contracts: the reference's tool naming rule,
//! the `mcp-tools.json` document, and our object-rooted `outputSchema`.
//!
//! Why one pure module: the generated project's `mcp-tools.json` (byte-identical to 0.4.6) and
//! the live `tools/list` of the server must agree on every name and schema, so both are built
//! here from the same [`InvocationContract`]s, with no I/O and no SDK types.

use std::collections::BTreeMap;

use apizr_ir::Digest;
use apizr_ir::interface::{InvocationContract, type_schema};
use apizr_ir::json::Value;
use apizr_ir::readiness::{TypeKind, TypeSpec};

/// `_meta` key that carries the capability id of a tool.
pub const CAPABILITY_ID_META: &str = "sh.outerspace.apizr/capability-id";
/// `schema_version` of `mcp-tools.json` and the MCP manifest.
pub const MCP_SCHEMA_VERSION: &str = "apizr.mcp/v1";
/// `protocol.target` of `mcp-tools.json`.
pub const PROTOCOL_TARGET: &str = "2026-07-28";
/// Prefix reserved for derived tool names.
const RESERVED_PREFIX: &str = "apizr_";

/// Why a set of contracts cannot be exposed as MCP tools.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("MCP tool name collision: {name:?} is used by {first} and {second}")]
    Collision {
        name: String,
        first: String,
        second: String,
    },
}

/// The reference's naming rule: the function name when it matches `[A-Za-z0-9_.-]{1,64}` and
/// does not start with `apizr_`; otherwise `apizr_` + sha256 hex of the UTF-8 capability id.
pub fn tool_name(function_name: &str, capability_id: &str) -> String {
    let valid = (1..=64).contains(&function_name.len())
        && function_name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        && !function_name.starts_with(RESERVED_PREFIX);
    if valid {
        function_name.to_string()
    } else {
        format!(
            "{RESERVED_PREFIX}{}",
            Digest::sha256(capability_id.as_bytes()).value
        )
    }
}

/// How a result value becomes `structuredContent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultShape {
    /// The declared return type is always a JSON object: the value is the structured content.
    Object,
    /// The declared return type is never an object: always `{"result": value}`.
    Wrapped,
    /// The return type may or may not be an object (`any`, unions with objects): objects pass
    /// through and anything else is wrapped, like the reference; no `outputSchema` is declared.
    ByValue,
}

/// The result shape of a declared return type.
pub fn result_shape(returns: &TypeSpec) -> ResultShape {
    match returns.kind {
        TypeKind::Object | TypeKind::Dict => ResultShape::Object,
        _ if may_be_object(returns) => ResultShape::ByValue,
        _ => ResultShape::Wrapped,
    }
}

fn may_be_object(spec: &TypeSpec) -> bool {
    match spec.kind {
        TypeKind::Any | TypeKind::Object | TypeKind::Dict => true,
        TypeKind::Union => spec.items.iter().any(may_be_object),
        _ => false,
    }
}

/// `structuredContent` of a successful result: objects as they are, anything else wrapped as
/// `{"result": value}` (the same rule the reference applies to every value).
pub fn structured_result(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(map),
        other => Value::Object(BTreeMap::from([("result".to_string(), other)])),
    }
}

/// The object-rooted `outputSchema` of a return type, or None when the shape is by-value.
pub fn output_schema(returns: &TypeSpec) -> Option<Value> {
    match result_shape(returns) {
        ResultShape::Object => Some(type_schema(returns)),
        ResultShape::ByValue => None,
        ResultShape::Wrapped => Some(Value::Object(BTreeMap::from([
            ("additionalProperties".to_string(), Value::Bool(false)),
            (
                "properties".to_string(),
                Value::Object(BTreeMap::from([(
                    "result".to_string(),
                    type_schema(returns),
                )])),
            ),
            (
                "required".to_string(),
                Value::Array(vec![Value::Str("result".into())]),
            ),
            ("type".to_string(), Value::Str("object".into())),
        ]))),
    }
}

/// One tool: the name, its contract and the schemas, ready for `tools/list`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub contract: InvocationContract,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    pub shape: ResultShape,
}

impl ToolSpec {
    /// The tool entry of `mcp-tools.json` (no `outputSchema`, no annotations).
    pub fn reference_entry(&self) -> Value {
        let mut entry = BTreeMap::from([
            (
                "_meta".to_string(),
                Value::Object(BTreeMap::from([(
                    CAPABILITY_ID_META.to_string(),
                    Value::Str(self.contract.capability_id.clone()),
                )])),
            ),
            ("inputSchema".to_string(), self.input_schema.clone()),
            ("name".to_string(), Value::Str(self.name.clone())),
        ]);
        if let Some(doc) = &self.contract.description {
            entry.insert("description".to_string(), Value::Str(doc.clone()));
        }
        Value::Object(entry)
    }

    /// The live `tools/list` entry: the reference entry plus `outputSchema` when declared.
    pub fn listed_entry(&self) -> Value {
        let mut entry = self.reference_entry();
        if let (Value::Object(map), Some(schema)) = (&mut entry, &self.output_schema) {
            map.insert("outputSchema".to_string(), schema.clone());
        }
        entry
    }
}

/// The tools of one server, sorted by capability id, with a name index.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolSet {
    tools: Vec<ToolSpec>,
    by_name: BTreeMap<String, usize>,
}

impl ToolSet {
    /// Build the tool set; a tool-name collision is an error (as in the reference).
    pub fn new(contracts: &[InvocationContract]) -> Result<ToolSet, ToolError> {
        let mut sorted: Vec<&InvocationContract> = contracts.iter().collect();
        sorted.sort_by(|a, b| a.capability_id.cmp(&b.capability_id));
        let mut tools = Vec::with_capacity(sorted.len());
        let mut by_name = BTreeMap::new();
        for contract in sorted {
            let name = tool_name(&contract.name, &contract.capability_id);
            if let Some(&earlier) = by_name.get(&name) {
                let first = tools
                    .get(earlier)
                    .map(|t: &ToolSpec| t.contract.capability_id.clone())
                    .unwrap_or_default();
                return Err(ToolError::Collision {
                    name,
                    first,
                    second: contract.capability_id.clone(),
                });
            }
            by_name.insert(name.clone(), tools.len());
            tools.push(ToolSpec {
                name,
                input_schema: contract.request_schema(),
                output_schema: output_schema(&contract.returns),
                shape: result_shape(&contract.returns),
                contract: contract.clone(),
            });
        }
        Ok(ToolSet { tools, by_name })
    }

    /// Tools in capability-id order.
    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// Look a tool up by its MCP name.
    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.by_name.get(name).and_then(|&i| self.tools.get(i))
    }

    /// The `mcp-tools.json` document (write it with `canonical_bytes`).
    pub fn reference_document(&self) -> Value {
        Value::Object(BTreeMap::from([
            (
                "protocol".to_string(),
                Value::Object(BTreeMap::from([(
                    "target".to_string(),
                    Value::Str(PROTOCOL_TARGET.into()),
                )])),
            ),
            (
                "schema_version".to_string(),
                Value::Str(MCP_SCHEMA_VERSION.into()),
            ),
            (
                "tools".to_string(),
                Value::Array(self.tools.iter().map(ToolSpec::reference_entry).collect()),
            ),
        ]))
    }
}
