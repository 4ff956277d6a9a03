//! Pre-started single-use v1 workers (`local::prestart`): real CPython through the real
//! launcher. Every call still gets a brand-new process (no state, uid, `/tmp` or cgroup
//! crosses calls), a call cannot kill the idle worker waiting for a later call, the deadline
//! counts from the request, a dead or stale worker is never served, and a killed server
//! leaves nothing behind. The hostile suites run a second time
//! through the pool in CI (`APIZR_TEST_V1_PRESTART=1`, see `common::runtime_in`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use apizr_runtime::ir::import_time::ImportTime;
use apizr_runtime::ir::json::Value;
use apizr_runtime::ir::{ParameterKind, TypeKind};
use apizr_runtime::local::cgroup::{self, GROUP_PREFIX};
use apizr_runtime::local::prestart::{ColdReason, PrestartConfig, ProcessSource};
use apizr_runtime::{CallOutcome, LocalRuntime};
use common::*;

const PROBE: &str = r#"
import os
counter = [0]

def f():
    counter[0] += 1
    leftovers = sorted(os.listdir("/tmp"))
    with open("/tmp/mark", "w") as mark:
        mark.write("x")
    with open("/proc/self/cgroup") as groups:
        cgroups = groups.read()
    return {"counter": counter[0], "uid": os.getuid(), "tmp": leftovers,
            "cgroups": cgroups, "hash": hash("apizr-prestart-seed")}
"#;

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn ready(rt: &LocalRuntime) -> usize {
    rt.prestart_stats().map_or(0, |s| s.ready)
}

#[test]
fn no_state_uid_tmp_or_cgroup_crosses_calls() {
    let root = temp_root("prestart-fresh");
    let rt = prestarted_in(&root, Duration::from_secs(60));
    let outs: Vec<_> = (0..3).map(|_| run(&rt, PROBE, "f", STRICT)).collect();
    let values: Vec<_> = outs.iter().map(value).collect();
    for (out, v) in outs.iter().zip(&values) {
        assert_eq!(status(out), "success", "{:?}", out.report);
        assert_eq!(out.report.process, Some(ProcessSource::Prestarted));
        // The module has no import-time effects: each worker imported it ahead of its call.
        assert_eq!(out.report.preimported, Some(true), "{:?}", out.report);
        // A global mutated by call N is not seen by call N+1, nor is its /tmp file.
        assert_eq!(v["counter"], 1, "{v}");
        assert_eq!(v["tmp"], serde_json::json!([]), "{v}");
    }
    for (i, a) in values.iter().enumerate() {
        for b in &values[i + 1..] {
            // Each worker is a fresh interpreter (own hash seed) in its own cgroups.
            assert_ne!(a["hash"], b["hash"]);
            if enforced(&outs[0], "memory") {
                assert_ne!(a["cgroups"], b["cgroups"]);
            }
            if enforced(&outs[0], "identity") && nix::unistd::Uid::effective().is_root() {
                assert_ne!(a["uid"], b["uid"], "per-call uids");
            }
        }
    }
    let stats = rt.prestart_stats().unwrap();
    assert_eq!(stats.hits, 3, "{stats:?}");
    assert_eq!(stats.misses, 0, "{stats:?}");
    assert_eq!(stats.preimported, 3, "{stats:?}");
    drop(rt);
    assert!(processes_of(&root, "").is_empty());
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
}

#[test]
fn a_module_with_import_time_effects_is_imported_with_its_call() {
    let root = temp_root("prestart-effects");
    let rt = prestarted_in(&root, Duration::from_secs(60));
    // READY-004: the top level prints (an effect), so readiness refuses the import ahead.
    let effects = "print('imported now')\n\ndef f():\n    return 7\n";
    assert_eq!(import_time_of(effects), ImportTime::Effects);
    for _ in 0..2 {
        let out = run(&rt, effects, "f", STRICT);
        assert_eq!(envelope_text(&out), SEVEN, "{:?}", out.report);
        assert_eq!(out.report.process, Some(ProcessSource::Prestarted));
        assert_eq!(out.report.preimported, Some(false));
        assert_eq!(out.report.cold_reason, Some(ColdReason::ImportEffects));
        // The import ran with the call, inside it: its output is the call's.
        assert!(
            out.report.stderr.contains("imported now"),
            "{:?}",
            out.report
        );
    }
    assert_eq!(rt.prestart_stats().unwrap().preimported, 0);
}

const SEVEN: &str =
    "{\"schema_version\":\"apizr.execution-result/v1\",\"status\":\"success\",\"value\":7}\n";

