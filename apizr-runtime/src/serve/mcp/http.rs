//! MCP over Streamable HTTP at `/mcp` (rmcp's tower service inside an axum router).
//!
//! Why an axum layer around rmcp: the reference admits HTTP bodies before the SDK sees them
//! (4 MiB -> 413, JSON preflight -> 422 with the generic admission body), and
//! our servers add an optional bearer token, the body timeout (408), malformed framing (400)
//! and the server-wide body budget (503) of `serve::http`. rmcp runs stateless by default (no
//! `mcp-session-id`; every POST is answered on its own), with `--stateful` sessions on request.

use std::sync::Arc;
use std::time::Duration;

use apizr_ir::admission::{parse_permissive, preflight};
use axum::Router;
use std::borrow::Cow;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use hyper::body::Frame;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::exact::restore;
use super::handler::McpHandler;
use super::rewrite::rewrite;
use crate::call::ADMISSION_DETAIL;
use crate::serve::error::ServeError;
use crate::serve::http::{BodyBudget, read_body};
use crate::serve::options::HttpLimits;

/// Largest MCP HTTP body (the reference's limit).
pub const MAX_HTTP_BODY: usize = 4 * 1024 * 1024;

/// HTTP options of the MCP endpoint.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// Bearer token every request must carry.
    pub token: Option<String>,
    /// Keep per-client sessions (`mcp-session-id`) instead of answering statelessly.
    pub stateful: bool,
    /// Accept any `Host` header (non-loopback binds; the token protects them). Loopback binds
    /// keep rmcp's DNS-rebinding protection (loopback host names only).
    pub any_host: bool,
    /// Timeouts and the request-body memory bound.
    pub limits: HttpLimits,
}

struct Admission {
    token: Option<String>,
    /// Carry `tools/call` arguments (and results) exactly (`rewrite`/`restore`): plan tools.
    exact: bool,
    limits: HttpLimits,
    budget: BodyBudget,
}

