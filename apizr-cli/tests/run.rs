//! `apizr run`: the result JSON on stdout, the documented exit codes, precise errors for bad
//! input, and a secret in the caller's environment out of the code's reach in every tier
//! that applies a policy (mellea's local tiers hand it over).

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

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
