//! End to end: generated projects are real crates that build and serve.
//!
//! `apizr generate rest|mcp` writes a project one directory deeper under
//! `target/generated/projects/`, the project is moved up to another depth (it must not care
//! where it lives), and cargo builds it `--locked --offline` with its own generated
//! `Cargo.lock` and the shared target directory `target/generated`; then:
//! * the REST server (direct and governed v1) is started on a free loopback port and called
//!   over real HTTP (`/readyz`, `/health`, successful calls, module state kept in direct mode
//!   and reset in governed mode, a 422, `/openapi.json` = the generated file byte for byte);
//!   the direct project is then edited and rebuilt: the `#[python]` bindings are re-checked
//!   by the compiler, and a binary built from an edited source refuses to start;
//! * the MCP server (direct and governed v1) is driven over stdio by the official `mcp`
//!   Python client (`tests/mcp_client/drive.py`; Python from `MCP_CLIENT_PYTHON` or
//!   `target/mcp-client-venv/bin/python`, required under CI);
//! * the REST project's Dockerfile is built on the offline base image
//!   (`APIZR_BASE_IMAGE_TAG`) and the container is checked: non-root, bearer token enforced on
//!   0.0.0.0, HEALTHCHECK healthy (docker required under CI).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "generate/built.rs"]
mod built;
#[path = "generate/support.rs"]
mod support;

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::workspace_root;

