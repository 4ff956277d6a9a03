//! One implementation of the published surface: for the same source, the live servers publish
//! what `apizr generate` writes, and both are the reference's bytes.
//!
//! * REST: `apizr serve rest SOURCE` answers `/openapi.json` with exactly the bytes of the
//!   generated project's `openapi.json` and of the reference's (0.4.6) file;
//! * MCP: `apizr serve mcp SOURCE` (stdio) lists, in `tools/list`, exactly the tools of the
//!   generated `mcp-tools.json` (same order, names, schemas, `_meta`, descriptions), plus
//!   `outputSchema`, the one field a live server adds.
//!
//! The source is `tests/fixtures/generate/sources/shapes.py`: an empty docstring (kept as `""`
//! in `mcp-tools.json`, left out of `openapi.json`), a name in the reserved `apizr_` prefix, a
//! non-ASCII name, every schema shape. Its reference goldens are
//! `tests/fixtures/generate/parity/sources/shapes.py.json` (`scripts/refresh-generate-goldens`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/served.rs"]
mod served;
#[path = "generate/support.rs"]
mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use served::Served;
use support::{TempDir, apizr, workspace_root};

fn source() -> PathBuf {
    workspace_root().join("tests/fixtures/generate/sources/shapes.py")
}

/// The reference's `openapi.json` (`rest`) or `mcp-tools.json` (`mcp`) text for the source.
fn reference(mode: &str) -> String {
    let path = workspace_root().join("tests/fixtures/generate/parity/sources/shapes.py.json");
    let golden: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    golden[mode]["interface"].as_str().unwrap().to_string()
}

/// `apizr generate <transport> SOURCE` into a temp dir; the bytes of `file`.
fn generated(transport: &str, file: &str) -> String {
    let tmp = TempDir::new("surface");
    let out = tmp.path().join("project");
    let source = source();
    let output = apizr(
        tmp.path(),
        &[
            "generate",
            transport,
            source.to_str().unwrap(),
            "--output-dir",
            out.to_str().unwrap(),
            "--no-lockfile",
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read_to_string(out.join(file)).unwrap()
}

#[test]
fn live_openapi_is_the_generated_openapi_json() {
    let written = generated("rest", "openapi.json");
    assert_eq!(written, reference("rest"), "generated openapi.json");
    let source = source();
    let server = Served::spawn_ready(
        &[source.to_str().unwrap(), "--workers", "1"],
        &[],
        Duration::from_secs(30),
        Duration::from_secs(30),
    );
    let (status, live) = server.try_request("GET", "/openapi.json", "").unwrap();
    assert_eq!(status, 200);
    assert_eq!(live, written, "live /openapi.json");
    // The empty docstring of `ünïcode` has no description here (it has one in mcp-tools.json).
    assert!(!live.contains(r#""description":"""#), "{live}");
}

/// `tools/list` of `apizr serve mcp SOURCE` over stdio (raw JSON-RPC lines).
fn live_tools() -> Vec<Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_apizr"))
        .args(["serve", "mcp"])
        .arg(source())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for message in [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},
            "clientInfo":{"name":"surface","version":"0"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let mut line = String::new();
    let tools = loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "no tools/list reply"
        );
        let reply: Value = serde_json::from_str(&line).unwrap();
        if reply["id"] == 2 {
            break reply["result"]["tools"].as_array().unwrap().clone();
        }
    };
    drop(stdin);
    let _ = child.wait();
    tools
}

#[test]
fn live_tools_list_is_the_generated_mcp_tools_json() {
    let written = generated("mcp", "mcp-tools.json");
    assert_eq!(written, reference("mcp"), "generated mcp-tools.json");
    let document: Value = serde_json::from_str(&written).unwrap();
    let expected = document["tools"].as_array().unwrap();
    let mut live = live_tools();
    let mut with_output_schema = 0;
    for tool in &mut live {
        if tool
            .as_object_mut()
            .unwrap()
            .remove("outputSchema")
            .is_some()
        {
            with_output_schema += 1;
        }
    }
    assert_eq!(&live, expected, "live tools/list without outputSchema");
    // The live list adds outputSchema where the result has one (not for `echo`, untyped).
    assert!(with_output_schema > 0 && with_output_schema < expected.len());
    // The empty docstring is kept as an empty description, as in the reference.
    assert!(live.iter().any(|t| t["description"] == ""), "{live:?}");
}