/// `source`'s call `f` in a pool told the module may be imported ahead (the runtime trusts
/// the flag; a server sets it only from readiness), and cold.
fn ahead_and_cold(tag: &str, source: &str, policy_text: &str) -> (Vec<CallOutcome>, CallOutcome) {
    let root = temp_root(tag);
    let rt = prestarted_in(&root, Duration::from_secs(60));
    let mut c = call0(source, "f");
    c.policy = policy(policy_text);
    c.executable.import_time = ImportTime::Harmless;
    let pooled = (0..2).map(|_| exec(&rt, &c)).collect();
    let failures = rt.prestart_stats().unwrap().import_failures;
    assert_eq!(failures, 1, "one failed import ahead stops pre-import");
    let cold = exec(&cold_runtime_in(&root), &c);
    (pooled, cold)
}

#[test]
fn a_module_imported_ahead_is_already_inside_every_control() {
    // Readiness would refuse this import ahead (a call at the top level); told it may, the
    // pool shows the seccomp programs are in force before the module's first statement.
    let source = "import os\ntry:\n    pid = os.fork()\nexcept OSError:\n    FORK = 'denied'\n\
                  else:\n    if pid == 0:\n        os._exit(0)\n    FORK = 'allowed'\n\n\
                  def f():\n    return FORK\n";
    let root = temp_root("prestart-import-sandboxed");
    let rt = prestarted_in(&root, Duration::from_secs(60));
    let mut c = call0(source, "f");
    c.policy = policy(STRICT);
    c.executable.import_time = ImportTime::Harmless;
    let out = exec(&rt, &c);
    if enforced(&out, "subprocess") {
        assert_eq!(out.report.preimported, Some(true), "{:?}", out.report);
        assert_eq!(value(&out), "denied", "{:?}", out.report);
    }
}

#[test]
fn an_import_ahead_that_fails_gives_the_cold_envelope() {
    let source = "import sys\nsys.stderr.write('top level ran\\n')\nraise RuntimeError('no')\n\ndef f():\n    return 7\n";
    let (pooled, cold) = ahead_and_cold("prestart-import-fails", source, STRICT);
    assert_eq!(status(&cold), "execution_failed");
    for out in &pooled {
        // Byte for byte the cold envelope; the import ran again, with the call.
        assert_eq!(envelope_text(out), envelope_text(&cold), "{:?}", out.report);
        assert_eq!(out.report.process, Some(ProcessSource::Prestarted));
        assert_eq!(out.report.preimported, Some(false));
        assert_eq!(out.report.cold_reason, Some(ColdReason::ImportFailed));
        assert!(
            out.report.stderr.contains("RuntimeError: no"),
            "{:?}",
            out.report
        );
    }
}

#[test]
fn an_import_ahead_past_the_wall_time_is_given_up() {
    let source = "import time\ntime.sleep(3)\n\ndef f():\n    return 7\n";
    let (pooled, cold) = ahead_and_cold(
        "prestart-import-slow",
        source,
        r#"{"limits":{"wall_time_ms":700}}"#,
    );
    assert_eq!(status(&cold), "timeout");
    for out in &pooled {
        assert_eq!(envelope_text(out), envelope_text(&cold), "{:?}", out.report);
        assert_eq!(out.report.preimported, Some(false));
        assert_eq!(out.report.cold_reason, Some(ColdReason::ImportTimedOut));
    }
}

#[test]
fn the_deadline_counts_from_the_request_not_the_spawn() {
    let root = temp_root("prestart-deadline");
    let rt = prestarted_in(&root, Duration::from_secs(60));
    let quick = "def f():\n    return 1\n";
    let slow = "import time\ndef f():\n    time.sleep(5)\n    return 1\n";
    let policy_text = r#"{"limits":{"wall_time_ms":1000}}"#;
    assert_eq!(status(&run(&rt, quick, "f", policy_text)), "success");
    wait_for("a ready worker", || ready(&rt) >= 1);
    // The worker now idles longer than the call's whole deadline, then runs a quick call.
    std::thread::sleep(Duration::from_millis(1500));
    let out = run(&rt, quick, "f", policy_text);
    assert_eq!(status(&out), "success", "{:?}", out.report);
    assert_eq!(out.report.process, Some(ProcessSource::Prestarted));
    // The deadline is still enforced on a pre-started worker.
    let out = run(&rt, slow, "f", policy_text);
    assert_eq!(status(&out), "timeout", "{:?}", out.report);
    assert_eq!(out.report.process, Some(ProcessSource::Prestarted));
}

