//! A REAL rootless Podman service (`scripts/ci-podman-setup` starts it as the user
//! `apizr-rootless`; socket `APIZR_PODMAN_ROOTLESS_SOCKET`, default
//! `/run/apizr-podman/rootless/podman.sock`): on a cgroup v1 host it accepts `Memory`,
//! `PidsLimit` and `CpuQuota` and runs without them, with no warning in the create answer, and its
//! compat `/info` still claims memory and pids limits. apizr must find out from the engine
//! (its `/libpod/info`) and refuse; and the per-container check must catch the drop on its own.
//! With `CI=true` a missing service is a failure.
#![cfg(feature = "oci")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use apizr_runtime::ir::policy_v2::PolicyV2;
use apizr_runtime::oci::bundle::Bundle;
use apizr_runtime::oci::container::{self, ContainerOptions};
use apizr_runtime::oci::verify::{self, Expected};
use apizr_runtime::oci::{ContainerGuard, Engine, OciCall, OciConfig, OciRuntime};

use common::call0;
use common::oci::worker_image_on;

fn rootless() -> Option<(PathBuf, Engine)> {
    let socket = std::env::var_os("APIZR_PODMAN_ROOTLESS_SOCKET").map_or_else(
        || PathBuf::from("/run/apizr-podman/rootless/podman.sock"),
        PathBuf::from,
    );
    match Engine::connect(&socket) {
        Ok(engine) => Some((socket, engine)),
        Err(e) => {
            apizr_test_support::skip(format!(
                "no rootless Podman at {}: {e} (run scripts/ci-podman-setup)",
                socket.display()
            ));
            None
        }
    }
}

/// The engine's own word decides: rootless + cgroup v1 is refused before any container exists.
#[test]
fn a_rootless_engine_on_cgroup_v1_is_refused() {
    let Some((socket, engine)) = rootless() else {
        return;
    };
    let caps = engine.capabilities().unwrap();
    assert!(caps.rootless, "{caps:?}");
    if caps.cgroup_version != "1" {
        // With cgroup v2 delegation a rootless engine applies the limits: usable.
        assert!(caps.usable(), "{caps:?}");
        return;
    }
    // Its compat /info claims the controls; only its own info says rootless.
    assert!(caps.memory_limit && caps.pids_limit, "{caps:?}");
    assert!(!caps.usable());
    assert!(
        caps.missing.iter().any(|m| m.starts_with("cgroup_limits")),
        "{caps:?}"
    );
    let image = worker_image_on(&engine).unwrap();
    let call = call0("def f():\n    return 1\n", "f");
    let out = OciRuntime::new(OciConfig {
        socket: Some(socket),
        ..OciConfig::default()
    })
    .execute(OciCall {
        call: &call,
        policy: &PolicyV2::default(),
        image: &image,
        original: None,
    });
    assert_eq!(out.envelope.status.wire_name(), "backend_unavailable");
    assert!(out.report.container.is_none(), "nothing was created");
    assert!(
        out.report
            .detail
            .as_deref()
            .unwrap_or_default()
            .contains("cgroup_limits"),
        "{:?}",
        out.report.detail
    );
}

/// Without the engine check, the container check alone refuses: the exact body apizr sends,
/// created on the rootless engine, is recorded without its limits.
#[test]
fn its_dropped_limits_are_caught_per_container() {
    let Some((_, engine)) = rootless() else {
        return;
    };
    let caps = engine.capabilities().unwrap();
    let image = worker_image_on(&engine).unwrap();
    let bundle = Bundle::create(&std::env::temp_dir(), b"x", "source/m.py", b"x = 1\n").unwrap();
    let policy = PolicyV2::default();
    let options = ContainerOptions {
        engine: engine.kind,
        runtime: None,
    };
    let body = container::create_body(&image.image, &policy, bundle.path(), &[], &options);
    let name = format!("apizr-oci-rootless{}", std::process::id());
    let _guard = ContainerGuard::new(engine.clone(), name.clone());
    let deadline = Instant::now() + Duration::from_secs(30);
    container::create(&engine, &name, image.platform.as_str(), &body, deadline).unwrap();
    let doc = verify::inspect(&engine, &name, deadline).unwrap();
    let checked = verify::check(
        &doc,
        &Expected::from_create_body(&body),
        &caps,
        bundle.path(),
    );
    if caps.cgroup_version == "1" {
        assert_eq!(
            doc["HostConfig"]["Memory"], 0,
            "the engine dropped the limit"
        );
        let refusal = checked.unwrap_err();
        assert_eq!((refusal.control, refusal.checked), ("memory", "inspect"));
    } else {
        checked.unwrap();
    }
}
