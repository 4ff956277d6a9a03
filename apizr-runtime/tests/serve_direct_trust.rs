//! Direct mode: no worker answers for another client. A thread left behind by one call
//! writes a forged answer on the response pipe — while the worker is idle, or while it serves
//! the next call. Either way the next client never receives "forged": the worker is killed
//! and replaced (the call in flight answers 500), and the pool keeps serving.

#![cfg(feature = "rest")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod serve_rest_support;

use std::time::Duration;

use apizr_runtime::serve::ServeOptions;
use serve_rest_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_frame_between_calls_is_never_an_answer() {
    let server = Server::start(
        fixture_spec("forge.py", "forge", direct(1)),
        ServeOptions::default(),
    )
    .await;
    assert_eq!(
        server.post("plant", b"{\"delay\": 0.1}", &[]).await.2,
        b"\"planted\""
    );
    // The forged frame now waits in the idle worker's pipe.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (status, _, body) = server.post("echo", b"{\"word\": \"mine\"}", &[]).await;
    assert_eq!((status, body.as_slice()), (200, &b"\"mine\""[..]));
    assert!(server.metric("apizr_worker_kills_total").await >= 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_frame_during_a_call_kills_the_worker() {
    let server = Server::start(
        fixture_spec("forge.py", "forge", direct(1)),
        ServeOptions::default(),
    )
    .await;
    assert_eq!(
        server.post("plant", b"{\"delay\": 0.3}", &[]).await.2,
        b"\"planted\""
    );
    // The next call is still running when the forged frame arrives.
    let (status, _, body) = server.post("nap", b"{\"seconds\": 1.0}", &[]).await;
    assert_ne!(body, b"\"forged\"");
    assert_eq!(status, 500, "{}", String::from_utf8_lossy(&body));
    assert!(server.metric("apizr_worker_kills_total").await >= 1.0);
    // A fresh worker serves the next client.
    let (status, _, body) = server.post("echo", b"{\"word\": \"next\"}", &[]).await;
    assert_eq!((status, body.as_slice()), (200, &b"\"next\""[..]));
}
