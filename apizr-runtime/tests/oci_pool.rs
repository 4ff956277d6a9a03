//! The pool of prepared containers (`oci::pool`) against a REAL engine (Docker, or Podman when
//! `DOCKER_HOST` names its socket; CI runs this file against both). With `CI=true` nothing
//! skips.
//!
//! What is proven: a pooled call runs in a container that was verified and attested before it
//! was pooled, serves exactly one call, and enforces the same controls as a fresh one (the
//! same hostile probes give the same answers). A container that fails its checks never joins
//! the pool. A new workload drains the pool. Exhaustion falls back to a fresh container. Refill
//! is bounded and backs off. Expired containers are replaced, dead owners' leftovers are
//! reaped, and dropping the pool removes everything.
#![cfg(feature = "oci")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use apizr_runtime::CallRequest;
use apizr_runtime::Executable;
use apizr_runtime::ir::json::Value;
use apizr_runtime::ir::policy_v2::PolicyV2;
use apizr_runtime::ir::{ParameterKind, TypeKind};
use apizr_runtime::oci::sweep::OWNER_LABEL;
use apizr_runtime::oci::{
    ContainerPath, EXECUTION_LABEL, Engine, EngineKind, OciCall, OciConfig, OciOutcome, OciPool,
    OciRuntime, PoolConfig, PoolStats, PoolWorkload, RuntimeImage,
};
use apizr_runtime::owner::Owner;
use serde_json::json;

use common::oci::{Lies, LyingEngine, image, podman_runsc};
use common::{call, call0, param, ts};

fn v2(text: &str) -> PolicyV2 {
    PolicyV2::from_json(&serde_json::from_str(text).unwrap()).unwrap()
}

fn pool_with(config: OciConfig, pool: PoolConfig) -> OciPool {
    OciPool::new(Arc::new(OciRuntime::new(config)), pool)
}

fn workload(source: &str, policy: &PolicyV2, image: &RuntimeImage) -> PoolWorkload {
    let executable = Executable::new(source.as_bytes().to_vec());
    PoolWorkload::new(policy.clone(), image.clone(), executable, "m", None)
}

fn run(pool: &OciPool, call: &CallRequest, policy: &PolicyV2, image: &RuntimeImage) -> OciOutcome {
    pool.execute(OciCall {
        call,
        policy,
        image,
        original: None,
    })
}

fn fresh(call: &CallRequest, policy: &PolicyV2, image: &RuntimeImage) -> OciOutcome {
    OciRuntime::new(OciConfig::default()).execute(OciCall {
        call,
        policy,
        image,
        original: None,
    })
}

