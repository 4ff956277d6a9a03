//! `apizr execute` as the supervisor process under attack: `kill -9` of the supervisor ends
//! the call (worker, working directory and cgroup gone), a secret in the supervisor's
//! environment is out of the worker's reach, and a non-root caller gets the same sandbox
//! through an unprivileged user namespace.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "support/schema_example.rs"]
mod schema_example;
use schema_example::example;

const STRICT: &str = r#"{"network":{"mode":"deny"},"filesystem":{"mode":"sandbox"},"subprocess":{"mode":"deny"},"resources":{"memory_bytes":268435456,"pids":16},"limits":{"wall_time_ms":60000}}"#;
const HOST: &str = r#"{"resources":{"pids":16},"limits":{"wall_time_ms":60000}}"#;

fn ci() -> bool {
    apizr_test_support::in_ci()
}

fn work(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("apizr-cli-sandbox-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

fn write(dir: &Path, source: &str, policy: &str) {
    std::fs::write(dir.join("mod.py"), source).unwrap();
    std::fs::write(dir.join("args.json"), "{}").unwrap();
    std::fs::write(dir.join("policy.json"), policy).unwrap();
    for f in ["mod.py", "args.json", "policy.json"] {
        std::fs::set_permissions(dir.join(f), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
}

fn execute(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_apizr"));
    cmd.current_dir(dir)
        .env("TMPDIR", dir)
        .args(["execute", "mod.py", "f", "--arguments", "args.json"])
        .args(["--policy", "policy.json", "--report", "report.json"]);
    cmd
}

/// `pid` and every process below it (by parent links in /proc).
fn tree(pid: i32) -> Vec<i32> {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            continue;
        }
        if let Some(ppid) = fields.get(1).and_then(|f| f.parse::<i32>().ok()) {
            parents.push((p, ppid));
        }
    }
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let parent = out[i];
        out.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    out
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rfind(')')
            .is_some_and(|i| !s[i + 1..].trim_start().starts_with('Z'))
    })
}

/// The cgroup v1 `pids` directory this test process is in (where the supervisor's per-call
/// groups are created).
fn pids_base() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let _ = parts.next()?;
        let controllers = parts.next()?;
        let path = parts.next()?;
        controllers.split(',').any(|c| c == "pids").then_some(path)
    })?;
    let base = Path::new("/sys/fs/cgroup/pids").join(path.trim_start_matches('/'));
    base.is_dir().then_some(base)
}

