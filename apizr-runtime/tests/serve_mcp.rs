//! MCP transport tests: tool naming and `mcp-tools.json` byte parity with the reference's
//! goldens, tool results against the reference server's recorded transcript (in process), and
//! the official Python `mcp` client over Streamable HTTP (stateless and 2026-07-28 modes),
//! plus HTTP admission (413/422/401).
//!
//! Goldens: `tests/mcp_client/fixtures/reference/*` (re-record with
//! `tests/mcp_client/record-reference.sh`). The Python client comes from `MCP_CLIENT_PYTHON`
//! or `target/mcp-client-venv/bin/python` (created by `.ci/run`); without it the client tests
//! are skipped locally and fail under `CI=true`.
#![cfg(feature = "mcp")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use apizr_ir::admission::parse_permissive;
use apizr_ir::interface::InvocationContract;
use apizr_ir::json::Value;
use apizr_runtime::request::Executable;
use apizr_runtime::serve::mcp::{self, HttpOptions, McpHandler, ToolSet, tool_name};
use apizr_runtime::serve::{ExecutionMode, ServeSource, ServeSpec};
use serde_json::{Value as Json, json};

#[path = "../../tests/mcp_client/bigints.rs"]
mod bigints;

fn client_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp_client")
}

fn reference(case: &str, file: &str) -> Vec<u8> {
    std::fs::read(
        client_dir()
            .join("fixtures/reference")
            .join(case)
            .join(file),
    )
    .unwrap()
}

fn contracts(case: &str) -> (Value, Vec<InvocationContract>) {
    let manifest = parse_permissive(&reference(case, "apizr-mcp.json")).unwrap();
    let Some(Value::Array(tools)) = manifest.get("tools") else {
        panic!("no tools in {case}");
    };
    let contracts = tools
        .iter()
        .map(|t| apizr_runtime::serve::decode::contract(t).unwrap())
        .collect();
    (manifest, contracts)
}

const CASES: [&str; 5] = [
    "mcp_names",
    "mcp_slow",
    "mcp_tools_demo",
    "shapes_demo",
    "pricing",
];

#[test]
fn tool_names_and_mcp_tools_json_match_the_reference() {
    for case in CASES {
        let (manifest, contracts) = contracts(case);
        let set = ToolSet::new(&contracts).unwrap();
        let Some(Value::Array(entries)) = manifest.get("tools") else {
            unreachable!()
        };
        for entry in entries {
            let Some(Value::Str(id)) = entry.get("capability_id") else {
                panic!()
            };
            let Some(Value::Str(expected)) = entry.get("tool_name") else {
                panic!()
            };
            let Some(Value::Str(name)) = entry.get("name") else {
                panic!()
            };
            assert_eq!(&tool_name(name, id), expected, "{case}: {id}");
            let tool = set.get(expected).unwrap();
            assert_eq!(Some(&tool.input_schema), entry.get("input_schema"), "{id}");
        }
        let ours = set.reference_document().canonical_bytes().unwrap();
        let theirs = reference(case, "mcp-tools.json");
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs),
            "{case}: mcp-tools.json differs"
        );
    }
}

#[test]
fn naming_rule_vectors() {
    assert_eq!(tool_name("add", "python:m:add"), "add");
    assert_eq!(tool_name("Apizr_x", "python:m:Apizr_x"), "Apizr_x");
    assert_eq!(tool_name("a.b-c", "python:m:a.b-c"), "a.b-c");
    let long64 = "x".repeat(64);
    assert_eq!(tool_name(&long64, "id"), long64);
    // sha256("python:mcp_tools_demo:apizr_thing"), observed from the reference.
    assert_eq!(
        tool_name("apizr_thing", "python:mcp_tools_demo:apizr_thing"),
        "apizr_af0ab9d3fd4fd791a4acd1dd2e02e0cf500e1e1accf7640761b74fb17260c6ac"
    );
    assert!(tool_name(&"x".repeat(65), "id").starts_with("apizr_"));
    assert!(tool_name("ünïcode", "id").starts_with("apizr_"));
    assert!(tool_name("", "id").starts_with("apizr_"));
}