/// Wait until `check(stats)` holds (panics after `within`).
fn wait_for(pool: &OciPool, within: Duration, what: &str, check: impl Fn(&PoolStats) -> bool) {
    let until = Instant::now() + within;
    loop {
        let stats = pool.stats();
        if check(&stats) {
            return;
        }
        assert!(Instant::now() < until, "{what}: {stats:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_ready(pool: &OciPool, n: usize) {
    wait_for(pool, Duration::from_secs(90), "pool never filled", |s| {
        s.ready >= n
    });
}

/// Every named container is gone within 30 s (removal happens after the answer).
fn assert_gone(names: &[String]) {
    let engine = Engine::from_env().unwrap();
    let until = Instant::now() + Duration::from_secs(30);
    for name in names {
        while engine.container_exists(name).unwrap() {
            assert!(Instant::now() < until, "container {name} was not removed");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn status(out: &OciOutcome) -> &'static str {
    out.envelope.status.wire_name()
}

fn value_of(out: &OciOutcome) -> serde_json::Value {
    let bytes = out.envelope.to_value().canonical_bytes().unwrap();
    serde_json::from_slice::<serde_json::Value>(&bytes).unwrap()["value"].clone()
}

fn report(out: &OciOutcome) -> String {
    serde_json::to_string_pretty(&out.report).unwrap()
}

#[test]
fn pooled_calls_are_single_use_fresh_state_and_checked() {
    let Some(image) = image() else { return };
    let source = "count = 0\ndef bump():\n    global count\n    count += 1\n    return count\n";
    let policy = PolicyV2::default();
    let pool = pool_with(OciConfig::default(), PoolConfig::with_size(2));
    pool.warm(workload(source, &policy, image));
    let c = call0(source, "bump");
    let mut used = Vec::new();
    for _ in 0..3 {
        wait_ready(&pool, 1);
        let out = run(&pool, &c, &policy, image);
        assert_eq!(status(&out), "success", "{}", report(&out));
        assert_eq!(out.report.path, ContainerPath::Pooled, "{}", report(&out));
        // A fresh interpreter every time: module state never carries over.
        assert_eq!(value_of(&out), json!(1));
        // Checked before it was pooled: the engine's record and the container's own view.
        let verified = out.report.verified.as_ref().unwrap();
        assert!(verified.controls.contains(&"memory"), "{}", report(&out));
        assert!(out.report.attestation.as_ref().unwrap().ok());
        assert!(out.report.checked_after_answer);
        used.push(out.report.container.clone().unwrap());
    }
    let mut distinct = used.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 3, "a container served twice: {used:?}");
    assert_gone(&used);
    let stats = pool.stats();
    assert_eq!((stats.hits, stats.misses, stats.anomalies), (3, 0, 0));
    wait_ready(&pool, 2);
    let waiting = pool.prepared_names();
    let engine = Engine::from_env().unwrap();
    assert!(engine.container_exists(&waiting[0]).unwrap());
    let labels = engine.container_inspect(&waiting[0], Duration::from_secs(10));
    let labels = labels.unwrap().unwrap()["Config"]["Labels"].clone();
    assert_eq!(
        labels[OWNER_LABEL].as_str(),
        Owner::current().map(Owner::encode).as_deref()
    );
    assert_eq!(labels["org.apizr.pool"], "120");
    drop(pool);
    for name in &waiting {
        assert!(!engine.container_exists(name).unwrap(), "{name} survived");
    }
}

/// The same hostile probes through a pooled container and a fresh one give the same answers:
/// identity, environment, network, read-only bundle and root, bounded /tmp, memory, pids,
/// subprocess deny, the deadline.
#[test]
fn pooled_and_fresh_containers_enforce_the_same_controls() {
    let Some(image) = image() else { return };
    let source = "import os, socket, subprocess, time\n\
def ids():\n    return [os.getuid(), os.getgid(), os.getcwd(), sorted(os.listdir('/bundle')), sorted(os.environ)]\n\
def net():\n    try:\n        socket.create_connection(('1.1.1.1', 53), timeout=2)\n    except OSError:\n        return 'OSError'\n    return 'connected'\n\
def write():\n    out = []\n    for p in ['/bundle/x', '/etc/x', '/tmp/x']:\n        try:\n            open(p, 'w').close()\n            out.append('wrote')\n        except OSError:\n            out.append('OSError')\n    return out\n\
def fill(n: int):\n    with open('/tmp/f', 'wb') as f:\n        f.write(b'x' * n)\n    return n\n\
def hog():\n    b = bytearray(200 * 1000 * 1000)\n    for i in range(0, len(b), 4096):\n        b[i] = 1\n    return len(b)\n\
def forks():\n    n = 0\n    while n < 500:\n        try:\n            pid = os.fork()\n        except OSError:\n            break\n        if pid == 0:\n            time.sleep(5)\n            os._exit(0)\n        n += 1\n    return n\n\
def spawn():\n    subprocess.run(['/bin/true'])\n    return 'ran'\n\
def slow():\n    time.sleep(30)\n";
    let fill = |n: i64| {
        let p = param(
            "n",
            ParameterKind::PositionalOrKeyword,
            true,
            ts(TypeKind::Int),
        );
        call(source, "fill", vec![p], &[("n", Value::Int(n))])
    };
    let open = v2(
        r#"{"resources":{"memory_bytes":67108864,"scratch_bytes":1048576},"limits":{"wall_time_ms":20000}}"#,
    );
    let deny = v2(r#"{"subprocess":{"mode":"deny"},"limits":{"wall_time_ms":20000}}"#);
    let short = v2(r#"{"limits":{"wall_time_ms":2000}}"#);
    let cases: Vec<(&str, CallRequest, &PolicyV2)> = vec![
        ("ids", call0(source, "ids"), &open),
        ("net", call0(source, "net"), &open),
        ("write", call0(source, "write"), &open),
        ("fill small", fill(500_000), &open),
        ("fill large", fill(2_000_000), &open),
        ("hog", call0(source, "hog"), &open),
        ("forks", call0(source, "forks"), &open),
        ("spawn", call0(source, "spawn"), &deny),
        ("slow", call0(source, "slow"), &short),
    ];
    for policy in [&open, &deny, &short] {
        let pool = pool_with(OciConfig::default(), PoolConfig::with_size(1));
        pool.warm(workload(source, policy, image));
        for (name, c, _) in cases.iter().filter(|(_, _, p)| std::ptr::eq(*p, policy)) {
            wait_ready(&pool, 1);
            let pooled = run(&pool, c, policy, image);
            assert_eq!(pooled.report.path, ContainerPath::Pooled, "{name}");
            let cold = fresh(c, policy, image);
            let seen = |o: &OciOutcome| (status(o), value_of(o), o.report.limits_hit.clone());
            assert_eq!(seen(&pooled), seen(&cold), "{name}: {}", report(&pooled));
        }
    }
    // The probes' answers are the controls (not merely equal on both paths).
    let pool = pool_with(OciConfig::default(), PoolConfig::with_size(1));
    pool.warm(workload(source, &open, image));
    let mut answers = Vec::new();
    for f in ["ids", "net", "write", "forks"] {
        wait_ready(&pool, 1);
        answers.push(value_of(&run(&pool, &call0(source, f), &open, image)));
    }
    assert_eq!(
        answers,
        [
            json!([
                65532,
                65532,
                "/bundle",
                ["original", "source"],
                ["APIZR_SERVED_PROCESS"]
            ]),
            json!("OSError"),
            json!(["OSError", "OSError", "wrote"]),
            json!(63),
        ]
    );
    wait_ready(&pool, 1);
    let hog = run(&pool, &call0(source, "hog"), &open, image);
    assert_eq!(status(&hog), "resource_limit", "{}", report(&hog));
}

/// A container whose engine record or own view differs from the request is removed during
/// preparation: it never joins the pool, and a call falls back to a fresh container, which is
/// refused with the control named.
#[test]
fn a_container_failing_its_checks_never_joins_the_pool() {
    let Some(image) = image() else { return };
    // Rootless Podman on cgroup v1: every cgroup limit accepted and dropped.
    let dropped_memory = Lies {
        create: |b| {
            for k in ["Memory", "MemorySwap", "PidsLimit", "CpuQuota"] {
                b["HostConfig"].as_object_mut().unwrap().remove(k);
            }
        },
        ..Lies::none()
    };
    let lying_record = Lies {
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
    let policy = v2(r#"{"limits":{"wall_time_ms":30000}}"#);
    for (tag, lies, control, checked) in [
        ("pool-memory", dropped_memory, "memory", "inspect"),
        ("pool-caps", lying_record, "capabilities", "inside"),
    ] {
        let proxy = LyingEngine::start(tag, lies);
        let config = OciConfig {
            socket: Some(proxy.socket.clone()),
            ..OciConfig::default()
        };
        let pool = pool_with(config, PoolConfig::with_size(1));
        let source = "def ping():\n    return 'pong'\n";
        pool.warm(workload(source, &policy, image));
        wait_for(
            &pool,
            Duration::from_secs(60),
            "no failed preparation",
            |s| s.refill_failures >= 1,
        );
        let stats = pool.stats();
        assert_eq!(stats.ready, 0, "{tag}: {stats:?}");
        assert!(
            stats
                .last_failure
                .as_deref()
                .unwrap_or("")
                .contains(control),
            "{tag}: {stats:?}"
        );
        let out = run(&pool, &call0(source, "ping"), &policy, image);
        assert_eq!(out.report.path, ContainerPath::Fresh, "{}", report(&out));
        assert_eq!(status(&out), "backend_unavailable", "{}", report(&out));
        let refused = out.report.refused.as_ref().unwrap();
        assert_eq!((refused.control, refused.checked), (control, checked));
        assert_eq!(pool.stats().hits, 0);
        if checked == "inspect" {
            // Refused from the engine's record: no container was ever started.
            let starts = proxy.requests();
            assert!(!starts.iter().any(|r| r.contains("/start")), "{starts:?}");
        }
    }
}

#[test]
fn a_new_workload_drains_the_pool() {
    let Some(image) = image() else { return };
    let source = "def ping():\n    return 'pong'\n";
    let a = v2(r#"{"resources":{"pids":32}}"#);
    let b = v2(r#"{"resources":{"pids":48}}"#);
    let pool = pool_with(OciConfig::default(), PoolConfig::with_size(2));
    pool.warm(workload(source, &a, image));
    wait_ready(&pool, 2);
    let prepared_for_a = pool.prepared_names();
    let c = call0(source, "ping");
    let out = run(&pool, &c, &b, image);
    assert_eq!(status(&out), "success");
    assert_eq!(out.report.path, ContainerPath::Fresh);
    assert!(out.report.pool_miss.as_deref().unwrap().contains("drained"));
    assert_gone(&prepared_for_a);
    assert!(pool.stats().discarded >= 2);
    wait_ready(&pool, 1);
    let out = run(&pool, &c, &b, image);
    assert_eq!(out.report.path, ContainerPath::Pooled, "{}", report(&out));
    // The container really carries policy b.
    assert_eq!(status(&out), "success");
    let verified = out.report.verified.as_ref().unwrap();
    assert!(verified.controls.contains(&"pids"));
}

#[test]
fn exhaustion_falls_back_to_a_fresh_container() {
    let Some(image) = image() else { return };
    let source = "import time\ndef nap():\n    time.sleep(1)\n    return 1\n";
    let policy = v2(r#"{"limits":{"wall_time_ms":30000}}"#);
    let pool = pool_with(OciConfig::default(), PoolConfig::with_size(1));
    pool.warm(workload(source, &policy, image));
    wait_ready(&pool, 1);
    let c = call0(source, "nap");
    let (one, two) = std::thread::scope(|s| {
        let one = s.spawn(|| run(&pool, &c, &policy, image));
        let two = s.spawn(|| run(&pool, &c, &policy, image));
        (one.join().unwrap(), two.join().unwrap())
    });
    let mut paths = [one.report.path, two.report.path];
    paths.sort_by_key(|p| *p == ContainerPath::Pooled);
    assert_eq!(paths, [ContainerPath::Fresh, ContainerPath::Pooled]);
    for out in [&one, &two] {
        assert_eq!(status(out), "success", "{}", report(out));
        if out.report.path == ContainerPath::Fresh {
            assert_eq!(
                out.report.pool_miss.as_deref(),
                Some("no prepared container was ready")
            );
            assert!(
                out.report.removed,
                "a fresh container is removed before the answer"
            );
        }
    }
    let stats = pool.stats();
    assert_eq!((stats.hits, stats.misses), (1, 1));
}

/// An engine that refuses every create: never more than `max_creating` preparations at once,
/// and exponentially fewer attempts over time (without the back-off the pool would retry as
/// fast as the engine answers: hundreds of creates in 3 s).
#[test]
fn refills_are_bounded_and_back_off_while_the_engine_fails() {
    let Some(image) = image() else { return };
    let proxy = LyingEngine::start(
        "pool-backoff",
        Lies {
            refuse_creates: true,
            ..Lies::none()
        },
    );
    let config = OciConfig {
        socket: Some(proxy.socket.clone()),
        ..OciConfig::default()
    };
    let pool = pool_with(
        config,
        PoolConfig {
            size: 6,
            max_creating: 2,
            ..PoolConfig::default()
        },
    );
    let policy = PolicyV2::default();
    pool.warm(workload("def ping():\n    return 1\n", &policy, image));
    let until = Instant::now() + Duration::from_secs(3);
    let mut most = 0;
    while Instant::now() < until {
        most = most.max(pool.stats().creating);
        std::thread::sleep(Duration::from_millis(2));
    }
    let creates = proxy
        .requests()
        .iter()
        .filter(|r| r.contains("/containers/create"))
        .count();
    let stats = pool.stats();
    assert!(most <= 2, "{most} preparations at once");
    assert!((2..=10).contains(&creates), "{creates} creates in 3 s");
    assert_eq!(stats.refill_failures, creates as u64);
    assert!(
        stats
            .last_failure
            .as_deref()
            .unwrap_or("")
            .contains("refused by the test proxy"),
        "{stats:?}"
    );
    assert_eq!(stats.ready, 0);
}

/// A container left by a process that no longer exists, and a bundle directory of one.
fn dead_owners_leftovers(image: &RuntimeImage, temp_root: &Path) -> (String, PathBuf) {
    let mut dead = Owner::current().unwrap().clone();
    dead.start_ticks += 1;
    let engine = Engine::from_env().unwrap();
    let name = format!("apizr-oci-deadpool{}", std::process::id());
    let body = json!({"Image": image.image, "Cmd": ["-c", "pass"],
        "Labels": {EXECUTION_LABEL.0: EXECUTION_LABEL.1, OWNER_LABEL: dead.encode(),
                   "org.apizr.expires": "99999999999"}});
    let deadline = Instant::now() + Duration::from_secs(30);
    let platform = image.platform.as_str();
    apizr_runtime::oci::container::create(&engine, &name, platform, &body, deadline).unwrap();
    let dir = temp_root.join(format!("apizr-oci-{}.abc", dead.encode().replace('/', ".")));
    std::fs::create_dir_all(&dir).unwrap();
    (name, dir)
}

#[test]
fn expired_containers_are_replaced_and_dead_owners_leftovers_reaped() {
    let Some(image) = image() else { return };
    // A temp root of this test's own, so that only this pool's sweep can reap the bundle.
    let root = std::env::temp_dir().join(format!("apizr-pool-reap-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let config = OciConfig {
        temp_root: root.clone(),
        ..OciConfig::default()
    };
    let pool = pool_with(
        config,
        PoolConfig {
            size: 1,
            max_creating: 1,
            max_idle: Duration::from_secs(3),
            reap_every: Duration::from_secs(1),
        },
    );
    let policy = PolicyV2::default();
    pool.warm(workload("def ping():\n    return 1\n", &policy, image));
    wait_ready(&pool, 1);
    let first = pool.prepared_names();
    let (leftover, bundle) = dead_owners_leftovers(image, &root);
    wait_for(&pool, Duration::from_secs(60), "never replaced", |s| {
        s.discarded >= 1 && s.ready == 1
    });
    assert_ne!(pool.prepared_names(), first);
    assert_gone(&first);
    wait_for(&pool, Duration::from_secs(30), "never reaped", |s| {
        s.reaped >= 1
    });
    assert!(!bundle.exists());
    assert_gone(&[leftover]);
    drop(pool);
    std::fs::remove_dir_all(&root).unwrap();
}

/// The one difference of an early answer, shown: user code that forges a whole frame and then
/// exits 3 is refused in a fresh container (the exit is read before the answer) and answered
/// in a pooled one, where the exit is read just after and counted as an anomaly. (A forged
/// frame followed by `os._exit(0)` is answered on both paths.)
#[test]
fn what_follows_an_early_answer_is_counted() {
    let Some(image) = image() else { return };
    let source = "import os, sys\n\
def forge():\n    body = b'{\"schema_version\":\"apizr.execution-result/v1\",\"status\":\"success\",\"value\":42}\\n'\n    fd = getattr(sys.modules.get('__main__'), '_OUT', 3)\n    os.write(fd, len(body).to_bytes(8, 'big') + body)\n    os._exit(3)\n";
    let policy = PolicyV2::default();
    let c = call0(source, "forge");
    let cold = fresh(&c, &policy, image);
    assert_eq!(status(&cold), "worker_failed", "{}", report(&cold));
    let pool = pool_with(OciConfig::default(), PoolConfig::with_size(1));
    pool.warm(workload(source, &policy, image));
    wait_ready(&pool, 1);
    let out = run(&pool, &c, &policy, image);
    assert_eq!(out.report.path, ContainerPath::Pooled);
    assert_eq!((status(&out), value_of(&out)), ("success", json!(42)));
    wait_for(&pool, Duration::from_secs(30), "no anomaly counted", |s| {
        s.anomalies == 1
    });
}

/// What a server holds for a pooled call (its worker slot and memory claim) is released when
/// the container's process has ended, not at the early answer: user code that forges its frame
/// and keeps running would otherwise let the next call in while its container still holds its
/// memory (up to the after-answer wait, 10 s, per call), and the caps would bound nothing.
#[test]
fn what_a_server_holds_for_a_pooled_call_is_released_when_its_container_process_ends() {
    use std::sync::atomic::{AtomicBool, Ordering};
    struct Slot(Arc<AtomicBool>);
    impl Drop for Slot {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let Some(image) = image() else { return };
    let source = "import os, sys, time\n\
def linger():\n    body = b'{\"schema_version\":\"apizr.execution-result/v1\",\"status\":\"success\",\"value\":7}\\n'\n    fd = getattr(sys.modules.get('__main__'), '_OUT', 3)\n    os.write(fd, len(body).to_bytes(8, 'big') + body)\n    time.sleep(3)\n    os._exit(0)\n";
    let policy = PolicyV2::default();
    let c = call0(source, "linger");
    let pool = pool_with(OciConfig::default(), PoolConfig::with_size(1));
    pool.warm(workload(source, &policy, image));
    wait_ready(&pool, 1);
    let released = Arc::new(AtomicBool::new(false));
    let call = OciCall {
        call: &c,
        policy: &policy,
        image,
        original: None,
    };
    let out = pool.execute_holding(call, Box::new(Slot(released.clone())));
    assert_eq!(out.report.path, ContainerPath::Pooled, "{}", report(&out));
    assert_eq!((status(&out), value_of(&out)), ("success", json!(7)));
    assert!(
        !released.load(Ordering::SeqCst),
        "the slot was released while the container's process still runs"
    );
    let until = Instant::now() + Duration::from_secs(60);
    while !released.load(Ordering::SeqCst) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        released.load(Ordering::SeqCst),
        "released once the process ended"
    );
}

/// gVisor through a pool: the prepared container's own view (read before it was pooled) shows
/// gVisor's kernel. Docker with `runsc` registered, or Podman's gVisor service.
#[test]
fn pooled_gvisor_containers_are_attested_inside() {
    let Some(image) = image() else { return };
    let engine = Engine::from_env().unwrap();
    let (socket, image) = if engine.kind == EngineKind::Podman {
        let Some((socket, image)) = podman_runsc() else {
            return;
        };
        (Some(socket), image)
    } else {
        let caps = engine.capabilities().unwrap();
        if !caps.runtimes.iter().any(|r| r == "runsc") {
            apizr_test_support::skip(
                "runtime runsc is not registered (run scripts/ci-gvisor-setup)",
            );
            return;
        }
        (None, image.clone())
    };
    let config = OciConfig {
        socket,
        runtime: Some("runsc".into()),
        ..OciConfig::default()
    };
    let policy = v2(r#"{"limits":{"wall_time_ms":30000}}"#);
    let source = "def ping():\n    return 'pong'\n";
    let pool = pool_with(config, PoolConfig::with_size(1));
    pool.warm(workload(source, &policy, &image));
    wait_ready(&pool, 1);
    let out = run(&pool, &call0(source, "ping"), &policy, &image);
    assert_eq!(out.report.path, ContainerPath::Pooled, "{}", report(&out));
    assert_eq!(status(&out), "success", "{}", report(&out));
    let seen = out.report.attestation.as_ref().unwrap();
    assert_eq!(seen.sandbox, "gvisor", "{}", report(&out));
    assert_eq!(out.report.verified.as_ref().unwrap().runtime, "runsc");
}