#[test]
fn kill_9_of_the_supervisor_ends_the_call() {
    for (tag, policy) in [("host", HOST), ("strict", STRICT)] {
        let dir = work(&format!("kill-{tag}"));
        write(
            &dir,
            "import time\n\ndef f() -> int:\n    time.sleep(6081)\n    return 1\n",
            policy,
        );
        let mut supervisor = execute(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = supervisor.id() as i32;
        // Wait for the worker to be running (a python below the supervisor).
        let deadline = Instant::now() + Duration::from_secs(20);
        let procs = loop {
            let procs = tree(pid);
            let python = procs.iter().any(|p| {
                std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| {
                    let argv0 = c.split(|b| *b == 0).next().unwrap_or_default();
                    String::from_utf8_lossy(argv0).contains("python")
                })
            });
            if python {
                break procs;
            }
            assert!(Instant::now() < deadline, "the worker never started");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(
            procs.len() >= 3,
            "supervisor, launcher and worker: {procs:?}"
        );
        let workdirs = |dir: &Path| -> Vec<PathBuf> {
            std::fs::read_dir(dir)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("apizr-execute-"))
                })
                .collect()
        };
        let groups = || -> Vec<PathBuf> {
            pids_base()
                .and_then(|b| std::fs::read_dir(b).ok())
                .map(|entries| {
                    entries
                        .flatten()
                        .map(|e| e.path())
                        .filter(|p| {
                            p.file_name().is_some_and(|n| {
                                n.to_string_lossy().starts_with(&format!("apizr-{pid}-"))
                            })
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        assert_eq!(
            workdirs(&dir).len(),
            1,
            "{tag}: the call's working directory exists"
        );
        assert_eq!(groups().len(), 1, "{tag}: the call's cgroup exists");
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        )
        .unwrap();
        let _ = supervisor.wait();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left: Vec<i32> = procs.iter().copied().filter(|p| alive(*p)).collect();
            let done = left.is_empty() && workdirs(&dir).is_empty() && groups().is_empty();
            if done {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{tag}: left behind: processes {left:?}, dirs {:?}, cgroups {:?}",
                workdirs(&dir),
                groups()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

const SPY: &str = "import os\n\ndef f() -> list:\n    found = []\n    for p in os.listdir('/proc'):\n        if p.isdigit():\n            try:\n                with open('/proc/%s/environ' % p, 'rb') as fh:\n                    if b'apizr-secret-6073' in fh.read():\n                        found.append(p)\n            except OSError:\n                pass\n    return found\n";

#[test]
fn the_supervisor_environment_is_out_of_reach() {
    for (tag, policy) in [("host", "{}"), ("strict", STRICT)] {
        let dir = work(&format!("env-{tag}"));
        write(&dir, SPY, policy);
        let out = execute(&dir)
            .env("APIZR_SUPERVISOR_SECRET", "apizr-secret-6073")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains(r#""status":"success","value":[]"#),
            "{tag}: {stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

const WHOAMI: &str = "import os\n\ndef f() -> dict:\n    status = open('/proc/self/status').read()\n    caps = [l.split()[1] for l in status.splitlines() if l.startswith(('CapEff', 'CapPrm', 'CapBnd'))]\n    return {'caps': caps, 'pids': sorted(int(p) for p in os.listdir('/proc') if p.isdigit()), 'root': sorted(os.listdir('/'))}\n";

#[test]
fn a_non_root_caller_gets_the_same_sandbox() {
    let python = Path::new("/usr/bin/python3");
    let setpriv = Path::new("/usr/bin/setpriv");
    if !nix::unistd::Uid::effective().is_root() || !python.exists() || !setpriv.exists() {
        assert!(!ci(), "CI runs as root with setpriv and /usr/bin/python3");
        return;
    }
    // No resources: a non-root caller has no cgroup to delegate them to (they are refused).
    let strict = r#"{"network":{"mode":"deny"},"filesystem":{"mode":"sandbox"},"subprocess":{"mode":"deny"}}"#;
    for (tag, policy) in [("host", "{}"), ("strict", strict)] {
        let dir = work(&format!("nonroot-{tag}"));
        write(&dir, WHOAMI, policy);
        let out = Command::new(setpriv)
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_apizr"))
            .args(["execute", "mod.py", "f", "--arguments", "args.json"])
            .args(["--policy", "policy.json", "--report", "report.json"])
            .current_dir(&dir)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &dir)
            .env("TMPDIR", &dir)
            .env("APIZR_PYTHON", python)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap())
                .unwrap();
        let envelope: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
        assert_eq!(envelope["status"], "success", "{tag}: {stdout} {report}");
        let value = &envelope["value"];
        assert_eq!(
            value["caps"],
            serde_json::json!(["0000000000000000", "0000000000000000", "0000000000000000"]),
            "{tag}: no capability inside the user namespace: {value}"
        );
        assert_eq!(value["pids"], serde_json::json!([1]), "{tag}: {value}");
        let identity = report["runtime"]["controls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["control"] == "identity")
            .unwrap()
            .clone();
        assert_eq!(identity["enforced"], true, "{tag}: {identity}");
        assert!(
            identity["mechanism"]
                .as_str()
                .unwrap()
                .contains("user namespace"),
            "{tag}: {identity}"
        );
        if tag == "strict" {
            let root = value["root"].as_array().unwrap();
            assert!(
                !root
                    .iter()
                    .any(|e| e == "home" || e == "root" || e == "run"),
                "{value}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Readiness v2's proof obligation (issue 15): every function v2 calls ready in the fixture
/// corpus (`apizr-inspect/tests/data/readiness_v2/*.safe.py`, whose top levels v1 refuses)
/// imports cleanly in the strict sandbox (no network, no subprocess, read-only filesystem)
/// and one call with arguments generated from its request schema runs to a status other
/// than `worker_failed`/`binding_failed`; `probe(x)` returns `x`.
#[test]
fn v2_ready_functions_import_and_run_in_the_strict_sandbox() {
    let corpus = apizr_test_support::workspace_root().join("apizr-inspect/tests/data/readiness_v2");
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".safe.py"))
        .collect();
    fixtures.sort();
    assert!(fixtures.len() >= 10, "{fixtures:?}");
    let mut calls = 0;
    for fixture in &fixtures {
        let source = std::fs::read_to_string(fixture).unwrap();
        let ready = v2_ready(&source);
        assert!(
            ready.iter().any(|(name, _)| name == "probe"),
            "{}: probe is ready under v2",
            fixture.display()
        );
        for (name, arguments) in ready {
            let dir = work(&format!("v2-{calls}"));
            write(&dir, &source, STRICT);
            std::fs::write(dir.join("args.json"), arguments.to_string()).unwrap();
            let out = Command::new(env!("CARGO_BIN_EXE_apizr"))
                .current_dir(&dir)
                .env("TMPDIR", &dir)
                .args(["execute", "mod.py", &name, "--arguments", "args.json"])
                .args(["--policy", "policy.json", "--module-name", "fixture"])
                .args(["--readiness", "v2"])
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let what = format!(
                "{}:{name}({arguments}): {stdout} {}",
                fixture.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            let result: serde_json::Value = serde_json::from_str(stdout.trim()).expect(&what);
            let status = result["status"].as_str().unwrap_or("");
            assert!(
                !matches!(
                    status,
                    "worker_failed" | "binding_failed" | "policy_refused" | ""
                ),
                "{what}"
            );
            if name == "probe" {
                assert_eq!(
                    (status, &result["value"]),
                    ("success", &arguments["x"]),
                    "{what}"
                );
            }
            calls += 1;
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    assert!(calls >= fixtures.len());
}

/// The functions readiness v2 calls ready in `source`, each with schema-valid arguments.
fn v2_ready(source: &str) -> Vec<(String, serde_json::Value)> {
    let options = apizr_inspect::InspectOptions {
        readiness: apizr_ir::ReadinessPolicy::V2,
        ..Default::default()
    };
    apizr_inspect::on_inspect_stack(|| {
        let (outcome, parsed) = apizr_inspect::inspect_bytes_parsed(
            source.as_bytes(),
            apizr_ir::SourceKind::Python,
            "fixture",
            options,
        )
        .unwrap();
        let ready: Vec<String> = outcome
            .inspection
            .readiness
            .assessments
            .iter()
            .filter(|a| a.can_generate_interface)
            .map(|a| a.source.symbol.clone())
            .collect();
        let contracts =
            apizr_inspect::interface::plan_interfaces(&parsed, &outcome.inspection, Some(&ready))
                .unwrap();
        contracts
            .iter()
            .map(|c| {
                let schema = serde_json::to_value(c.request_schema()).unwrap();
                (c.name.clone(), example(&schema))
            })
            .collect()
    })
    .unwrap()
}
