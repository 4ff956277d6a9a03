//! Native endpoints (`#[apizr_runtime::endpoint]` functions) as a server runs them: their
//! registration data ([`NativeEndpoint`]) and one call under its limits ([`NativeRoute`]).
//!
//! The limits are enforced here, by the router, not by the function:
//! * `max_input_bytes` — longer arguments are refused before they are decoded (REST: 413 while
//!   the body is read; MCP: invalid arguments);
//! * `concurrency` — at most N calls run; the next one is answered busy at once (REST 429 with
//!   `Retry-After`, MCP `Tool busy; retry later`): native calls do not queue;
//! * `wall_time_ms` — the answer is `timeout` at the deadline. An `async fn`'s task is aborted
//!   then. A plain `fn` runs on tokio's blocking pool and cannot be stopped (Rust has no safe
//!   way to kill a thread), so its `concurrency` slot stays taken until it returns: a stuck
//!   sync endpoint cannot pile up more threads than its limit.
//!
//! The function's `Err` and a panic are `execution_failed`; their text goes to the server's
//! stderr, never to the client (as a Python traceback does not). Arguments that do not decode
//! (wrong type, missing or unknown field: the argument struct denies unknown fields, as its
//! schema says `additionalProperties: false`) are `invalid_input` with serde's message.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use apizr_ir::Digest;
use serde_json::Value as Json;
use tokio::sync::Semaphore;

use super::reply::{Answer, Rejected};
use super::spec::Gates;
use crate::audit::AuditRecord;
use crate::call::{MAX_ARGUMENT_BYTES, Outcome};
use crate::status::Status;

/// The limits of a native endpoint (`None`: the server's default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limits {
    pub wall_time_ms: Option<u64>,
    pub max_input_bytes: Option<u64>,
    pub concurrency: Option<u64>,
}

/// Why a native endpoint did not answer a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointError {
    /// The arguments did not decode (the caller's fault).
    InvalidInput(String),
    /// The function returned `Err` (its `Display`).
    Failed(String),
    /// The result could not be encoded as JSON.
    ResultInvalid(String),
}

/// A boxed, sendable future of an endpoint's answer.
pub type BoxFuture = Pin<Box<dyn Future<Output = Result<Json, EndpointError>> + Send + 'static>>;

/// How a native endpoint runs: sync functions run on tokio's blocking pool.
#[derive(Debug, Clone, Copy)]
pub enum Handler {
    Sync(fn(Json) -> Result<Json, EndpointError>),
    Async(fn(Json) -> BoxFuture),
}

/// One `#[endpoint]` function, as its expansion registers it.
#[derive(Debug, Clone, Copy)]
pub struct NativeEndpoint {
    pub name: &'static str,
    /// The doc comment.
    pub description: Option<&'static str>,
    pub limits: Limits,
    /// The request schema (draft 2020-12, closed object of the arguments).
    pub input_schema: fn() -> Json,
    /// The response schema.
    pub output_schema: fn() -> Json,
    pub handler: Handler,
}

/// A native endpoint with its limits resolved against the server's defaults.
#[derive(Debug)]
pub(crate) struct NativeRoute {
    pub endpoint: NativeEndpoint,
    pub max_input_bytes: usize,
    wall_time: Option<Duration>,
    permits: Arc<Semaphore>,
    retry_after: Duration,
    /// `sha256:` of the resolved limits as canonical JSON: what governs the call.
    policy_digest: String,
}

