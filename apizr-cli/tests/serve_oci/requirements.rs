//! A package that declares a third-party requirement, served under an `apizr.execution/v2`
//! policy (Docker, and Podman when CI runs this binary against it).
//!
//! The fixture `tests/fixtures/generate/governed/src` (`netcheck`): its module imports its
//! requirement `errtext` (distribution `apizr-fixture-errtext`, a wheel built here) at module
//! level, so no call succeeds without it.
//! * with the plain worker image the server never becomes ready: `/readyz` 503 names the
//!   image, what it has and the requirement set, a call is a 503, and the log says so;
//! * `apizr image build --base <worker> --package DIR --wheelhouse W` layers the requirement
//!   (offline, pinned by hash) and labels the image with the set;
//! * with that image `apizr serve DIR` (a fresh container per call) and a generated v2 project
//!   served from its bundle (prepared containers) both answer calls that import it, in
//!   containers under every v2 control (the same create body and per-container checks); the
//!   project also serves a function of a second module (`netcheck.arith:plus`: one bundle, one
//!   container pool per module).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use apizr_runtime::oci::Engine;
use apizr_runtime::oci::environment::{REQUIREMENTS_LABEL, WHEELS_LABEL};

use super::{EngineProxy, Served, assert_removed, image, tmp};

#[path = "../support/wheelhouse.rs"]
mod wheelhouse;

const SELECT: &str = "netcheck.checks:add,netcheck.checks:reach";
/// The generated project's: a function of a second module too.
const GENERATED_SELECT: &str = "netcheck.checks:add,netcheck.checks:reach,netcheck.arith:plus";
/// The file's policy with room for a cold container on a loaded CI machine.
const POLICY: &str = r#"{"schema_version": "apizr.execution/v2", "backend": "oci-container",
 "resources": {"memory_bytes": 67108864}, "limits": {"wall_time_ms": 20000}}"#;
const REQUIRED: &str = r#"["apizr-fixture-errtext>=1.0"]"#;
/// Reused across runs while worker image and wheels are unchanged (the build checks labels).
const TAG: &str = "apizr-test/worker-env:netcheck";

fn package() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/generate/governed/src")
}

