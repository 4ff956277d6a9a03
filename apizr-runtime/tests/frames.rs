//! Frame-level protocol violations, driven through the real supervisor with a
//! misbehaving worker injected at the spawner seam.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use apizr_runtime::spawn::{ProcessSpawner, SpawnSpec};
use apizr_runtime::{LauncherLocation, LocalRuntime, RuntimeConfig};
use common::*;

/// Runs a Python script that consumes the request and writes `reply` (a Python bytes
/// expression) to stdout, then exits with `code`.
#[derive(Debug)]
struct Misbehaving {
    reply: &'static str,
    code: i32,
}

impl ProcessSpawner for Misbehaving {
    fn spawn(&self, spec: &SpawnSpec) -> std::io::Result<Child> {
        let script = format!(
            "import os, sys\nsys.stdin.buffer.read()\nos.write(1, {})\nos._exit({})\n",
            self.reply, self.code
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

fn run(reply: &'static str, code: i32) -> (String, Option<String>) {
    let root = temp_root("frames");
    let rt = LocalRuntime::new(RuntimeConfig {
        launcher: LauncherLocation::None,
        temp_root: root.to_path_buf(),
        ..RuntimeConfig::default()
    })
    .with_spawner(Arc::new(Misbehaving { reply, code }));
    let mut c = call0("def f():\n    return 1\n", "f");
    c.policy = policy(r#"{"limits":{"max_output_bytes":128}}"#);
    let out = rt.execute(&c);
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
        (format!("(76).to_bytes(8, 'big') + {OK}"), 3, "worker_failed"),
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
