//! Hostile payloads under Linux enforcement: each is stopped (or the call refused), and no
//! process of the call survives it (scanned in /proc by working directory and marker).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::ErrorKind;
use std::net::TcpListener;

use apizr_runtime::ir::json::Value;
use common::*;

fn host_ok(rt: &apizr_runtime::LocalRuntime) -> bool {
    let caps = rt.host_capabilities();
    require(
        caps.launcher.is_some() && caps.pid_namespace,
        "a launcher with a PID namespace",
    )
}

fn control<'a>(
    out: &'a apizr_runtime::CallOutcome,
    name: &str,
) -> &'a apizr_runtime::enforcement::ControlReport {
    out.report
        .controls
        .iter()
        .find(|c| c.control == name)
        .unwrap()
}

fn assert_nothing_left(root: &std::path::Path, marker: &str) {
    let left = processes_of(root, marker);
    assert!(left.is_empty(), "processes left behind: {left:?}");
}

#[test]
fn host_is_probed_once_and_reports_mechanisms() {
    let rt = runtime();
    let caps = rt.host_capabilities().clone();
    assert!(caps.python.is_some(), "{caps:?}");
    assert!(caps.launcher.is_some(), "{caps:?}");
    assert!(std::ptr::eq(rt.host_capabilities(), rt.host_capabilities()));
    let out = rt.execute(&call0("def f():\n    return 1\n", "f"));
    let d = control(&out, "descendants");
    assert_eq!(d.enforced, caps.pid_namespace);
}

#[test]
fn network_deny_blocks_loopback_connect() {
    let root = temp_root("net");
    let rt = runtime_in(&root);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let source = format!(
        "import socket\ndef f():\n    s = socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    s.close()\n    return 'connected'\n"
    );
    let mut c = call0(&source, "f");
    let open = rt.execute(&c);
    assert_eq!(
        open.envelope.value,
        Value::Str("connected".into()),
        "control run: {:?}",
        open.report
    );
    let _ = listener.accept();
    c.policy = policy(r#"{"network":{"mode":"deny"}}"#);
    let denied = rt.execute(&c);
    if !enforced(&denied, "network") {
        assert_eq!(status(&denied), "policy_refused");
        return;
    }
    assert_eq!(status(&denied), "execution_failed", "{:?}", denied.report);
    assert!(denied.report.stderr.contains("unreachable") || denied.report.stderr.contains("Errno"));
    assert_eq!(
        listener.accept().map(|_| ()).map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock),
        "the denied call must not reach the listener"
    );
    assert_nothing_left(&root, "");
}