impl NativeRoute {
    pub(crate) fn new(endpoint: NativeEndpoint, gates: &Gates) -> NativeRoute {
        let limits = endpoint.limits;
        let max_input_bytes = limits
            .max_input_bytes
            .map_or(MAX_ARGUMENT_BYTES, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            })
            .min(MAX_ARGUMENT_BYTES);
        let concurrency = limits
            .concurrency
            .map_or(gates.concurrency, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            })
            .clamp(1, Semaphore::MAX_PERMITS);
        let resolved = serde_json::json!({
            "concurrency": concurrency,
            "max_input_bytes": max_input_bytes,
            "wall_time_ms": limits.wall_time_ms,
        });
        let policy_digest = apizr_ir::json::canonical_bytes(&resolved)
            .map(|bytes| Digest::sha256(&bytes).prefixed())
            .unwrap_or_default();
        NativeRoute {
            endpoint,
            max_input_bytes,
            wall_time: limits.wall_time_ms.map(Duration::from_millis),
            permits: Arc::new(Semaphore::new(concurrency)),
            retry_after: gates.retry_after,
            policy_digest,
        }
    }

    /// One call: size → concurrency → decode and run under the deadline.
    pub(crate) async fn call(&self, arguments: &[u8]) -> Answer {
        if arguments.len() > self.max_input_bytes {
            return Ok(Outcome::invalid_input(format!(
                "Input exceeds max_input_bytes ({})",
                self.max_input_bytes
            )));
        }
        let Ok(permit) = self.permits.clone().try_acquire_owned() else {
            return Err(Rejected::Busy {
                retry_after: self.retry_after,
            });
        };
        let input: Json = match serde_json::from_slice(arguments) {
            Ok(value @ Json::Object(_)) => value,
            Ok(_) => return Ok(Outcome::invalid_input("Arguments must be a JSON object")),
            Err(e) => return Ok(Outcome::invalid_input(e.to_string())),
        };
        let task = match self.endpoint.handler {
            // The permit moves into the task: it is released when the function returns.
            Handler::Sync(function) => tokio::task::spawn_blocking(move || {
                let _permit = permit;
                function(input)
            }),
            Handler::Async(function) => tokio::spawn(async move {
                let _permit = permit;
                function(input).await
            }),
        };
        let abort = task.abort_handle();
        let joined = match self.wall_time {
            Some(deadline) => match tokio::time::timeout(deadline, task).await {
                Ok(joined) => joined,
                Err(_) => {
                    abort.abort();
                    return Ok(Outcome::status(Status::Timeout));
                }
            },
            None => task.await,
        };
        Ok(self.outcome(joined))
    }

    fn outcome(
        &self,
        joined: Result<Result<Json, EndpointError>, tokio::task::JoinError>,
    ) -> Outcome {
        let name = self.endpoint.name;
        let failed = |status: Status, why: &str| {
            eprintln!("apizr: {name} ({}): {why}", status.wire_name());
            Outcome::status(status)
        };
        match joined {
            Ok(Ok(value)) => success(value),
            Ok(Err(EndpointError::InvalidInput(detail))) => Outcome::invalid_input(detail),
            Ok(Err(EndpointError::Failed(why))) => failed(Status::ExecutionFailed, &why),
            Ok(Err(EndpointError::ResultInvalid(why))) => failed(Status::ResultInvalid, &why),
            Err(e) if e.is_panic() => failed(Status::ExecutionFailed, "the function panicked"),
            Err(_) => failed(Status::ExecutionFailed, "the call was aborted"),
        }
    }

    /// The audit record of one call (the same line as a Python call's; a native function is
    /// part of this binary, so `executable_digest` says `native`, and `policy_digest` is the
    /// digest of its resolved limits).
    pub(crate) fn audit_record(&self, answer: &Answer, elapsed: Duration) -> AuditRecord {
        let status = match answer {
            Ok(outcome) => outcome.status.wire_name(),
            // Never ran: refused by the concurrency gate, or the caller went away.
            Err(Rejected::Busy { .. }) => "busy",
            Err(_) => "cancelled",
        };
        AuditRecord {
            schema_version: crate::audit::AUDIT_SCHEMA,
            capability_id: format!("native:{}", self.endpoint.name),
            executable_digest: "native".to_string(),
            policy_digest: self.policy_digest.clone(),
            status,
            duration_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            limits_hit: match answer {
                Ok(outcome) if outcome.status == Status::Timeout => {
                    vec!["wall_time".to_string()]
                }
                Err(Rejected::Busy { .. }) => vec!["concurrency".to_string()],
                _ => Vec::new(),
            },
            refused: Vec::new(),
            controls: Vec::new(),
            status_source: "router",
            worker_status: None,
            exit: None,
            process: None,
        }
    }
}

/// A successful outcome: the value for MCP, its JSON text for REST.
fn success(value: Json) -> Outcome {
    let text = serde_json::to_vec(&value).unwrap_or_default();
    match apizr_ir::json::parse(&text, apizr_ir::json::Dialect::Strict) {
        Ok(parsed) => Outcome {
            value: parsed,
            value_json: Some(text),
            ..Outcome::status(Status::Success)
        },
        Err(_) => Outcome::status(Status::ResultInvalid),
    }
}
