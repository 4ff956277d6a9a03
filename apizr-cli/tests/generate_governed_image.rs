//! A governed (v1) image on the real Docker engine, as a user runs it.
//!
//! `apizr generate rest tests/fixtures/generate/governed/netcheck.py` under `network: deny` is
//! built (moved, `--locked --offline`) and turned into an image on the offline base image, then
//! run twice, each time with `--network none` and the image's non-root user:
//! * under Docker's default seccomp profile, which refuses `unshare`: the server starts but is
//!   never ready — `/readyz` 503 names the control and why, the log says NOT READY, a call is a
//!   503 refusal naming the control, and the audit file records it;
//! * under the project's own `seccomp.json` (`--security-opt seccomp=…`, `--cap-drop ALL`): ready,
//!   a normal call succeeds, and a call that connects to the container's own server is stopped
//!   by the call's network namespace — while the same connection from the container itself
//!   (no governed call) succeeds, so the attack is real.
//!
//! Needs a Docker engine and the base image of `scripts/ci-docker-setup`; under `CI=true` a
//! missing engine fails the test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "generate/built.rs"]
mod built;
#[path = "generate/support.rs"]
mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use support::workspace_root;

const TOKEN: &str = "s3cret";

/// Start the image as `name` with `extra` `docker run` options.
fn run(name: &str, tag: &str, extra: &[&str]) {
    let mut args = vec!["run", "-d", "--name", name, "--network", "none"];
    args.extend(["-e", "APIZR_TOKEN=s3cret"]);
    args.extend(["-e", "APIZR_AUDIT=/tmp/apizr-audit.jsonl"]);
    args.extend(extra);
    args.push(tag);
    let out = Command::new("docker").args(&args).output().unwrap();
    assert!(
        out.status.success(),
        "docker run: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `/readyz` once the server has started (no longer "Starting"): (status, body).
fn readiness(name: &str) -> (u16, String) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, body) = built::request_inside(name, "GET", "/readyz", "", None);
        if status != 0 && !body.contains("Starting") {
            return (status, body);
        }
        assert!(
            Instant::now() < deadline,
            "the server never finished starting: {}",
            built::logs(name)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn call(name: &str, capability: &str, body: &str) -> (u16, String) {
    let path = format!("/capabilities/{capability}");
    built::request_inside(name, "POST", &path, body, Some(TOKEN))
}

#[test]
fn generated_governed_image_is_never_ready_under_the_default_profile_and_enforces_under_its_own() {
    if !built::docker_available() {
        return;
    }
    let source = workspace_root().join("tests/fixtures/generate/governed/netcheck.py");
    let policy = r#"{"network":{"mode":"deny"}}"#;
    let (dir, binary) = built::generate_and_build("rest", &source, Some(policy));
    let profile = dir.join("seccomp.json");
    assert!(profile.is_file(), "governed v1 projects ship seccomp.json");
    let id = std::process::id();
    let tag = format!("apizr-governed-test:{id}");
    let confined = format!("apizr-governed-test-default-{id}");
    let profiled = format!("apizr-governed-test-profile-{id}");
    let _cleanup = built::DockerCleanup(vec![
        vec!["rm".into(), "-f".into(), confined.clone()],
        vec!["rm".into(), "-f".into(), profiled.clone()],
        vec!["image".into(), "rm".into(), "-f".into(), tag.clone()],
    ]);
    built::build_image(&dir, &binary, &tag);

    // Docker's default profile: no namespaces, so network deny cannot be enforced.
    run(&confined, &tag, &[]);
    let (status, body) = readiness(&confined);
    assert_eq!(status, 503, "{body}");
    assert!(
        body.contains(
            "Policy cannot be enforced here: network (deny): cannot create a network namespace"
        ) && body.contains("seccomp profile must allow unshare"),
        "{body}"
    );
    assert!(
        built::logs(&confined).contains(
            "NOT READY (every call is refused): Policy cannot be enforced here: network (deny)"
        ),
        "{}",
        built::logs(&confined)
    );
    for capability in ["add", "reach"] {
        let body = if capability == "add" {
            r#"{"a":1,"b":2}"#
        } else {
            r#"{"port":8000}"#
        };
        assert_eq!(
            call(&confined, capability, body),
            (
                503,
                r#"{"detail":"Policy cannot be enforced here: network"}"#.into()
            ),
            "a refusal, never a bare 500"
        );
    }
    let audit = Command::new("docker")
        .args(["exec", &confined, "cat", "/tmp/apizr-audit.jsonl"])
        .output()
        .unwrap();
    let audit = String::from_utf8_lossy(&audit.stdout).into_owned();
    let records: Vec<serde_json::Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        records.len(),
        2,
        "one audit record per refused call: {audit}"
    );
    for record in &records {
        assert_eq!(record["status"], "policy_refused", "{record}");
        assert_eq!(
            record["refused"],
            serde_json::json!(["network"]),
            "{record}"
        );
    }

    // The generated profile: Docker accepts it, and the launcher gets its namespaces.
    let opt = format!("seccomp={}", profile.display());
    run(
        &profiled,
        &tag,
        &["--security-opt", &opt, "--cap-drop", "ALL"],
    );
    let (status, body) = readiness(&profiled);
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"status":"ready"}"#),
        "{}",
        built::logs(&profiled)
    );
    assert_eq!(
        call(&profiled, "add", r#"{"a":1,"b":2}"#),
        (200, "3".into())
    );
    // The attack works from the container itself (its loopback, the server's own port) ...
    let baseline = Command::new("docker")
        .args([
            "exec",
            "-w",
            "/srv/apizr/source",
            &profiled,
            "python3",
            "-c",
        ])
        .arg("import netcheck; print(netcheck.reach(8000))")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&baseline.stdout).trim(),
        "connected",
        "{}",
        String::from_utf8_lossy(&baseline.stderr)
    );
    // ... and not from a governed call: its own network namespace has no route (ENETUNREACH).
    let (status, body) = call(&profiled, "reach", r#"{"port":8000}"#);
    assert_eq!((status, body.as_str()), (200, r#""blocked: errno 101""#));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The generator (which does not depend on the runtime) adds exactly the calls the runtime's
/// launcher says it needs: one list may not move without the other.
#[test]
fn the_generated_profile_adds_exactly_the_launcher_calls() {
    let mut generated: Vec<&str> = apizr_codegen::seccomp::LAUNCHER_SYSCALLS
        .iter()
        .map(|(name, _)| *name)
        .collect();
    let mut needed = apizr_runtime::seccomp::LAUNCHER_SYSCALLS.to_vec();
    generated.sort_unstable();
    needed.sort_unstable();
    assert_eq!(generated, needed);
}
