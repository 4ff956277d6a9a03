//! Frame-level protocol violations, driven through the real supervisor with a
//! misbehaving worker injected at the spawner seam.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use apizr_runtime::spawn::{ProcessSpawner, SpawnSpec};
use apizr_runtime::{LauncherLocation, LocalRuntime, RuntimeConfig};
use common::*;

/// Runs a Python script that consumes the request and writes `reply` (a Python bytes
/// expression) to stdout, runs `then` (Python statements), then exits with `code`.
#[derive(Debug)]
struct Misbehaving {
    reply: &'static str,
    then: &'static str,
    code: i32,
}

impl ProcessSpawner for Misbehaving {
    fn spawn(&self, spec: &SpawnSpec) -> std::io::Result<Child> {
        let script = format!(
            "import os, sys\nsys.stdin.buffer.read()\nos.write(1, {})\n{}\nos._exit({})\n",
            self.reply, self.then, self.code
        );
        Command::new("python3")
            .args(["-c", &script])
            .current_dir(&spec.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
    }
}

fn misbehaving(root: &Path, reply: &'static str, then: &'static str, code: i32) -> LocalRuntime {
    LocalRuntime::new(RuntimeConfig {
        launcher: LauncherLocation::None,
        temp_root: root.to_path_buf(),
        ..RuntimeConfig::default()
    })
    .with_spawner(Arc::new(Misbehaving { reply, then, code }))
}

fn call_f() -> apizr_runtime::CallRequest {
    let mut c = call0("def f():\n    return 1\n", "f");
    c.policy = policy(r#"{"limits":{"max_output_bytes":128}}"#);
    c
}

fn run(reply: &'static str, code: i32) -> (String, Option<String>) {
    let root = temp_root("frames");
    let out = misbehaving(&root, reply, "", code).execute(&call_f());
    (status(&out).to_string(), out.report.protocol_error)
}

const OK: &str =
    r#"b'{"schema_version":"apizr.execution-result/v1","status":"success","value":1}\n'"#;

#[test]
fn a_well_formed_frame_is_accepted() {
    let reply: &'static str = Box::leak(format!("(76).to_bytes(8, 'big') + {OK}").into_boxed_str());
    assert_eq!(run(reply, 0).0, "success");
}

#[test]
fn violations_map_to_worker_failed_or_output_limit() {
    let cases: Vec<(String, i32, &str)> = vec![
        ("b''".into(), 0, "worker_failed"),
        ("b'\\x00\\x00\\x00'".into(), 0, "worker_failed"),
        ("(129).to_bytes(8, 'big') + b'x' * 129".into(), 0, "output_limit"),
        ("(2**40).to_bytes(8, 'big')".into(), 0, "output_limit"),
        (format!("(76).to_bytes(8, 'big') + {OK} + b'x'"), 0, "worker_failed"),
        (format!("(80).to_bytes(8, 'big') + {OK}"), 0, "worker_failed"),
        // A well-formed frame is the answer: an exit after it is an anomaly, not the status
        // (see the test below).
        (format!("(76).to_bytes(8, 'big') + {OK}"), 3, "success"),
        (
            r#"(76).to_bytes(8, 'big') + b'{"schema_version":"apizr.execution-result/v1","status":"timeout","value":1}\n'"#.into(),
            0,
            "worker_failed",
        ),
        (
            r#"(77).to_bytes(8, 'big') + b'{"schema_version":"apizr.execution-result/v1", "status":"success","value":1}\n'"#.into(),
            0,
            "worker_failed",
        ),
        ("b'x' * 1000".into(), 0, "output_limit"),
    ];
    for (reply, code, want) in cases {
        let leaked: &'static str = Box::leak(reply.clone().into_boxed_str());
        let (got, why) = run(leaked, code);
        assert_eq!(got, want, "{reply} exit {code}: {why:?}");
    }
}

fn framed_ok() -> &'static str {
    Box::leak(format!("(76).to_bytes(8, 'big') + {OK}").into_boxed_str())
}

/// The answer is final at the frame: an exit 3 after it is recorded as an anomaly of the
/// call's end, not turned into `worker_failed` (awaited inline: the report has it).
#[test]
fn an_exit_after_the_frame_is_an_anomaly_not_the_status() {
    let root = temp_root("frames-exit");
    let out = misbehaving(&root, framed_ok(), "", 3).execute(&call_f());
    assert_eq!(status(&out), "success", "{:?}", out.report);
    assert_eq!(out.report.exit.as_deref(), Some("exit 3"));
    assert_eq!(
        out.report.after_answer.as_deref(),
        Some("ended `exit 3` after its answer")
    );
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
}

/// A server answers on the frame, before the process has exited; a process that then does
/// not exit is killed after the grace and counted as an anomaly, and nothing of it is left.
#[test]
fn a_server_answers_on_the_frame_and_kills_a_worker_that_does_not_exit() {
    let root = temp_root("frames-linger");
    let rt = misbehaving(&root, framed_ok(), "import time\ntime.sleep(60)", 0);
    rt.answer_before_exit();
    let out = rt.execute(&call_f());
    assert_eq!(status(&out), "success", "{:?}", out.report);
    assert_eq!(out.report.exit, None, "answered before the exit");
    // The process still lives (it sleeps; the grace has not passed): the call was answered
    // before its end.
    assert_eq!(rt.after_answer_stats().pending, 1);
    assert!(!processes_of(&root, "").is_empty(), "the worker still runs");
    assert!(rt.settle(Duration::from_secs(30)));
    let stats = rt.after_answer_stats();
    assert_eq!(
        (stats.answered_on_frame, stats.anomalies),
        (1, 1),
        "{stats:?}"
    );
    assert_eq!(stats.pending, 0);
    assert!(processes_of(&root, "").is_empty(), "killed after the grace");
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
}

/// What a server holds for a call (its worker slot and memory claim) is released only when
/// the call's process has ended, not when the call is answered: a process that keeps living
/// after its frame (here it sleeps; user code can do it by replacing the worker's exit) would
/// otherwise let the next call in while it still holds its memory, and the server's caps would
/// bound nothing.
#[test]
fn what_a_server_holds_for_a_call_is_released_when_its_process_ends_not_at_the_answer() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    struct Slot(Arc<AtomicBool>);
    impl Drop for Slot {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let root = temp_root("frames-held");
    let rt = misbehaving(&root, framed_ok(), "import time\ntime.sleep(60)", 0);
    rt.answer_before_exit();
    let released = Arc::new(AtomicBool::new(false));
    let out = rt.execute_holding(&call_f(), Box::new(Slot(released.clone())));
    assert_eq!(status(&out), "success", "{:?}", out.report);
    assert_eq!(
        rt.after_answer_stats().pending,
        1,
        "answered before the exit"
    );
    assert!(
        !released.load(Ordering::SeqCst),
        "the slot was released while the call's process still runs"
    );
    assert!(rt.settle(Duration::from_secs(30)));
    assert!(
        released.load(Ordering::SeqCst),
        "released once the process is gone"
    );
    assert!(processes_of(&root, "").is_empty());
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
}
