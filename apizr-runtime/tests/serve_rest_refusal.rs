//! A governed server whose policy cannot be enforced where it runs is never "ready": `/readyz`
//! answers 503 naming the control and why, and every call is answered as a refusal (503 with
//! the control named) and audited — never a bare 500.
//!
//! The unenforceable control here is one no host can give: a disk cap under `filesystem:
//! host` (the worker may write wherever its uid may, so a cap on one directory would be a
//! claim). The same path serves a container whose seccomp profile forbids namespaces
//! (`apizr-cli/tests/generate_governed_image.rs` runs that on the real engine).
#![cfg(feature = "rest")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod serve_rest_support;

use std::time::Duration;

use apizr_ir::policy::{PolicyV1, Resources};
use apizr_runtime::serve::rest::run_rest_on;
use apizr_runtime::serve::{ExecutionMode, ServeOptions};
use serve_rest_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unenforceable_policy_is_never_ready_and_calls_are_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let policy = PolicyV1 {
        resources: Some(Resources {
            cpu_millis: None,
            memory_bytes: None,
            pids: None,
            disk_bytes: Some(1 << 20),
        }),
        ..PolicyV1::default()
    };
    let mut spec = kinds_spec(ExecutionMode::governed_v1(policy));
    spec.launcher = launcher();
    spec.audit = Some(audit.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = Server {
        addr: listener.local_addr().unwrap(),
    };
    tokio::spawn(async move { run_rest_on(listener, spec, ServeOptions::default()).await });

    // Started (the backend checked), but not ready, for good.
    let mut readiness = server.get("/readyz", None).await;
    for _ in 0..400 {
        if !String::from_utf8_lossy(&readiness.2).contains("Starting") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        readiness = server.get("/readyz", None).await;
    }
    let body = String::from_utf8_lossy(&readiness.2).into_owned();
    assert_eq!(readiness.0, 503, "{body}");
    assert!(
        body.contains("Policy cannot be enforced here: disk (1048576 bytes): a disk cap needs `filesystem: sandbox`"),
        "{body}"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(server.get("/readyz", None).await.0, 503, "still not ready");

    // A call is a refusal that names the control, and it is audited.
    let (status, _, got) = server.post("add", br#"{"a": 1}"#, &[]).await;
    assert_eq!(
        (status, String::from_utf8_lossy(&got).as_ref()),
        (503, r#"{"detail":"Policy cannot be enforced here: disk"}"#)
    );
    let lines = std::fs::read_to_string(&audit).unwrap();
    let records: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 1, "{lines}");
    assert_eq!(records[0]["status"], "policy_refused");
    assert_eq!(records[0]["refused"], serde_json::json!(["disk"]));
}
