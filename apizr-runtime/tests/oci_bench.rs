//! Latency harness for `scripts/bench-oci` (ignored by default: it is a measurement, not a
//! check). Runs `APIZR_BENCH_CALLS` trivial calls through the oci-container backend with the
//! image named in `APIZR_WORKER_IMAGE_JSON` and prints one `apizr_call_ms <ms>` line per call.
//!
//! Two modes per call, both fresh-container-per-call: `warm` reuses one `OciRuntime` (engine
//! negotiated and probed once, as in a server), `cold` builds a new runtime per call (what one
//! `apizr execute` process does, minus process start and inspection); then `pool`: an
//! [`OciPool`] of pre-started single-use containers.
//!
//! `APIZR_BENCH_TARGETS` adds more engines and runtimes, each with its own warm runtime, called
//! in turn with the others (interleaved, so load changes hit all of them alike):
//! `LABEL=SOCKET[|RUNTIME];…`, e.g. `podman=/run/apizr-podman/podman.sock;gvisor=/var/run/docker.sock|runsc`.
//! Each prints `apizr_LABEL_ms`.
#![cfg(feature = "oci")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Instant;

use apizr_runtime::ir::policy_v2::PolicyV2;
use apizr_runtime::oci::{
    ContainerPath, OciCall, OciConfig, OciPool, OciRuntime, PoolConfig, RuntimeImage,
};

/// `(label, runtime)` for each `LABEL=SOCKET[|RUNTIME]` in `APIZR_BENCH_TARGETS`.
fn targets() -> Vec<(String, OciRuntime)> {
    let spec = std::env::var("APIZR_BENCH_TARGETS").unwrap_or_default();
    spec.split(';')
        .filter(|t| !t.trim().is_empty())
        .map(|t| {
            let (label, rest) = t.split_once('=').expect("LABEL=SOCKET[|RUNTIME]");
            let (socket, runtime) = match rest.split_once('|') {
                Some((s, r)) => (s, Some(r.to_string())),
                None => (rest, None),
            };
            let config = OciConfig {
                socket: Some(socket.into()),
                runtime,
                ..OciConfig::default()
            };
            (label.trim().to_string(), OciRuntime::new(config))
        })
        .collect()
}

#[test]
#[ignore = "benchmark: run through scripts/bench-oci"]
fn trivial_call_latency() {
    let path = std::env::var("APIZR_WORKER_IMAGE_JSON").expect("APIZR_WORKER_IMAGE_JSON");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let image = RuntimeImage::parse(
        doc["image"].as_str().unwrap(),
        doc["platform"].as_str().unwrap(),
    )
    .unwrap();
    let calls: usize = std::env::var("APIZR_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let call = common::call0("def ping():\n    return 'pong'\n", "ping");
    let policy = PolicyV2::default();
    let warm = OciRuntime::new(OciConfig::default());
    let targets = targets();
    let timed = |label: &str, runtime: &OciRuntime| {
        let started = Instant::now();
        let out = runtime.execute(OciCall {
            call: &call,
            policy: &policy,
            image: &image,
            original: None,
        });
        assert!(out.envelope.is_success(), "{label}: {:?}", out.report);
        started.elapsed().as_secs_f64() * 1000.0
    };
    for (label, runtime) in &targets {
        // The first call probes the engine: not timed.
        timed(label, runtime);
    }
    for _ in 0..calls {
        for (label, runtime) in &targets {
            println!("apizr_{label}_ms {:.1}", timed(label, runtime));
        }
    }
    for i in 0..calls * 2 {
        let cold;
        let (mode, runtime) = if i % 2 == 0 {
            ("warm", &warm)
        } else {
            cold = OciRuntime::new(OciConfig::default());
            ("cold", &cold)
        };
        let started = Instant::now();
        let out = runtime.execute(OciCall {
            call: &call,
            policy: &policy,
            image: &image,
            original: None,
        });
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        assert!(out.envelope.is_success(), "{:?}", out.report);
        println!("apizr_{mode}_ms {ms:.1}");
        println!(
            "apizr_{mode}_steps {}",
            serde_json::to_string(&out.report.timings).unwrap()
        );
    }
    // Pool: a prepared container per call; calls are 300 ms apart (not timed) so the
    // background refill is ready, as in a server between requests.
    let pool = OciPool::new(
        std::sync::Arc::new(OciRuntime::new(OciConfig::default())),
        PoolConfig::default(),
    );
    let oci_call = OciCall {
        call: &call,
        policy: &policy,
        image: &image,
        original: None,
    };
    pool.execute(oci_call);
    std::thread::sleep(std::time::Duration::from_millis(2000));
    for _ in 0..calls {
        std::thread::sleep(std::time::Duration::from_millis(300));
        let started = Instant::now();
        let out = pool.execute(oci_call);
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        assert!(out.envelope.is_success(), "{:?}", out.report);
        assert_eq!(out.report.path, ContainerPath::Pooled, "{:?}", out.report);
        println!("apizr_pool_ms {ms:.1}");
        println!(
            "apizr_pool_steps {}",
            serde_json::to_string(&out.report.timings).unwrap()
        );
    }
}
