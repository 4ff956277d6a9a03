//! `apizr serve interpreter`: the agent code interpreter as one MCP tool, `python`
//! (input `{"code": string}`, structured result `apizr.interpreter-result/v1`), over stdio or
//! Streamable HTTP at `/mcp` (`interpreter_http.rs`).
//!
//! Rules:
//! * The tier and policy are the server's, fixed at start (flags); a client cannot change them.
//! * Without a session every call is a fresh run. With a session, each client has its own:
//!   stdio has one client; over HTTP a client is an MCP session (`mcp-session-id`, protocol
//!   versions that have one), and a request without one is a fresh run. The first call opens
//!   the client's session and later calls share its state; it ends with the client (HTTP:
//!   `DELETE /mcp` or rmcp's idle timeout) or the server, on idle expiry, or when a call
//!   times out (later calls then say so). At most `max_sessions` are open at once: a call
//!   that would open one more is refused with a result that says so.
//! * A call whose code did not succeed is a tool result with `isError: true` and the same
//!   structured result (so the agent sees stdout, stderr and why); protocol errors are kept
//!   for calls that are not `python` or have no string `code`.

use std::sync::atomic::{AtomicUsize, Ordering};
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

/// Sessions open at once over HTTP by default (each holds a process or a container).
pub const DEFAULT_MAX_SESSIONS: usize = 16;
/// Pre-started `local` processes the server keeps for one-shot runs unless told otherwise
/// (`--prestart N`; 0: every run starts its process when it arrives).
pub const DEFAULT_PRESTART: usize = 2;
/// The environment variable that sizes the pool when no flag does.
pub const PRESTART_ENV: &str = "APIZR_INTERPRETER_PRESTART";
/// A run that finds no pre-started process waits up to this many milliseconds for one before
/// starting cold (default 0: never waits; tests and benchmarks set it to make every run
/// pooled).
pub const PRESTART_WAIT_ENV: &str = "APIZR_INTERPRETER_PRESTART_WAIT_MS";

/// The MCP server of one interpreter environment, as one client sees it.
#[derive(Clone)]
pub struct InterpreterHandler {
    shared: Arc<Shared>,
    client: Arc<Client>,
}

/// What every client of the server shares.
struct Shared {
    environment: Environment,
    /// `Some` when a client's calls share a session (opened by its first call).
    session: Option<SessionOptions>,
    tool: Tool,
    /// Sessions open now, and the most allowed.
    live: AtomicUsize,
    max_sessions: usize,
    /// Every session opened (pruned when one is added), closed when the HTTP server stops.
    opened: Mutex<Vec<Session>>,
}

/// One client's session slot.
struct Client {
    session: Mutex<Option<Session>>,
    /// HTTP: only requests of an MCP session (`mcp-session-id`) use the session.
    http: bool,
    shared: Arc<Shared>,
}

impl Client {
    /// Take this client's session out of its slot, giving its place among the live ones back.
    fn release(&self) -> Option<Session> {
        let session = self
            .session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()?;
        self.shared.live.fetch_sub(1, Ordering::SeqCst);
        Some(session)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Some(session) = self.release() {
            // Closing waits for the process tree or the container: off the async runtime.
            std::thread::spawn(move || session.close());
        }
    }
}

impl std::fmt::Debug for InterpreterHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InterpreterHandler")
            .field("tier", &self.shared.environment.tier())
            .field("session", &self.shared.session.is_some())
            .field("http", &self.client.http)
            .finish()
    }
}

impl InterpreterHandler {
    /// Serve `environment`; with `session`, each client's calls share one persistent
    /// session; at most `max_sessions` at once.
    pub fn new(
        environment: Environment,
        session: Option<SessionOptions>,
        max_sessions: usize,
    ) -> Self {
        let shared = Arc::new(Shared {
            tool: python_tool(&environment),
            environment,
            session,
            live: AtomicUsize::new(0),
            max_sessions,
            opened: Mutex::new(Vec::new()),
        });
        InterpreterHandler {
            client: Arc::new(Client {
                session: Mutex::new(None),
                http: false,
                shared: shared.clone(),
            }),
            shared,
        }
    }

    /// A handler for one more HTTP client: the same server, an empty session slot.
    pub fn for_http_client(&self) -> Self {
        InterpreterHandler {
            shared: self.shared.clone(),
            client: Arc::new(Client {
                session: Mutex::new(None),
                http: true,
                shared: self.shared.clone(),
            }),
        }
    }

    /// Sessions open now (all clients).
    pub fn live_sessions(&self) -> usize {
        self.shared.live.load(Ordering::SeqCst)
    }

