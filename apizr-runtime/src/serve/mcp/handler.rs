//! The rmcp [`ServerHandler`]: `initialize`, `tools/list` and `tools/call` over a [`Service`]:
//! the Python capabilities' tools (named and described as in `mcp-tools.json`), then the native
//! endpoints' tools (their Rust names, doc comments and schemars schemas).
//!
//! Why a hand-written handler instead of rmcp's `#[tool]` macros: the tools are only known at
//! run time (from contracts), their schemas come from TypeSpecs rather than Rust types, and
//! argument validation must be the runtime's (with the reference's outcomes), so rmcp's own
//! schema validation stays off (`get_tool` returns None).

use std::sync::Arc;

use apizr_ir::json::Value;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolsCapability,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::exact;
use super::rewrite::{NOT_AN_OBJECT_META, RAW_ARGUMENTS_META};
use super::tools::{ToolSet, ToolSpec, native_tool_entry, structured_result};
use crate::serve::native::NativeEndpoint;
use crate::serve::reply::{Answer, McpReply, mcp_reply};
pub use crate::serve::reply::{
    BUSY, EXECUTION_FAILED, INVALID_ARGUMENTS, OVER_CAPACITY, RESOURCE_LIMIT, TIMED_OUT,
    UNKNOWN_TOOL,
};
use crate::serve::service::Service;
use crate::serve::spec::CancelOnDrop;

/// Server name in `serverInfo` (as the reference).
pub const SERVER_NAME: &str = "Apizr MCP";
/// Server version in `serverInfo` (as the reference).
pub const SERVER_VERSION: &str = "apizr.mcp/v1";

/// JSON-RPC `-32602` message for `arguments` that are not an object (the Python SDK's text).
pub const INVALID_PARAMS: &str = "Invalid request parameters";

/// A cheap-to-clone MCP server over one [`Service`].
#[derive(Clone)]
pub struct McpHandler {
    shared: Arc<Shared>,
}

struct Shared {
    tools: ToolSet,
    /// Native endpoints' tool names (their served names).
    native: Vec<String>,
    listed: Vec<Tool>,
    service: Arc<Service>,
}

impl std::fmt::Debug for McpHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHandler")
            .field("tools", &self.shared.listed.len())
            .finish()
    }
}

/// An apizr JSON value as a serde_json value (via its canonical text, which serde_json reads;
/// integers beyond 64 bits become floats here and stay exact in the text content).
pub fn to_json(value: &Value) -> Option<serde_json::Value> {
    serde_json::from_str(&value.canonical_string().ok()?).ok()
}

