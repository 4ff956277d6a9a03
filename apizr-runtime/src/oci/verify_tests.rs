//! The comparison on inspect documents shaped like Docker 20.10's and Podman 4.3's records
//! (the real engines are exercised in `tests/oci_verify.rs`).
#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::*;

const BUNDLE: &str = "/tmp/apizr-oci-0123";

fn expected(runtime: Option<&str>) -> Expected {
    Expected {
        memory: 67108864,
        pids: 64,
        cpu_quota: 50000,
        cpu_period: 100000,
        user: "65532:65532".into(),
        scratch_bytes: 1048576,
        runtime: runtime.map(str::to_string),
    }
}

fn docker_doc() -> Json {
    json!({
        "Config": {"User": "65532:65532"},
        "Mounts": [{"Type": "bind", "Source": BUNDLE, "Destination": "/bundle", "RW": false}],
        "HostConfig": {
            "Privileged": false, "ReadonlyRootfs": true, "NetworkMode": "none",
            "Memory": 67108864, "MemorySwap": 67108864, "PidsLimit": 64,
            "CpuQuota": 50000, "CpuPeriod": 100000, "CapAdd": null, "CapDrop": ["ALL"],
            "SecurityOpt": ["no-new-privileges"], "IpcMode": "private", "Runtime": "runc",
            "Tmpfs": {"/tmp": "rw,nosuid,nodev,noexec,size=1048576,mode=1777"}
        }
    })
}

fn podman_caps() -> EngineCapabilities {
    EngineCapabilities {
        engine: EngineKind::Podman,
        default_capabilities: vec!["CAP_CHOWN".into(), "CAP_KILL".into(), "CAP_SETUID".into()],
        ..EngineCapabilities::default()
    }
}

fn podman_doc() -> Json {
    let mut doc = docker_doc();
    let host = &mut doc["HostConfig"];
    host["CapDrop"] = json!(["CAP_CHOWN", "CAP_KILL", "CAP_SETUID"]);
    host["CapAdd"] = json!([]);
    host["IpcMode"] = json!("shareable");
    host["Runtime"] = json!("oci");
    host["Tmpfs"] = json!({
        "/tmp": "rw,nosuid,nodev,noexec,size=1048576,mode=1777,rprivate,tmpcopyup",
        "/run": "ro,nosuid,nodev,noexec,size=4k,rprivate,tmpcopyup",
        "/var/tmp": "ro,nosuid,nodev,noexec,size=4k,rprivate,tmpcopyup"
    });
    doc["OCIRuntime"] = json!("runc");
    doc
}

fn docker_caps() -> EngineCapabilities {
    EngineCapabilities::default()
}

fn refused(doc: &Json, caps: &EngineCapabilities, runtime: Option<&str>) -> &'static str {
    check(doc, &expected(runtime), caps, Path::new(BUNDLE))
        .err()
        .map_or("verified", |r| r.control)
}

#[test]
fn faithful_records_verify_on_both_engines() {
    let docker = check(
        &docker_doc(),
        &expected(None),
        &docker_caps(),
        Path::new(BUNDLE),
    )
    .unwrap();
    assert_eq!(docker.runtime, "runc");
    assert_eq!(docker.controls.len(), 14);
    let podman = check(
        &podman_doc(),
        &expected(None),
        &podman_caps(),
        Path::new(BUNDLE),
    )
    .unwrap();
    assert_eq!(podman.runtime, "runc");
}

