//! The oci-container backend against the REAL Docker engine (contract 7.4 probes).
//!
//! The worker image is built once per test binary with `oci::build` from the offline base
//! image that `scripts/ci-docker-setup` creates (`APIZR_BASE_IMAGE_TAG`, default
//! `apizr-ci/python-base:bookworm-stdlib`). With `CI=true` a missing engine or base image is a
//! failure; elsewhere the tests print why they skip and pass.
#![cfg(feature = "oci")]

mod common;

use std::sync::OnceLock;

use apizr_runtime::CallRequest;
use apizr_runtime::ir::json::Value;
use apizr_runtime::ir::policy_v2::PolicyV2;
use apizr_runtime::ir::{ParameterKind, TypeKind};
use apizr_runtime::oci::build::{BuildSource, build_image};
use apizr_runtime::oci::{
    ContainerGuard, EXECUTION_LABEL, Engine, OciCall, OciConfig, OciOutcome, OciRuntime,
    RuntimeImage,
};

use common::{call, call0, param, ts};

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The worker image, or None (skip) outside CI when there is no engine or base image.
fn image() -> Option<&'static RuntimeImage> {
    static IMAGE: OnceLock<Result<RuntimeImage, String>> = OnceLock::new();
    let built = IMAGE.get_or_init(|| {
        let engine = Engine::from_env().map_err(|e| format!("no Docker engine: {e}"))?;
        let base = std::env::var("APIZR_BASE_IMAGE_TAG")
            .unwrap_or_else(|_| "apizr-ci/python-base:bookworm-stdlib".into());
        let mut quiet = |_: &str| {};
        build_image(&engine, BuildSource::Base(&base), None, &mut quiet)
            .map_err(|e| format!("cannot build the worker image from {base}: {e}"))
    });
    match built {
        Ok(image) => Some(image),
        Err(why) if in_ci() => panic!("{why} (CI=true: container tests must not skip)"),
        Err(why) => {
            eprintln!("SKIPPED (no usable Docker engine, run scripts/ci-docker-setup): {why}");
            None
        }
    }
}

fn v2(text: &str) -> PolicyV2 {
    PolicyV2::from_json(&serde_json::from_str(text).unwrap()).unwrap()
}

fn run(call: &CallRequest, policy: &PolicyV2, image: &RuntimeImage) -> OciOutcome {
    OciRuntime::new(OciConfig::default()).execute(OciCall {
        call,
        policy,
        image,
        original: None,
    })
}

fn status(outcome: &OciOutcome) -> &'static str {
    outcome.envelope.status.wire_name()
}

fn assert_status(outcome: &OciOutcome, expected: &str) {
    assert_eq!(
        status(outcome),
        expected,
        "report: {}",
        serde_json::to_string_pretty(&outcome.report).unwrap()
    );
    assert!(outcome.report.removed || outcome.report.container.is_none());
}

fn value_of(outcome: &OciOutcome) -> serde_json::Value {
    let bytes = outcome.envelope.to_value().canonical_bytes().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    doc["value"].clone()
}

#[test]
fn success_with_the_reference_vector_and_v2_envelope() {
    let Some(image) = image() else { return };
    let source = "def total(prices: list[float], *, tax: float = 0.2) -> float:\n    return sum(prices) * (1 + tax)\n";
    let list = apizr_runtime::ir::TypeSpec {
        items: vec![ts(TypeKind::Float)],
        ..ts(TypeKind::List)
    };
    let c = call(
        source,
        "total",
        vec![
            param("prices", ParameterKind::PositionalOrKeyword, true, list),
            param(
                "tax",
                ParameterKind::KeywordOnly,
                false,
                ts(TypeKind::Float),
            ),
        ],
        &[("prices", Value::Array(vec![Value::Int(10), Value::Int(20)]))],
    );
    let out = run(&c, &PolicyV2::default(), image);
    assert_status(&out, "success");
    assert_eq!(
        String::from_utf8(out.envelope.canonical_bytes().unwrap()).unwrap(),
        "{\"schema_version\":\"apizr.execution-result/v2\",\"status\":\"success\",\"value\":36.0}\n"
    );
    let engine = out.report.engine.as_ref().unwrap();
    assert!(engine.usable(), "{engine:?}");
}

