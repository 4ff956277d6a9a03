//! A governed (v1) image of a module of a package on the real Docker engine, as a user runs it.
//!
//! `apizr generate rest tests/fixtures/generate/governed/src --select
//! netcheck.checks:add,netcheck.checks:reach,netcheck.arith:plus --allow-conditional
//! --wheelhouse W` under `network: deny`: `add` needs a sibling module (a relative import),
//! `reach` a third-party distribution the package's `pyproject.toml` requires, from a
//! pure-Python wheel this test builds into W (no index, no network; pip comes from a wheel too,
//! the base image has none), and `plus` is a function of a second module, so the one bundle
//! holds both modules (`package.modules`) and the server runs each in its own module.
//! The project is built (moved, `--locked --offline`) and turned into an image on the offline
//! base image twice: with `docker build` (the Dockerfile's `RUN sh python/install.sh`) and with
//! `apizr image build --project --binary` (the same script, run by the Engine API in a helper
//! container without a network); both images install the requirement into the virtual
//! environment and carry the same configuration. Then they run, each with `--network none` and
//! the image's non-root user:
//! * the `docker build` image under Docker's default seccomp profile, which refuses `unshare`
//!   (its virtual environment imports the requirement): the server starts but is
//!   never ready — `/readyz` 503 names the control and why, the log says NOT READY, a call is a
//!   503 refusal naming the control, and the audit file records it;
//! * the `apizr image build` image under the project's own `seccomp.json` (`--security-opt
//!   seccomp=…`, `--cap-drop ALL`): ready,
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
#[path = "support/wheelhouse.rs"]
mod wheels;

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
    let source = workspace_root().join("tests/fixtures/generate/governed/src");
    let policy = r#"{"network":{"mode":"deny"}}"#;
    let wheelhouse = wheelhouse();
    let (dir, binary) = built::generate_and_build_module(
        "rest",
        &source,
        "netcheck.checks",
        Some(policy),
        &[
            "--select",
            "netcheck.checks:add,netcheck.checks:reach,netcheck.arith:plus",
            "--allow-conditional",
            "--wheelhouse",
            wheelhouse.to_str().unwrap(),
        ],
    );
    let _ = std::fs::remove_dir_all(&wheelhouse);
    for file in [
        "source/netcheck/__init__.py",
        "source/netcheck/arith.py",
        "python/requirements.txt",
        "python/wheelhouse/apizr_fixture_errtext-1.0-py3-none-any.whl",
    ] {
        assert!(dir.join(file).is_file(), "{file}");
    }
    // Two modules in one bundle: each bound to its own capabilities (the closures overlap in
    // `netcheck/__init__.py` and `netcheck/arith.py`, held once).
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("apizr-rest.json")).unwrap()).unwrap();
    let modules: Vec<(&str, usize)> = manifest["package"]["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let module = m["source"]["module"].as_str().unwrap();
            (module, m["capabilities"].as_array().unwrap().len())
        })
        .collect();
    assert_eq!(modules, [("netcheck.checks", 2), ("netcheck.arith", 1)]);
    let profile = dir.join("seccomp.json");
    assert!(profile.is_file(), "governed v1 projects ship seccomp.json");
    let id = std::process::id();
    let tag = format!("apizr-governed-test:{id}");
    let engine_tag = format!("apizr-governed-test:engine-{id}");
    let confined = format!("apizr-governed-test-default-{id}");
    let profiled = format!("apizr-governed-test-profile-{id}");
    let _cleanup = built::DockerCleanup(vec![
        vec!["rm".into(), "-f".into(), confined.clone()],
        vec!["rm".into(), "-f".into(), profiled.clone()],
        vec!["image".into(), "rm".into(), "-f".into(), tag.clone()],
        vec!["image".into(), "rm".into(), "-f".into(), engine_tag.clone()],
    ]);
    built::build_image(&dir, &binary, &tag);
    image_build_project(&dir, &binary, &engine_tag);
    let config = |image: &str| {
        let format = "{{json .Config.Env}} {{.Config.User}} {{json .Config.Entrypoint}} \
                      {{json .Config.Healthcheck}} {{.Config.WorkingDir}} {{json .Config.Labels}}";
        let out = Command::new("docker")
            .args(["image", "inspect", "--format", format, image])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(
        config(&engine_tag),
        config(&tag),
        "apizr image build makes the image the Dockerfile describes"
    );

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
    // docker build ran python/install.sh: the requirement is in the virtual environment.
    let venv = Command::new("docker")
        .args(["exec", &confined, "/opt/apizr/venv/bin/python", "-c"])
        .arg("import errtext; print(errtext.blocked(1))")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&venv.stdout).trim(),
        "blocked: errno 1",
        "{}",
        String::from_utf8_lossy(&venv.stderr)
    );
    for capability in ["add", "reach", "plus"] {
        let body = if capability == "reach" {
            r#"{"port":8000}"#
        } else {
            r#"{"a":1,"b":2}"#
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
        3,
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

    // The generated profile: Docker accepts it, and the launcher gets its namespaces. This is
    // the image `apizr image build` made: its install step put the requirement in the venv.
    let opt = format!("seccomp={}", profile.display());
    run(
        &profiled,
        &engine_tag,
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
    // The second module's function, from its own module's workers.
    assert_eq!(
        call(&profiled, "plus", r#"{"a":2,"b":3}"#),
        (200, "5".into())
    );
    // The attack works from the container itself (its loopback, the server's own port) ...
    let baseline = Command::new("docker")
        .args([
            "exec",
            "-w",
            "/srv/apizr/source",
            &profiled,
            "/opt/apizr/venv/bin/python",
            "-c",
        ])
        .arg("import netcheck.checks as c; print(c.reach(8000))")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&baseline.stdout).trim(),
        "connected",
        "{}",
        String::from_utf8_lossy(&baseline.stderr)
    );
    // ... and not from a governed call: its own network namespace has no route (ENETUNREACH).
    // The text comes from the third-party `errtext`, imported from the virtual environment.
    let (status, body) = call(&profiled, "reach", r#"{"port":8000}"#);
    assert_eq!((status, body.as_str()), (200, r#""blocked: errno 101""#));
    // The system interpreter stayed as it was: the requirement is only in the environment.
    let system = Command::new("docker")
        .args(["exec", &profiled, "python3", "-c", "import errtext"])
        .output()
        .unwrap();
    assert!(
        !system.status.success(),
        "errtext reached the system interpreter"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `apizr image build --project DIR --binary B --tag T` on the offline base image; then, with
/// `python/install.sh` made to fail, the same build fails naming the step, its status and its
/// output (and leaves no image).
fn image_build_project(dir: &std::path::Path, binary: &std::path::Path, tag: &str) {
    let base = std::env::var("APIZR_BASE_IMAGE_TAG")
        .unwrap_or_else(|_| "apizr-ci/python-base:bookworm-stdlib".into());
    let build = |tag: &str| {
        Command::new(env!("CARGO_BIN_EXE_apizr"))
            .args(["image", "build", "--project"])
            .arg(dir)
            .args(["--base", &base, "--tag", tag, "--binary"])
            .arg(binary)
            .output()
            .unwrap()
    };
    let started = Instant::now();
    let out = build(tag);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "apizr image build --project: {stderr}"
    );
    assert!(
        stderr.contains("installing the requirements into /opt/apizr/venv"),
        "{stderr}"
    );
    eprintln!(
        "apizr image build --project (with requirements): {:?}",
        started.elapsed()
    );
    let script = dir.join("python/install.sh");
    let original = std::fs::read(&script).unwrap();
    std::fs::write(&script, "echo 'no wheel for you' >&2\nexit 3\n").unwrap();
    let failed_tag = format!("{tag}-failed");
    let out = build(&failed_tag);
    std::fs::write(&script, original).unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("python/install.sh exited with status 3: no wheel for you"),
        "{stderr}"
    );
    let left = Command::new("docker")
        .args(["image", "inspect", &failed_tag])
        .output()
        .unwrap();
    assert!(!left.status.success(), "a failed build leaves no image");
}

/// The fixture's wheelhouse (`support/wheelhouse.rs`), under the target directory.
fn wheelhouse() -> std::path::PathBuf {
    let dir = workspace_root().join(format!(
        "target/generated/projects/wheelhouse-{}",
        std::process::id()
    ));
    wheels::write_wheelhouse(&dir);
    dir
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