#[test]
fn output_schemas_are_object_rooted() {
    let (_, contracts) = contracts("shapes_demo");
    let set = ToolSet::new(&contracts).unwrap();
    let schema = |name: &str| {
        set.get(name)
            .unwrap()
            .output_schema
            .as_ref()
            .map(|s| s.canonical_string().unwrap())
    };
    // TypedDict: the object schema itself.
    assert_eq!(
        schema("make_point").unwrap(),
        r#"{"additionalProperties":false,"properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x","y"],"type":"object"}"#
    );
    // Non-object: wrapped.
    assert_eq!(
        schema("pos_only").unwrap(),
        r#"{"additionalProperties":false,"properties":{"result":{"type":"integer"}},"required":["result"],"type":"object"}"#
    );
    // May or may not be an object: no schema (structured content by value, as the reference).
    assert_eq!(schema("maybe_map"), None);
}

fn demo_spec() -> ServeSpec {
    case_spec("mcp_tools_demo")
}

/// A direct-mode spec of one fixture module (`fixtures/<case>.py`, module `<case>`).
fn case_spec(case: &str) -> ServeSpec {
    let (manifest, contracts) = contracts(case);
    let Some(Value::Str(path)) = manifest.get("executable_path") else {
        panic!()
    };
    let bytes = std::fs::read(client_dir().join(format!("fixtures/{case}.py"))).unwrap();
    ServeSpec::from_contracts(
        contracts,
        ServeSource {
            executable: Executable::new(bytes),
            module: case.into(),
            executable_path: path.clone(),
            ir_digest: None,
            readiness_digest: None,
        },
        ExecutionMode::Direct {
            workers: 2,
            timeout: None,
        },
    )
}

fn case_transcript(case: &str) -> Json {
    serde_json::from_slice(&reference(case, "transcript.json")).unwrap()
}

