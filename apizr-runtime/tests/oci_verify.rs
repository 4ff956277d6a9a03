//! The v2 backend does not take the engine's word, against a REAL engine (Docker, or Podman
//! when `DOCKER_HOST` names its socket; CI runs this file against both).
//!
//! The divergences are real: a proxy in front of the real engine (`common::oci::LyingEngine`)
//! drops controls from the create body the way rootless Podman on cgroup v1 does, and the
//! engine really creates the weaker container; Podman's compat API really ignores
//! `HostConfig.Runtime`; `runsc-decoy` (registered by `scripts/ci-gvisor-setup`) really is runc
//! under a gVisor name. Each call must be refused with the control named, before the user's code
//! runs. With `CI=true` nothing skips.
#![cfg(feature = "oci")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use apizr_runtime::ir::policy_v2::PolicyV2;
use apizr_runtime::oci::sweep::{self, OWNER_LABEL, SweepReport};
use apizr_runtime::oci::{
    ContainerGuard, EXECUTION_LABEL, Engine, EngineKind, OciCall, OciConfig, OciOutcome,
    OciRuntime, RuntimeImage,
};
use apizr_runtime::owner::Owner;
use serde_json::{Value as Json, json};

use common::call0;
use common::oci::{Lies, LyingEngine, image, podman_runsc};

const PING: &str = "def ping():\n    return 'pong'\n";

fn run_with(config: OciConfig, image: &RuntimeImage) -> OciOutcome {
    let call = call0(PING, "ping");
    // A generous deadline: Podman serialises concurrent creates (seconds under load).
    let policy = PolicyV2::from_json(&json!({"limits": {"wall_time_ms": 30000}})).unwrap();
    OciRuntime::new(config).execute(OciCall {
        call: &call,
        policy: &policy,
        image,
        original: None,
    })
}

fn through(proxy: &LyingEngine) -> OciConfig {
    OciConfig {
        socket: Some(proxy.socket.clone()),
        ..OciConfig::default()
    }
}

fn with_runtime(runtime: &str) -> OciConfig {
    OciConfig {
        runtime: Some(runtime.into()),
        ..OciConfig::default()
    }
}

fn report(out: &OciOutcome) -> String {
    serde_json::to_string_pretty(&out.report).unwrap()
}

/// `backend_unavailable`, the control named, the container removed.
fn assert_refused(out: &OciOutcome, control: &str, checked: &str) {
    assert_eq!(
        out.envelope.status.wire_name(),
        "backend_unavailable",
        "{}",
        report(out)
    );
    let refused = out.report.refused.as_ref().expect("a refusal");
    assert_eq!(
        (refused.control, refused.checked),
        (control, checked),
        "{}",
        report(out)
    );
    assert!(out.report.removed, "{}", report(out));
}

fn engine_kind() -> EngineKind {
    Engine::from_env().unwrap().kind
}

/// The engine lists `runtime`, or (outside CI only) the test is skipped.
fn registered(runtime: &str) -> bool {
    let engine = Engine::from_env().unwrap();
    let caps = engine.capabilities().unwrap();
    if engine.kind == EngineKind::Podman || caps.runtimes.iter().any(|r| r == runtime) {
        return true;
    }
    let why = format!("runtime {runtime} is not registered (run scripts/ci-gvisor-setup)");
    apizr_test_support::skip(why);
    false
}

/// An engine that accepts a control and drops it: each call is refused before start, with the
/// control named; the proxy saw no `start` for the container.
#[test]
fn silently_dropped_controls_refuse_the_call_before_start() {
    let Some(image) = image() else { return };
    type Edit = fn(&mut Json);
    let cases: [(&str, Edit); 9] = [
        // Rootless Podman on cgroup v1: every cgroup limit accepted and dropped.
        ("memory", |b| {
            for k in ["Memory", "MemorySwap", "PidsLimit", "CpuQuota"] {
                b["HostConfig"].as_object_mut().unwrap().remove(k);
            }
        }),
        ("pids", |b| b["HostConfig"]["PidsLimit"] = json!(0)),
        ("cpu", |b| b["HostConfig"]["CpuQuota"] = json!(0)),
        ("capabilities", |b| b["HostConfig"]["CapDrop"] = json!([])),
        ("no_new_privileges", |b| {
            b["HostConfig"]["SecurityOpt"] = json!([])
        }),
        ("read_only_root", |b| {
            b["HostConfig"]["ReadonlyRootfs"] = json!(false)
        }),
        ("user", |b| b["User"] = json!("0:0")),
        ("network", |b| {
            b["HostConfig"]["NetworkMode"] = json!("host")
        }),
        ("tmpfs", |b| {
            b["HostConfig"]["Tmpfs"]["/tmp"] = json!("rw,exec,size=1073741824")
        }),
    ];
    std::thread::scope(|scope| {
        for (control, edit) in cases {
            scope.spawn(move || {
                let lies = Lies {
                    create: edit,
                    ..Lies::none()
                };
                let proxy = LyingEngine::start(control, lies);
                let out = run_with(through(&proxy), image);
                assert_refused(&out, control, "inspect");
                let name = out.report.container.clone().unwrap();
                let started = proxy
                    .requests()
                    .iter()
                    .any(|r| r.contains(&format!("/containers/{name}/start")));
                assert!(!started, "{control}: the container was started");
            });
        }
    });
}