#[test]
fn an_idle_or_dead_worker_is_never_served() {
    let root = temp_root("prestart-stale");
    let rt = cold_runtime_in(&root);
    assert!(rt.start_prestart(PrestartConfig {
        size: 1,
        max_idle: Duration::from_millis(400),
        wait: None,
    }));
    let quick = "def f():\n    return 1\n";
    // The first call of a key registers it and goes cold.
    let first = run(&rt, quick, "f", DEFAULT);
    assert_eq!(first.report.process, Some(ProcessSource::Cold));
    assert_eq!(first.report.cold_reason, Some(ColdReason::Empty));
    // Idle past the bound: discarded and replaced by the keeper.
    wait_for("an expired worker", || {
        rt.prestart_stats()
            .is_some_and(|s| s.discarded >= 1 && s.ready == 1)
    });
    drop(rt);
    assert!(processes_of(&root, "").is_empty());
    // A worker killed while idle is not served: the call goes cold and says why.
    let root = temp_root("prestart-dead");
    let rt = cold_runtime_in(&root);
    assert!(rt.start_prestart(PrestartConfig {
        size: 1,
        max_idle: Duration::from_secs(60),
        wait: None,
    }));
    let _ = run(&rt, quick, "f", DEFAULT);
    wait_for("a ready worker", || ready(&rt) == 1);
    for (pid, _) in processes_of(&root, "") {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    wait_for("the idle worker's death", || {
        processes_of(&root, "").is_empty()
    });
    let out = run(&rt, quick, "f", DEFAULT);
    assert_eq!(status(&out), "success", "{:?}", out.report);
    assert_eq!(out.report.process, Some(ProcessSource::Cold));
    assert_eq!(out.report.cold_reason, Some(ColdReason::Exited));
    assert_eq!(rt.prestart_stats().unwrap().anomalies, 1);
}

const KILLER: &str = r#"
import os, signal

def f(pid: int):
    try:
        os.kill(pid, signal.SIGKILL)
        return "killed"
    except OSError as e:
        return e.errno
"#;

/// The interpreters of the idle workers under `root` (each launcher's child), oldest first
/// (the keeper starts one at a time, so by pid).
fn idle_interpreters(root: &std::path::Path) -> Vec<i64> {
    let mut launchers: Vec<i32> = processes_of(root, "")
        .into_iter()
        .filter(|(_, cmd)| cmd.contains("__apizr_launch__ run"))
        .map(|(p, _)| p)
        .collect();
    launchers.sort_unstable();
    launchers
        .iter()
        .filter_map(|p| {
            std::fs::read_to_string(format!("/proc/{p}/task/{p}/children"))
                .ok()?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .collect()
}

/// The pool is the one place where a call runs next to another call's worker (one idle,
/// waiting for a later call): a call that knows that worker's host pid cannot kill it, under
/// the default policy and the strict one (the same uid and PID namespace would let it).
#[test]
fn a_call_cannot_kill_an_idle_worker_waiting_for_a_later_call() {
    for (tag, policy_text) in [("default", DEFAULT), ("strict", STRICT)] {
        let root = temp_root(&format!("prestart-sibling-{tag}"));
        let rt = cold_runtime_in(&root);
        assert!(rt.start_prestart(PrestartConfig {
            size: 2,
            ..waiting_pool(Duration::from_secs(60))
        }));
        let make = |pid: i64| {
            let mut c = call(
                KILLER,
                "f",
                vec![param(
                    "pid",
                    ParameterKind::PositionalOrKeyword,
                    true,
                    ts(TypeKind::Int),
                )],
                &[("pid", Value::Int(pid))],
            );
            c.policy = policy(policy_text);
            c
        };
        // The first call registers the key; then two workers idle. The next call is served
        // by the older one and attacks the younger.
        let _ = exec(&rt, &make(0));
        wait_for("two ready workers", || ready(&rt) == 2);
        let idle = idle_interpreters(&root);
        assert_eq!(idle.len(), 2, "{tag}: {idle:?}");
        let target = idle[1];
        let out = exec(&rt, &make(target));
        assert_eq!(status(&out), "success", "{tag}: {:?}", out.report);
        assert_ne!(
            value(&out),
            "killed",
            "{tag}: the call killed the idle worker"
        );
        assert!(
            std::path::Path::new(&format!("/proc/{target}")).exists(),
            "{tag}: the idle worker is alive"
        );
        // And it serves the next call.
        let out = exec(&rt, &make(0));
        assert_eq!(out.report.process, Some(ProcessSource::Prestarted));
        assert_eq!(rt.prestart_stats().unwrap().anomalies, 0, "{tag}");
    }
}

/// The server side of the `kill -9` test (run only by it, as a separate process): a runtime
/// with a full pool, waiting to be killed.
#[test]
#[ignore = "the server half of a_killed_server_leaves_no_worker_directory_or_cgroup"]
fn child_server_with_a_pool() {
    let root = std::env::var_os("APIZR_PRESTART_CHILD_ROOT").expect("run by the kill test");
    let rt = cold_runtime_in(std::path::Path::new(&root));
    assert!(rt.start_prestart(PrestartConfig::with_size(2)));
    let _ = run(&rt, PROBE, "f", STRICT);
    wait_for("ready workers", || ready(&rt) == 2);
    println!("ready {}", std::process::id());
    std::thread::sleep(Duration::from_secs(120));
}

fn cgroups_of(pid: u32) -> Vec<std::path::PathBuf> {
    let prefix = format!("{GROUP_PREFIX}{pid}-");
    let mut found = Vec::new();
    for controller in ["pids", "memory"] {
        for h in cgroup::hierarchies(controller) {
            for entry in std::fs::read_dir(&h.base).into_iter().flatten().flatten() {
                if entry.file_name().to_string_lossy().starts_with(&prefix) {
                    found.push(entry.path());
                }
            }
        }
    }
    found
}

/// Start the child server, wait until its pool is full; its pid.
fn child_server(root: &std::path::Path) -> (std::process::Child, u32) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_server_with_a_pool",
            "--ignored",
            "--nocapture",
        ])
        .env("APIZR_PRESTART_CHILD_ROOT", root)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let pid = lines
        .find_map(|l| l.ok()?.strip_prefix("ready ")?.parse::<u32>().ok())
        .expect("the child server reports its pool ready");
    (child, pid)
}