/// A result as compared: the wire object without `resultType` (protocol-revision dependent)
/// and without our documented addition to invalid-argument errors: `structuredContent`
/// `{"detail", "errors": [{"expected","found","path"}…]}` (checked for shape here).
fn comparable(mut result: Json) -> Json {
    if let Some(map) = result.as_object_mut() {
        map.remove("resultType");
        if map.get("isError") == Some(&Json::Bool(true))
            && let Some(added) = map.remove("structuredContent")
        {
            assert_eq!(
                map["content"][0]["text"], "Invalid tool arguments",
                "only invalid arguments carry errors"
            );
            let errors = added["errors"].as_array().expect("errors");
            assert!(added["detail"].is_string() && !errors.is_empty(), "{added}");
            for e in errors {
                let keys: Vec<_> = e.as_object().unwrap().keys().cloned().collect();
                assert_eq!(keys, ["expected", "found", "path"], "{e}");
            }
        }
    }
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_results_match_the_reference_transcripts() {
    let mut compared = 0;
    for case in ["mcp_tools_demo", "shapes_demo"] {
        let handler = mcp::start_handler(case_spec(case)).await.unwrap();
        let reference = case_transcript(case);
        for call in reference["calls"].as_array().unwrap() {
            let name = call["name"].as_str().unwrap();
            let arguments = call
                .get("arguments")
                .map(|a| a.as_object().unwrap().clone());
            let ours = serde_json::to_value(handler.call(name, arguments).await).unwrap();
            assert_eq!(
                comparable(ours),
                comparable(call["result"].clone()),
                "{case}: {name} {:?}",
                call.get("arguments")
            );
            compared += 1;
        }
    }
    assert!(compared >= 30, "{compared}");
}

fn client_python() -> Option<PathBuf> {
    apizr_test_support::mcp_client_python()
}

async fn start_http(options: HttpOptions) -> (String, tokio::sync::oneshot::Sender<()>) {
    start_case_http(options, "mcp_tools_demo").await
}

async fn start_case_http(
    options: HttpOptions,
    case: &str,
) -> (String, tokio::sync::oneshot::Sender<()>) {
    let handler: McpHandler = mcp::start_handler(case_spec(case)).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        mcp::http::serve_http(listener, handler, &options, async move {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    (format!("127.0.0.1:{}", addr.port()), stop)
}

async fn drive(python: PathBuf, args: Vec<String>) -> Json {
    tokio::task::spawn_blocking(move || {
        let out = std::process::Command::new(python)
            .arg(client_dir().join("drive.py"))
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "drive.py failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    })
    .await
    .unwrap()
}

fn check_transcript(ours: &Json, protocol: &str, case: &str) {
    let reference = case_transcript(case);
    assert_eq!(ours["protocol_version"], protocol);
    assert_eq!(ours["server_info"], reference["server_info"]);
    assert_eq!(ours["capabilities"], reference["capabilities"]);
    // Listed tools: the reference's entries plus our outputSchema where the type allows it.
    let ours_tools = ours["tools"].as_array().unwrap();
    let theirs = reference["tools"].as_array().unwrap();
    assert_eq!(ours_tools.len(), theirs.len());
    for (a, b) in ours_tools.iter().zip(theirs) {
        let mut a = a.clone();
        let output = a.as_object_mut().unwrap().remove("outputSchema");
        assert_eq!(&a, b);
        if let Some(schema) = output {
            assert_eq!(schema["type"], "object", "{}", a["name"]);
        }
    }
    assert!(ours_tools.iter().any(|t| t.get("outputSchema").is_some()));
    let calls = ours["calls"].as_array().unwrap();
    let expected = reference["calls"].as_array().unwrap();
    assert_eq!(calls.len(), expected.len());
    for (a, b) in calls.iter().zip(expected) {
        assert_eq!(
            comparable(a["result"].clone()),
            comparable(b["result"].clone()),
            "{}",
            a["name"]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_client_over_streamable_http() {
    let Some(python) = client_python() else {
        return;
    };
    for case in ["mcp_tools_demo", "shapes_demo"] {
        let (addr, stop) = start_case_http(HttpOptions::default(), case).await;
        let calls = client_dir().join(format!("fixtures/{case}.calls.json"));
        let url = format!("http://{addr}/mcp");
        let args = |mode: &str| {
            vec![
                "--http".into(),
                url.clone(),
                "--calls".into(),
                calls.display().to_string(),
                "--mode".into(),
                mode.into(),
            ]
        };
        // The client validates every structured result against our outputSchema.
        let legacy = drive(python.clone(), args("legacy")).await;
        check_transcript(&legacy, "2025-11-25", case);
        let modern = drive(python.clone(), args("auto")).await;
        check_transcript(&modern, "2026-07-28", case);
        let _ = stop.send(());
    }
}

/// A raw HTTP/1.1 POST; returns (status, body).
fn post(addr: &str, body: &[u8], headers: &str) -> (u16, String) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n{headers}\
         Connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let _ = stream.write_all(body);
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response).to_string();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_admission_and_token() {
    let (addr, stop) = start_http(HttpOptions {
        token: Some("s3cret".into()),
        ..HttpOptions::default()
    })
    .await;
    let auth = "Authorization: Bearer s3cret\r\n";
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},
        "clientInfo":{"name":"raw","version":"0"}}})
    .to_string();
    let a = addr.clone();
    let results = tokio::task::spawn_blocking(move || {
        let no_token = post(&a, init.as_bytes(), "");
        let wrong = post(&a, init.as_bytes(), "Authorization: Bearer nope\r\n");
        let ok = post(&a, init.as_bytes(), auth);
        let deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
        let too_deep = post(&a, deep.as_bytes(), auth);
        let big = vec![b' '; 4 * 1024 * 1024 + 1];
        let too_big = post(&a, &big, auth);
        (no_token, wrong, ok, too_deep, too_big)
    })
    .await
    .unwrap();
    let (no_token, wrong, ok, too_deep, too_big) = results;
    assert_eq!(no_token.0, 401);
    assert_eq!(wrong.0, 401);
    assert_eq!(ok.0, 200, "{}", ok.1);
    assert!(ok.1.contains("Apizr MCP"), "{}", ok.1);
    let admission = r#"{"detail":"JSON admission limit or encoding rejected"}"#;
    assert_eq!(too_deep, (422, admission.to_string()));
    assert_eq!(too_big, (413, admission.to_string()));
    let _ = stop.send(());
}

/// Integers beyond 64 bits through the official client over HTTP: exact arguments, exact
/// `structuredContent` (the client validates it against `outputSchema`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_client_gets_exact_big_integers_over_http() {
    let Some(python) = client_python() else {
        return;
    };
    let (addr, stop) = start_http(HttpOptions::default()).await;
    let calls = client_dir().join("fixtures/mcp_tools_demo.bigints.json");
    let transcript = tokio::task::spawn_blocking(move || {
        let out = std::process::Command::new(python)
            .arg(client_dir().join("drive.py"))
            .args(["--http", &format!("http://{addr}/mcp"), "--calls"])
            .arg(calls)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    })
    .await
    .unwrap();
    bigints::check_big_integers(&transcript);
    let _ = stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_object_arguments_and_broken_framing() {
    let (addr, stop) = start_http(HttpOptions::default()).await;
    let results = tokio::task::spawn_blocking(move || {
        let call = |arguments: &str| {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"add","arguments":{arguments}}}}}"#
            );
            post(&addr, body.as_bytes(), "MCP-Protocol-Version: 2025-11-25\r\n")
        };
        let list = call("[1]");
        let text = call("\"a\"");
        let number = call("3");
        // Bad chunked framing is 400 (not 413).
        let mut stream = std::net::TcpStream::connect(&addr).unwrap();
        stream
            .write_all(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                  Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
            )
            .unwrap();
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
        (list, text, number, String::from_utf8_lossy(&response).into_owned())
    })
    .await
    .unwrap();
    let (list, text, number, chunked) = results;
    for (status, body) in [list, text, number] {
        assert_eq!(status, 200, "{body}");
        assert!(body.contains(r#""code":-32602"#), "{body}");
        assert!(body.contains("Invalid request parameters"), "{body}");
    }
    assert!(chunked.starts_with("HTTP/1.1 400"), "{chunked}");
    assert!(
        chunked.ends_with(r#"{"detail":"Malformed request body"}"#),
        "{chunked}"
    );
    let _ = stop.send(());
}

#[test]
fn handler_is_shareable() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<McpHandler>();
}

/// Invalid arguments: the reference's text content, plus where and what as
/// `structuredContent` (the same `detail` and `errors` as a REST 422).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_arguments_carry_field_errors() {
    let handler = mcp::start_handler(demo_spec()).await.unwrap();
    let result = handler
        .call("add", json!({"a": "x"}).as_object().cloned())
        .await;
    let result = serde_json::to_value(result).unwrap();
    assert_eq!(result["isError"], true);
    assert_eq!(result["content"][0]["text"], "Invalid tool arguments");
    assert_eq!(
        result["structuredContent"],
        json!({"detail": "Value does not match the declared input type",
               "errors": [{"expected": "integer", "found": "string", "path": "/a"}]})
    );
    let missing = handler.call("add", None).await;
    let missing = serde_json::to_value(missing).unwrap();
    assert_eq!(
        missing["structuredContent"]["errors"],
        json!([{"expected": "integer", "found": "missing", "path": "/a"}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_timeout_maps_to_the_timeout_text() {
    let mut spec = demo_spec();
    // Same contracts, but `add` now sleeps past the deadline.
    let source = std::fs::read_to_string(client_dir().join("fixtures/mcp_tools_demo.py"))
        .unwrap()
        .replace(
            "    return a + b\n",
            "    import time\n    time.sleep(30)\n    return a + b\n",
        );
    spec.source.executable = Executable::new(source.into_bytes());
    spec.mode = ExecutionMode::Direct {
        workers: 1,
        timeout: Some(std::time::Duration::from_millis(500)),
    };
    let handler = mcp::start_handler(spec).await.unwrap();
    let started = std::time::Instant::now();
    let slow = handler
        .call("add", json!({"a": 1}).as_object().cloned())
        .await;
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let slow = serde_json::to_value(slow).unwrap();
    assert_eq!(slow["isError"], true);
    assert_eq!(slow["content"][0]["text"], "Tool execution timed out");
    // The killed worker is replaced: the next call succeeds.
    let next = handler
        .call("divide", json!({"x": 1, "y": 4}).as_object().cloned())
        .await;
    let next = serde_json::to_value(next).unwrap();
    assert_eq!(next["structuredContent"], json!({"result": 0.25}));
}