#[test]
fn identity_cwd_bundle_and_environment_allowlist() {
    let Some(image) = image() else { return };
    let source = "import os\ndef probe():\n    return [os.getuid(), os.getgid(), os.getcwd(), sorted(os.listdir('/bundle')), sorted(os.environ)]\n";
    // PATH is set in this process (values come from here); the other name is not set.
    assert!(std::env::var_os("PATH").is_some());
    assert!(std::env::var_os("APIZR_OCI_UNSET_NAME").is_none());
    let policy = v2(r#"{"environment":{"allow":["PATH","APIZR_OCI_UNSET_NAME"]}}"#);
    let out = run(&call0(source, "probe"), &policy, image);
    assert_status(&out, "success");
    assert_eq!(
        value_of(&out),
        serde_json::json!([
            65532,
            65532,
            "/bundle",
            ["original", "source"],
            ["APIZR_SERVED_PROCESS", "PATH"]
        ])
    );
    // With an empty allowlist nothing of the engine's or image's environment is left.
    let out = run(&call0(source, "probe"), &PolicyV2::default(), image);
    assert_eq!(
        value_of(&out)[4],
        serde_json::json!(["APIZR_SERVED_PROCESS"])
    );
}

#[test]
fn network_is_none_and_the_bundle_is_read_only() {
    let Some(image) = image() else { return };
    let source = "import socket\ndef net():\n    try:\n        socket.create_connection(('1.1.1.1', 53), timeout=2)\n    except OSError as e:\n        return 'OSError'\n    return 'connected'\n\ndef write():\n    try:\n        open('/bundle/x', 'w')\n    except OSError:\n        pass\n    else:\n        return 'wrote'\n    try:\n        open('/etc/x', 'w')\n    except OSError:\n        return 'OSError'\n    return 'wrote rootfs'\n";
    for f in ["net", "write"] {
        let out = run(&call0(source, f), &PolicyV2::default(), image);
        assert_status(&out, "success");
        assert_eq!(value_of(&out), serde_json::json!("OSError"), "{f}");
    }
}

#[test]
fn scratch_tmpfs_is_bounded() {
    let Some(image) = image() else { return };
    let source = "def fill(n: int):\n    with open('/tmp/f', 'wb') as f:\n        f.write(b'x' * n)\n    return n\n";
    let policy = v2(r#"{"resources":{"scratch_bytes":1048576}}"#);
    let c = |n: i64| {
        call(
            source,
            "fill",
            vec![param(
                "n",
                ParameterKind::PositionalOrKeyword,
                true,
                ts(TypeKind::Int),
            )],
            &[("n", Value::Int(n))],
        )
    };
    assert_status(&run(&c(500_000), &policy, image), "success");
    assert_status(&run(&c(2_000_000), &policy, image), "execution_failed");
}

#[test]
fn memory_limit_is_resource_limit() {
    let Some(image) = image() else { return };
    let source = "def hog():\n    b = bytearray(200 * 1000 * 1000)\n    for i in range(0, len(b), 4096):\n        b[i] = 1\n    return len(b)\n";
    let policy = v2(r#"{"resources":{"memory_bytes":67108864},"limits":{"wall_time_ms":20000}}"#);
    let out = run(&call0(source, "hog"), &policy, image);
    assert_status(&out, "resource_limit");
    assert!(out.report.oom_killed);
}

#[test]
fn timeout_and_the_container_is_removed() {
    let Some(image) = image() else { return };
    let source = "import time\ndef slow():\n    time.sleep(30)\n";
    let policy = v2(r#"{"limits":{"wall_time_ms":2000}}"#);
    let started = std::time::Instant::now();
    let out = run(&call0(source, "slow"), &policy, image);
    assert_status(&out, "timeout");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let engine = Engine::from_env().unwrap();
    assert!(
        !engine
            .container_exists(out.report.container.as_deref().unwrap())
            .unwrap()
    );
}

#[test]
fn fork_loop_is_capped_by_pids() {
    let Some(image) = image() else { return };
    let source = "import os, time\ndef forks():\n    n = 0\n    kids = []\n    while n < 500:\n        try:\n            pid = os.fork()\n        except OSError:\n            break\n        if pid == 0:\n            time.sleep(5)\n            os._exit(0)\n        kids.append(pid)\n        n += 1\n    return n\n";
    let policy = v2(r#"{"resources":{"pids":16},"limits":{"wall_time_ms":20000}}"#);
    let out = run(&call0(source, "forks"), &policy, image);
    assert_status(&out, "success");
    let n = value_of(&out).as_i64().unwrap();
    assert!((10..16).contains(&n), "children created with pids=16: {n}");
}

#[test]
fn subprocess_deny_is_a_permission_error() {
    let Some(image) = image() else { return };
    let source = "import subprocess, os\ndef spawn():\n    subprocess.run(['/bin/true'])\n    return 'ran'\n\ndef check():\n    try:\n        os.fork()\n    except PermissionError:\n        return 'denied'\n    return 'forked'\n";
    let deny = v2(r#"{"subprocess":{"mode":"deny"}}"#);
    assert_status(
        &run(&call0(source, "spawn"), &deny, image),
        "execution_failed",
    );
    let out = run(&call0(source, "check"), &deny, image);
    assert_status(&out, "success");
    assert_eq!(value_of(&out), serde_json::json!("denied"));
    let out = run(&call0(source, "spawn"), &PolicyV2::default(), image);
    assert_status(&out, "success");
}

#[test]
fn image_identity_platform_and_labels() {
    let Some(image) = image() else { return };
    let c = call0("def f():\n    return 1\n", "f");
    let policy = PolicyV2::default();
    let mut wrong = image.clone();
    wrong.platform = apizr_runtime::oci::Platform::LinuxArm64;
    assert_status(&run(&c, &policy, &wrong), "runtime_image_unavailable");
    let absent = RuntimeImage::parse(&format!("sha256:{}", "0".repeat(64)), "linux/amd64").unwrap();
    assert_status(&run(&c, &policy, &absent), "runtime_image_unavailable");
    // The unlabeled base image itself.
    let engine = Engine::from_env().unwrap();
    let base = std::env::var("APIZR_BASE_IMAGE_TAG")
        .unwrap_or_else(|_| "apizr-ci/python-base:bookworm-stdlib".into());
    let base_id = engine.image_inspect(&base).unwrap().unwrap()["Id"]
        .as_str()
        .unwrap()
        .to_string();
    let unlabeled = RuntimeImage::parse(&base_id, "linux/amd64").unwrap();
    assert_status(&run(&c, &policy, &unlabeled), "runtime_image_unavailable");
    assert!(RuntimeImage::parse("apizr-ci/worker:dev", "linux/amd64").is_err());
}

#[test]
fn unreachable_daemon_is_backend_unavailable() {
    let Some(image) = image() else { return };
    let runtime = OciRuntime::new(OciConfig {
        socket: Some("/nonexistent/docker.sock".into()),
        ..OciConfig::default()
    });
    let c = call0("def f():\n    return 1\n", "f");
    let out = runtime.execute(OciCall {
        call: &c,
        policy: &PolicyV2::default(),
        image,
        original: None,
    });
    assert_status(&out, "backend_unavailable");
}

#[test]
fn the_guard_removes_the_container_when_the_caller_panics() {
    let Some(image) = image() else { return };
    let engine = Engine::from_env().unwrap();
    let name = format!("apizr-oci-paniccheck{}", std::process::id());
    let body = serde_json::json!({"Image": image.image, "Cmd": ["-c", "pass"],
        "Labels": {EXECUTION_LABEL.0: EXECUTION_LABEL.1}});
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    apizr_runtime::oci::container::create(&engine, &name, "linux/amd64", &body, deadline).unwrap();
    assert!(engine.container_exists(&name).unwrap());
    let engine2 = engine.clone();
    let name2 = name.clone();
    let joined = std::thread::spawn(move || {
        let _guard = ContainerGuard::new(engine2, name2);
        panic!("caller panics while holding a container");
    })
    .join();
    assert!(joined.is_err());
    assert!(
        !engine.container_exists(&name).unwrap(),
        "container leaked after a panic"
    );
}
