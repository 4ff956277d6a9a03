//! The example serves its Python function and its native endpoints from one router: over REST
//! (real HTTP against the built binary: routes, documents, metrics, readiness, the native
//! limits stopping what would otherwise run, and the audit lines of both kinds of call) and over
//! MCP (the official Python `mcp` client, `tests/mcp_client/drive.py`, over stdio).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_serve-mixed");

/// The server, killed when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `serve-mixed rest` on a free port and wait until `/readyz` answers 200.
fn start_rest(audit: &std::path::Path) -> Server {
    let mut child = Command::new(BIN)
        .args(["rest", "--host", "127.0.0.1", "--port", "0", "--audit"])
        .arg(audit)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    // Read stderr to its end (the server logs there; a full pipe would block it).
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("server: {line}");
            if let Some(rest) = line.split("listening on http://").nth(1) {
                let addr = rest
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string();
                let _ = tx.send(addr);
            }
        }
    });
    let addr = rx.recv_timeout(Duration::from_secs(30)).unwrap();
    let server = Server { child, addr };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = request(&server.addr, "GET", "/readyz", b"");
        if status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "never ready: {status} {body}");
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

/// One HTTP/1.1 request (`Connection: close`); returns status and body.
fn request(addr: &str, method: &str, path: &str, body: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let text = String::from_utf8_lossy(&response).to_string();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

fn post(addr: &str, name: &str, body: &Value) -> (u16, String) {
    request(
        addr,
        "POST",
        &format!("/capabilities/{name}"),
        body.to_string().as_bytes(),
    )
}

#[test]
fn rest_serves_python_and_native_endpoints_from_one_router() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let server = start_rest(&audit);
    let addr = server.addr.clone();

    // The Python function: a fresh sandboxed process (default v1 policy).
    let (status, body) = post(&addr, "total", &json!({"prices": [10, 8], "tax": 0.2}));
    assert_eq!((status, body.as_str()), (200, "21.6"));
    let (status, body) = post(&addr, "total", &json!({"prices": "no"}));
    assert_eq!(status, 422, "{body}");

    // The native async endpoint.
    let (status, body) = post(&addr, "quote", &json!({"sku": "A1", "qty": 3}));
    assert_eq!(status, 200, "{body}");
    let quote: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        quote,
        json!({"sku": "A1", "qty": 3, "unit_price": 2.5, "total": 7.5})
    );
    // Its function's `Err` is a 500 without the error text.
    let (status, body) = post(&addr, "quote", &json!({"sku": "ZZ", "qty": 1}));
    assert_eq!(status, 500, "{body}");
    assert!(!body.contains("unknown sku"), "{body}");
    // Unknown fields are refused (the schema's additionalProperties: false, enforced).
    let (status, body) = post(
        &addr,
        "quote",
        &json!({"sku": "A1", "qty": 1, "admin": true}),
    );
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("unknown field"), "{body}");
    let (status, _) = post(&addr, "quote", &json!({"sku": "A1", "qty": -1}));
    assert_eq!(status, 422);
    // max_input_bytes = 1024: a larger body is refused while it is read (it would decode fine).
    let big = format!("{{\"sku\": \"A1\", \"qty\": 1}}{}", " ".repeat(2000));
    let (status, body) = request(&addr, "POST", "/capabilities/quote", big.as_bytes());
    assert_eq!(status, 413, "{body}");

    // The native sync endpoint: wall_time_ms = 300 answers 504 at the deadline...
    let started = Instant::now();
    let (status, body) = post(&addr, "nap", &json!({"ms": 1500}));
    assert_eq!(status, 504, "{body}");
    assert!(
        started.elapsed() < Duration::from_millis(1200),
        "{:?}",
        started.elapsed()
    );
    // ...and the sleeping call still holds the only slot (concurrency = 1): the next is 429.
    let (status, body) = post(&addr, "nap", &json!({"ms": 1}));
    assert_eq!(status, 429, "{body}");
    std::thread::sleep(Duration::from_millis(1400));
    let (status, body) = post(&addr, "nap", &json!({"ms": 5}));
    assert_eq!((status, body.as_str()), (200, "5"));

    // One document for both kinds.
    let (status, body) = request(&addr, "GET", "/openapi.json", b"");
    assert_eq!(status, 200);
    let doc: Value = serde_json::from_str(&body).unwrap();
    let paths = &doc["paths"];
    assert!(paths["/capabilities/total"]["post"]["x-apizr-capability-id"].is_string());
    let quote_op = &paths["/capabilities/quote"]["post"];
    assert_eq!(
        quote_op["description"],
        "Quote a price for a quantity of one SKU."
    );
    let input = &quote_op["requestBody"]["content"]["application/json"]["schema"];
    assert_eq!(input["additionalProperties"], false, "{input}");
    assert_eq!(input["required"], json!(["sku", "qty"]), "{input}");
    let output = &quote_op["responses"]["200"]["content"]["application/json"]["schema"];
    assert_eq!(
        output["properties"]["unit_price"]["type"], "number",
        "{output}"
    );
    assert!(
        !body.contains("$defs") && !body.contains("\"$ref\""),
        "{body}"
    );
    validate_openapi(&body);

    let (status, body) = request(&addr, "GET", "/docs", b"");
    assert_eq!(status, 200);
    assert!(body.contains("openapi.json"), "{body}");
    let (status, metrics) = request(&addr, "GET", "/metrics", b"");
    assert_eq!(status, 200);
    for series in [
        "apizr_requests_total{capability=\"total\",outcome=\"success\"} 1",
        "apizr_requests_total{capability=\"quote\",outcome=\"success\"} 1",
        "apizr_requests_total{capability=\"nap\",outcome=\"timeout\"} 1",
        "apizr_requests_total{capability=\"nap\",outcome=\"busy\"} 1",
    ] {
        assert!(metrics.contains(series), "{series} not in\n{metrics}");
    }
    drop(server);

    // Audit: the governed Python calls (written by the backend, as for `apizr execute`) and
    // the native calls (written by the router), one canonical JSON line each.
    let text = std::fs::read_to_string(&audit).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let python: Vec<&Value> = records
        .iter()
        .filter(|r| {
            r["capability_id"]
                .as_str()
                .is_some_and(|c| !c.starts_with("native:"))
        })
        .collect();
    assert_eq!(python.len(), 1, "{text}");
    assert_eq!(python[0]["status"], "success");
    assert_eq!(python[0]["schema_version"], "apizr.audit/v1");
    assert!(
        python[0]["executable_digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    let native = |name: &str, status: &str| {
        records
            .iter()
            .filter(|r| r["capability_id"] == format!("native:{name}") && r["status"] == status)
            .count()
    };
    assert_eq!(native("quote", "success"), 1, "{text}");
    assert_eq!(native("quote", "execution_failed"), 1, "{text}");
    assert_eq!(native("quote", "invalid_input"), 2, "{text}");
    assert_eq!(native("nap", "timeout"), 1, "{text}");
    assert_eq!(native("nap", "busy"), 1, "{text}");
    let timeout = records
        .iter()
        .find(|r| r["capability_id"] == "native:nap" && r["status"] == "timeout")
        .unwrap();
    assert_eq!(timeout["limits_hit"], json!(["wall_time"]));
    assert!(
        timeout["policy_digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
}

/// The document passes openapi-spec-validator (skipped locally without it; fails under CI).
fn validate_openapi(document: &str) {
    let Some(python) = apizr_test_support::openapi_validator_python() else {
        apizr_test_support::skip("no openapi-spec-validator (OPENAPI_VALIDATOR_PYTHON)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("openapi.json");
    std::fs::write(&file, document).unwrap();
    let out = Command::new(python)
        .args(["-m", "openapi_spec_validator"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn mcp_client_lists_and_calls_both_kinds() {
    let Some(python) = apizr_test_support::mcp_client_python() else {
        apizr_test_support::skip("no official mcp client (MCP_CLIENT_PYTHON)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls.json");
    let list = json!([
        {"name": "total", "arguments": {"prices": [10, 8], "tax": 0.2}},
        {"name": "quote", "arguments": {"sku": "B2", "qty": 2}},
        {"name": "quote", "arguments": {"sku": "B2", "qty": 2, "admin": true}},
        {"name": "nap", "arguments": {"ms": 2}},
    ]);
    std::fs::write(&calls, list.to_string()).unwrap();
    let drive = apizr_test_support::workspace_root().join("tests/mcp_client/drive.py");
    let out = Command::new(python)
        .arg(drive)
        .arg("--calls")
        .arg(&calls)
        .args(["--stdio", "--", BIN, "mcp"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let transcript: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools = transcript["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["total", "quote", "nap"], "{transcript}");
    let quote = &tools[1];
    assert_eq!(
        quote["description"],
        "Quote a price for a quantity of one SKU."
    );
    assert_eq!(quote["inputSchema"]["additionalProperties"], false);
    assert_eq!(quote["outputSchema"]["type"], "object");
    // A scalar result is wrapped as {"result": …}, for Python and native tools alike.
    assert_eq!(tools[2]["outputSchema"]["required"], json!(["result"]));

    let results = transcript["calls"].as_array().unwrap();
    let result = |i: usize| &results[i]["result"];
    assert_eq!(
        result(0)["structuredContent"],
        json!({"result": 21.6}),
        "{transcript}"
    );
    assert_eq!(
        result(1)["structuredContent"],
        json!({"sku": "B2", "qty": 2, "unit_price": 10.0, "total": 20.0}),
        "{transcript}"
    );
    assert_eq!(result(2)["isError"], true, "{transcript}");
    assert_eq!(
        result(3)["structuredContent"],
        json!({"result": 2}),
        "{transcript}"
    );
}