    /// The `python` tool as listed.
    pub fn tool(&self) -> &Tool {
        &self.shared.tool
    }

    /// Run `code` as one `python` call (blocking: run it off the async runtime).
    /// `in_protocol_session`: the request carried an MCP session (HTTP).
    pub fn run(&self, code: &str, in_protocol_session: bool) -> ExecutionResult {
        let Some(options) = &self.shared.session else {
            return self.shared.environment.execute(code);
        };
        if self.client.http && !in_protocol_session {
            return self.shared.environment.execute(code);
        }
        let mut slot = self
            .client
            .session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.is_none() {
            let live = &self.shared.live;
            if live.fetch_add(1, Ordering::SeqCst) >= self.shared.max_sessions {
                live.fetch_sub(1, Ordering::SeqCst);
                return ExecutionResult::skipped(
                    self.shared.environment.tier(),
                    format!(
                        "The session could not start: {} sessions are open (the server's limit)",
                        self.shared.max_sessions
                    ),
                );
            }
            match self.shared.environment.session(*options) {
                Ok(s) => {
                    let mut opened = self
                        .shared
                        .opened
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    opened.retain(Session::is_live);
                    opened.push(s.clone());
                    *slot = Some(s);
                }
                Err(crate::interpreter::SessionError::Refused(result)) => {
                    live.fetch_sub(1, Ordering::SeqCst);
                    return *result;
                }
                Err(e) => {
                    live.fetch_sub(1, Ordering::SeqCst);
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
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let in_protocol_session = context
            .extensions
            .get::<axum::http::request::Parts>()
            .is_some_and(|parts| parts.headers.contains_key("mcp-session-id"));
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
        let result = tokio::task::spawn_blocking(move || handler.run(&code, in_protocol_session))
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
    if let Some(session) = handler.client.release() {
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

/// Serve `handler` over Streamable HTTP at `http://host:port/mcp` until SIGINT/SIGTERM. With
/// sessions, rmcp keeps MCP sessions (`mcp-session-id`) and every one gets its own handler —
/// its own interpreter session; a client dropped by `DELETE /mcp` or rmcp's idle timeout
/// closes it. Open sessions are closed when the server stops.
pub async fn run_interpreter_http(
    handler: InterpreterHandler,
    options: crate::serve::options::ServeOptions,
) -> Result<(), ServeError> {
    options.check_exposure()?;
    let listener = options.listen("MCP interpreter", "/mcp").await?;
    let http = super::http::HttpOptions {
        token: options.token.clone(),
        stateful: handler.shared.session.is_some(),
        any_host: !super::is_loopback(&options.host),
        limits: options.http,
    };
    let factory = {
        let handler = handler.clone();
        move || Ok(handler.for_http_client())
    };
    // `/metrics`: the pre-start pool's series (behind the same token as `/mcp`).
    let metrics = {
        let environment = handler.shared.environment.clone();
        axum::Router::new().route(
            "/metrics",
            axum::routing::get(move || {
                let environment = environment.clone();
                async move { metrics_response(&environment) }
            }),
        )
    };
    let router = super::http::service_router_with(factory, &http, false, metrics);
    let served = crate::serve::http::serve(
        listener,
        router,
        http.limits,
        crate::serve::http::shutdown_signal(),
    )
    .await
    .map_err(|source| ServeError::Server {
        what: "mcp http server",
        source,
    });
    // Every client's session ends with the server (processes, containers, workspaces).
    let opened = std::mem::take(
        &mut *handler
            .shared
            .opened
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    tokio::task::spawn_blocking(move || {
        for session in opened {
            session.close();
        }
    })
    .await
    .ok();
    served
}

/// The server's `/metrics` text (Prometheus): the interpreter pool's series when it has one.
fn metrics_response(environment: &Environment) -> axum::response::Response {
    use axum::response::IntoResponse;
    let mut text = String::new();
    if let Some(stats) = environment.prestart_stats() {
        crate::serve::metrics::render_interpreter_pool(&mut text, &stats);
    }
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4",
        )],
        text,
    )
        .into_response()
}

/// [`serve_interpreter_stdio`] or, with `options.mcp_http`, [`run_interpreter_http`], on
/// its own tokio runtime (calls run on blocking threads).
pub fn serve_interpreter_on(
    handler: InterpreterHandler,
    options: Option<crate::serve::options::ServeOptions>,
) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|source| ServeError::Server {
            what: "tokio",
            source,
        })?;
    match options {
        Some(options) => runtime.block_on(run_interpreter_http(handler, options)),
        None => runtime.block_on(serve_interpreter_stdio(handler)),
    }
}
