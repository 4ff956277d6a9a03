//! The MCP tool surface of a set of contracts: the reference's tool naming rule,
//! the `mcp-tools.json` document, and our object-rooted `outputSchema`.
//!
//! The naming rule and the `mcp-tools.json` entries are `apizr_ir::surface::mcp`, the one
//! implementation the generator also writes its `mcp-tools.json` with, so a generated
//! project's document and the live `tools/list` agree on every name and schema. This module
//! adds what only a live server needs: result shapes and `outputSchema`. Pure, no SDK types.

use std::collections::BTreeMap;

use apizr_ir::interface::{InvocationContract, type_schema};
use apizr_ir::json::Value;
use apizr_ir::readiness::{TypeKind, TypeSpec};
pub use apizr_ir::surface::mcp::{
    CAPABILITY_ID_META, MCP_SCHEMA as MCP_SCHEMA_VERSION, PROTOCOL_TARGET, ToolNameCollision,
    tool_name,
};
use apizr_ir::surface::mcp::{tool_entry, tool_names, tools_document};

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
        tool_entry(&self.contract, &self.name)
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
    /// Build the tool set, sorted by capability id (the order of `mcp-tools.json`); a
    /// tool-name collision is an error (as in the reference).
    pub fn new(contracts: &[InvocationContract]) -> Result<ToolSet, ToolNameCollision> {
        let mut sorted = contracts.to_vec();
        sorted.sort_by(|a, b| a.capability_id.cmp(&b.capability_id));
        let names = tool_names(&sorted)?;
        let by_name = names.iter().cloned().zip(0..).collect();
        let tools = sorted
            .into_iter()
            .zip(names)
            .map(|(contract, name)| ToolSpec {
                name,
                input_schema: contract.request_schema(),
                output_schema: output_schema(&contract.returns),
                shape: result_shape(&contract.returns),
                contract,
            })
            .collect();
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
        let contracts: Vec<InvocationContract> =
            self.tools.iter().map(|t| t.contract.clone()).collect();
        let names: Vec<String> = self.tools.iter().map(|t| t.name.clone()).collect();
        tools_document(&contracts, &names)
    }
}

/// The `tools/list` entry of a native endpoint: its name, doc comment, input schema (from the
/// argument types) and `outputSchema` by the same [`ResultShape`] rule as Python tools — an
/// object type as is, a type that is never an object wrapped as `{"result": …}`, and none
/// when the schema does not say (an untagged enum may or may not be an object).
pub fn native_tool_entry(endpoint: &crate::serve::native::NativeEndpoint) -> serde_json::Value {
    use serde_json::{Value as Json, json};
    let mut entry = serde_json::Map::new();
    entry.insert("name".into(), Json::from(endpoint.name));
    if let Some(description) = endpoint.description {
        entry.insert("description".into(), Json::from(description));
    }
    entry.insert("inputSchema".into(), (endpoint.input_schema)());
    let mut output = (endpoint.output_schema)();
    let kind = output.get("type").and_then(Json::as_str).map(str::to_owned);
    let shape = match kind.as_deref() {
        Some("object") => ResultShape::Object,
        Some("string" | "integer" | "number" | "boolean" | "array" | "null") => {
            ResultShape::Wrapped
        }
        _ => ResultShape::ByValue,
    };
    match shape {
        ResultShape::Object => {
            entry.insert("outputSchema".into(), output);
        }
        ResultShape::Wrapped => {
            let dialect = output.as_object_mut().and_then(|m| m.remove("$schema"));
            let mut wrapped = json!({
                "additionalProperties": false,
                "properties": {"result": output},
                "required": ["result"],
                "type": "object",
            });
            if let (Some(map), Some(dialect)) = (wrapped.as_object_mut(), dialect) {
                map.insert("$schema".into(), dialect);
            }
            entry.insert("outputSchema".into(), wrapped);
        }
        ResultShape::ByValue => {}
    }
    Json::Object(entry)
}
