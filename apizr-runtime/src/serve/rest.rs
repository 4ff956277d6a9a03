//! The REST transport (axum): routes and status mapping of the reference's direct and governed
//! REST bundles, plus operational endpoints the reference lacks.
//!
//! | Route | Answer |
//! | --- | --- |
//! | `GET /health` | 200 `{"status":"ok"}` (also while starting) |
//! | `GET /readyz` | 200 once the workers / governed runtime are ready, 503 before (and for good when the policy cannot be enforced here, naming the controls and why) |
//! | `GET /metrics` | Prometheus text |
//! | `GET /openapi.json`, `GET /docs` | the document; a self-contained try-it page |
//! | `POST /capabilities/<name>` | 200 value · 422 detail · 429 + Retry-After · 400 · 408 · 413 · 500 · 503 · 504 |
//!
//! Routes go to a [`Service`]: Python capabilities and native endpoints alike (a native
//! endpoint's `max_input_bytes` is the body limit of its route, 413 past it).
//!
//! The listener is bound before the workers start so probes can watch start-up. With a token
//! every route but `/health` and `/readyz` (so `/docs` too) needs `Authorization: Bearer
//! <token>` (compared in constant time). A client that disconnects mid-call drops the handler
//! future, which kills the pool worker running the call and releases its gate slots. Bodies
//! are read by `serve::http::read_body`: 413 past 64 MiB, 408 past the body timeout, 400 for
//! broken framing (bad chunked encoding), 503 when the server-wide body budget is spent.

use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use super::error::ServeError;
use super::http::{BodyBudget, read_body};
use super::options::{HttpLimits, ServeOptions};
use super::reply::{HttpReply, http_reply};
use super::service::{Service, ServicePlan};
use super::spec::{CancelOnDrop, ServeSpec};
use crate::pool::SetResults;

struct AppState {
    service: OnceLock<Arc<Service>>,
    openapi: Vec<u8>,
    token: Option<String>,
    startup_error: OnceLock<String>,
    limits: HttpLimits,
    budget: BodyBudget,
}

type Shared = Arc<AppState>;

fn json(status: StatusCode, body: Vec<u8>) -> Response {
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn detail(status: StatusCode, text: &str) -> Response {
    json(status, HttpReply::detail(status.as_u16(), text).body)
}

/// The axum response of a call's [`HttpReply`].
fn response(reply: HttpReply) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = json(status, reply.body);
    if let Some(seconds) = reply.retry_after
        && let Ok(v) = HeaderValue::from_str(&seconds.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, v);
    }
    response
}

/// Constant-time equality (length leaks, contents do not).
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn authorized(state: &AppState, headers: &HeaderMap) -> bool {
    let Some(token) = &state.token else {
        return true;
    };
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "))
        .is_some_and(|given| same(given, token.as_bytes()))
}

fn unauthorized() -> Response {
    let mut r = detail(StatusCode::UNAUTHORIZED, "Not authenticated");
    r.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    r
}

async fn health() -> Response {
    json(StatusCode::OK, b"{\"status\":\"ok\"}".to_vec())
}

async fn readyz(State(state): State<Shared>) -> Response {
    if let Some(service) = state.service.get() {
        match service.not_ready() {
            // Started, but its policy cannot be enforced here: never "ready".
            Some(why) => detail(StatusCode::SERVICE_UNAVAILABLE, &why),
            None => json(StatusCode::OK, b"{\"status\":\"ready\"}".to_vec()),
        }
    } else if let Some(e) = state.startup_error.get() {
        detail(StatusCode::SERVICE_UNAVAILABLE, e)
    } else {
        detail(StatusCode::SERVICE_UNAVAILABLE, "Starting")
    }
}

async fn metrics(State(state): State<Shared>, headers: HeaderMap) -> Response {
    if !authorized(&state, &headers) {
        return unauthorized();
    }
    let text = state
        .service
        .get()
        .map(|s| s.metrics_text())
        .unwrap_or_default();
    let mut r = (StatusCode::OK, text).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    r
}

async fn openapi(State(state): State<Shared>, headers: HeaderMap) -> Response {
    if !authorized(&state, &headers) {
        return unauthorized();
    }
    json(StatusCode::OK, state.openapi.clone())
}

