//! REST server end to end over real HTTP: parity vectors recorded from the reference's
//! generated FastAPI apps (`serve_rest_data/refresh.py`), direct and governed, plus the
//! operational features the reference lacks (token, 413, 429, timeout and disconnect kills,
//! readiness, metrics, docs, bundle verification).
#![cfg(feature = "rest")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod serve_rest_support;

use std::time::Duration;

use apizr_runtime::serve::{ExecutionMode, ServeOptions};
use serve_rest_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_matches_reference_vectors() {
    let server = Server::start(kinds_spec(direct(2)), ServeOptions::default()).await;
    let (passed, failures) = run_vectors(&server, "direct").await;
    assert!(
        failures.is_empty(),
        "{passed} passed; failures:\n{}",
        failures.join("\n")
    );
    assert!(passed >= 60, "only {passed} vectors");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn governed_matches_reference_vectors() {
    let mut spec = kinds_spec(ExecutionMode::governed_v1(Default::default()));
    spec.launcher = launcher();
    let server = Server::start(spec, ServeOptions::default()).await;
    let (passed, failures) = run_vectors(&server, "governed").await;
    assert!(
        failures.is_empty(),
        "{passed} passed; failures:\n{}",
        failures.join("\n")
    );
}

/// A 422 keeps the reference's detail (per mode) and adds where and what: the same `errors`
/// in direct and governed mode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_level_422_is_the_same_in_direct_and_governed() {
    let mut governed = kinds_spec(ExecutionMode::governed_v1(Default::default()));
    governed.launcher = launcher();
    let direct = Server::start(kinds_spec(direct(1)), ServeOptions::default()).await;
    let governed = Server::start(governed, ServeOptions::default()).await;
    let cases: [(&str, &[u8], &str, &str); 3] = [
        (
            "totals",
            br#"{"prices": [1, "2"], "extra": {}}"#,
            "Value does not match the declared input type",
            r#"[{"expected":"number","found":"string","path":"/prices/1"}]"#,
        ),
        (
            "span",
            br#"{"pair": [1, "a", 2]}"#,
            "Tuple length mismatch",
            r#"[{"expected":"array of 2 items (array [integer, string])","found":"array of 3 items","path":"/pair"}]"#,
        ),
        (
            "add",
            br#"{"a": 1,}"#,
            "Expecting property name enclosed in double quotes: line 1 column 9 (char 8)",
            r#"[{"expected":"a JSON document","found":"invalid JSON: Expecting property name enclosed in double quotes: line 1 column 9 (char 8)","path":""}]"#,
        ),
    ];
    for (name, body, detail, errors) in cases {
        let (status, _, got) = direct.post(name, body, &[]).await;
        let want = format!(r#"{{"detail":"{detail}","errors":{errors}}}"#);
        assert_eq!(
            (status, String::from_utf8_lossy(&got).as_ref()),
            (422, want.as_str())
        );
        let (status, _, got) = governed.post(name, body, &[]).await;
        let want = format!(r#"{{"detail":"Invalid request arguments","errors":{errors}}}"#);
        assert_eq!(
            (status, String::from_utf8_lossy(&got).as_ref()),
            (422, want.as_str())
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_is_byte_identical_to_the_reference() {
    let server = Server::start(kinds_spec(direct(1)), ServeOptions::default()).await;
    let (status, _, body) = server.get("/openapi.json", None).await;
    assert_eq!(status, 200);
    let want = std::fs::read(data("openapi.reference.json")).unwrap();
    assert_eq!(
        String::from_utf8(body).unwrap(),
        String::from_utf8(want).unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routes_health_methods_and_unknown_paths() {
    let server = Server::start(kinds_spec(direct(1)), ServeOptions::default()).await;
    assert_eq!(server.get("/health", None).await.2, b"{\"status\":\"ok\"}");
    assert_eq!(server.get("/readyz", None).await.0, 200);
    let (status, _, body) = server.get("/capabilities/add", None).await;
    assert_eq!(
        (status, body.as_slice()),
        (405, &b"{\"detail\":\"Method Not Allowed\"}"[..])
    );
    let (status, _, body) = server.request("POST", "/health", b"", &[]).await;
    assert_eq!(
        (status, body.as_slice()),
        (405, &b"{\"detail\":\"Method Not Allowed\"}"[..])
    );
    let (status, _, body) = server.get("/nope", None).await;
    assert_eq!(
        (status, body.as_slice()),
        (404, &b"{\"detail\":\"Not Found\"}"[..])
    );
    let (status, _, docs) = server.get("/docs", None).await;
    assert_eq!(status, 200);
    let docs = String::from_utf8(docs).unwrap();
    assert!(docs.contains("openapi.json") && docs.contains("Try it"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_persists_within_a_worker() {
    let server = Server::start(slow_spec(direct(1), None), ServeOptions::default()).await;
    let mut seen = vec![];
    for _ in 0..3 {
        seen.push(server.post("bump", b"{}", &[]).await.2);
    }
    assert_eq!(seen, vec![b"1".to_vec(), b"2".to_vec(), b"3".to_vec()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_kills_and_respawns_the_worker() {
    let server = Server::start(slow_spec(direct(1), Some(400)), ServeOptions::default()).await;
    assert_eq!(server.post("bump", b"{}", &[]).await.2, b"1");
    let (status, _, body) = server.post("nap", b"{\"seconds\": 5}", &[]).await;
    assert_eq!(
        (status, body.as_slice()),
        (504, &b"{\"detail\":\"Execution timed out\"}"[..])
    );
    // A fresh worker: module state starts over.
    assert_eq!(server.post("bump", b"{}", &[]).await.2, b"1");
    assert!(server.metric("apizr_worker_kills_total").await >= 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_disconnect_kills_the_running_worker() {
    let server = Server::start(slow_spec(direct(1), None), ServeOptions::default()).await;
    assert_eq!(server.metric("apizr_worker_kills_total").await, 0.0);
    server
        .post_and_hang_up("nap", b"{\"seconds\": 30}", Duration::from_millis(300))
        .await;
    let mut killed = 0.0;
    for _ in 0..50 {
        killed = server.metric("apizr_worker_kills_total").await;
        if killed >= 1.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(killed, 1.0);
    // The pool recovers: the next call gets a fresh worker.
    assert_eq!(server.post("bump", b"{}", &[]).await.2, b"1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_queue_answers_429_with_retry_after() {
    let mut spec = slow_spec(direct(2), None);
    spec.gates.concurrency = 1;
    spec.gates.queue = 1;
    let server = Server::start(spec, ServeOptions::default()).await;
    let a = server.clone();
    let b = server.clone();
    let first = tokio::spawn(async move { a.post("nap", b"{\"seconds\": 1}", &[]).await.0 });
    tokio::time::sleep(Duration::from_millis(150)).await;
    let second = tokio::spawn(async move { b.post("nap", b"{\"seconds\": 0.1}", &[]).await.0 });
    tokio::time::sleep(Duration::from_millis(150)).await;
    let (status, headers, body) = server.post("nap", b"{\"seconds\": 0}", &[]).await;
    assert_eq!(status, 429);
    assert!(
        headers.to_ascii_lowercase().contains("retry-after: 1"),
        "{headers}"
    );
    assert_eq!(body, b"{\"detail\":\"Too many requests\"}");
    assert_eq!(first.await.unwrap(), 200);
    assert_eq!(second.await.unwrap(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_body_is_413() {
    let server = Server::start(kinds_spec(direct(1)), ServeOptions::default()).await;
    let (status, _, body) = server
        .request_declared_length("/capabilities/add", 64 * 1024 * 1024 + 1)
        .await;
    assert_eq!(status, 413);
    assert_eq!(
        body,
        b"{\"detail\":\"JSON admission limit or encoding rejected\"}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearer_token_guards_everything_but_probes() {
    let options = ServeOptions {
        token: Some("s3cret".into()),
        ..ServeOptions::default()
    };
    let server = Server::start(kinds_spec(direct(1)), options).await;
    assert_eq!(server.get("/health", None).await.0, 200);
    assert_eq!(server.get("/readyz", None).await.0, 200);
    assert_eq!(server.post("add", b"{\"a\": 1}", &[]).await.0, 401);
    let wrong = [("Authorization", "Bearer s3creT")];
    assert_eq!(server.post("add", b"{\"a\": 1}", &wrong).await.0, 401);
    let right = [("Authorization", "Bearer s3cret")];
    assert_eq!(server.post("add", b"{\"a\": 1}", &right).await.2, b"3");
    assert_eq!(server.get("/metrics", None).await.0, 401);
    assert_eq!(server.get("/metrics", Some("s3cret")).await.0, 200);
}

#[test]
fn non_loopback_bind_needs_a_token_or_insecure() {
    let open = ServeOptions {
        host: "0.0.0.0".into(),
        token: None,
        ..ServeOptions::default()
    };
    assert!(open.check_exposure().is_err());
    let insecure = ServeOptions {
        insecure: true,
        ..open.clone()
    };
    assert!(insecure.check_exposure().is_ok());
    let token = ServeOptions {
        token: Some("t".into()),
        ..open.clone()
    };
    assert!(token.check_exposure().is_ok());
    for host in ["127.0.0.1", "::1", "localhost"] {
        let local = ServeOptions {
            host: host.into(),
            ..open.clone()
        };
        assert!(local.check_exposure().is_ok(), "{host}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_outcomes_and_statuses() {
    let server = Server::start(kinds_spec(direct(1)), ServeOptions::default()).await;
    server.post("add", b"{\"a\": 1}", &[]).await;
    server.post("add", b"{}", &[]).await;
    server.post("fail", b"{\"n\": 1}", &[]).await;
    let text = server.metrics_text().await;
    assert!(text.contains("apizr_requests_total{capability=\"add\",outcome=\"success\"} 1"));
    assert!(text.contains("apizr_requests_total{capability=\"add\",outcome=\"invalid_input\"} 1"));
    assert!(text.contains("apizr_requests_total{capability=\"fail\",outcome=\"failed\"} 1"));
    assert!(text.contains("apizr_http_responses_total{code=\"422\"} 1"));
    assert!(text.contains("apizr_request_duration_seconds_count{capability=\"add\"} 2"));
    assert!(text.contains("apizr_in_flight 0"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_guard_stops_the_call_and_kills_the_worker() {
    use apizr_runtime::pool::SetResults;
    use apizr_runtime::serve::{CancelOnDrop, Invoker, Rejected};
    let invoker = Invoker::start(slow_spec(direct(1), None), SetResults::Reject)
        .await
        .unwrap();
    let (guard, cancel) = CancelOnDrop::pair();
    let started = std::time::Instant::now();
    let call = invoker.call("nap", b"{\"seconds\": 30}", cancel);
    let cancel_later = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        drop(guard);
    };
    let (result, ()) = tokio::join!(call, cancel_later);
    assert_eq!(result, Err(Rejected::Cancelled));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(invoker.kills(), 1);
    // Sets are rejected for MCP and the next call gets a fresh worker.
    let unique = invoker
        .call("unique", b"{\"items\": [1, 2]}", CancelOnDrop::never())
        .await
        .unwrap();
    assert_eq!(unique.status, apizr_runtime::Status::ResultInvalid);
    let pair = invoker
        .call("pair", b"{\"a\": 2}", CancelOnDrop::never())
        .await
        .unwrap();
    assert_eq!(pair.status, apizr_runtime::Status::Success);
    assert_eq!(
        pair.value,
        apizr_ir::Value::Array(vec![apizr_ir::Value::Int(2), apizr_ir::Value::Int(2)])
    );
}
