//! How a served call is answered: one mapping from an [`Outcome`] (or a [`Rejected`] call) to
//! each transport's wire form — the REST status and body ([`http_reply`]) and the MCP tool
//! result ([`mcp_reply`]) — plus the metric label.
//!
//! Pure functions, no server types: the REST and MCP transports only turn these values into
//! axum and rmcp types, so the two transports cannot drift on what a status means.
//!
//! Invalid arguments refused before a backend ran also carry `errors` (where and what, our
//! documented addition to the reference's `detail`): in the REST 422 body after `detail`, and
//! as the MCP error result's structured content. Without errors the body is the reference's.
//!
//! | Outcome | REST | MCP |
//! | --- | --- | --- |
//! | success | 200, the value | structured content |
//! | invalid_input | 422 `detail` (+ `errors`) | `Invalid tool arguments` (+ structured `{detail, errors}`) |
//! | timeout | 504 | `Tool execution timed out` |
//! | resource_limit | 503 | `Tool execution resource limit exceeded` |
//! | policy_refused | 503 `Policy cannot be enforced here: <controls>` | the same text |
//! | any other status | 500 | `Tool execution failed` |
//! | busy (queue full) | 429 + `Retry-After` | `Tool busy; retry later` |
//! | over capacity (never fits the governed memory budget) | 503 | `Tool call exceeds …` |
//! | unknown capability | 404 | `Unknown tool` |
//! | cancelled | 500 | `Tool execution failed` |

use std::collections::BTreeMap;
use std::time::Duration;

use apizr_ir::Value;

use crate::call::Outcome;
use crate::status::Status;
use crate::validate::FieldError;

/// The governed invalid-input detail (every argument error looks the same from outside).
pub const GOVERNED_INVALID_DETAIL: &str = "Invalid request arguments";
/// The direct invalid-input detail when the worker (not the validator) refused a value.
pub const MISMATCH_DETAIL: &str = "Value does not match the declared input type";

/// MCP tool error texts (as the reference words them).
pub const UNKNOWN_TOOL: &str = "Unknown tool";
pub const INVALID_ARGUMENTS: &str = "Invalid tool arguments";
pub const EXECUTION_FAILED: &str = "Tool execution failed";
pub const TIMED_OUT: &str = "Tool execution timed out";
pub const RESOURCE_LIMIT: &str = "Tool execution resource limit exceeded";
/// Our own (the reference answers a generic failure): the policy cannot be enforced where the
/// server runs. A refusal is not a fault, and the operator must see which control it is.
pub const POLICY_REFUSED: &str = "Policy cannot be enforced here";
/// Our own (the reference has no admission queue): the per-tool queue is full.
pub const BUSY: &str = "Tool busy; retry later";
/// Our own: the call's memory limit exceeds the server's governed memory budget.
pub const OVER_CAPACITY: &str = "Tool call exceeds the server's governed memory budget";

/// Why a server did not run a call (nothing was started, so there is no outcome).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejected {
    /// No capability (REST route, MCP tool) of that name.
    UnknownCapability,
    /// The capability's queue (or the governed worker queue) is full.
    Busy { retry_after: Duration },
    /// One call's memory limit exceeds the server's whole governed memory budget, so it can
    /// never be admitted.
    OverCapacity,
    /// The caller went away or cancelled.
    Cancelled,
}

/// What a served call produced.
pub type Answer = Result<Outcome, Rejected>;

/// A REST answer: status code, JSON body, optional `Retry-After` seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpReply {
    pub status: u16,
    pub body: Vec<u8>,
    pub retry_after: Option<u64>,
}

impl HttpReply {
    /// `{"detail": text}`.
    pub fn detail(status: u16, text: &str) -> HttpReply {
        let mut body = String::from("{\"detail\":");
        apizr_ir::json::write_string(&mut body, text);
        body.push('}');
        HttpReply {
            status,
            body: body.into_bytes(),
            retry_after: None,
        }
    }
}

