//! `apizr serve rest` end to end: the real binary, a real port, plain HTTP/1.1.
//!
//! Covers the bundled example (no SOURCE), governed mode through the CLI (the binary re-execs
//! itself as the launcher), the exposure guard and the refusals that happen before binding.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

#[path = "support/served.rs"]
mod served;
use served::Served;

fn apizr() -> Command {
    Command::new(env!("CARGO_BIN_EXE_apizr"))
}

fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("serve")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

impl Served {
    fn start(args: &[&str]) -> Served {
        Served::spawn_ready(args, &[], Duration::from_secs(30), Duration::from_secs(30))
    }
}

#[test]
fn serves_the_bundled_example_without_a_source() {
    let server = Served::start(&["--workers", "1"]);
    assert_eq!(
        server.post("total", r#"{"prices": [1, 2.5]}"#),
        (200, "4.2".into())
    );
    assert_eq!(
        server.post("greet", r#"{"name": "Ada", "punct": "?"}"#),
        (200, "\"Hello Ada?\"".into())
    );
    assert_eq!(
        server.post("total", r#"{"prices": [1], "tip": 2}"#),
        (
            422,
            r#"{"detail":"Unexpected request field","errors":[{"expected":"one of the declared fields: prices, tax","found":"undeclared field","path":"/tip"}]}"#.into()
        )
    );
    let (status, doc) = server.try_request("GET", "/openapi.json", "").unwrap();
    assert_eq!(status, 200);
    assert!(doc.contains(r#""operationId":"python:pricing:total""#));
}

#[test]
fn governed_mode_runs_each_call_under_the_policy() {
    let dir = tmp("governed");
    std::fs::write(
        dir.join("tools.py"),
        "import time\n\ndef add(a: int, b: int) -> int:\n    return a + b\n\n\
         def nap(s: float) -> float:\n    time.sleep(s)\n    return s\n\n\
         COUNT = [0]\n\ndef bump() -> int:\n    COUNT[0] += 1\n    return COUNT[0]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("policy.json"),
        r#"{"limits": {"wall_time_ms": 1500}}"#,
    )
    .unwrap();
    let source = dir.join("tools.py");
    let policy = dir.join("policy.json");
    let server = Served::start(&[
        source.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
    ]);
    assert_eq!(server.post("add", r#"{"a": 1, "b": 2}"#), (200, "3".into()));
    // The reference's governed detail, plus where and what (the same as in direct mode).
    assert_eq!(
        server.post("add", r#"{"a": 1}"#),
        (
            422,
            r#"{"detail":"Invalid request arguments","errors":[{"expected":"integer","found":"missing","path":"/b"}]}"#.into()
        )
    );
    assert_eq!(
        server.post("nap", r#"{"s": 5}"#),
        (504, r#"{"detail":"Execution timed out"}"#.into())
    );
    // A fresh worker per call: state never persists.
    assert_eq!(server.post("bump", "{}"), (200, "1".into()));
    assert_eq!(server.post("bump", "{}"), (200, "1".into()));
    // The server keeps pre-started single-use workers (default 2 for the module's policy):
    // a call served by one still sees no earlier call's state.
    server.wait_metric("apizr_v1_pool_ready", |n| n == 2);
    let hits = server.metric("apizr_v1_pool_hits_total").unwrap();
    assert_eq!(server.post("bump", "{}"), (200, "1".into()));
    assert_eq!(server.post("bump", "{}"), (200, "1".into()));
    assert_eq!(server.metric("apizr_v1_pool_hits_total"), Some(hits + 2));
    assert_eq!(server.metric("apizr_v1_pool_anomalies_total"), Some(0));
    // Readiness finds no import-time effects in tools.py: every pre-started worker imported
    // it before its call, and a global the call before mutated is still not seen.
    assert_eq!(
        server.metric("apizr_v1_pool_preimported_total"),
        server.metric("apizr_v1_pool_hits_total")
    );
    assert_eq!(
        server.metric("apizr_v1_pool_import_failures_total"),
        Some(0)
    );
    // Every call that got a well-formed frame (not the timeout) was answered on it; each
    // process then exited cleanly and was cleaned up after the answer.
    server.wait_metric("apizr_v1_after_answer_pending", |n| n == 0);
    assert_eq!(server.metric("apizr_v1_after_answer_calls_total"), Some(5));
    assert_eq!(
        server.metric("apizr_v1_after_answer_anomalies_total"),
        Some(0)
    );
    assert_eq!(
        server.metric("apizr_v1_after_answer_cleanup_failures_total"),
        Some(0)
    );
}

/// A Python exception in a governed call reaches the server's stderr with its traceback (as a
/// direct-mode worker's does), headed by the call it belongs to.
#[test]
fn governed_exceptions_are_logged_with_their_traceback() {
    let dir = tmp("governed-log");
    std::fs::write(
        dir.join("tools.py"),
        "def boom(n: int) -> int:\n    raise ValueError(f'bad n {n}')\n",
    )
    .unwrap();
    std::fs::write(dir.join("policy.json"), "{}").unwrap();
    let log = dir.join("stderr.log");
    let source = dir.join("tools.py");
    let policy = dir.join("policy.json");
    let server = Served::spawn_ready_logging(
        &[
            source.to_str().unwrap(),
            "--policy",
            policy.to_str().unwrap(),
        ],
        &[],
        Duration::from_secs(30),
        Duration::from_secs(30),
        std::fs::File::create(&log).unwrap().into(),
    );
    assert_eq!(
        server.post("boom", r#"{"n": 7}"#),
        (500, r#"{"detail":"Internal server error"}"#.into())
    );
    drop(server);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("apizr: boom (execution_failed), worker stderr:"),
        "{text}"
    );
    assert!(
        text.contains("Traceback (most recent call last):"),
        "{text}"
    );
    assert!(text.contains("ValueError: bad n 7"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn run(args: &[&str]) -> Output {
    apizr().args(args).output().unwrap()
}

#[test]
fn refuses_a_public_bind_without_a_token() {
    let out = run(&["serve", "rest", "--host", "0.0.0.0", "--port", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("without a token"), "{stderr}");
}

#[test]
fn refuses_ineligible_sources_and_v2_policies() {
    let dir = tmp("refusals");
    std::fs::write(dir.join("ok.py"), "def f(x: int) -> int:\n    return x\n").unwrap();
    std::fs::write(
        dir.join("v2.json"),
        r#"{"schema_version": "apizr.execution/v2"}"#,
    )
    .unwrap();
    let unknown = run(&[
        "serve",
        "rest",
        dir.join("ok.py").to_str().unwrap(),
        "--select",
        "g",
    ]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("Unknown capability selection: g"));
    let v2 = run(&[
        "serve",
        "rest",
        dir.join("ok.py").to_str().unwrap(),
        "--policy",
        dir.join("v2.json").to_str().unwrap(),
    ]);
    assert_eq!(v2.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&v2.stderr);
    assert!(
        stderr.contains("OCI policy requires --runtime-image and --runtime-platform"),
        "{stderr}"
    );
    let bad_image = run(&[
        "serve",
        "rest",
        dir.join("ok.py").to_str().unwrap(),
        "--policy",
        dir.join("v2.json").to_str().unwrap(),
        "--runtime-image",
        "sha256:00",
        "--runtime-platform",
        "linux/amd64",
    ]);
    assert_eq!(bad_image.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad_image.stderr);
    assert!(stderr.contains("full image ID"), "{stderr}");
}

#[test]
fn serves_a_generated_project_and_refuses_a_tampered_one() {
    let dir = tmp("bundle");
    let out = dir.join("project");
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/pricing.py");
    let generated = run(&[
        "generate",
        "rest",
        example.to_str().unwrap(),
        "--output-dir",
        out.to_str().unwrap(),
    ]);
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );
    {
        let server = Served::start(&["--bundle", out.to_str().unwrap(), "--workers", "1"]);
        assert_eq!(
            server.post("total", r#"{"prices": [1, 2.5]}"#),
            (200, "4.2".into())
        );
        let (status, doc) = server.try_request("GET", "/openapi.json", "").unwrap();
        assert_eq!(status, 200);
        assert_eq!(
            doc,
            std::fs::read_to_string(out.join("openapi.json")).unwrap()
        );
    }
    std::fs::write(
        out.join("source/pricing.py"),
        "def total() -> int:\n    return 0\n",
    )
    .unwrap();
    let refused = run(&[
        "serve",
        "rest",
        "--bundle",
        out.to_str().unwrap(),
        "--port",
        "1",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("artifact digest mismatch: source/pricing.py"),
        "{stderr}"
    );
}

/// `serve --allow-conditional` serves an explicitly selected `conditional` function (direct
/// and governed) and says so at start; without the flag the refusal names serve's own verb,
/// the refused function with its reasons and the flag; `unsupported`/`ambiguous` functions
/// stay refused with it; the flag needs --select. Errors are prefixed `apizr serve:`.
#[test]
fn allow_conditional_serves_selected_conditional_functions() {
    let dir = tmp("conditional");
    let cond = dir.join("cond.py");
    std::fs::write(
        &cond,
        "import logging\nlog = logging.getLogger()\ndef f(x: int) -> int:\n    return x + 1\n",
    )
    .unwrap();
    let amb = dir.join("amb.py");
    std::fs::write(
        &amb,
        "def f(x: int) -> int:\n    return x\ndef f(x: str) -> str:\n    return x\n",
    )
    .unwrap();
    let (cond, amb) = (cond.to_str().unwrap(), amb.to_str().unwrap());

    let refused = run(&["serve", "rest", cond, "--select", "f", "--port", "1"]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim_end(),
        "apizr serve: cannot serve f: conditional (APIZR-READY-004); serve only ready \
         capabilities (--select NAMES), or conditional ones with --select NAMES \
         --allow-conditional"
    );
    let ambiguous = run(&["serve", "rest", amb, "--select", "f", "--allow-conditional"]);
    assert_eq!(ambiguous.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&ambiguous.stderr);
    assert!(
        stderr.starts_with("apizr serve: cannot serve f: ambiguous")
            && stderr.contains("--allow-conditional covers conditional capabilities only"),
        "{stderr}"
    );
    let unselected = run(&["serve", "rest", cond, "--allow-conditional"]);
    assert_eq!(unselected.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unselected.stderr).contains("--select"));

    std::fs::write(dir.join("policy.json"), "{}").unwrap();
    let policy = dir.join("policy.json");
    for (mode, extra) in [
        ("direct", vec![]),
        ("governed", vec!["--policy", policy.to_str().unwrap()]),
    ] {
        let log = dir.join(format!("{mode}.log"));
        let mut args = vec![
            cond,
            "--select",
            "f",
            "--allow-conditional",
            "--workers",
            "1",
        ];
        args.extend(extra);
        let server = Served::spawn_ready_logging(
            &args,
            &[],
            Duration::from_secs(30),
            Duration::from_secs(30),
            std::fs::File::create(&log).unwrap().into(),
        );
        assert_eq!(
            server.post("f", r#"{"x": 41}"#),
            (200, "42".into()),
            "{mode}"
        );
        drop(server);
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(
            text.contains(
                "apizr serve: serving conditional capability python:cond:f (APIZR-READY-004)"
            ),
            "{mode}: {text}"
        );
    }

    // `--readiness v2`: a module v1 refuses (a logger at module level) is ready under v2 and
    // served without --allow-conditional, governed (the strict v1 sandbox: the module's
    // import and the call run there).
    let v2 = dir.join("logged.py");
    std::fs::write(
        &v2,
        "import logging\nlog = logging.getLogger(__name__)\n\
         def f(x: int) -> int:\n    return x + 1\n",
    )
    .unwrap();
    let v2 = v2.to_str().unwrap();
    let refused = run(&["serve", "rest", v2, "--select", "f", "--port", "1"]);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "v1 (the default) refuses it"
    );
    let log = dir.join("v2.log");
    let args = [
        v2,
        "--select",
        "f",
        "--readiness",
        "v2",
        "--policy",
        policy.to_str().unwrap(),
        "--workers",
        "1",
    ];
    let server = Served::spawn_ready_logging(
        &args,
        &[],
        Duration::from_secs(30),
        Duration::from_secs(30),
        std::fs::File::create(&log).unwrap().into(),
    );
    assert_eq!(server.post("f", r#"{"x": 41}"#), (200, "42".into()));
    drop(server);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("conditional"), "ready under v2: {text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Readiness v2 serves `*args`/`**kwargs` (issue 15). In the warm pool and governed (a fresh
/// sandboxed worker per call), each call's values arrive as CPython binds the same call made
/// directly: the positional parameters before a given `*args` by position, then its items,
/// keyword-only by name, other keys as `**kwargs` entries; a key named after a positional-only
/// parameter binds it. Refusals are precise 422s: `*args` without an optional positional
/// parameter before it, an extra key without `**kwargs`, the `**kwargs` name itself.
#[test]
fn variadic_calls_arrive_as_cpython_binds_them() {
    let dir = tmp("variadic");
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../apizr-inspect/tests/data/input_types/variadics.py");
    std::fs::copy(fixture, dir.join("variadics.py")).unwrap();
    std::fs::write(dir.join("policy.json"), "{}").unwrap();
    // (JSON arguments, the same call written in Python)
    let cases = [
        (
            r#"{"a":1,"b":2,"c":3,"args":[4,5],"d":6,"x":7}"#,
            "spread(1, 2, 3, 4, 5, d=6, x=7)",
        ),
        (
            r#"{"a":1,"c":9,"d":6,"y":"z"}"#,
            "spread(1, c=9, d=6, y='z')",
        ),
        (
            r#"{"a":1,"b":2,"c":3,"args":[],"d":6}"#,
            "spread(1, 2, 3, d=6)",
        ),
        (r#"{"name":"n","k":"v"}"#, "tag('n', k='v')"),
        (r#"{"name":"n"}"#, "tag('n')"),
        (r#"{"first":1,"rest":[2,3]}"#, "total(1, 2, 3)"),
    ];
    let calls: Vec<&str> = cases.iter().map(|(_, call)| *call).collect();
    let script = format!(
        "import json, variadics as m\nfor v in [{}]: print(json.dumps(v))",
        calls
            .iter()
            .map(|c| format!("m.{c}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let out = Command::new("python3")
        .current_dir(&dir)
        .args([
            "-I",
            "-c",
            &format!("import sys; sys.path.insert(0, '.')\n{script}"),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let direct: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let source = dir.join("variadics.py");
    let policy = dir.join("policy.json");
    let source = source.to_str().unwrap();
    let governed = ["--policy", policy.to_str().unwrap()];
    for extra in [&[][..], &governed[..]] {
        let mut args = vec![source, "--readiness", "v2", "--select", "total,tag,spread"];
        args.extend(["--workers", "1"]);
        args.extend(extra);
        let server = Served::start(&args);
        for ((arguments, call), expected) in cases.iter().zip(&direct) {
            let name = call.split('(').next().unwrap();
            let (status, body) = server.post(name, arguments);
            assert_eq!(status, 200, "{extra:?} {call}: {body}");
            let got: serde_json::Value = serde_json::from_str(&body).unwrap();
            assert_eq!(&got, expected, "{extra:?} {call}");
        }
        let refused = [
            ("spread", r#"{"a":1,"args":[4],"d":6}"#, "/b"),
            ("total", r#"{"first":1,"x":2}"#, "/x"),
            ("spread", r#"{"a":1,"d":6,"kwargs":{}}"#, "/kwargs"),
            ("total", r#"{"first":1,"rest":[2,"3"]}"#, "/rest/1"),
        ];
        for (name, arguments, path) in refused {
            let (status, body) = server.post(name, arguments);
            let at = format!(r#""path":"{path}""#);
            assert!(
                status == 422 && body.contains(&at),
                "{extra:?} {name} {arguments}: {status} {body}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Readiness v2 `datetime` arguments through real HTTP and a real CPython worker (warm pool
/// and governed): each call's values arrive as the same call written in Python builds them —
/// naive without an offset, aware with `timezone(offset)`, timedelta from seconds. Values
/// outside the strict RFC 3339 grammar or the timedelta range are 422s at their path.
#[test]
fn temporal_calls_arrive_as_cpython_builds_them() {
    let dir = tmp("temporal");
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../apizr-inspect/tests/data/input_types/temporal.py");
    std::fs::copy(fixture, dir.join("temporal.py")).unwrap();
    std::fs::write(dir.join("policy.json"), "{}").unwrap();
    // (function, JSON arguments, the same call written in Python)
    let cases = [
        (
            "stamp",
            r#"{"value":"2024-02-29T23:05:01.25+05:30"}"#,
            "stamp(datetime.datetime(2024, 2, 29, 23, 5, 1, 250000, \
             tzinfo=datetime.timezone(datetime.timedelta(hours=5, minutes=30))))",
        ),
        (
            "stamp",
            r#"{"value":"2024-02-29T23:05:01"}"#,
            "stamp(datetime.datetime(2024, 2, 29, 23, 5, 1))",
        ),
        (
            "day",
            r#"{"value":"0001-01-01"}"#,
            "day(datetime.date(1, 1, 1))",
        ),
        (
            "clock",
            r#"{"value":"12:00:00.000001-00:30"}"#,
            "clock(datetime.time(12, 0, 0, 1, \
             tzinfo=datetime.timezone(-datetime.timedelta(minutes=30))))",
        ),
        (
            "span",
            r#"{"value":0.1}"#,
            "span(datetime.timedelta(seconds=0.1))",
        ),
        (
            "span",
            r#"{"value":-86399999913600}"#,
            "span(datetime.timedelta(seconds=-86399999913600))",
        ),
        (
            "either",
            r#"{"value":"2024-01-02T03:04:05Z"}"#,
            "either(datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc))",
        ),
        (
            "many",
            r#"{"values":["2024-01-01T00:00:00"],"gaps":{"a":1.5}}"#,
            "many([datetime.datetime(2024, 1, 1)], {'a': datetime.timedelta(seconds=1.5)})",
        ),
    ];
    let script = format!(
        "import datetime, json, temporal as m\nfor v in [{}]: print(json.dumps(v))",
        cases
            .iter()
            .map(|(_, _, call)| format!("m.{call}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let out = Command::new("python3")
        .current_dir(&dir)
        .args([
            "-I",
            "-c",
            &format!("import sys; sys.path.insert(0, '.')\n{script}"),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let direct: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(direct.len(), cases.len());
    let source = dir.join("temporal.py");
    let policy = dir.join("policy.json");
    let source = source.to_str().unwrap();
    let governed = ["--policy", policy.to_str().unwrap()];
    for extra in [&[][..], &governed[..]] {
        let select = "stamp,day,clock,span,either,many";
        let mut args = vec![source, "--readiness", "v2", "--select", select];
        args.extend(["--workers", "1"]);
        args.extend(extra);
        let server = Served::start(&args);
        for ((name, arguments, call), expected) in cases.iter().zip(&direct) {
            let (status, body) = server.post(name, arguments);
            assert_eq!(status, 200, "{extra:?} {call}: {body}");
            let got: serde_json::Value = serde_json::from_str(&body).unwrap();
            assert_eq!(&got, expected, "{extra:?} {call}");
        }
        let refused = [
            ("stamp", r#"{"value":"2024-02-30T00:00:00"}"#, "/value"),
            ("clock", r#"{"value":"24:00:00"}"#, "/value"),
            ("span", r#"{"value":"1"}"#, "/value"),
            ("many", r#"{"values":[],"gaps":{"a":1e20}}"#, "/gaps/a"),
        ];
        for (name, arguments, path) in refused {
            let (status, body) = server.post(name, arguments);
            let at = format!(r#""path":"{path}""#);
            assert!(
                status == 422 && body.contains(&at),
                "{extra:?} {name} {arguments}: {status} {body}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