// The generated projects share one target dir and package names, so these tests run one at a
// time: the nextest test group `generated-projects` (`.config/nextest.toml`), since each test
// is its own process and an in-process lock would serialize nothing.

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Generate `transport` for tests/fixtures/generate/sources/service.py (governed by the default
/// v1 policy when `governed`), moved and built; returns (project dir, binary).
fn generate_and_build(transport: &str, governed: bool) -> (PathBuf, PathBuf) {
    let source = workspace_root().join("tests/fixtures/generate/sources/service.py");
    built::generate_and_build(transport, &source, governed.then_some("{}"))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One HTTP/1.1 request; returns (status, body).
fn http(port: u16, method: &str, path: &str, body: &str) -> Option<(u16, String)> {
    http_with(port, method, path, body, "")
}

/// As [`http`], with extra header lines (each ending in CRLF).
fn http_with(
    port: u16,
    method: &str,
    path: &str,
    body: &str,
    headers: &str,
) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         {headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
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
    serve_rest(false);
}

/// Governed v1: every call is a fresh sandboxed worker started through the generated binary
/// itself (`launcher::run_if_requested`), so this also checks the generated `main.rs`.
#[test]
fn generated_governed_rest_project_builds_and_serves() {
    serve_rest(true);
}

fn serve_rest(governed: bool) {
    let (dir, binary) = generate_and_build("rest", governed);
    // The generated binary's --help describes its flags (clap, shared with `apizr serve`).
    let help = Command::new(&binary).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for line in [
        "verifies every digest",
        "--token <TOKEN>",
        "Bearer token required on every route but /health and /readyz",
        "--governed-workers <N>",
    ] {
        assert!(help.contains(line), "--help lacks {line:?}:\n{help}");
    }
    let port = free_port();
    let _server = Killed(
        Command::new(&binary)
            .args(["--port", &port.to_string(), "--workers", "1"])
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
        assert!(
            Instant::now() < deadline,
            "the generated server never became ready"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, body) = http(port, "GET", "/health", "").unwrap();
    assert_eq!((status, body.as_str()), (200, r#"{"status":"ok"}"#));
    let (status, body) = http(
        port,
        "POST",
        "/capabilities/total",
        r#"{"prices":[1.0,2.0]}"#,
    )
    .unwrap();
    assert_eq!((status, body.as_str()), (200, "3.5999999999999996"));
    let (status, body) = http(
        port,
        "POST",
        "/capabilities/greet",
        r#"{"name":"Ada","punct":"?"}"#,
    )
    .unwrap();
    assert_eq!((status, body.as_str()), (200, r#""Hello Ada?""#));
    // Module state persists across calls in the warm direct worker, never in governed mode.
    let counts: Vec<String> = (0..2)
        .map(|_| http(port, "POST", "/capabilities/bump", "{}").unwrap().1)
        .collect();
    assert_eq!(counts, if governed { ["1", "1"] } else { ["1", "2"] });
    let (status, _) = http(port, "POST", "/capabilities/total", r#"{"prices":"x"}"#).unwrap();
    assert_eq!(status, 422);
    // The document the bindings' contracts make is served, byte for byte the generated file
    // (itself byte-identical to the reference's: the conformance tests).
    let (status, body) = http(port, "GET", "/openapi.json", "").unwrap();
    assert_eq!(status, 200);
    let on_disk = std::fs::read_to_string(dir.join("openapi.json")).unwrap();
    assert_eq!(body, on_disk);
    drop(_server);
    if !governed {
        rebuilds_recheck_and_edited_files_are_refused(&dir, &binary);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `cargo build` of the project (already built once: only its own crate recompiles).
fn rebuild(dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO"))
        .args(["build", "--locked", "--offline", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env(
            "CARGO_TARGET_DIR",
            workspace_root().join("target/generated"),
        )
        .output()
        .unwrap()
}

/// The binary, started on a port nobody listens to: it must refuse before serving.
fn refused(binary: &Path, dir: &Path, args: &[&str]) -> String {
    let out = Command::new(binary)
        .args(args)
        .args(["--port", "1"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The generated `main.rs` binds every capability with `#[python]`:
/// * a project file altered in a copy given with `--bundle` is refused (as `apizr serve
///   --bundle` refuses it);
/// * an edit of the Python file is re-checked by the next build (a real rebuild, not
///   dep-info): a changed parameter type fails to compile with the macro's error naming the
///   Python side, the original type compiles again;
/// * a body edit compiles (the signatures still match) but the binary now carries a source
///   its manifest does not record, and refuses to start naming the file.
fn rebuilds_recheck_and_edited_files_are_refused(dir: &Path, binary: &Path) {
    let main = std::fs::read_to_string(dir.join("src/main.rs")).unwrap();
    assert!(
        main.contains("pub fn total(prices: Vec<f64>, tax: Option<f64>) -> Result<f64, apizr_runtime::CallError>;"),
        "{main}"
    );
    let openapi = dir.join("openapi.json");
    let original = std::fs::read(&openapi).unwrap();
    std::fs::write(&openapi, [original.as_slice(), b" "].concat()).unwrap();
    let stderr = refused(binary, dir, &["--bundle", dir.to_str().unwrap()]);
    assert!(
        stderr.contains("artifact digest mismatch: openapi.json"),
        "{stderr}"
    );
    std::fs::write(&openapi, &original).unwrap();

    let source = dir.join("source/service.py");
    let python = std::fs::read_to_string(&source).unwrap();
    std::fs::write(
        &source,
        python.replace("prices: list[float]", "prices: list[str]"),
    )
    .unwrap();
    let out = rebuild(dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a mismatching signature compiled");
    assert!(
        stderr.contains("parameter `prices` is `list[str]` in source/service.py:6"),
        "{stderr}"
    );
    std::fs::write(&source, python.replace("(1 + tax)", "(1 + tax) * 1")).unwrap();
    let out = rebuild(dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = refused(binary, dir, &[]);
    assert!(
        stderr.contains("its source does not match apizr-rest.json (was source/service.py edited"),
        "{stderr}"
    );
}

fn client_python() -> Option<PathBuf> {
    apizr_test_support::mcp_client_python()
}

#[test]
fn generated_mcp_project_builds_and_answers_the_official_client() {
    let Some(python) = client_python() else {
        return;
    };
    drive_mcp(&python, false);
    drive_mcp(&python, true);
}

fn drive_mcp(python: &Path, governed: bool) {
    let (dir, binary) = generate_and_build("mcp", governed);
    let calls = dir.join("calls.json");
    std::fs::write(
        &calls,
        r#"[{"name":"total","arguments":{"prices":[1.0,2.0]}},{"name":"greet","arguments":{"name":"Ada"}},{"name":"nope","arguments":{}},{"name":"bump"},{"name":"bump"}]"#,
    )
    .unwrap();
    let drive = workspace_root().join("tests/mcp_client/drive.py");
    let out = Command::new(python)
        .arg(&drive)
        .arg("--calls")
        .arg(&calls)
        .args(["--stdio", "--"])
        .arg(&binary)
        .args(["--stdio", "--workers", "1"])
        .current_dir(Path::new(&dir))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let transcript: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = transcript["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bump", "greet", "total"]);
    let results = transcript["calls"].as_array().unwrap();
    assert_eq!(results.len(), 5, "{transcript}");
    // One stdio session: the warm direct worker keeps module state, governed calls do not.
    let bumps: Vec<&serde_json::Value> = results[3..]
        .iter()
        .map(|r| &r["result"]["structuredContent"]["result"])
        .collect();
    let expected = if governed { [1, 1] } else { [1, 2] };
    assert_eq!(
        bumps,
        expected
            .map(serde_json::Value::from)
            .iter()
            .collect::<Vec<_>>(),
        "{transcript}"
    );
    let total = &results[0]["result"];
    assert_eq!(total["isError"], false, "{transcript}");
    assert_eq!(
        total["structuredContent"]["result"], 3.5999999999999996,
        "{transcript}"
    );
    let greet = &results[1]["result"];
    assert_eq!(
        greet["structuredContent"]["result"], "Hello Ada!",
        "{transcript}"
    );
    let unknown = &results[2]["result"];
    assert_eq!(unknown["isError"], true, "{transcript}");
    assert_eq!(
        unknown["content"][0]["text"], "Unknown tool",
        "{transcript}"
    );
    // tools/list carries exactly the generated mcp-tools.json entries (plus outputSchema).
    let generated: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("mcp-tools.json")).unwrap()).unwrap();
    for (listed, file) in transcript["tools"]
        .as_array()
        .unwrap()
        .iter()
        .zip(generated["tools"].as_array().unwrap())
    {
        for key in ["_meta", "inputSchema", "name"] {
            assert_eq!(listed[key], file[key], "{key}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The generated Dockerfile works with the offline base image built by
/// `scripts/ci-docker-setup` (`APIZR_BASE_IMAGE_TAG`): non-root, bundle at /srv/apizr,
/// binding 0.0.0.0 with a bearer token, HEALTHCHECK on /readyz reaching `healthy`.
#[test]
fn generated_rest_image_builds_and_runs_under_docker() {
    if !built::docker_available() {
        return;
    }
    let (dir, binary) = generate_and_build("rest", false);
    let tag = format!("apizr-generate-test:{}", std::process::id());
    let name = format!("apizr-generate-test-{}", std::process::id());
    let _cleanup = built::DockerCleanup(vec![
        vec!["rm".into(), "-f".into(), name.clone()],
        vec!["image".into(), "rm".into(), "-f".into(), tag.clone()],
    ]);
    built::build_image(&dir, &binary, &tag);
    let out = Command::new("docker")
        .args([
            "run",
            "-d",
            "--name",
            &name,
            "-e",
            "APIZR_TOKEN=s3cret",
            &tag,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "docker run: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let inspect = |format: &str| {
        let out = Command::new("docker")
            .args(["inspect", "--format", format, &name])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(inspect("{{.Config.User}}"), "65532:65532");
    built::ready_then_total(&name, "s3cret");
    // The HEALTHCHECK (python3 + urllib against /readyz) reports healthy.
    let deadline = Instant::now() + Duration::from_secs(60);
    while inspect("{{.State.Health.Status}}") != "healthy" {
        assert!(
            Instant::now() < deadline,
            "HEALTHCHECK never became healthy"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
