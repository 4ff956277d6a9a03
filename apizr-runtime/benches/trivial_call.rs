//! End-to-end latency of one trivial call (spawn launcher → PID namespace → CPython worker →
//! frame → envelope), default policy. Prints p50/p95; target p50 ≤ 30 ms.
//!
//! Run: `cargo bench -p apizr-runtime --bench trivial_call` (`APIZR_BENCH_N` sets the count).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use apizr_runtime::{
    CallRequest, Executable, ExecutionKind, LauncherLocation, LocalRuntime, RuntimeConfig,
};

fn main() {
    let n: usize = std::env::var("APIZR_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    for (label, launcher) in [
        (
            "launcher (pid namespace)",
            LauncherLocation::Binary(PathBuf::from(env!("CARGO_BIN_EXE_apizr-launch"))),
        ),
        ("direct (no launcher)", LauncherLocation::None),
    ] {
        let rt = LocalRuntime::new(RuntimeConfig {
            launcher,
            ..RuntimeConfig::default()
        });
        let call = CallRequest {
            capability_id: "python:bench:f".into(),
            executable: Executable::new(b"def f():\n    return 1\n".to_vec()),
            module: "bench".into(),
            function: "f".into(),
            execution: ExecutionKind::Sync,
            parameters: vec![],
            returns: None,
            positional: vec![],
            keyword: Default::default(),
            policy: Default::default(),
        };
        let _ = rt.host_capabilities();
        for _ in 0..3 {
            let _ = rt.execute(&call);
        }
        let mut times: Vec<Duration> = (0..n)
            .map(|_| {
                let t = Instant::now();
                let out = rt.execute(&call);
                assert_eq!(out.envelope.status, apizr_runtime::Status::Success);
                t.elapsed()
            })
            .collect();
        times.sort();
        let pct = |p: usize| times[(times.len() * p / 100).min(times.len() - 1)];
        println!(
            "trivial call, {label}: n={n} p50={:.1} ms p95={:.1} ms min={:.1} ms",
            pct(50).as_secs_f64() * 1e3,
            pct(95).as_secs_f64() * 1e3,
            times[0].as_secs_f64() * 1e3
        );
    }
}