/// Each silent divergence is refused with its control named.
#[test]
fn every_dropped_control_is_named() {
    type Edit = fn(&mut Json);
    let cases: [(&str, Edit); 16] = [
        ("memory", |d| d["HostConfig"]["Memory"] = json!(0)),
        ("memory_swap", |d| d["HostConfig"]["MemorySwap"] = json!(-1)),
        ("pids", |d| d["HostConfig"]["PidsLimit"] = json!(0)),
        ("cpu", |d| d["HostConfig"]["CpuQuota"] = json!(0)),
        ("privileged", |d| {
            d["HostConfig"]["Privileged"] = json!(true)
        }),
        ("user", |d| d["Config"]["User"] = json!("")),
        ("read_only_root", |d| {
            d["HostConfig"]["ReadonlyRootfs"] = json!(false)
        }),
        ("network", |d| {
            d["HostConfig"]["NetworkMode"] = json!("bridge")
        }),
        ("capabilities", |d| d["HostConfig"]["CapDrop"] = json!(null)),
        ("capabilities", |d| {
            d["HostConfig"]["CapAdd"] = json!(["SYS_ADMIN"])
        }),
        ("no_new_privileges", |d| {
            d["HostConfig"]["SecurityOpt"] = json!([])
        }),
        ("seccomp", |d| {
            d["HostConfig"]["SecurityOpt"] = json!(["no-new-privileges", "seccomp=unconfined"])
        }),
        ("tmpfs", |d| {
            d["HostConfig"]["Tmpfs"]["/tmp"] = json!("rw,nosuid,nodev,noexec")
        }),
        ("tmpfs", |d| {
            d["HostConfig"]["Tmpfs"]["/run"] = json!("rw,nosuid,nodev")
        }),
        ("ipc", |d| d["HostConfig"]["IpcMode"] = json!("host")),
        ("bundle_mount", |d| d["Mounts"][0]["RW"] = json!(true)),
    ];
    for (control, edit) in cases {
        let mut doc = docker_doc();
        edit(&mut doc);
        assert_eq!(refused(&doc, &docker_caps(), None), control, "{doc}");
    }
}

/// Rootless Podman on cgroup v1 records the limits as zero: refused before start.
#[test]
fn podman_dropped_limits_and_partial_capability_drops_are_refused() {
    let mut doc = podman_doc();
    doc["HostConfig"]["Memory"] = json!(0);
    assert_eq!(refused(&doc, &podman_caps(), None), "memory");
    let mut doc = podman_doc();
    doc["HostConfig"]["CapDrop"] = json!(["CAP_CHOWN", "CAP_KILL"]);
    assert_eq!(refused(&doc, &podman_caps(), None), "capabilities");
    // Podman's writable /run and /var/tmp (its read-only-root default) are not accepted.
    let mut doc = podman_doc();
    doc["HostConfig"]["Tmpfs"]["/var/tmp"] = json!("rw,rprivate,nosuid,nodev,tmpcopyup");
    assert_eq!(refused(&doc, &podman_caps(), None), "tmpfs");
    // Without the engine's default set, a list of drops proves nothing.
    let unknown = EngineCapabilities {
        engine: EngineKind::Podman,
        ..EngineCapabilities::default()
    };
    assert_eq!(refused(&podman_doc(), &unknown, None), "capabilities");
}

/// Podman's compat API ignores `HostConfig.Runtime`: its own record says which runtime runs.
#[test]
fn the_runtime_is_read_from_the_engine_that_runs_it() {
    assert_eq!(
        refused(&podman_doc(), &podman_caps(), Some("runsc")),
        "runtime"
    );
    let mut doc = podman_doc();
    doc["OCIRuntime"] = json!("/usr/bin/runsc");
    let ok = check(
        &doc,
        &expected(Some("runsc")),
        &podman_caps(),
        Path::new(BUNDLE),
    )
    .unwrap();
    assert_eq!(ok.runtime, "runsc");
    assert_eq!(
        refused(&docker_doc(), &docker_caps(), Some("runsc")),
        "runtime"
    );
    let mut doc = docker_doc();
    doc["HostConfig"]["Runtime"] = json!("runsc");
    assert_eq!(refused(&doc, &docker_caps(), Some("runsc")), "verified");
}

#[test]
fn expectations_come_from_the_create_body() {
    let body = json!({"User": "65532:65532", "HostConfig": {
        "Memory": 1, "PidsLimit": 2, "CpuQuota": 3, "CpuPeriod": 4, "Runtime": "runsc",
        "Tmpfs": {"/tmp": "rw,size=5,mode=1777"}}});
    let e = Expected::from_create_body(&body);
    assert_eq!(
        (e.memory, e.pids, e.cpu_quota, e.cpu_period, e.scratch_bytes),
        (1, 2, 3, 4, 5)
    );
    assert_eq!(e.runtime.as_deref(), Some("runsc"));
}
