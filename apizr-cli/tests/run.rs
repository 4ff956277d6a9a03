//! `apizr run`: the result JSON on stdout, the documented exit codes, precise errors for bad
//! input, and a secret in the caller's environment out of the code's reach in every tier
//! that applies a policy (mellea's local tiers hand it over).

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

#[path = "run/http.rs"]
mod http;

use std::path::PathBuf;
use std::process::{Command, Output};

fn apizr(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_apizr"));
    cmd.args(args);
    cmd.env("APIZR_TEST_SECRET", "hunter2");
    cmd
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("apizr-cli-run-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn prints_the_result_and_exits_by_success() {
    let out = apizr(&["run", "-c", "print(1 + 1)"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let r = json(&out);
    assert_eq!(r["schema_version"], "apizr.interpreter-result/v1");
    assert_eq!(
        (r["stdout"].as_str(), r["execution_mode"].as_str()),
        (Some("2"), Some("local"))
    );
    assert_eq!(r["unsafe"], false);
    let out = apizr(&["run", "-c", "raise SystemExit(4)"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json(&out)["exit_code"], 4);
    let out = apizr(&[
        "run",
        "--tier",
        "static",
        "--allow-import",
        "json,math",
        "-c",
        "import os",
    ])
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        json(&out)["skip_message"],
        "Unauthorized imports detected: os"
    );
    let out = apizr(&["run", "--tier", "local_unsafe", "-c", "pass"])
        .output()
        .unwrap();
    assert_eq!(json(&out)["unsafe"], true);
    // `--audit`: one apizr.audit/v1 line per run, appended.
    let dir = scratch("audit");
    let trail = dir.join("audit.jsonl");
    for code in ["print(1)", "raise SystemExit(4)"] {
        apizr(&["run", "--audit", trail.to_str().unwrap(), "-c", code])
            .output()
            .unwrap();
    }
    let text = std::fs::read_to_string(&trail).unwrap();
    let statuses: Vec<_> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["status"].clone())
        .collect();
    assert_eq!(statuses, ["success", "failed"], "{text}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn runs_a_file_or_standard_input() {
    let dir = scratch("file");
    let file = dir.join("job.py");
    std::fs::write(&file, "import sys\nprint(sys.argv[0])\n").unwrap();
    let out = apizr(&["run", file.to_str().unwrap()]).output().unwrap();
    assert_eq!(json(&out)["stdout"], "<code>");
    let mut child = apizr(&["run", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"print('from stdin')")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(json(&out)["stdout"], "from stdin");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_input_is_exit_2_with_a_precise_message() {
    let dir = scratch("bad");
    let policy = dir.join("policy.json");
    std::fs::write(
        &policy,
        "{\n  \"timeout\": 30,\n  \"netwrok_access\": true\n}\n",
    )
    .unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["run", "--tier", "sandbox", "-c", "1"],
            "unknown execution tier \"sandbox\"",
        ),
        (
            vec!["run", "--policy", policy.to_str().unwrap(), "-c", "1"],
            "line 3 column 18: unknown field `netwrok_access`",
        ),
        (
            vec!["run", "--package=-r", "-c", "1"],
            "packages[0]: flag-style package specifiers are not allowed",
        ),
        (vec!["run", "/nonexistent/job.py"], "/nonexistent/job.py"),
        (
            vec!["run", "--declared-only", "telepathy", "-c", "1"],
            "unknown policy field \"telepathy\"",
        ),
        // An audit trail that cannot be written: nothing runs unaudited.
        (
            vec!["run", "--audit", "/nonexistent/audit.jsonl", "-c", "1"],
            "--audit /nonexistent/audit.jsonl",
        ),
    ];
    for (args, fragment) in cases {
        let out = apizr(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(fragment), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty());
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_host_secret_in_the_environment_is_not_readable_by_default() {
    let code = "import os\nprint(os.environ.get('APIZR_TEST_SECRET'))";
    let out = apizr(&["run", "-c", code]).output().unwrap();
    assert_eq!(
        json(&out)["stdout"],
        "None",
        "the default tier hands over no host variable"
    );
    // The unsafe tier inherits the environment (mellea's behaviour), and says it is unsafe.
    let out = apizr(&["run", "--tier", "local_unsafe", "-c", code])
        .output()
        .unwrap();
    let r = json(&out);
    assert_eq!(
        (r["stdout"].as_str(), r["unsafe"].as_bool()),
        (Some("hunter2"), Some(true))
    );
    // Passing a variable through is explicit.
    let dir = scratch("env");
    let policy = dir.join("policy.json");
    std::fs::write(
        &policy,
        r#"{"env": ["APIZR_TEST_SECRET"], "subprocess_execution": true}"#,
    )
    .unwrap();
    let out = apizr(&["run", "--policy", policy.to_str().unwrap(), "-c", code])
        .output()
        .unwrap();
    assert_eq!(json(&out)["stdout"], "hunter2");
    std::fs::remove_dir_all(dir).unwrap();
}

/// `apizr serve interpreter` driven by the official `mcp` client over stdio: the `python`
/// tool and its schemas, structured results, one session's state across calls, and a network
/// attempt denied under `local` with the strict policy (a host listener gets nothing).
#[test]
fn serve_interpreter_answers_the_official_mcp_client() {
    use std::io::Read;
    let Some(python) = apizr_test_support::mcp_client_python() else {
        return;
    };
    let dir = scratch("mcp");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let policy = dir.join("strict.json");
    std::fs::write(
        &policy,
        r#"{"network_access": false, "subprocess_execution": false, "env_var_access": false,
            "filesystem_read_roots": [], "filesystem_write_roots": [], "timeout": 20}"#,
    )
    .unwrap();
    let connect = format!(
        "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3).sendall(b'leak')\n    print('sent')\nexcept OSError as e:\n    print('denied', type(e).__name__)\n"
    );
    let calls = serde_json::json!([
        {"name": "python", "arguments": {"code": "x = 6 * 7"}},
        {"name": "python", "arguments": {"code": "print(x)"}},
        {"name": "python", "arguments": {"code": connect}},
        {"name": "python", "arguments": {"code": "raise SystemExit(3)"}},
    ]);
    let calls_file = dir.join("calls.json");
    std::fs::write(&calls_file, calls.to_string()).unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new(python)
        .arg(root.join("tests/mcp_client/drive.py"))
        .args(["--stdio", "--calls"])
        .arg(&calls_file)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_apizr"))
        .args(["serve", "interpreter", "--session", "--policy"])
        .arg(&policy)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = json(&out);
    let tools = t["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{t}");
    assert_eq!(tools[0]["name"], "python");
    assert_eq!(
        tools[0]["inputSchema"]["required"],
        serde_json::json!(["code"])
    );
    assert_eq!(
        tools[0]["inputSchema"]["properties"]["code"]["type"],
        "string"
    );
    assert_eq!(tools[0]["outputSchema"]["type"], "object");
    let result = |i: usize| &t["calls"][i]["result"];
    let structured = |i: usize| &result(i)["structuredContent"];
    assert_eq!(result(0)["isError"], false, "{t}");
    assert_eq!(
        structured(0)["schema_version"],
        "apizr.interpreter-result/v1"
    );
    // The session kept `x` between calls.
    assert_eq!(structured(1)["stdout"], "42", "{t}");
    // The network attempt is denied, reported as enforced, and nothing reached the host.
    assert!(
        structured(2)["stdout"]
            .as_str()
            .unwrap()
            .starts_with("denied"),
        "{t}"
    );
    let rows = structured(2)["enforcement"]["capabilities"]
        .as_array()
        .unwrap();
    assert!(
        rows.iter()
            .any(|r| r["capability"] == "network_access" && r["status"] == "enforced"),
        "{t}"
    );
    let mut got = Vec::new();
    if let Ok((mut conn, _)) = listener.accept() {
        let _ = conn.read_to_end(&mut got);
    }
    assert!(got.is_empty(), "the code reached the host listener");
    // A failed run is a tool error with the same structured result.
    assert_eq!(result(3)["isError"], true);
    assert_eq!(structured(3)["exit_code"], 3);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `apizr serve interpreter` serves one-shot `local` runs from pre-started processes, driven by
/// the official `mcp` client over stdio: every run says `prestarted`; a file written to `/tmp`
/// and to the working directory, a module global and an environment change by one run are not
/// visible to the next; and the enforcement, reported and seen from inside the process, is
/// the cold server's (`--prestart 0`) but for the process fields.
#[test]
fn serve_interpreter_runs_one_shot_code_in_prestarted_processes_with_fresh_state() {
    let Some(python) = apizr_test_support::mcp_client_python() else {
        return;
    };
    let dir = scratch("prestart");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let probe = "import os\nstatus = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines() if ':\\t' in l)\nprint(os.getuid() == 0, [status.get(k, '?').strip() for k in ('Seccomp', 'NoNewPrivs', 'CapEff')])\nprint(sorted(os.environ), sorted(os.listdir('/')))";
    let write = "import os, tempfile, json\nopen(os.path.join(tempfile.gettempdir(), 'left'), 'w').write('x')\nopen('left-in-cwd', 'w').write('x')\njson.LEFT = 1\nos.environ['LEFT'] = '1'\nLEFT = 1";
    let check = "import os, tempfile, json\nprint(os.path.exists(os.path.join(tempfile.gettempdir(), 'left')), os.path.exists('left-in-cwd'), hasattr(json, 'LEFT'), 'LEFT' in os.environ, 'LEFT' in globals())";
    let call = |code: &str| serde_json::json!({"name": "python", "arguments": {"code": code}});
    let serve = |calls: serde_json::Value, prestart: &str| {
        let file = dir.join(format!("calls-{prestart}.json"));
        std::fs::write(&file, calls.to_string()).unwrap();
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        // The official client hands the server only a few variables: `env` sets the others.
        let out = Command::new(&python)
            .arg(root.join("tests/mcp_client/drive.py"))
            .args(["--stdio", "--calls"])
            .arg(&file)
            .args(["--", "env"])
            .arg(format!("TMPDIR={}", tmp.display()))
            .arg("APIZR_INTERPRETER_PRESTART_WAIT_MS=30000")
            .arg(env!("CARGO_BIN_EXE_apizr"))
            .args(["serve", "interpreter", "--prestart", prestart])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        json(&out)
    };
    let t = serve(
        serde_json::json!([
            call(write),
            call(check),
            call(write),
            call(check),
            call(probe)
        ]),
        "2",
    );
    let structured =
        |t: &serde_json::Value, i: usize| t["calls"][i]["result"]["structuredContent"].clone();
    for i in 0..5 {
        assert_eq!(
            structured(&t, i)["enforcement"]["process"],
            "prestarted",
            "{t}"
        );
    }
    for i in [1, 3] {
        assert_eq!(
            structured(&t, i)["stdout"],
            "False False False False False",
            "{t}"
        );
    }
    let cold = serve(serde_json::json!([call(probe)]), "0");
    let (pooled, cold) = (structured(&t, 4), structured(&cold, 0));
    assert_eq!(cold["enforcement"]["process"], "cold", "{cold}");
    assert!(cold["enforcement"].get("cold_reason").is_none(), "{cold}");
    assert_eq!(pooled["stdout"], cold["stdout"], "{pooled}\n{cold}");
    let without_process = |r: &serde_json::Value| {
        let mut e = r["enforcement"].clone();
        let map = e.as_object_mut().unwrap();
        map.remove("process");
        map.remove("cold_reason");
        e
    };
    assert_eq!(without_process(&pooled), without_process(&cold));
    // Both servers removed their idle processes' workspaces; only the two kept ones (the
    // written files are artifacts) remain.
    let left: Vec<String> = std::fs::read_dir(&tmp)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("apizr-kept-"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
