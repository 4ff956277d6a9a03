//! Server faults over real HTTP (issue 8, item 8, and the server-wide governed cap of item 5):
//! abandoned requests give their queue slot back, the governed worker and memory caps answer
//! 429 / 503, and `/metrics` shows the gauges.
#![cfg(feature = "rest")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod serve_rest_support;

use std::time::Duration;

use apizr_ir::policy::PolicyV1;
use apizr_runtime::serve::{ExecutionMode, ServeOptions};
use serve_rest_support::*;

fn governed(policy: &str) -> ExecutionMode {
    let doc: serde_json::Value = serde_json::from_str(policy).unwrap();
    ExecutionMode::Governed(PolicyV1::from_json(&doc).unwrap())
}

/// Wait until `metric` reads `want` (gauges settle after the server notices a hang-up).
async fn settle(server: &Server, metric: &str, want: f64) {
    let mut last = f64::NAN;
    for _ in 0..100 {
        last = server.metric(metric).await;
        if last == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{metric} stayed {last}, want {want}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_queued_requests_release_their_slots() {
    let mut spec = slow_spec(direct(2), None);
    spec.gates.concurrency = 1;
    spec.gates.queue = 2;
    let server = Server::start(spec, ServeOptions::default()).await;
    let runner = server.clone();
    let running =
        tokio::spawn(async move { runner.post("nap", b"{\"seconds\": 1.5}", &[]).await.0 });
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Two queued requests whose clients hang up while they wait.
    let (a, b) = (server.clone(), server.clone());
    let hang = Duration::from_millis(300);
    tokio::join!(
        a.post_and_hang_up("nap", b"{\"seconds\": 0}", hang),
        b.post_and_hang_up("nap", b"{\"seconds\": 0}", hang),
    );
    settle(&server, "apizr_queued", 0.0).await;
    // The call is still running, so these two must queue: both are served, none is 429.
    let (c, d) = (server.clone(), server.clone());
    let (c, d) = tokio::join!(
        async move { c.post("bump", b"{}", &[]).await.0 },
        async move { d.post("bump", b"{}", &[]).await.0 },
    );
    assert_eq!((c, d), (200, 200));
    assert_eq!(running.await.unwrap(), 200);
    settle(&server, "apizr_in_flight", 0.0).await;
    settle(&server, "apizr_queued", 0.0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn governed_worker_cap_spans_capabilities() {
    let mut spec = slow_spec(governed("{}"), None);
    spec.launcher = launcher();
    spec.gates.workers = 1;
    spec.gates.queue = 0;
    let server = Server::start(spec, ServeOptions::default()).await;
    assert_eq!(server.metric("apizr_governed_workers_limit").await, 1.0);
    let runner = server.clone();
    let running =
        tokio::spawn(async move { runner.post("nap", b"{\"seconds\": 1.5}", &[]).await.0 });
    settle(&server, "apizr_governed_workers", 1.0).await;
    // Another capability: its own gate is free, the server-wide cap is not.
    let (status, headers, body) = server.post("bump", b"{}", &[]).await;
    assert_eq!(status, 429, "{}", String::from_utf8_lossy(&body));
    assert!(headers.to_ascii_lowercase().contains("retry-after: 1"));
    assert_eq!(running.await.unwrap(), 200);
    settle(&server, "apizr_governed_workers", 0.0).await;
    assert_eq!(server.post("bump", b"{}", &[]).await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn governed_memory_cap_queues_then_refuses() {
    let policy = r#"{"resources":{"memory_bytes":268435456}}"#;
    // Room for one 256 MiB worker: the second call waits for it in the queue.
    let mut spec = slow_spec(governed(policy), None);
    spec.launcher = launcher();
    spec.gates.memory_bytes = 400 << 20;
    let server = Server::start(spec, ServeOptions::default()).await;
    assert_eq!(
        server.metric("apizr_governed_memory_limit_bytes").await,
        (400u64 << 20) as f64
    );
    let runner = server.clone();
    let running = tokio::spawn(async move { runner.post("nap", b"{\"seconds\": 1}", &[]).await.0 });
    settle(
        &server,
        "apizr_governed_memory_bytes",
        (256u64 << 20) as f64,
    )
    .await;
    let waiter = server.clone();
    let waiting = tokio::spawn(async move { waiter.post("bump", b"{}", &[]).await.0 });
    settle(&server, "apizr_queued", 1.0).await;
    assert_eq!(running.await.unwrap(), 200);
    assert_eq!(waiting.await.unwrap(), 200);
    settle(&server, "apizr_governed_memory_bytes", 0.0).await;

    // A budget smaller than one worker's limit can never admit a call: 503.
    let mut spec = slow_spec(governed(policy), None);
    spec.launcher = launcher();
    spec.gates.memory_bytes = 100 << 20;
    let server = Server::start(spec, ServeOptions::default()).await;
    let (status, _, body) = server.post("bump", b"{}", &[]).await;
    assert_eq!(
        (status, String::from_utf8_lossy(&body).as_ref()),
        (
            503,
            r#"{"detail":"Call exceeds the server's governed memory budget"}"#
        )
    );
    let text = server.metrics_text().await;
    assert!(
        text.contains("apizr_requests_total{capability=\"bump\",outcome=\"over_capacity\"} 1"),
        "{text}"
    );
}