/// The REST answer of a served call.
pub fn http_reply(answer: Answer) -> HttpReply {
    let internal = || HttpReply::detail(500, "Internal server error");
    match answer {
        Ok(outcome) => match outcome.status {
            Status::Success => match outcome.value_json {
                Some(body) => HttpReply {
                    status: 200,
                    body,
                    retry_after: None,
                },
                None => match outcome.value.canonical_bytes() {
                    Ok(mut body) => {
                        body.pop();
                        HttpReply {
                            status: 200,
                            body,
                            retry_after: None,
                        }
                    }
                    Err(_) => internal(),
                },
            },
            Status::InvalidInput => {
                let mut body = invalid_arguments(&outcome)
                    .canonical_bytes()
                    .unwrap_or_default();
                body.pop();
                HttpReply {
                    status: 422,
                    body,
                    retry_after: None,
                }
            }
            Status::Timeout => HttpReply::detail(504, "Execution timed out"),
            Status::ResourceLimit => HttpReply::detail(503, "Execution resource limit exceeded"),
            Status::PolicyRefused => HttpReply::detail(503, &refused_text(&outcome)),
            _ => internal(),
        },
        Err(Rejected::Busy { retry_after }) => HttpReply {
            retry_after: Some(retry_after.as_secs().max(1)),
            ..HttpReply::detail(429, "Too many requests")
        },
        Err(Rejected::OverCapacity) => {
            HttpReply::detail(503, "Call exceeds the server's governed memory budget")
        }
        Err(Rejected::UnknownCapability) => HttpReply::detail(404, "Not Found"),
        Err(Rejected::Cancelled) => internal(),
    }
}

/// `{"detail": …, "errors": [{"expected","found","path"}…]}` of an invalid-input outcome;
/// `errors` is left out when there are none (the reference's body exactly).
pub fn invalid_arguments(outcome: &Outcome) -> Value {
    let detail = outcome.detail.as_deref().unwrap_or(GOVERNED_INVALID_DETAIL);
    let mut body = BTreeMap::from([("detail".to_string(), Value::Str(detail.into()))]);
    if !outcome.errors.is_empty() {
        let errors = outcome.errors.iter().map(FieldError::to_value).collect();
        body.insert("errors".to_string(), Value::Array(errors));
    }
    Value::Object(body)
}

