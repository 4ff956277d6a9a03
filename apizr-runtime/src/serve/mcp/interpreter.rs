//! `apizr serve interpreter`: the agent code interpreter as one MCP tool, `python`
//! (input `{"code": string}`, structured result `apizr.interpreter-result/v1`), over stdio.
//!
//! Rules:
//! * The tier and policy are the server's, fixed at start (flags); a client cannot change them.
//! * Without a session every call is a fresh run. With a session (stdio: one client per
//!   server), the first call opens it and later calls share its state; it ends with the
//!   server, on idle expiry, or when a call times out (later calls then say so).
//! * A call whose code did not succeed is a tool result with `isError: true` and the same
//!   structured result (so the agent sees stdout, stderr and why); protocol errors are kept
//!   for calls that are not `python` or have no string `code`.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;

use super::handler::{error_result, tools_server_config};
use crate::interpreter::{Environment, ExecutionResult, Session, SessionOptions};
use crate::serve::error::ServeError;

/// The one tool's name.
pub const TOOL_NAME: &str = "python";
/// Server name in `serverInfo`.
pub const SERVER_NAME: &str = "Apizr interpreter";

/// The MCP server of one interpreter environment.
#[derive(Clone)]
pub struct InterpreterHandler {
    shared: Arc<Shared>,
}

struct Shared {
    environment: Environment,
    /// `Some` when calls share a session (opened by the first call).
    session: Option<(SessionOptions, Mutex<Option<Session>>)>,
    tool: Tool,
}

impl std::fmt::Debug for InterpreterHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InterpreterHandler")
            .field("tier", &self.shared.environment.tier())
            .field("session", &self.shared.session.is_some())
            .finish()
    }
}

impl InterpreterHandler {
    /// Serve `environment`; with `session`, calls share one persistent session.
    pub fn new(environment: Environment, session: Option<SessionOptions>) -> Self {
        InterpreterHandler {
            shared: Arc::new(Shared {
                tool: python_tool(&environment),
                environment,
                session: session.map(|o| (o, Mutex::new(None))),
            }),
        }
    }

    /// The `python` tool as listed.
    pub fn tool(&self) -> &Tool {
        &self.shared.tool
    }

    /// Run `code` as one `python` call (blocking: run it off the async runtime).
    pub fn run(&self, code: &str) -> ExecutionResult {
        let Some((options, slot)) = &self.shared.session else {
            return self.shared.environment.execute(code);
        };
        let mut slot = slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.is_none() {
            match self.shared.environment.session(*options) {
                Ok(s) => *slot = Some(s),
                Err(crate::interpreter::SessionError::Refused(result)) => return *result,
                Err(e) => {
                    return ExecutionResult::skipped(
                        self.shared.environment.tier(),
                        format!("The session could not start: {e}"),
                    );
                }
            }
        }
        match slot.as_ref() {
            Some(session) => session.execute(code),
            None => self.shared.environment.execute(code),
        }
    }
}

/// The tool's input and output schemas and a description naming the tier.
fn python_tool(environment: &Environment) -> Tool {
    let input = json!({
        "type": "object",
        "properties": { "code": { "type": "string", "description": "Python source to run" } },
        "required": ["code"],
        "additionalProperties": false,
    });
    let output = json!({
        "type": "object",
        "properties": {
            "success": { "type": "boolean" },
            "stdout": { "type": ["string", "null"] },
            "stderr": { "type": ["string", "null"] },
            "skipped": { "type": "boolean" },
            "exit_code": { "type": ["integer", "null"] },
            "exit_signal": { "type": ["integer", "null"] },
            "oom_killed": { "type": "boolean" },
            "timed_out": { "type": "boolean" },
        },
        "required": ["success", "skipped", "timed_out"],
    });
    let object = |v: serde_json::Value| match v {
        serde_json::Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    };
    let mut tool = Tool::new_with_raw(
        TOOL_NAME,
        Some(
            format!(
                "Run Python code in the `{}` tier and return its result (stdout, stderr, exit \
                 code, artifacts, and what the sandbox enforced).",
                environment.tier().name()
            )
            .into(),
        ),
        object(input),
    );
    tool.output_schema = Some(object(output));
    tool
}

/// The tool result of one run.
fn tool_result(result: &ExecutionResult) -> CallToolResult {
    match serde_json::from_str::<serde_json::Value>(&result.to_json()) {
        Ok(value) if result.success => CallToolResult::structured(value),
        Ok(value) => CallToolResult::structured_error(value),
        Err(_) => error_result("the result could not be encoded"),
    }
}

impl ServerHandler for InterpreterHandler {
    fn get_info(&self) -> ServerConfig {
        tools_server_config(SERVER_NAME)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            self.shared.tool.clone(),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != TOOL_NAME {
            return Ok(error_result(&format!("Unknown tool: {}", request.name)).into());
        }
        let code = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("code"))
            .and_then(serde_json::Value::as_str)
            .map(str::to_string);
        let Some(code) = code else {
            return Err(ErrorData::invalid_params(
                "arguments: expected {\"code\": string}",
                None,
            ));
        };
        let handler = self.clone();
        let result = tokio::task::spawn_blocking(move || handler.run(&code))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the call failed: {e}"), None))?;
        let mut out = tool_result(&result);
        if out.content.is_empty() {
            out.content = vec![ContentBlock::text(result.to_json())];
        }
        Ok(out.into())
    }
}

/// Serve `handler` over stdin/stdout until the client closes stdin; a session ends with it.
pub async fn serve_interpreter_stdio(handler: InterpreterHandler) -> Result<(), ServeError> {
    let result = match handler.clone().serve(rmcp::transport::io::stdio()).await {
        Ok(running) => {
            let _ = running.waiting().await;
            Ok(())
        }
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(ServeError::McpStart(Box::new(e))),
    };
    let session = handler.shared.session.as_ref().and_then(|(_, slot)| {
        slot.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    });
    if let Some(session) = session {
        tokio::task::spawn_blocking(move || session.close())
            .await
            .ok();
    }
    result
}

/// [`serve_interpreter_stdio`] on its own tokio runtime (calls run on blocking threads).
pub fn serve_interpreter_blocking(handler: InterpreterHandler) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| ServeError::Server {
            what: "tokio",
            source,
        })?;
    runtime.block_on(serve_interpreter_stdio(handler))
}