async fn docs(State(state): State<Shared>, headers: HeaderMap) -> Response {
    if !authorized(&state, &headers) {
        return unauthorized();
    }
    let mut r = (StatusCode::OK, super::rest_docs::DOCS_HTML).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    r
}

async fn call(
    State(state): State<Shared>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if !authorized(&state, &headers) {
        return unauthorized();
    }
    let Some(service) = state.service.get() else {
        return detail(StatusCode::SERVICE_UNAVAILABLE, "Service not ready");
    };
    if !service.serves(&name) {
        return detail(StatusCode::NOT_FOUND, "Not Found");
    }
    let read = read_body(
        body,
        &headers,
        service.max_input_bytes(&name),
        state.limits.body_timeout,
        &state.budget,
    )
    .await;
    let (bytes, _lease) = match read {
        Ok(read) => read,
        Err(e) => {
            let response = e.response(service.retry_after());
            service.metrics.http_status(response.status().as_u16());
            return response;
        }
    };
    let answer = service
        .call_json(&name, &bytes, CancelOnDrop::never())
        .await;
    let response = response(http_reply(answer));
    service.metrics.http_status(response.status().as_u16());
    response
}

/// Unknown paths (known paths answer 405 for other methods through their own fallbacks).
async fn fallback() -> Response {
    detail(StatusCode::NOT_FOUND, "Not Found")
}

async fn method_not_allowed() -> Response {
    detail(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed")
}

/// The router for a state (exposed for tests through [`run_rest_on`]).
fn router(state: Shared) -> Router {
    Router::new()
        .route("/health", get(health).fallback(method_not_allowed))
        .route("/readyz", get(readyz).fallback(method_not_allowed))
        .route("/metrics", get(metrics).fallback(method_not_allowed))
        .route("/openapi.json", get(openapi).fallback(method_not_allowed))
        .route("/docs", get(docs).fallback(method_not_allowed))
        .route(
            "/capabilities/{name}",
            post(call).fallback(method_not_allowed),
        )
        .fallback(fallback)
        .with_state(state)
}

/// Bind `options.host:options.port` and serve until SIGINT/SIGTERM.
pub async fn run_rest(spec: ServeSpec, options: ServeOptions) -> Result<(), ServeError> {
    run_rest_plan(ServicePlan::from(spec), options).await
}

/// As [`run_rest`], for any [`ServicePlan`] (registered bindings and native endpoints).
pub async fn run_rest_plan(plan: ServicePlan, options: ServeOptions) -> Result<(), ServeError> {
    options.check_exposure()?;
    let listener = options.listen("REST server", " (docs at /docs)").await?;
    run_rest_plan_on(listener, plan, options).await
}

/// Serve on an already-bound listener (tests bind port 0).
pub async fn run_rest_on(
    listener: tokio::net::TcpListener,
    spec: ServeSpec,
    options: ServeOptions,
) -> Result<(), ServeError> {
    run_rest_plan_on(listener, ServicePlan::from(spec), options).await
}

/// Serve a [`ServicePlan`] on an already-bound listener.
pub async fn run_rest_plan_on(
    listener: tokio::net::TcpListener,
    plan: ServicePlan,
    options: ServeOptions,
) -> Result<(), ServeError> {
    // Names clash before anything listens.
    plan.names()?;
    let openapi = plan.openapi();
    let state = Arc::new(AppState {
        service: OnceLock::new(),
        openapi,
        token: options.token.clone(),
        startup_error: OnceLock::new(),
        limits: options.http,
        budget: BodyBudget::new(options.http.body_memory_bytes),
    });
    let starter = state.clone();
    tokio::spawn(async move {
        match Service::start(plan, SetResults::ToList).await {
            Ok(service) => {
                let _ = starter.service.set(Arc::new(service));
            }
            Err(e) => {
                eprintln!("apizr: cannot start: {e}");
                let _ = starter.startup_error.set(e.to_string());
            }
        }
    });
    super::http::serve(
        listener,
        router(state),
        options.http,
        super::http::shutdown_signal(),
    )
    .await
    .map_err(|source| ServeError::Server {
        what: "server",
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::same;

    #[test]
    fn token_comparison() {
        assert!(same(b"secret", b"secret"));
        assert!(!same(b"secret", b"secreT"));
        assert!(!same(b"secret", b"secret2"));
        assert!(!same(b"", b"x"));
        assert!(same(b"", b""));
    }
}