/// The MCP answer of a served call: the value for structured content, or an error text (with
/// structured content for invalid arguments that say where and what).
#[derive(Debug, Clone, PartialEq)]
pub enum McpReply {
    Success(Value),
    Error(&'static str),
    InvalidArguments(Value),
    /// `policy_refused`: [`POLICY_REFUSED`] and the controls.
    Refused(String),
}

/// `Policy cannot be enforced here: network, filesystem` (the controls the backend named).
fn refused_text(outcome: &Outcome) -> String {
    let controls = outcome.refused_controls();
    if controls.is_empty() {
        POLICY_REFUSED.to_string()
    } else {
        format!("{POLICY_REFUSED}: {}", controls.join(", "))
    }
}

/// The MCP tool result of a served call.
pub fn mcp_reply(answer: Answer) -> McpReply {
    match answer {
        Ok(outcome) => match outcome.status {
            Status::Success => McpReply::Success(outcome.value),
            Status::InvalidInput if !outcome.errors.is_empty() => {
                McpReply::InvalidArguments(invalid_arguments(&outcome))
            }
            Status::InvalidInput => McpReply::Error(INVALID_ARGUMENTS),
            Status::Timeout => McpReply::Error(TIMED_OUT),
            Status::ResourceLimit => McpReply::Error(RESOURCE_LIMIT),
            Status::PolicyRefused => McpReply::Refused(refused_text(&outcome)),
            _ => McpReply::Error(EXECUTION_FAILED),
        },
        Err(Rejected::Busy { .. }) => McpReply::Error(BUSY),
        Err(Rejected::OverCapacity) => McpReply::Error(OVER_CAPACITY),
        Err(Rejected::UnknownCapability) => McpReply::Error(UNKNOWN_TOOL),
        Err(Rejected::Cancelled) => McpReply::Error(EXECUTION_FAILED),
    }
}

/// The metric label of a served call.
pub fn label(answer: &Answer) -> &'static str {
    match answer {
        Ok(outcome) => match outcome.status {
            Status::Success => "success",
            Status::InvalidInput => "invalid_input",
            Status::Timeout => "timeout",
            Status::ResourceLimit => "resource_limit",
            Status::PolicyRefused => "policy_refused",
            _ => "failed",
        },
        Err(Rejected::Busy { .. }) => "busy",
        Err(Rejected::OverCapacity) => "over_capacity",
        Err(Rejected::UnknownCapability) => "unknown",
        Err(Rejected::Cancelled) => "failed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::BackendKind;
    use crate::envelope::Envelope;

    fn ran(status: Status) -> Answer {
        Ok(Outcome::status(status).with_backend(BackendKind::OciContainer))
    }

    #[test]
    fn each_status_has_one_rest_and_one_mcp_answer() {
        let cases: [(Answer, u16, &str, McpReply); 9] = [
            (
                ran(Status::PolicyRefused),
                503,
                "policy_refused",
                McpReply::Refused(POLICY_REFUSED.into()),
            ),
            (
                Err(Rejected::OverCapacity),
                503,
                "over_capacity",
                McpReply::Error(OVER_CAPACITY),
            ),
            (
                ran(Status::ResourceLimit),
                503,
                "resource_limit",
                McpReply::Error(RESOURCE_LIMIT),
            ),
            (
                ran(Status::Timeout),
                504,
                "timeout",
                McpReply::Error(TIMED_OUT),
            ),
            (
                ran(Status::InvalidInput),
                422,
                "invalid_input",
                McpReply::Error(INVALID_ARGUMENTS),
            ),
            (
                ran(Status::BackendUnavailable),
                500,
                "failed",
                McpReply::Error(EXECUTION_FAILED),
            ),
            (
                Err(Rejected::Busy {
                    retry_after: Duration::from_millis(10),
                }),
                429,
                "busy",
                McpReply::Error(BUSY),
            ),
            (
                Err(Rejected::UnknownCapability),
                404,
                "unknown",
                McpReply::Error(UNKNOWN_TOOL),
            ),
            (
                Err(Rejected::Cancelled),
                500,
                "failed",
                McpReply::Error(EXECUTION_FAILED),
            ),
        ];
        for (answer, status, metric, mcp) in cases {
            assert_eq!(label(&answer), metric);
            assert_eq!(http_reply(answer.clone()).status, status, "{answer:?}");
            assert_eq!(mcp_reply(answer), mcp);
        }
        let busy = http_reply(Err(Rejected::Busy {
            retry_after: Duration::from_millis(10),
        }));
        assert_eq!(busy.retry_after, Some(1), "never Retry-After: 0");
        let report = crate::local::runtime::CallReport {
            refused: vec!["network", "filesystem"],
            ..Default::default()
        };
        let refused = Outcome::from_envelope(
            BackendKind::LocalProcess,
            Envelope::status(Status::PolicyRefused),
            crate::call::Report::Local(Box::new(report)),
        );
        assert_eq!(
            http_reply(Ok(refused)).body,
            b"{\"detail\":\"Policy cannot be enforced here: network, filesystem\"}"
        );
        assert_eq!(
            http_reply(ran(Status::InvalidInput)).body,
            b"{\"detail\":\"Invalid request arguments\"}"
        );
    }

    #[test]
    fn invalid_arguments_add_where_and_what() {
        let error = FieldError {
            path: "/a".into(),
            expected: "integer".into(),
            found: "string".into(),
        };
        let refused = Outcome::invalid_input(MISMATCH_DETAIL).with_errors(vec![error]);
        let body = r#"{"detail":"Value does not match the declared input type","errors":[{"expected":"integer","found":"string","path":"/a"}]}"#;
        assert_eq!(http_reply(Ok(refused.clone())).body, body.as_bytes());
        let McpReply::InvalidArguments(structured) = mcp_reply(Ok(refused)) else {
            panic!("no structured errors");
        };
        assert_eq!(structured.canonical_string().unwrap(), body);
    }

    #[test]
    fn success_bodies_keep_the_workers_json_when_present() {
        let value = Outcome::from_envelope(
            BackendKind::LocalProcess,
            Envelope::success(Value::Float(36.0)),
            crate::call::Report::None,
        );
        assert_eq!(http_reply(Ok(value.clone())).body, b"36.0");
        assert_eq!(mcp_reply(Ok(value)), McpReply::Success(Value::Float(36.0)));
        let mut raw = Outcome::status(Status::Success).with_backend(BackendKind::Direct);
        raw.value_json = Some(b"{\"b\":1,\"a\":2}".to_vec());
        assert_eq!(http_reply(Ok(raw)).body, b"{\"b\":1,\"a\":2}");
    }
}