fn json_object(value: &Value) -> JsonObject {
    match to_json(value) {
        Some(serde_json::Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

/// The SDK's `Tool` of one spec: its `tools/list` entry ([`ToolSpec::listed_entry`], i.e. the
/// `mcp-tools.json` entry plus `outputSchema`) read as the SDK type, so the live list says
/// exactly what the generated document says. Reading cannot fail for the entries built there
/// (a string name, object schemas); if it did, the tool is still listed by name and input
/// schema so that it stays callable.
fn rmcp_tool(spec: &ToolSpec) -> Tool {
    to_json(&spec.listed_entry())
        .and_then(|entry| serde_json::from_value(entry).ok())
        .unwrap_or_else(|| {
            Tool::new_with_raw(
                spec.name.clone(),
                None,
                Arc::new(json_object(&spec.input_schema)),
            )
        })
}

/// The SDK's `Tool` of a native endpoint (read from its `tools/list` entry).
fn native_tool(endpoint: &NativeEndpoint) -> Tool {
    let entry = native_tool_entry(endpoint);
    serde_json::from_value(entry).unwrap_or_else(|_| {
        Tool::new_with_raw(
            endpoint.name,
            endpoint.description.map(Into::into),
            Arc::new(JsonObject::new()),
        )
    })
}

/// A tool-level error result: one text content, `isError: true`, no structured content.
pub fn error_result(text: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// Map a served call's answer to the MCP tool result. Integers beyond 64 bits in
/// `structuredContent` are markers that the transports restore ([`exact`]).
pub fn tool_result(answer: Answer) -> CallToolResult {
    match mcp_reply(answer) {
        McpReply::Success(value) => {
            let structured = structured_result(value);
            match (structured.canonical_string(), exact::to_json(&structured)) {
                (Ok(text), Some(json)) => {
                    let mut out = CallToolResult::structured(json);
                    out.content = vec![ContentBlock::text(text)];
                    out
                }
                _ => error_result(EXECUTION_FAILED),
            }
        }
        McpReply::Error(text) => error_result(text),
        McpReply::Refused(text) => error_result(&text),
        // The reference's text, plus (our addition) where and what as structured content.
        McpReply::InvalidArguments(structured) => {
            let mut out = error_result(INVALID_ARGUMENTS);
            out.structured_content = exact::to_json(&structured);
            out
        }
    }
}

impl McpHandler {
    /// Serve `tools` (built from the service's contracts) and the `native` endpoints through
    /// `service`.
    pub fn new(tools: ToolSet, native: &[NativeEndpoint], service: Arc<Service>) -> Self {
        let mut listed: Vec<Tool> = tools.tools().iter().map(rmcp_tool).collect();
        listed.extend(native.iter().map(native_tool));
        McpHandler {
            shared: Arc::new(Shared {
                tools,
                native: native.iter().map(|e| e.name.to_string()).collect(),
                listed,
                service,
            }),
        }
    }

    /// The tools as listed.
    pub fn listed(&self) -> &[Tool] {
        &self.shared.listed
    }

    /// One `tools/call`, independent of the transport. Missing `arguments` mean `{}`.
    pub async fn call(&self, name: &str, arguments: Option<JsonObject>) -> CallToolResult {
        let Ok(bytes) = serde_json::to_vec(&arguments.unwrap_or_default()) else {
            return error_result(INVALID_ARGUMENTS);
        };
        self.call_raw(name, &bytes).await
    }

    /// One `tools/call` with the arguments as raw JSON text (Python decoding semantics).
    pub async fn call_raw(&self, name: &str, arguments: &[u8]) -> CallToolResult {
        // Python tools are called by their capability (REST) name; native ones by their own.
        let served = match self.shared.tools.get(name) {
            Some(tool) => tool.contract.name.as_str(),
            None if self.shared.native.iter().any(|n| n == name) => name,
            None => return error_result(UNKNOWN_TOOL),
        };
        let result = self
            .shared
            .service
            .call(served, arguments, CancelOnDrop::never())
            .await;
        tool_result(result)
    }
}

/// What an apizr MCP server announces at `initialize`: tools only, a fixed list (tools never
/// change while it runs), and its name with the protocol version of this crate.
pub(super) fn tools_server_config(name: &str) -> ServerConfig {
    let mut tools = ToolsCapability::default();
    tools.list_changed = Some(false);
    let mut capabilities = ServerCapabilities::default();
    capabilities.tools = Some(tools);
    ServerConfig::new(capabilities).with_server_info(Implementation::new(name, SERVER_VERSION))
}

impl ServerHandler for McpHandler {
    fn get_info(&self) -> ServerConfig {
        tools_server_config(SERVER_NAME)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.shared.listed.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // A `notifications/cancelled` (or a closed HTTP stream) cancels the token; dropping
        // the call future cancels the running worker.
        // The exact arguments, when the transport carried them past serde_json (`rewrite`).
        let private = |key: &str| {
            request
                .meta
                .as_ref()
                .and_then(|m| m.0.0.get(key))
                .or_else(|| context.meta.0.0.get(key))
                .cloned()
        };
        if private(NOT_AN_OBJECT_META).is_some() {
            // As the Python SDK answers a request whose params fail validation.
            return Err(ErrorData::invalid_params(INVALID_PARAMS, None));
        }
        let raw = private(RAW_ARGUMENTS_META)
            .as_ref()
            .and_then(|v| v.as_str())
            .map(|s| s.as_bytes().to_vec());
        let call = async {
            match raw {
                Some(bytes) => self.call_raw(&request.name, &bytes).await,
                None => self.call(&request.name, request.arguments).await,
            }
        };
        let result = tokio::select! {
            r = call => r,
            () = context.ct.cancelled() => error_result(EXECUTION_FAILED),
        };
        Ok(result.into())
    }
}
