//! End to end: generated projects are real crates that build and serve.
//!
//! `apizr generate rest|mcp` writes a project under `target/generated/projects/`, cargo builds
//! it with the shared target directory `target/generated` (the workspace's `Cargo.lock` is
//! copied in so the versions match what the workspace already builds), and then:
//! * the REST server is started on a free loopback port and called over real HTTP
//!   (`/health`, a successful call, a 422, `/openapi.json` = the generated file);
//! * the MCP server is driven over stdio by the official `mcp` Python client
//!   (`tests/mcp_client/drive.py`; Python from `MCP_CLIENT_PYTHON` or
//!   `target/mcp-client-venv/bin/python`, required under CI).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "generate/support.rs"]
mod support;

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::{apizr, workspace_root};

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Generate `transport` for examples/pricing.py and build it; returns (project dir, binary).
fn generate_and_build(transport: &str) -> (PathBuf, PathBuf) {
    let root = workspace_root();
    let projects = root.join("target/generated/projects");
    std::fs::create_dir_all(&projects).unwrap();
    let dir = projects.join(format!("pricing-{transport}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let source = root.join("examples/pricing.py");
    let out = apizr(
        &projects,
        &["generate", transport, source.to_str().unwrap(), "--output-dir", dir.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cargo_toml = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(
        cargo_toml.contains("apizr-runtime = { path = \"../../../../apizr-runtime\""),
        "{cargo_toml}"
    );
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let target = root.join("target/generated");
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .unwrap();
    assert!(status.success(), "cargo build of the generated {transport} project failed");
    let binary = target.join(format!("debug/apizr-{transport}-pricing"));
    assert!(binary.is_file());
    (dir, binary)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// One HTTP/1.1 request; returns (status, body).
fn http(port: u16, method: &str, path: &str, body: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let status = response.split(' ').nth(1)?.parse().ok()?;
    let body = response.split_once("\r\n\r\n")?.1.to_string();
    Some((status, body))
}

#[test]
fn generated_rest_project_builds_and_serves() {
    let (dir, binary) = generate_and_build("rest");
    let port = free_port();
    let _server = Killed(
        Command::new(&binary)
            .args(["--port", &port.to_string()])
            .current_dir(&dir)
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        // /readyz turns 200 once the warm workers have imported the module.
        if let Some((200, _)) = http(port, "GET", "/readyz", "") {
            break;
        }
        assert!(Instant::now() < deadline, "the generated server never became ready");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, body) = http(port, "GET", "/health", "").unwrap();
    assert_eq!((status, body.as_str()), (200, r#"{"status":"ok"}"#));
    let (status, body) = http(port, "POST", "/capabilities/total", r#"{"prices":[1.0,2.0]}"#).unwrap();
    assert_eq!((status, body.as_str()), (200, "3.5999999999999996"));
    let (status, body) =
        http(port, "POST", "/capabilities/greet", r#"{"name":"Ada","punct":"?"}"#).unwrap();
    assert_eq!((status, body.as_str()), (200, r#""Hello Ada?""#));
    let (status, _) = http(port, "POST", "/capabilities/total", r#"{"prices":"x"}"#).unwrap();
    assert_eq!(status, 422);
    let (status, body) = http(port, "GET", "/openapi.json", "").unwrap();
    assert_eq!(status, 200);
    let on_disk = std::fs::read_to_string(dir.join("openapi.json")).unwrap();
    let served: serde_json::Value = serde_json::from_str(&body).unwrap();
    let generated: serde_json::Value = serde_json::from_str(&on_disk).unwrap();
    assert_eq!(served, generated);
    let _ = std::fs::remove_dir_all(&dir);
}

fn client_python() -> Option<PathBuf> {
    let candidate = std::env::var_os("MCP_CLIENT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/mcp-client-venv/bin/python"));
    if candidate.exists() {
        return Some(candidate);
    }
    assert!(
        std::env::var("CI").is_err(),
        "the official MCP client is required under CI ({})",
        candidate.display()
    );
    eprintln!("skipping: no Python with the `mcp` package at {}", candidate.display());
    None
}

#[test]
fn generated_mcp_project_builds_and_answers_the_official_client() {
    let Some(python) = client_python() else { return };
    let (dir, binary) = generate_and_build("mcp");
    let calls = dir.join("calls.json");
    std::fs::write(
        &calls,
        r#"[{"name":"total","arguments":{"prices":[1.0,2.0]}},{"name":"greet","arguments":{"name":"Ada"}},{"name":"nope","arguments":{}}]"#,
    )
    .unwrap();
    let drive = workspace_root().join("tests/mcp_client/drive.py");
    let out = Command::new(python)
        .arg(&drive)
        .arg("--calls")
        .arg(&calls)
        .args(["--stdio", "--"])
        .arg(&binary)
        .arg("--stdio")
        .current_dir(Path::new(&dir))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let transcript: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = transcript["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["greet", "total"]);
    let results = transcript["calls"].as_array().unwrap();
    assert_eq!(results.len(), 3, "{transcript}");
    assert_eq!(results[0]["isError"], false, "{transcript}");
    assert!(results[0].to_string().contains("3.5999999999999996"), "{transcript}");
    assert!(results[1].to_string().contains("Hello Ada!"), "{transcript}");
    assert_eq!(results[2]["isError"], true, "{transcript}");
    assert!(results[2].to_string().contains("Unknown tool"), "{transcript}");
    let _ = std::fs::remove_dir_all(&dir);
}
