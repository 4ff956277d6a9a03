//! The MCP transport (cargo feature `mcp`): the contracts and native endpoints of a
//! [`ServicePlan`] as MCP tools, over stdio or Streamable HTTP at `/mcp`, executed by the
//! shared [`Service`] (the same one the REST transport calls).
//!
//! * [`tools`] — the reference's tool naming rule, `mcp-tools.json`, our `outputSchema`;
//! * [`handler`] — the rmcp `ServerHandler` and the tool results of `serve/reply.rs`;
//! * [`rewrite`] — `tools/call` arguments carried past rmcp exactly (big integers, `NaN`);
//! * [`exact`] — integers beyond 64 bits in `structuredContent`, restored on the way out;
//! * [`stdio`] — line admission in front of rmcp's stdio transport;
//! * `interpreter` (feature `interpreter`) — `apizr serve interpreter`: the `python` tool;
//! * [`http`] — the axum router with body admission and the optional bearer token.
//!
//! Protocol: rmcp 3.11 negotiates `2025-11-25` for `initialize`-based clients (as the
//! reference did with its SDK) and also serves the session-less `2026-07-28` revision.

pub mod exact;
pub mod handler;
pub mod http;
#[cfg(feature = "interpreter")]
pub mod interpreter;
pub mod rewrite;
pub mod stdio;
pub mod tools;

use std::sync::Arc;

pub use handler::McpHandler;
pub use http::HttpOptions;
pub use tools::{ToolSet, tool_name};

use super::error::ServeError;
use super::options::ServeOptions;
use super::service::{Service, ServicePlan};
use super::spec::ServeSpec;
use crate::pool::SetResults;

/// Start the invoker of `spec` and build the MCP handler over its capabilities.
pub async fn start_handler(spec: ServeSpec) -> Result<McpHandler, ServeError> {
    start_plan_handler(ServicePlan::from(spec)).await
}

/// Start the [`Service`] of `plan` and build the MCP handler over its Python capabilities and
/// native endpoints.
pub async fn start_plan_handler(plan: ServicePlan) -> Result<McpHandler, ServeError> {
    let tools = ToolSet::new(&plan.contracts())?;
    plan.names()?;
    for endpoint in &plan.native {
        // A native name that equals a Python tool's MCP name would be listed twice.
        if tools.get(endpoint.name).is_some() {
            return Err(ServeError::DuplicateName(endpoint.name.to_string()));
        }
    }
    let native = plan.native.clone();
    let service = Service::start(plan, SetResults::Reject).await?;
    Ok(McpHandler::new(tools, &native, Arc::new(service)))
}

/// Serve `spec` over stdio (default) or, with `options.mcp_http`, Streamable HTTP at
/// `http://host:port/mcp` until SIGINT/SIGTERM.
pub async fn run_mcp(spec: ServeSpec, options: ServeOptions) -> Result<(), ServeError> {
    run_mcp_plan(ServicePlan::from(spec), options).await
}

/// As [`run_mcp`], for any [`ServicePlan`] (registered bindings and native endpoints).
pub async fn run_mcp_plan(plan: ServicePlan, options: ServeOptions) -> Result<(), ServeError> {
    if !options.mcp_http {
        let handler = start_plan_handler(plan).await?;
        return stdio::serve_stdio(handler).await;
    }
    options.check_exposure()?;
    let handler = start_plan_handler(plan).await?;
    let listener = options.listen("MCP server", "/mcp").await?;
    let http = HttpOptions {
        token: options.token.clone(),
        stateful: false,
        any_host: !is_loopback(&options.host),
        limits: options.http,
    };
    http::serve_http(listener, handler, &http, super::http::shutdown_signal()).await
}

pub(crate) fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}