#[test]
fn a_package_with_requirements_runs_only_in_an_image_that_carries_them() {
    let Some(plain) = image() else { return };
    let dir = tmp("requirements");
    let policy = dir.join("v2.json");
    std::fs::write(&policy, POLICY).unwrap();
    let package = package();
    let args = |runtime: &str| -> Vec<String> {
        [
            package.to_str().unwrap(),
            "--select",
            SELECT,
            "--allow-conditional",
            "--policy",
            policy.to_str().unwrap(),
            "--runtime-image",
            runtime,
            "--runtime-platform",
            plain.platform.as_str(),
            "--oci-pool",
            "0",
        ]
        .map(str::to_string)
        .to_vec()
    };

    // The plain worker image has no environment: never ready, and said precisely.
    let port = super::served::free_port();
    let log = dir.join("refused.log");
    let child = Command::new(env!("CARGO_BIN_EXE_apizr"))
        .args(["serve", "rest"])
        .args(args(&plain.image))
        .args(["--port", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let refused = Served {
        child,
        port,
        io_timeout: Duration::from_secs(60),
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let (status, body) = loop {
        if let Some((status, body)) = refused.try_request("GET", "/readyz", "")
            && body.contains("requires")
        {
            break (status, body);
        }
        assert!(Instant::now() < deadline, "no refusal reported");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status, 503, "{body}");
    let expected = format!(
        "image {} carries no requirement environment (no {REQUIREMENTS_LABEL} label) but the \
         package requires {REQUIRED}",
        plain.image
    );
    assert!(
        body.replace("\\\"", "\"").contains(&expected),
        "{body}\nwanted: {expected}"
    );
    assert_eq!(refused.post("add", r#"{"a": 1, "b": 2}"#).0, 503);
    drop(refused);
    // The start-up log says it too, and says where the requirements must come from.
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.contains(&format!("cannot start: runtime image: {expected}"))
            && log.contains("serve installs nothing: the --runtime-image must carry them"),
        "{log}"
    );

    // The worker image plus the requirement, offline.
    let wheels = dir.join("wheelhouse");
    wheelhouse::write_wheelhouse(&wheels);
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_apizr"))
        .args(["image", "build", "--base", &plain.image, "--package"])
        .arg(&package)
        .arg("--wheelhouse")
        .arg(&wheels)
        .args(["--tag", TAG])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    eprintln!("apizr image build --package: {:?}", started.elapsed());
    let built: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let env_image = built["image"].as_str().unwrap().to_string();
    assert_ne!(env_image, plain.image);
    let doc = Engine::from_env()
        .unwrap()
        .image_inspect(&env_image)
        .unwrap()
        .unwrap();
    let labels = &doc["Config"]["Labels"];
    assert_eq!(labels[REQUIREMENTS_LABEL], REQUIRED);
    let wheel = std::fs::read(wheels.join("apizr_fixture_errtext-1.0-py3-none-any.whl")).unwrap();
    let digests: serde_json::Value =
        serde_json::from_str(labels[WHEELS_LABEL].as_str().unwrap()).unwrap();
    assert_eq!(
        digests,
        serde_json::json!({"apizr_fixture_errtext-1.0-py3-none-any.whl":
            apizr_ir::Digest::sha256(&wheel).prefixed()}),
        "the installed wheels by digest (pip's own is the installer, not installed)"
    );
    assert_eq!(doc["Config"]["User"], "65532:65532");

    // Served from the directory, a fresh container per call: the module imports `errtext`.
    let proxy = EngineProxy::start(&dir);
    let argv = args(&env_image);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let server = Served::start(&argv, &proxy.docker_host());
    assert_eq!(server.post("add", r#"{"a": 2, "b": 3}"#), (200, "5".into()));
    let (status, body) = server.post("reach", r#"{"port": 9}"#);
    assert_eq!(status, 200, "{body}");
    assert!(body.starts_with("\"blocked: errno "), "no network: {body}");
    drop(server);

    // A generated v2 project of the package, served from its bundle with prepared containers.
    let project = dir.join("project");
    let out = Command::new(env!("CARGO_BIN_EXE_apizr"))
        .args(["generate", "rest"])
        .arg(&package)
        .args([
            "--select",
            GENERATED_SELECT,
            "--allow-conditional",
            "--execution-policy",
        ])
        .arg(&policy)
        .args(["--runtime-image", &env_image])
        .args(["--runtime-platform", plain.platform.as_str()])
        .arg("--output-dir")
        .arg(&project)
        .arg("--no-lockfile")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let readme = std::fs::read_to_string(project.join("README.md")).unwrap();
    assert!(readme.contains("so that image must carry them"), "{readme}");
    let server = Served::start(
        &["--bundle", project.to_str().unwrap()],
        &proxy.docker_host(),
    );
    // Two modules, two pools of 2 prepared containers each (the gauge sums them).
    server.wait_metric("apizr_oci_pool_ready", |n| n >= 4);
    assert_eq!(server.post("add", r#"{"a": 4, "b": 5}"#), (200, "9".into()));
    assert_eq!(server.metric("apizr_oci_pool_hits_total"), Some(1));
    // The second module's function, in a prepared container of its own module.
    assert_eq!(
        server.post("plus", r#"{"a": 1, "b": 1}"#),
        (200, "2".into())
    );
    assert_eq!(server.metric("apizr_oci_pool_hits_total"), Some(2));
    let mut server = server;
    assert!(server.terminate(Duration::from_secs(60)), "no clean exit");
    assert_removed(&proxy.created());
    let _ = std::fs::remove_dir_all(&dir);
}
