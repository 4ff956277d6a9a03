//! `apizr serve mcp SOURCE` over stdio, driven by the official Python `mcp` client
//! (`tests/mcp_client/drive.py`), compared with the reference server's recorded transcript;
//! plus raw stdio lines: a malformed line gets no reply and the session continues, unknown
//! methods get JSON-RPC -32601.
//!
//! The client Python comes from `MCP_CLIENT_PYTHON` or `target/mcp-client-venv/bin/python`
//! (created by `.ci/run`); without it the client test is skipped locally and fails under CI.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[path = "../../tests/mcp_client/bigints.rs"]
mod bigints;
use bigints::check_big_integers;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn client_dir() -> PathBuf {
    root().join("tests/mcp_client")
}

fn apizr() -> &'static str {
    env!("CARGO_BIN_EXE_apizr")
}

fn demo() -> PathBuf {
    client_dir().join("fixtures/mcp_tools_demo.py")
}

fn client_python() -> Option<PathBuf> {
    apizr_test_support::mcp_client_python()
}

/// Whether this `apizr` was built with the MCP transport (cargo feature `mcp` of
/// apizr-runtime, enabled by apizr-cli). Without it `serve mcp` says so and exits 1.
fn mcp_built() -> bool {
    let out = Command::new(apizr())
        .args(["serve", "mcp"])
        .arg(demo())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("cargo feature missing") {
        apizr_test_support::skip("apizr was built without the `mcp` feature of apizr-runtime");
        return false;
    }
    assert!(out.status.success(), "serve mcp with no input: {stderr}");
    true
}

/// The result without `resultType` (protocol-revision dependent) and without our documented
/// addition to invalid-argument errors (`structuredContent` with `detail` and `errors`).
fn without_result_type(mut v: Value) -> Value {
    if let Some(map) = v.as_object_mut() {
        map.remove("resultType");
        if map.get("isError") == Some(&Value::Bool(true))
            && let Some(added) = map.remove("structuredContent")
        {
            assert!(
                added["errors"].as_array().is_some_and(|e| !e.is_empty()),
                "{added}"
            );
        }
    }
    v
}

#[test]
fn official_client_over_stdio_matches_the_reference() {
    let Some(python) = client_python() else {
        return;
    };
    if !mcp_built() {
        return;
    }
    // `legacy`: the initialize handshake; `auto`: the session-less 2026-07-28 revision.
    for (mode, protocol) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        check_mode(&python, mode, protocol);
    }
}