#[test]
fn a_killed_server_leaves_no_worker_directory_or_cgroup() {
    let root = temp_root("prestart-kill");
    let (mut child, pid) = child_server(&root);
    let workers = processes_of(&root, "");
    assert!(workers.len() >= 2, "pre-started workers: {workers:?}");
    if require(!cgroup::hierarchies("memory").is_empty(), "memory cgroups") {
        assert!(
            !cgroups_of(pid).is_empty(),
            "each pre-started worker has its cgroups"
        );
    }
    let _ = child.kill();
    let _ = child.wait();
    // Each idle worker's launcher holds the server's pidfd: it ends the worker and removes
    // its directory and cgroups.
    wait_for("the pool's processes to end", || {
        processes_of(&root, "").is_empty()
    });
    let left = || {
        let dirs: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        (dirs, cgroups_of(pid))
    };
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let (dirs, groups) = left();
        if dirs.is_empty() && groups.is_empty() {
            break;
        }
        // Say what stayed, so a failure under load can be told apart: a worker directory
        // (a launcher that never held the server's pidfd) or a cgroup (removal refused).
        assert!(
            Instant::now() < until,
            "timed out waiting for the pool's directories and cgroups to go: {dirs:?} {groups:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    // A crashed predecessor (server and launchers killed at once) leaves directories and
    // cgroups; the next server's start-up sweep removes them, owner checked dead first.
    let (mut child, pid) = child_server(&root);
    // The launchers first, so none is left to clean up after the server.
    for (p, _) in processes_of(&root, "") {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(p),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        std::fs::read_dir(&root).unwrap().count() > 0,
        "the crash left directories for the sweep"
    );
    wait_for("the crashed pool's processes to end", || {
        processes_of(&root, "").is_empty()
    });
    let next = cold_runtime_in(&root);
    assert!(next.start_prestart(PrestartConfig::with_size(1)));
    assert_eq!(
        std::fs::read_dir(&root).unwrap().count(),
        0,
        "the sweep removed the dead server's directories"
    );
    assert!(cgroups_of(pid).is_empty(), "and its cgroups");
}

/// The race behind a leftover: the server dies while a pool refill's launcher is still
/// starting. That launcher finds it has no supervisor (its parent is no longer the PID it was
/// given) and fails its setup; nobody else knows its directory, so it must remove it itself.
/// Here the given supervisor is a live process that is not the launcher's parent, which is
/// exactly what the launcher sees after its real parent died and it was reparented.
#[test]
fn a_launcher_whose_supervisor_is_gone_before_setup_removes_its_directory() {
    use apizr_runtime::local::launcher::{LAUNCH_ARG, LaunchConfig, SETUP_FAILED};
    let root = temp_root("prestart-orphan");
    let leftover = root.join("worker-dir");
    std::fs::create_dir_all(leftover.join("inside")).unwrap();
    let mut stranger = Command::new("sleep").arg("30").spawn().unwrap();
    let config = LaunchConfig {
        program: "/bin/true".into(),
        supervisor: Some(i32::try_from(stranger.id()).unwrap()),
        leftovers: vec![leftover.clone()],
        ..LaunchConfig::default()
    };
    let status = Command::new(env!("CARGO_BIN_EXE_apizr-launch"))
        .arg(LAUNCH_ARG)
        .arg("run")
        .arg(serde_json::to_string(&config).unwrap())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let _ = stranger.kill();
    let _ = stranger.wait();
    assert_eq!(status.status.code(), Some(SETUP_FAILED), "{status:?}");
    assert!(
        String::from_utf8_lossy(&status.stderr).contains("supervisor exited"),
        "{status:?}"
    );
    assert!(
        !leftover.exists(),
        "the orphaned launcher removed its directory"
    );
    std::fs::remove_dir_all(&root).unwrap();
}
