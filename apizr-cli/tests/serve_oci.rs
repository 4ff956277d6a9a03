//! Governed v2 (OCI) serving against a REAL engine (Docker, or Podman when `DOCKER_HOST` names
//! its socket; CI runs this file against both): `apizr serve rest SOURCE --policy
//! v2.json --runtime-image … --runtime-platform …` and a generated v2 REST project served with
//! `apizr serve rest --bundle DIR` (no cargo build).
//!
//! The server reaches the engine through a recording proxy (its `DOCKER_HOST` is a unix socket
//! owned by the test that forwards to the real engine and records every request line), so the tests can prove that invalid arguments never start a
//! container and that every container the server created is gone afterwards, even while other
//! test binaries use the same engine.
//!
//! The worker image is the one `scripts/ci-docker-setup` recorded in
//! `target/apizr-ci/worker-image.json` (or a tagged build from the offline base image). With
//! `CI=true` a missing engine or image is a failure; elsewhere the tests print why they skip.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use apizr_runtime::oci::Engine;

#[path = "support/served.rs"]
mod served;
use served::Served;
/// The runtime crate's container-test helpers (worker image on the engine `DOCKER_HOST` names,
/// Docker or Podman; the CI switch).
#[allow(dead_code)]
#[path = "../../apizr-runtime/tests/common/oci.rs"]
mod oci_support;
use oci_support::image;

fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("serve-oci")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The engine behind a recording proxy (`oci_support::LyingEngine` telling no lies): the
/// server's `DOCKER_HOST`, and the names of the containers it asked the engine to create.
struct EngineProxy(oci_support::LyingEngine);

impl EngineProxy {
    fn start(dir: &Path) -> EngineProxy {
        let tag = dir.file_name().and_then(|n| n.to_str()).unwrap_or("serve");
        EngineProxy(oci_support::LyingEngine::start(
            tag,
            oci_support::Lies::none(),
        ))
    }

    fn docker_host(&self) -> String {
        format!("unix://{}", self.0.socket.display())
    }

    fn created(&self) -> Vec<String> {
        self.0
            .requests()
            .iter()
            .filter_map(|r| r.split("/containers/create?name=").nth(1))
            .map(|rest| {
                rest.chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                    .collect()
            })
            .collect()
    }
}

impl Served {
    fn start(args: &[&str], docker_host: &str) -> Served {
        Served::spawn_ready(
            args,
            &[("DOCKER_HOST", docker_host)],
            Duration::from_secs(60),
            Duration::from_secs(60),
        )
    }
}