fn detail(status: StatusCode, text: &str) -> Response {
    let mut body = String::from("{\"detail\":");
    apizr_ir::json::write_string(&mut body, text);
    body.push('}');
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Constant-time equality (length leaks, contents do not).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Token check, then body admission for POSTs; the admitted body is passed on unchanged.
async fn admission(State(state): State<Arc<Admission>>, request: Request, next: Next) -> Response {
    if let Some(token) = state.token.as_deref() {
        let ok = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "))
            .is_some_and(|given| same(given, token.as_bytes()));
        if !ok {
            let mut r = detail(StatusCode::UNAUTHORIZED, "Not authenticated");
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return r;
        }
    }
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let read = read_body(
        body,
        &parts.headers,
        MAX_HTTP_BODY,
        state.limits.body_timeout,
        &state.budget,
    )
    .await;
    // Held until rmcp has answered (the bytes live that long).
    let (bytes, _lease) = match read {
        Ok(read) => read,
        Err(e) => return e.response(Duration::from_secs(1)),
    };
    if std::str::from_utf8(&bytes).is_err() || preflight(&bytes, MAX_HTTP_BODY as u64).is_err() {
        return detail(StatusCode::UNPROCESSABLE_ENTITY, ADMISSION_DETAIL);
    }
    // Carry `tools/call` arguments past serde_json exactly (see `rewrite`); anything we
    // cannot decode is left to rmcp, which answers it as the protocol says.
    let rewritten = if state.exact {
        parse_permissive(&bytes).ok().and_then(rewrite)
    } else {
        None
    };
    let (mut parts, body) = match rewritten {
        Some(text) => (parts, text.into_bytes()),
        None => (parts, bytes.to_vec()),
    };
    parts
        .headers
        .insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    let body = Body::from(body);
    let response = next.run(Request::from_parts(parts, body)).await;
    if !state.exact {
        return response;
    }
    response.map(|body| Body::new(RestoredBody::new(body)))
}

/// A response body with exact integers restored ([`restore`]), line by line: complete lines
/// go out as they arrive (SSE events end with a newline), a partial line waits for the rest.
struct RestoredBody {
    inner: Body,
    carry: Vec<u8>,
    done: bool,
}

impl RestoredBody {
    fn new(inner: Body) -> Self {
        RestoredBody {
            inner,
            carry: Vec::new(),
            done: false,
        }
    }

    fn restored(bytes: &[u8]) -> Bytes {
        match std::str::from_utf8(bytes).map(restore) {
            Ok(Cow::Owned(text)) => Bytes::from(text),
            _ => Bytes::copy_from_slice(bytes),
        }
    }
}

impl HttpBody for RestoredBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        loop {
            if self.done {
                return Poll::Ready(None);
            }
            match Pin::new(&mut self.inner).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {
                    self.done = true;
                    if self.carry.is_empty() {
                        return Poll::Ready(None);
                    }
                    let rest = std::mem::take(&mut self.carry);
                    return Poll::Ready(Some(Ok(Frame::data(Self::restored(&rest)))));
                }
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(Some(Ok(frame))) => {
                    let data = match frame.into_data() {
                        Ok(data) => data,
                        Err(frame) => return Poll::Ready(Some(Ok(frame))),
                    };
                    self.carry.extend_from_slice(&data);
                    let Some(end) = self.carry.iter().rposition(|&b| b == b'\n') else {
                        continue;
                    };
                    let rest = self.carry.split_off(end + 1);
                    let lines = std::mem::replace(&mut self.carry, rest);
                    return Poll::Ready(Some(Ok(Frame::data(Self::restored(&lines)))));
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done || (self.carry.is_empty() && self.inner.is_end_stream())
    }

    /// Exact only for an empty body (restoring changes lengths), so an empty answer keeps
    /// its `Content-Length: 0`.
    fn size_hint(&self) -> hyper::body::SizeHint {
        if self.carry.is_empty() && self.inner.size_hint().exact() == Some(0) {
            return hyper::body::SizeHint::with_exact(0);
        }
        hyper::body::SizeHint::default()
    }
}

/// The router: `/mcp` and nothing else (other paths 404).
pub fn router(handler: McpHandler, options: &HttpOptions) -> Router {
    service_router(move || Ok(handler.clone()), options, true)
}

/// The `/mcp` router of any MCP server: the admission layer around rmcp's service, which
/// calls `factory` once per MCP session (stateful) or per request (stateless). `exact`:
/// `tools/call` arguments travel exactly (the plan handler reads them from `_meta`).
pub fn service_router<S>(
    factory: impl Fn() -> Result<S, std::io::Error> + Send + Sync + 'static,
    options: &HttpOptions,
    exact: bool,
) -> Router
where
    S: rmcp::ServerHandler + Send + 'static,
{
    service_router_with(factory, options, exact, Router::new())
}

/// [`service_router`] with `extra` routes behind the same admission (token, body limits).
pub fn service_router_with<S>(
    factory: impl Fn() -> Result<S, std::io::Error> + Send + Sync + 'static,
    options: &HttpOptions,
    exact: bool,
    extra: Router,
) -> Router
where
    S: rmcp::ServerHandler + Send + 'static,
{
    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(options.stateful)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_max_request_body_bytes(MAX_HTTP_BODY);
    if options.any_host {
        config = config.disable_allowed_hosts();
    }
    let service =
        StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), config);
    extra
        .nest_service("/mcp", service)
        .layer(from_fn_with_state(
            Arc::new(Admission {
                token: options.token.clone(),
                exact,
                limits: options.limits,
                budget: BodyBudget::new(options.limits.body_memory_bytes),
            }),
            admission,
        ))
}

/// Serve on an already-bound listener until `shutdown` resolves.
pub async fn serve_http(
    listener: tokio::net::TcpListener,
    handler: McpHandler,
    options: &HttpOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    crate::serve::http::serve(listener, router(handler, options), options.limits, shutdown)
        .await
        .map_err(|source| ServeError::Server {
            what: "mcp http server",
            source,
        })
}
