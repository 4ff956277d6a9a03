//! Server faults over real HTTP, with a raw TCP client where a well-behaved one cannot misbehave
//! enough: abandoned requests give their queue slot back; the governed worker and memory caps
//! answer 429 / 503 and `/metrics` shows them, across the sources of one server too; partial heads, idle connections and slow bodies
//! are cut by their timeouts while long calls are not; broken chunked framing is 400; request
//! bodies share one memory budget (503); `/docs` needs the token.
#![cfg(feature = "rest")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod serve_rest_support;

use std::time::Duration;

use apizr_ir::policy::PolicyV1;
use apizr_runtime::serve::{ExecutionMode, HttpLimits, ServeOptions};
use serve_rest_support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

fn governed(policy: &str) -> ExecutionMode {
    let doc: serde_json::Value = serde_json::from_str(policy).unwrap();
    ExecutionMode::governed_v1(PolicyV1::from_json(&doc).unwrap())
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

/// Two governed sources in one server (a program with bindings of two files, or of two
/// policies): the worker cap is the server's, not each source's, and `/metrics` has one
/// limit series. Before the budget was shared, `add` ran here on its source's own budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn governed_worker_cap_spans_sources() {
    let mut slow = slow_spec(governed("{}"), None);
    let mut kinds = kinds_spec(governed("{}"));
    for spec in [&mut slow, &mut kinds] {
        spec.launcher = launcher();
        spec.gates.workers = 1;
        spec.gates.queue = 0;
    }
    let plan = apizr_runtime::serve::ServicePlan {
        specs: vec![slow, kinds],
        ..Default::default()
    };
    let server = Server::start_plan(plan, ServeOptions::default()).await;
    let metrics = server.get("/metrics", None).await.2;
    let metrics = String::from_utf8_lossy(&metrics);
    assert_eq!(
        metrics
            .lines()
            .filter(|l| l.starts_with("apizr_governed_workers_limit "))
            .collect::<Vec<_>>(),
        ["apizr_governed_workers_limit 1"]
    );
    let runner = server.clone();
    let running =
        tokio::spawn(async move { runner.post("nap", b"{\"seconds\": 1.5}", &[]).await.0 });
    settle(&server, "apizr_governed_workers", 1.0).await;
    // Another source: its capability gate is free, the server's one worker is not.
    let (status, _, body) = server.post("add", b"{\"a\": 1}", &[]).await;
    assert_eq!(status, 429, "{}", String::from_utf8_lossy(&body));
    assert_eq!(running.await.unwrap(), 200);
    settle(&server, "apizr_governed_workers", 0.0).await;
    let (status, _, body) = server.post("add", b"{\"a\": 1}", &[]).await;
    assert_eq!((status, body.as_slice()), (200, b"3".as_slice()));
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

fn limits(idle_ms: u64, header_ms: u64, body_ms: u64, body_memory: u64) -> ServeOptions {
    ServeOptions {
        http: HttpLimits {
            idle_timeout: Duration::from_millis(idle_ms),
            header_timeout: Duration::from_millis(header_ms),
            body_timeout: Duration::from_millis(body_ms),
            body_memory_bytes: body_memory,
        },
        ..ServeOptions::default()
    }
}

/// Read until the server closes the connection; returns what it sent and when it closed
/// (None: still open after `within`).
async fn until_closed(stream: &mut TcpStream, within: Duration) -> (Vec<u8>, Option<Duration>) {
    let started = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout_at(started + within, stream.read(&mut buf)).await {
            Err(_) => return (got, None),
            Ok(Ok(0) | Err(_)) => return (got, Some(started.elapsed())),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partial_head_is_closed_after_the_header_timeout() {
    let server = Server::start(kinds_spec(direct(1)), limits(30_000, 500, 30_000, 1 << 20)).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"POST /capabilities/add HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    // Trickling header lines does not extend the deadline (it counts from the first byte).
    let trickle = async {
        for i in 0..30 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if stream
                .write_all(format!("X-{i}: 1\r\n").as_bytes())
                .await
                .is_err()
            {
                break;
            }
        }
    };
    let started = Instant::now();
    trickle.await;
    let (_, closed) = until_closed(&mut stream, Duration::from_secs(5)).await;
    assert!(closed.is_some(), "a partial head was held open");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    // The server is fine.
    assert_eq!(server.post("add", b"{\"a\": 1}", &[]).await.2, b"3");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_close_but_long_calls_do_not() {
    let spec = slow_spec(direct(1), None);
    let server = Server::start(spec, limits(400, 400, 30_000, 1 << 20)).await;
    // Silent from the start.
    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    let (_, closed) = until_closed(&mut silent, Duration::from_secs(5)).await;
    let closed = closed.expect("an idle connection was held open");
    assert!(closed >= Duration::from_millis(300), "{closed:?}");
    // Kept alive after a response, then silent.
    let mut kept = TcpStream::connect(server.addr).await.unwrap();
    kept.write_all(b"POST /capabilities/bump HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        .await
        .unwrap();
    let (answer, closed) = until_closed(&mut kept, Duration::from_secs(5)).await;
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 200"));
    assert!(
        closed.is_some(),
        "an idle keep-alive connection was held open"
    );
    // A call longer than both timeouts is not cut.
    let (status, _, body) = server.post("nap", b"{\"seconds\": 1.2}", &[]).await;
    assert_eq!((status, body.as_slice()), (200, &b"1.2"[..]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_body_is_408_and_bad_chunking_is_400() {
    let server = Server::start(kinds_spec(direct(1)), limits(30_000, 30_000, 500, 1 << 20)).await;
    let mut slow = TcpStream::connect(server.addr).await.unwrap();
    slow.write_all(
        b"POST /capabilities/add HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n{\"a\":",
    )
    .await
    .unwrap();
    let (answer, closed) = until_closed(&mut slow, Duration::from_secs(5)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.ends_with(r#"{"detail":"Request body timed out"}"#),
        "{answer}"
    );
    assert!(closed.is_some());

    for chunked in [
        &b"zz\r\n{}\r\n0\r\n\r\n"[..],    // not a hex size
        &b"2\r\n{}XX0\r\n\r\n"[..],       // no CRLF after the data
        &b"ffffffffffffffffff\r\n{}"[..], // size overflow
    ] {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        stream
            .write_all(
                b"POST /capabilities/add HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
            )
            .await
            .unwrap();
        stream.write_all(chunked).await.unwrap();
        let (answer, _) = until_closed(&mut stream, Duration::from_secs(5)).await;
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 400"), "{chunked:?}: {answer}");
        assert!(
            answer.ends_with(r#"{"detail":"Malformed request body"}"#),
            "{answer}"
        );
    }
    // A well-formed chunked body is read.
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"POST /capabilities/add HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3\r\n: 5\r\n1\r\n}\r\n0\r\n\r\n")
        .await
        .unwrap();
    let (answer, _) = until_closed(&mut stream, Duration::from_secs(5)).await;
    assert!(String::from_utf8_lossy(&answer).ends_with("\r\n\r\n7"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_bodies_share_one_memory_budget() {
    let server = Server::start(kinds_spec(direct(1)), limits(30_000, 30_000, 30_000, 1000)).await;
    // A client declares 800 bytes and sends a few: the server holds 800 for it.
    let mut holder = TcpStream::connect(server.addr).await.unwrap();
    holder
        .write_all(b"POST /capabilities/add HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 800\r\n\r\n{\"a\": 1")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let padded = |n: usize| format!("{{\"a\": 2{}}}", " ".repeat(n - 9));
    let body = padded(300);
    let (status, headers, answer) = server.post("add", body.as_bytes(), &[]).await;
    assert_eq!(
        (status, answer.as_slice()),
        (503, &br#"{"detail":"Server busy"}"#[..])
    );
    assert!(headers.to_ascii_lowercase().contains("retry-after: 1"));
    // The holder finishes; its 800 bytes are given back.
    holder
        .write_all(format!("{}}}", " ".repeat(800 - 8)).as_bytes())
        .await
        .unwrap();
    let (answer, _) = until_closed(&mut holder, Duration::from_secs(5)).await;
    assert!(String::from_utf8_lossy(&answer).ends_with("\r\n\r\n3"));
    assert_eq!(server.post("add", body.as_bytes(), &[]).await.2, b"4");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docs_need_the_token_when_one_is_set() {
    let options = ServeOptions {
        token: Some("s3cret".into()),
        ..ServeOptions::default()
    };
    let server = Server::start(kinds_spec(direct(1)), options).await;
    let (status, headers, _) = server.get("/docs", None).await;
    assert_eq!(status, 401);
    assert!(
        headers
            .to_ascii_lowercase()
            .contains("www-authenticate: bearer")
    );
    assert_eq!(server.get("/docs", Some("wrong")).await.0, 401);
    let (status, _, page) = server.get("/docs", Some("s3cret")).await;
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&page).contains("openapi.json"));
}