/// The divergence is real: through the proxy the engine creates a container with no memory
/// limit (what would run if the record were not checked).
#[test]
fn the_dropping_engine_really_creates_an_unlimited_container() {
    let Some(image) = image() else { return };
    let lies = Lies {
        create: |b| {
            b["HostConfig"].as_object_mut().unwrap().remove("Memory");
        },
        ..Lies::none()
    };
    let proxy = LyingEngine::start("unlimited", lies);
    let lying = Engine::connect(&proxy.socket).unwrap();
    let name = format!("apizr-oci-unlimited{}", std::process::id());
    let _guard = ContainerGuard::new(Engine::from_env().unwrap(), name.clone());
    let body = json!({"Image": image.image, "Cmd": ["-c", "pass"],
        "Labels": {EXECUTION_LABEL.0: EXECUTION_LABEL.1},
        "HostConfig": {"Memory": 67108864}});
    let deadline = Instant::now() + Duration::from_secs(20);
    apizr_runtime::oci::container::create(&lying, &name, "linux/amd64", &body, deadline).unwrap();
    let doc = Engine::from_env()
        .unwrap()
        .container_inspect(&name, Duration::from_secs(10))
        .unwrap()
        .unwrap();
    assert_eq!(doc["HostConfig"]["Memory"], json!(0));
}

/// An engine whose record says what was asked while the container got something else: only the
/// container's own view shows it. The worker exits before reading its request.
#[test]
fn a_lying_record_is_caught_inside_the_container() {
    let Some(image) = image() else { return };
    let lies = Lies {
        create: |b| {
            b["HostConfig"]["CapDrop"] = json!([]);
            b["HostConfig"]["SecurityOpt"] = json!([]);
        },
        inspect: |d| {
            d["HostConfig"]["CapDrop"] = json!(["ALL"]);
            d["HostConfig"]["SecurityOpt"] = json!(["no-new-privileges"]);
        },
        ..Lies::none()
    };
    let proxy = LyingEngine::start("record", lies);
    let out = run_with(through(&proxy), image);
    assert_refused(&out, "capabilities", "inside");
    let seen = out.report.attestation.as_ref().unwrap();
    assert_eq!(
        seen.failed,
        ["capabilities", "no_new_privileges"],
        "{}",
        report(&out)
    );
    assert!(out.report.verified.is_some(), "the record itself passed");
}

/// A runtime that carries gVisor's name but is runc: the engine's record matches the request
/// (Docker), or the engine ignores the field (Podman); either way the call is refused.
#[test]
fn a_gvisor_name_on_runc_is_refused() {
    let Some(image) = image() else { return };
    if !registered("runsc-decoy") {
        return;
    }
    let out = run_with(with_runtime("runsc-decoy"), image);
    match engine_kind() {
        EngineKind::Docker => {
            assert_refused(&out, "runtime", "inside");
            let seen = out.report.attestation.as_ref().unwrap();
            assert_eq!(
                (seen.sandbox.as_str(), &seen.failed[..]),
                ("native", &["runtime".to_string()][..])
            );
            assert_eq!(out.report.verified.as_ref().unwrap().runtime, "runsc-decoy");
        }
        // Podman's compat API ignores HostConfig.Runtime: its own record names runc.
        EngineKind::Podman => assert_refused(&out, "runtime", "inspect"),
    }
}

/// gVisor as the OCI runtime: the call runs and the container shows gVisor's kernel. On a
/// Podman service whose default runtime is runc, asking for runsc is refused (the compat API
/// would silently run runc).
#[test]
fn gvisor_is_verified_inside_the_container() {
    let Some(image) = image() else { return };
    if !registered("runsc") {
        return;
    }
    let out = run_with(with_runtime("runsc"), image);
    let podman_runc = engine_kind() == EngineKind::Podman
        && out
            .report
            .engine
            .as_ref()
            .unwrap()
            .default_runtime
            .ends_with("runc");
    if podman_runc {
        assert_refused(&out, "runtime", "inspect");
        return;
    }
    assert!(out.envelope.is_success(), "{}", report(&out));
    let seen = out.report.attestation.as_ref().unwrap();
    assert_eq!(
        (seen.sandbox.as_str(), seen.kernel.as_str()),
        ("gvisor", "4.4.0")
    );
    assert!(seen.failed.is_empty());
    assert_eq!(out.report.verified.as_ref().unwrap().runtime, "runsc");
}