/// Every container in `names` is gone (removal is synchronous with the answer; allow a
/// little slack for the engine).
fn assert_removed(names: &[String]) {
    let engine = Engine::from_env().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    for name in names {
        while engine.container_exists(name).unwrap() {
            assert!(
                Instant::now() < deadline,
                "container {name} was not removed"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

const TOOLS: &str = "import time\n\n\
def add(a: int, b: int) -> int:\n    return a + b\n\n\
def hog() -> int:\n    b = bytearray(200 * 1000 * 1000)\n    for i in range(0, len(b), 4096):\n        b[i] = 1\n    return len(b)\n\n\
def nap(s: float) -> float:\n    time.sleep(s)\n    return s\n";

const POLICY: &str = r#"{"schema_version": "apizr.execution/v2", "backend": "oci-container",
 "resources": {"memory_bytes": 67108864}, "limits": {"wall_time_ms": 3000}}"#;

#[test]
fn serve_rest_runs_each_call_in_a_container() {
    let Some(image) = image() else { return };
    let dir = tmp("serve");
    std::fs::write(dir.join("tools.py"), TOOLS).unwrap();
    std::fs::write(dir.join("v2.json"), POLICY).unwrap();
    let proxy = EngineProxy::start(&dir);
    let source = dir.join("tools.py");
    let policy = dir.join("v2.json");
    let server = Served::start(
        &[
            source.to_str().unwrap(),
            "--policy",
            policy.to_str().unwrap(),
            "--runtime-image",
            &image.image,
            "--runtime-platform",
            image.platform.as_str(),
            // The fresh path: one container created per call (the pool is tested below).
            "--oci-pool",
            "0",
        ],
        &proxy.docker_host(),
    );
    assert!(proxy.created().is_empty(), "no container before a call");

    // Invalid arguments: answered before any container exists.
    // The reference's governed detail plus where and what (our documented `errors`).
    for (body, error) in [
        (
            r#"{"a": 1}"#,
            r#"{"expected":"integer","found":"missing","path":"/b"}"#,
        ),
        (
            r#"{"a": "x", "b": 2}"#,
            r#"{"expected":"integer","found":"string","path":"/a"}"#,
        ),
        ("[1]", r#"{"expected":"object","found":"array","path":""}"#),
    ] {
        let want = format!(r#"{{"detail":"Invalid request arguments","errors":[{error}]}}"#);
        assert_eq!(server.post("add", body), (422, want), "{body}");
    }
    assert!(
        proxy.created().is_empty(),
        "invalid input started a container"
    );

    assert_eq!(server.post("add", r#"{"a": 1, "b": 2}"#), (200, "3".into()));
    assert_eq!(proxy.created().len(), 1);
    assert_eq!(
        server.post("hog", "{}"),
        (
            503,
            r#"{"detail":"Execution resource limit exceeded"}"#.into()
        )
    );
    let started = Instant::now();
    assert_eq!(
        server.post("nap", r#"{"s": 30}"#),
        (504, r#"{"detail":"Execution timed out"}"#.into())
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    let created = proxy.created();
    assert_eq!(created.len(), 3, "{created:?}");
    drop(server);
    assert_removed(&created);
}

/// Functions of two modules of a package, each call in a fresh container: each capability runs
/// its own module (the same body answers with its module's name), and `up` imports its sibling
/// from the verified files the request carries.
#[test]
fn serve_rest_runs_each_module_of_a_package_in_its_containers() {
    let Some(image) = image() else { return };
    let dir = tmp("package-modules");
    std::fs::write(dir.join("v2.json"), POLICY).unwrap();
    let proxy = EngineProxy::start(&dir);
    let package =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/package-modules/src");
    let policy = dir.join("v2.json");
    let server = Served::start(
        &[
            package.to_str().unwrap(),
            "--select",
            "kit.alpha:up,kit.alpha:whoami,kit.beta:whoareyou",
            "--allow-conditional",
            "--policy",
            policy.to_str().unwrap(),
            "--runtime-image",
            &image.image,
            "--runtime-platform",
            image.platform.as_str(),
            "--oci-pool",
            "0",
        ],
        &proxy.docker_host(),
    );
    assert_eq!(server.post("up", r#"{"x": 4}"#), (200, "40".into()));
    assert_eq!(server.post("whoami", "{}"), (200, "\"kit.alpha\"".into()));
    assert_eq!(server.post("whoareyou", "{}"), (200, "\"kit.beta\"".into()));
    let created = proxy.created();
    assert_eq!(created.len(), 3, "one container per call: {created:?}");
    drop(server);
    assert_removed(&created);
}

#[test]
fn serve_refuses_to_become_ready_without_the_image() {
    let Some(image) = image() else { return };
    let dir = tmp("absent");
    std::fs::write(dir.join("tools.py"), TOOLS).unwrap();
    std::fs::write(dir.join("v2.json"), POLICY).unwrap();
    // A well-formed image ID that is not on the engine.
    let absent = format!("sha256:{}", "0".repeat(64));
    assert_ne!(absent, image.image);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(env!("CARGO_BIN_EXE_apizr"))
        .args(["serve", "rest"])
        .arg(dir.join("tools.py"))
        .arg("--policy")
        .arg(dir.join("v2.json"))
        .args([
            "--runtime-image",
            &absent,
            "--runtime-platform",
            "linux/amd64",
        ])
        .args(["--port", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Served {
        child,
        port,
        io_timeout: Duration::from_secs(60),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let answer = loop {
        if let Some((status, body)) = server.try_request("GET", "/readyz", "")
            && body.contains("not present")
        {
            break (status, body);
        }
        assert!(Instant::now() < deadline, "no probe failure reported");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(answer.0, 503, "{answer:?}");
    assert_eq!(server.post("add", r#"{"a": 1, "b": 2}"#).0, 503);
}

#[test]
fn a_generated_v2_project_serves_from_its_bundle() {
    let Some(image) = image() else { return };
    let dir = tmp("bundle");
    std::fs::write(dir.join("tools.py"), TOOLS).unwrap();
    std::fs::write(dir.join("v2.json"), POLICY).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_apizr"))
        .current_dir(&dir)
        .args(["generate", "rest", "tools.py", "--output-dir", "project"])
        .args([
            "--execution-policy",
            "v2.json",
            "--runtime-image",
            &image.image,
        ])
        .args(["--runtime-platform", image.platform.as_str()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let project = dir.join("project");
    let bundle: serde_json::Value =
        serde_json::from_slice(&std::fs::read(project.join("execution/bundle.json")).unwrap())
            .unwrap();
    assert_eq!(bundle["schema_version"], "apizr.execution-bundle/v2");
    assert_eq!(bundle["runtime"]["image"], image.image.as_str());

    let proxy = EngineProxy::start(&dir);
    // A generated project's server keeps a pool of prepared containers by default.
    let server = Served::start(
        &["--bundle", project.to_str().unwrap()],
        &proxy.docker_host(),
    );
    server.wait_metric("apizr_oci_pool_ready", |n| n >= 1);
    assert_eq!(
        server.post("add", r#"{"a": 2}"#),
        (
            422,
            r#"{"detail":"Invalid request arguments","errors":[{"expected":"integer","found":"missing","path":"/b"}]}"#.into()
        )
    );
    assert_eq!(server.metric("apizr_oci_pool_hits_total"), Some(0));
    assert_eq!(server.post("add", r#"{"a": 2, "b": 5}"#), (200, "7".into()));
    assert_eq!(server.metric("apizr_oci_pool_hits_total"), Some(1));
    let mut server = server;
    assert!(server.terminate(Duration::from_secs(60)), "no clean exit");
    assert_removed(&proxy.created());
}

/// One stateless MCP `tools/call` over Streamable HTTP; the JSON-RPC result.
fn mcp_call(port: u16, tool: &str, arguments: &str) -> Option<serde_json::Value> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    );
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .ok()?;
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut raw = String::new();
    stream.read_to_string(&mut raw).ok()?;
    let data = raw.lines().find_map(|l| l.strip_prefix("data: "))?;
    let doc: serde_json::Value = serde_json::from_str(data).ok()?;
    Some(doc["result"].clone())
}

#[test]
fn a_generated_v2_mcp_project_serves_tools_from_containers() {
    let Some(image) = image() else { return };
    let dir = tmp("mcp");
    std::fs::write(dir.join("tools.py"), TOOLS).unwrap();
    std::fs::write(dir.join("v2.json"), POLICY).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_apizr"))
        .current_dir(&dir)
        .args(["generate", "mcp", "tools.py", "--output-dir", "project"])
        .args([
            "--execution-policy",
            "v2.json",
            "--runtime-image",
            &image.image,
        ])
        .args(["--runtime-platform", image.platform.as_str()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let proxy = EngineProxy::start(&dir);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(env!("CARGO_BIN_EXE_apizr"))
        .args(["serve", "mcp", "--http", "--oci-pool", "0", "--bundle"])
        .arg(dir.join("project"))
        .args(["--port", &port.to_string()])
        .env("DOCKER_HOST", proxy.docker_host())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Served {
        child,
        port,
        io_timeout: Duration::from_secs(60),
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let added = loop {
        if let Some(result) = mcp_call(server.port, "add", r#"{"a": 2, "b": 5}"#) {
            break result;
        }
        assert!(Instant::now() < deadline, "MCP server did not answer");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(added["structuredContent"], serde_json::json!({"result": 7}));
    assert_eq!(added["isError"], false);
    let hog = mcp_call(server.port, "hog", "{}").unwrap();
    assert_eq!(hog["isError"], true);
    assert_eq!(
        hog["content"][0]["text"],
        "Tool execution resource limit exceeded"
    );
    let created = proxy.created();
    assert_eq!(created.len(), 2, "{created:?}");
    drop(server);
    assert_removed(&created);
}

/// The server's arguments for `tools.py` under `POLICY` in `image`, with `extra` flags.
fn pooled_args(
    dir: &Path,
    image: &apizr_runtime::oci::RuntimeImage,
    extra: &[&str],
) -> Vec<String> {
    std::fs::write(dir.join("tools.py"), TOOLS).unwrap();
    std::fs::write(dir.join("v2.json"), POLICY).unwrap();
    let mut args: Vec<String> = vec![
        dir.join("tools.py").display().to_string(),
        "--policy".into(),
        dir.join("v2.json").display().to_string(),
        "--runtime-image".into(),
        image.image.clone(),
        "--runtime-platform".into(),
        image.platform.as_str().to_string(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    args
}

fn start_with(args: &[String], docker_host: &str) -> Served {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Served::start(&args, docker_host)
}

/// A pooled server: calls are answered by prepared containers (`/metrics` counts them),
/// invalid input never touches one, limits hold, `apizr doctor` sees the pool, and SIGTERM
/// removes every container the server created.
#[test]
fn a_pooled_server_answers_from_prepared_containers() {
    let Some(image) = image() else { return };
    let dir = tmp("pooled");
    let proxy = EngineProxy::start(&dir);
    let args = pooled_args(&dir, image, &["--oci-pool", "2"]);
    let mut server = start_with(&args, &proxy.docker_host());
    server.wait_metric("apizr_oci_pool_ready", |n| n == 2);
    for body in [r#"{"a": 1}"#, "[1]"] {
        assert_eq!(server.post("add", body).0, 422, "{body}");
    }
    assert_eq!(server.metric("apizr_oci_pool_hits_total"), Some(0));
    assert_eq!(server.metric("apizr_oci_pool_misses_total"), Some(0));
    assert_eq!(server.post("add", r#"{"a": 1, "b": 2}"#), (200, "3".into()));
    server.wait_metric("apizr_oci_pool_ready", |n| n >= 1);
    assert_eq!(
        server.post("hog", "{}"),
        (
            503,
            r#"{"detail":"Execution resource limit exceeded"}"#.into()
        )
    );
    server.wait_metric("apizr_oci_pool_ready", |n| n >= 1);
    let started = Instant::now();
    assert_eq!(
        server.post("nap", r#"{"s": 30}"#),
        (504, r#"{"detail":"Execution timed out"}"#.into())
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(server.metric("apizr_oci_pool_hits_total"), Some(3));
    assert_eq!(server.metric("apizr_oci_pool_misses_total"), Some(0));
    assert_eq!(server.metric("apizr_oci_pool_anomalies_total"), Some(0));
    // `apizr doctor` sees this server's pool on the engine, by owner.
    let doctor = Command::new(env!("CARGO_BIN_EXE_apizr"))
        .args(["doctor", "--format", "json"])
        .env("DOCKER_HOST", proxy.docker_host())
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let owners = doc["docker"]["oci_pool"]["owners"]
        .as_array()
        .unwrap()
        .clone();
    let mine = owners
        .iter()
        .find(|o| o["pid"] == server.child.id())
        .unwrap_or_else(|| panic!("{owners:?}"));
    assert_eq!(mine["liveness"], "alive");
    assert!(mine["running"].as_u64().unwrap() >= 1, "{mine}");
    assert!(server.terminate(Duration::from_secs(60)), "no clean exit");
    let created = proxy.created();
    assert!(created.len() >= 5, "{created:?}");
    assert_removed(&created);
}

fn labelled_with(engine: &Engine, owner: &str) -> Vec<String> {
    let label = format!("{}={owner}", apizr_runtime::oci::sweep::OWNER_LABEL);
    engine.containers_with_label(&label).unwrap()
}

fn bundles_of(owner: &str) -> Vec<PathBuf> {
    let prefix = format!("apizr-oci-{}.", owner.replace('/', "."));
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

/// `kill -9` of a real pooled server leaks its prepared containers and bundles (nothing can
/// run in a killed process); the next server's start-up sweep removes them before it is ready,
/// and nothing labelled with the dead server remains.
#[test]
fn a_killed_pooled_server_leaks_nothing() {
    let Some(image) = image() else { return };
    let dir = tmp("killed");
    let docker_host =
        std::env::var("DOCKER_HOST").unwrap_or_else(|_| "unix:///var/run/docker.sock".into());
    let args = pooled_args(&dir, image, &["--oci-pool", "2"]);
    let mut first = start_with(&args, &docker_host);
    first.wait_metric("apizr_oci_pool_ready", |n| n == 2);
    assert_eq!(first.post("add", r#"{"a": 1, "b": 2}"#), (200, "3".into()));
    first.wait_metric("apizr_oci_pool_ready", |n| n == 2);
    let owner = apizr_runtime::owner::Owner::of_pid(first.child.id())
        .unwrap()
        .encode();
    let engine = Engine::from_env().unwrap();
    // The used container is removed just after its answer, by the server's remover thread:
    // wait until only the two prepared ones remain, so the kill cannot race a removal that
    // was already under way (on Podman it then completed after the kill).
    let until = Instant::now() + Duration::from_secs(30);
    while labelled_with(&engine, &owner).len() > 2 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
    }
    let held = labelled_with(&engine, &owner);
    assert!(held.len() >= 2, "{held:?}");
    assert!(bundles_of(&owner).len() >= 2);
    // kill -9, and reap it (a zombie is dead too, but this is what a supervisor does).
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    let leaked = labelled_with(&engine, &owner);
    assert!(
        held.iter().all(|h| leaked.contains(h)),
        "{held:?} vs {leaked:?}"
    );
    let mut second = start_with(&args, &docker_host);
    // The sweep ran before the second server reported ready.
    let left = labelled_with(&engine, &owner);
    assert!(left.is_empty(), "left behind: {left:?}");
    assert!(bundles_of(&owner).is_empty());
    let second_owner = apizr_runtime::owner::Owner::of_pid(second.child.id())
        .unwrap()
        .encode();
    second.wait_metric("apizr_oci_pool_ready", |n| n == 2);
    assert!(second.terminate(Duration::from_secs(60)), "no clean exit");
    let until = Instant::now() + Duration::from_secs(20);
    while !labelled_with(&engine, &second_owner).is_empty() {
        assert!(Instant::now() < until, "the second server left containers");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(bundles_of(&second_owner).is_empty());
}

/// A package with a third-party requirement: only an image that carries it serves it.
#[path = "serve_oci/requirements.rs"]
mod requirements;