fn check_mode(python: &Path, mode: &str, protocol: &str) {
    let out = Command::new(python)
        .arg(client_dir().join("drive.py"))
        .args(["--mode", mode])
        .arg("--calls")
        .arg(client_dir().join("fixtures/mcp_tools_demo.calls.json"))
        .args(["--stdio", "--", apizr(), "serve", "mcp"])
        .arg(demo())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours: Value = serde_json::from_slice(&out.stdout).unwrap();
    let reference: Value = serde_json::from_slice(
        &std::fs::read(client_dir().join("fixtures/reference/mcp_tools_demo/transcript.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(ours["protocol_version"], protocol);
    assert_eq!(ours["server_info"], reference["server_info"]);
    assert_eq!(ours["capabilities"], reference["capabilities"]);
    let tools = ours["tools"].as_array().unwrap();
    let expected = reference["tools"].as_array().unwrap();
    assert_eq!(tools.len(), expected.len());
    for (a, b) in tools.iter().zip(expected) {
        let mut a = a.clone();
        a.as_object_mut().unwrap().remove("outputSchema");
        assert_eq!(&a, b);
    }
    let calls = ours["calls"].as_array().unwrap();
    let expected = reference["calls"].as_array().unwrap();
    assert_eq!(calls.len(), expected.len());
    for (a, b) in calls.iter().zip(expected) {
        assert_eq!(
            without_result_type(a["result"].clone()),
            without_result_type(b["result"].clone()),
            "{}",
            a["name"]
        );
    }
}

#[test]
fn raw_stdio_lines() {
    if !mcp_built() {
        return;
    }
    let mut child = Command::new(apizr())
        .args(["serve", "mcp"])
        .arg(demo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |line: &[u8]| {
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},
        "clientInfo":{"name":"raw","version":"0"}}});
    send(init.to_string().as_bytes());
    send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    // No reply to any of these; the session continues.
    send(b"{not json");
    send(format!("{}{}", "[".repeat(70), "]".repeat(70)).as_bytes());
    send(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"x\":\"\xff\"}");
    send(br#"{"hello":1}"#);
    send(br#"{"jsonrpc":"2.0","id":2,"method":"prompts/list"}"#);
    send(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#);
    // Python decoding semantics: NaN is invalid input, big integers stay exact.
    send(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"a":NaN}}}"#);
    send(br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{"a":123456789012345678901234567890}}}"#);
    // Arguments that are not an object: invalid params, as the Python SDK answers.
    send(br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"add","arguments":[1]}}"#);
    send(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":"a=1"}}"#);
    drop(stdin);
    let mut replies = Vec::new();
    let mut raw = Vec::new();
    let mut line = String::new();
    while stdout.read_line(&mut line).unwrap() > 0 {
        replies.push(serde_json::from_str::<Value>(&line).unwrap());
        raw.push(line.clone());
        line.clear();
    }
    let _ = child.wait();
    // Requests run concurrently: replies may come in any order.
    replies.sort_by_key(|r| r["id"].as_i64());
    let ids: Vec<_> = replies.iter().map(|r| r["id"].clone()).collect();
    assert_eq!(
        ids,
        vec![
            json!(1),
            json!(2),
            json!(3),
            json!(4),
            json!(5),
            json!(6),
            json!(7)
        ],
        "{replies:?}"
    );
    assert_eq!(replies[0]["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(replies[0]["result"]["serverInfo"]["name"], "Apizr MCP");
    assert_eq!(
        replies[0]["result"]["capabilities"],
        json!({"tools": {"listChanged": false}})
    );
    assert_eq!(replies[1]["error"]["code"], -32601);
    assert_eq!(
        replies[2]["result"]["structuredContent"],
        json!({"result": 5})
    );
    assert_eq!(
        replies[2]["result"]["content"][0]["text"],
        r#"{"result":5}"#
    );
    assert_eq!(replies[3]["result"]["isError"], true);
    assert_eq!(
        replies[3]["result"]["content"][0]["text"],
        "Invalid tool arguments"
    );
    assert_eq!(
        replies[4]["result"]["content"][0]["text"],
        r#"{"result":123456789012345678901234567892}"#
    );
    // structuredContent carries the integer exactly too (not as a float).
    assert!(
        raw.iter().any(|l| l.contains(r#""id":5"#)
            && l.contains(r#""structuredContent":{"result":123456789012345678901234567892}"#)),
        "{raw:?}"
    );
    for reply in &replies[5..] {
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        assert_eq!(reply["error"]["message"], "Invalid request parameters");
    }
}

/// Integers beyond 64 bits, through the official client both ways: the arguments reach the
/// function exactly and `structuredContent` comes back exact (the client also validates it
/// against the tool's `outputSchema`).
#[test]
fn official_client_gets_exact_big_integers_over_stdio() {
    let Some(python) = client_python() else {
        return;
    };
    if !mcp_built() {
        return;
    }
    let out = Command::new(python)
        .arg(client_dir().join("drive.py"))
        .arg("--calls")
        .arg(client_dir().join("fixtures/mcp_tools_demo.bigints.json"))
        .args(["--stdio", "--", apizr(), "serve", "mcp"])
        .arg(demo())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_big_integers(&out.stdout);
}

#[test]
fn cancelled_request_frees_the_worker() {
    if !mcp_built() {
        return;
    }
    let slow = client_dir().join("fixtures/mcp_slow.py");
    let mut child = Command::new(apizr())
        .args(["serve", "mcp", "--workers", "1"])
        .arg(slow)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: Value| {
        stdin.write_all(v.to_string().as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},
        "clientInfo":{"name":"raw","version":"0"}}}),
    );
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    let started = std::time::Instant::now();
    send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"nap","arguments":{"seconds":60}}}));
    std::thread::sleep(std::time::Duration::from_millis(500));
    send(json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":2,"reason":"test"}}));
    send(json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
        "params":{"name":"quick","arguments":{"x":41}}}));
    line.clear();
    stdout.read_line(&mut line).unwrap();
    let reply: Value = serde_json::from_str(&line).unwrap();
    // The only worker was busy with `nap`: `quick` answers long before 60 s only because the
    // cancellation killed it and a fresh worker took its place.
    assert_eq!(reply["id"], 3, "{reply}");
    assert_eq!(reply["result"]["structuredContent"], json!({"result": 42}));
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
}