/// Podman's gVisor service (`scripts/ci-podman-setup` starts it): the one way Podman runs
/// gVisor, verified the same way.
#[test]
fn gvisor_through_a_podman_runsc_service() {
    let Some((socket, image)) = podman_runsc() else {
        return;
    };
    let out = run_with(
        OciConfig {
            socket: Some(socket),
            runtime: Some("runsc".into()),
            ..OciConfig::default()
        },
        &image,
    );
    assert!(out.envelope.is_success(), "{}", report(&out));
    let seen = out.report.attestation.as_ref().unwrap();
    assert_eq!(seen.sandbox, "gvisor", "{}", report(&out));
}

fn labelled(image: &RuntimeImage, name: &str, owner: &str, expires: u64) -> ContainerGuard {
    let engine = Engine::from_env().unwrap();
    let guard = ContainerGuard::new(engine.clone(), name.to_string());
    let body = json!({"Image": image.image, "Cmd": ["-c", "pass"], "Labels": {
        EXECUTION_LABEL.0: EXECUTION_LABEL.1, OWNER_LABEL: owner,
        "org.apizr.expires": expires.to_string()}});
    let deadline = Instant::now() + Duration::from_secs(20);
    apizr_runtime::oci::container::create(&engine, name, "linux/amd64", &body, deadline).unwrap();
    guard
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A dead owner's container is removed long before it expires; a live owner's is kept even
/// after its expiry (concurrent sweeps in other test processes must not touch it either).
#[test]
fn dead_owners_containers_are_swept_and_live_owners_are_kept() {
    let Some(image) = image() else { return };
    let engine = Engine::from_env().unwrap();
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let dead = Owner::of_pid(child.id()).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    let pid = std::process::id();
    let dead_name = format!("apizr-oci-deadowner{pid}");
    let live_name = format!("apizr-oci-liveowner{pid}");
    let _dead = labelled(image, &dead_name, &dead.encode(), unix_now() + 3600);
    let _live = labelled(image, &live_name, &Owner::current().unwrap().encode(), 1);
    let report = sweep::sweep(&engine, &std::env::temp_dir());
    assert!(
        report.failed.iter().all(|f| f.item != dead_name),
        "{report:?}"
    );
    assert!(!engine.container_exists(&dead_name).unwrap(), "{report:?}");
    assert!(engine.container_exists(&live_name).unwrap(), "{report:?}");
    assert!(report.kept_alive >= 1);
}

/// A removal the engine refuses is reported as failed, never as removed.
#[test]
fn a_failed_sweep_removal_is_reported() {
    let Some(image) = image() else { return };
    // The container's real owner is this (live) process, so no concurrent sweep removes it;
    // the listing handed to the sweep names a dead owner, and the engine refuses the DELETE.
    let name = format!("apizr-oci-refusedsweep{}", std::process::id());
    let _guard = labelled(image, &name, &Owner::current().unwrap().encode(), 1);
    let mut dead = Owner::current().unwrap().clone();
    dead.start_ticks += 1;
    let proxy = LyingEngine::start(
        "sweep",
        Lies {
            refuse_deletes: true,
            ..Lies::none()
        },
    );
    let lying = Engine::connect(&proxy.socket).unwrap();
    let listing = json!([{"Id": name, "Names": [format!("/{name}")],
        "Labels": {OWNER_LABEL: dead.encode()}}]);
    let mut report = SweepReport::default();
    sweep::sweep_listed(&lying, &listing, &mut report);
    assert!(report.removed.is_empty(), "{report:?}");
    assert_eq!(report.failed.len(), 1, "{report:?}");
    assert_eq!(report.failed[0].item, name);
    assert!(
        report.failed[0].reason.contains("removal failed"),
        "{report:?}"
    );
    assert!(Engine::from_env().unwrap().container_exists(&name).unwrap());
}

/// Under gVisor the cgroup limits still hold: a 200 MB allocation under 64 MiB is a memory kill.
/// On Podman this runs on its gVisor service (its runc service refuses the request, above).
#[test]
fn gvisor_keeps_the_memory_limit() {
    let Some(image) = image() else { return };
    if !registered("runsc") {
        return;
    }
    let mut config = with_runtime("runsc");
    let mut image = image.clone();
    if engine_kind() == EngineKind::Podman {
        let Some((socket, on_podman)) = podman_runsc() else {
            return;
        };
        config.socket = Some(socket);
        image = on_podman;
    }
    let source = "def hog():\n    b = bytearray(200 * 1000 * 1000)\n    for i in range(0, len(b), 4096):\n        b[i] = 1\n    return len(b)\n";
    let call = call0(source, "hog");
    let policy = PolicyV2::from_json(&json!({"resources": {"memory_bytes": 67108864},
        "limits": {"wall_time_ms": 30000}}))
    .unwrap();
    let out = OciRuntime::new(config).execute(OciCall {
        call: &call,
        policy: &policy,
        image: &image,
        original: None,
    });
    assert_eq!(
        out.envelope.status.wire_name(),
        "resource_limit",
        "{}",
        report(&out)
    );
    assert_eq!(out.report.attestation.as_ref().unwrap().sandbox, "gvisor");
}