#[test]
fn filesystem_sandbox_blocks_writes_outside_the_working_directory() {
    let root = temp_root("fs");
    let rt = runtime_in(&root);
    let outside = root.join("outside.txt");
    let source = String::from(
        "import os, tempfile\ndef f(target):\n    with open('inside.txt', 'w') as fh:\n        fh.write('ok')\n    fd, tmp = tempfile.mkstemp()\n    os.close(fd)\n    host = open('/etc/hosts').read(10)\n    if target:\n        open(target, 'w').write('escaped')\n    return [tmp.startswith(os.getcwd()), len(host)]\n",
    );
    let target = |t: Option<&str>| {
        let mut c = call(
            &source,
            "f",
            vec![param(
                "target",
                apizr_runtime::ir::ParameterKind::PositionalOrKeyword,
                true,
                ts(apizr_runtime::ir::TypeKind::Any),
            )],
            &[("target", t.map_or(Value::Null, |s| Value::Str(s.into())))],
        );
        c.policy = policy(r#"{"filesystem":{"mode":"sandbox"}}"#);
        c
    };
    let fine = rt.execute(&target(None));
    if !enforced(&fine, "filesystem") {
        assert_eq!(status(&fine), "policy_refused");
        return;
    }
    assert_eq!(
        fine.envelope.value,
        Value::Array(vec![Value::Bool(true), Value::Int(10)]),
        "{:?}",
        fine.report
    );
    let outside_str = outside.to_string_lossy().to_string();
    for path in [
        outside_str.as_str(),
        "/usr/apizr-escape.txt",
        "/etc/apizr-escape.txt",
        "/root/apizr-escape.txt",
    ] {
        let out = rt.execute(&target(Some(path)));
        assert_eq!(status(&out), "execution_failed", "{path}");
        // Not visible in the private root (or read-only, or refused by Landlock).
        assert!(
            [
                "PermissionError",
                "FileNotFoundError",
                "Read-only file system"
            ]
            .iter()
            .any(|e| out.report.stderr.contains(e)),
            "{}",
            out.report.stderr
        );
        assert!(!std::path::Path::new(path).exists(), "{path} was written");
    }
    assert_nothing_left(&root, "");
}

#[test]
fn subprocess_deny_stops_subprocess_fork_and_exec_but_not_threads() {
    let root = temp_root("sub");
    let rt = runtime_in(&root);
    let run = |body: &str, deny: bool| {
        let mut c = call0(
            &format!("import os, subprocess, threading\ndef f():\n    {body}\n"),
            "f",
        );
        if deny {
            c.policy = policy(r#"{"subprocess":{"mode":"deny"}}"#);
        }
        rt.execute(&c)
    };
    let allowed = run("return subprocess.run(['true']).returncode", false);
    assert_eq!(
        allowed.envelope.value,
        Value::Int(0),
        "{:?}",
        allowed.report
    );
    for body in [
        "return subprocess.run(['true']).returncode",
        "return os.fork()",
        "return os.system('true')",
        "os.execv('/bin/true', ['true'])",
        "return subprocess.Popen(['sleep', '6062']).pid",
    ] {
        let out = run(body, true);
        if !enforced(&out, "subprocess") {
            assert_eq!(status(&out), "policy_refused");
            return;
        }
        if body.contains("os.system") {
            // glibc's system() reports a failed posix_spawn as exit status 127 (127 << 8).
            assert_eq!(out.envelope.value, Value::Int(127 << 8), "{body}");
        } else {
            assert_eq!(status(&out), "execution_failed", "{body}: {:?}", out.report);
        }
    }
    let threads = run(
        "r = []\n    t = threading.Thread(target=lambda: r.append(1))\n    t.start()\n    t.join()\n    return r",
        true,
    );
    assert_eq!(threads.envelope.value, Value::Array(vec![Value::Int(1)]));
    assert_nothing_left(&root, "6062");
}

#[test]
fn memory_limit_stops_a_1_gib_allocation() {
    let root = temp_root("mem");
    let rt = runtime_in(&root);
    let run = |size: &str| {
        let mut c = call0(
            &format!("def f():\n    b = bytearray({size})\n    return len(b)\n"),
            "f",
        );
        c.policy = policy(r#"{"resources":{"memory_bytes":268435456}}"#);
        rt.execute(&c)
    };
    let small = run("1 << 20");
    assert_eq!(
        small.envelope.value,
        Value::Int(1 << 20),
        "{:?}",
        small.report
    );
    let big = run("1 << 30");
    if !enforced(&big, "memory") {
        return;
    }
    assert_eq!(status(&big), "execution_failed");
    assert!(big.report.stderr.contains("MemoryError"));
    assert_nothing_left(&root, "");
}

#[test]
fn pids_limit_stops_a_fork_bomb() {
    let root = temp_root("pids");
    let rt = runtime_in(&root);
    if !host_ok(&rt) {
        return;
    }
    let source = "import os, time\ndef f():\n    n = 0\n    while n < 200:\n        pid = os.fork()\n        if pid == 0:\n            time.sleep(6063)\n            os._exit(0)\n        n += 1\n    return n\n";
    let mut c = call0(source, "f");
    c.policy = policy(r#"{"resources":{"pids":8}}"#);
    let out = rt.execute(&c);
    if !enforced(&out, "pids") {
        assert_eq!(status(&out), "policy_refused");
        return;
    }
    assert_eq!(status(&out), "execution_failed", "{:?}", out.report);
    assert!(
        out.report.limits_hit.contains(&"pids".to_string()),
        "{:?}",
        out.report
    );
    assert_nothing_left(&root, "");
}

#[test]
fn detached_descendants_do_not_survive_the_call() {
    let root = temp_root("setsid");
    let rt = runtime_in(&root);
    if !host_ok(&rt) {
        return;
    }
    let source = "import subprocess, os\ndef f():\n    subprocess.Popen(['setsid', 'sleep', '6064'])\n    subprocess.Popen(['sleep', '6064'], start_new_session=True)\n    os.system('setsid sleep 6064 &')\n    return 'spawned'\n";
    let out = rt.execute(&call0(source, "f"));
    assert_eq!(
        out.envelope.value,
        Value::Str("spawned".into()),
        "{:?}",
        out.report
    );
    assert!(control(&out, "descendants").enforced);
    assert_nothing_left(&root, "sleep 6064");
}

#[test]
fn cpu_limit_kills_a_busy_loop() {
    let root = temp_root("cpu");
    let rt = runtime_in(&root);
    let mut c = call0("def f():\n    while True:\n        pass\n", "f");
    // The wall limit is far above the CPU limit, so only the CPU limit can end the call well
    // before it (1 s of CPU takes several seconds of wall time on a loaded 2-core host).
    c.policy = policy(r#"{"limits":{"wall_time_ms":60000},"resources":{"cpu_millis":1000}}"#);
    let started = std::time::Instant::now();
    let out = rt.execute(&c);
    assert_eq!(status(&out), "worker_failed", "{:?}", out.report);
    assert!(
        out.report.limits_hit.contains(&"cpu".to_string()),
        "{:?}",
        out.report
    );
    assert!(started.elapsed().as_secs() < 40, "{:?}", started.elapsed());
    assert_nothing_left(&root, "");
}

#[test]
fn everything_at_once_still_runs_a_trivial_call() {
    let rt = runtime();
    let mut c = call0(
        "import asyncio\nasync def f():\n    await asyncio.sleep(0)\n    return 'ok'\n",
        "f",
    );
    c.policy = policy(
        r#"{"network":{"mode":"deny"},"filesystem":{"mode":"sandbox"},"subprocess":{"mode":"deny"},"resources":{"memory_bytes":536870912,"pids":16,"cpu_millis":5000}}"#,
    );
    let out = rt.execute(&c);
    if !require(
        out.report.refused.is_empty(),
        "every control of the strict policy",
    ) {
        assert_eq!(status(&out), "policy_refused");
        return;
    }
    assert_eq!(
        out.envelope.value,
        Value::Str("ok".into()),
        "{:?}",
        out.report
    );
    assert!(
        out.report.controls.iter().all(|c| c.enforced),
        "{:?}",
        out.report.controls
    );
}
