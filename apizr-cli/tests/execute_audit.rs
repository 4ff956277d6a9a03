//! `apizr execute --audit FILE` / `APIZR_AUDIT_FILE`: one JSON line per call with identities,
//! outcome and mechanisms — and never an argument value or an environment value.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value as Json;

const SECRET_ARG: &str = "hunter2-argument-value";
const SECRET_ENV: &str = "s3cr3t-environment-value";
const SOURCE: &str = "import os, time\n\ndef f(token: str) -> int:\n    if token == 'sleep':\n        time.sleep(5)\n    return len(os.environ.get('APIZR_AUDIT_SECRET', ''))\n";

fn work(tag: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("audit-{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mod.py"), SOURCE).unwrap();
    dir
}

fn execute(dir: &Path, token: &str, policy: &str, audit: Option<&str>, env: bool) -> Output {
    std::fs::write(dir.join("args.json"), format!(r#"{{"token":"{token}"}}"#)).unwrap();
    std::fs::write(dir.join("policy.json"), policy).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_apizr"));
    cmd.current_dir(dir)
        .env("APIZR_AUDIT_SECRET", SECRET_ENV)
        .env_remove("APIZR_AUDIT_FILE")
        .args(["execute", "mod.py", "f", "--arguments", "args.json"])
        .args(["--policy", "policy.json"]);
    if let Some(file) = audit {
        if env {
            cmd.env("APIZR_AUDIT_FILE", file);
        } else {
            cmd.args(["--audit", file]);
        }
    }
    cmd.output().unwrap()
}

fn lines(path: &Path) -> Vec<Json> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        !text.contains(SECRET_ARG),
        "argument value in the audit: {text}"
    );
    assert!(
        !text.contains(SECRET_ENV),
        "environment value in the audit: {text}"
    );
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn sha256_of(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    format!("sha256:{}", text.split_whitespace().next().unwrap())
}

#[test]
fn one_line_per_call_with_identities_and_mechanisms_but_no_values() {
    let dir = work("flag");
    let audit = dir.join("audit.jsonl");
    let inherit = r#"{"environment":{"inherit":false,"allow":["APIZR_AUDIT_SECRET"]}}"#;
    let out = execute(&dir, SECRET_ARG, inherit, audit.to_str(), false);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains(&format!("\"value\":{}", SECRET_ENV.len())),
        "{stdout}"
    );
    let slow = r#"{"limits":{"wall_time_ms":400}}"#;
    let out = execute(&dir, "sleep", slow, audit.to_str(), false);
    assert_eq!(out.status.code(), Some(1));
    let records = lines(&audit);
    assert_eq!(records.len(), 2);
    let digest = sha256_of(&dir.join("mod.py"));
    for r in &records {
        assert_eq!(r["schema_version"], "apizr.audit/v1");
        assert_eq!(r["capability_id"], "python:mod:f");
        assert_eq!(r["executable_digest"], digest.as_str());
        assert!(r["policy_digest"].as_str().unwrap().starts_with("sha256:"));
        assert!(r["duration_ms"].is_u64());
        let controls = r["controls"].as_array().unwrap();
        let wall = controls
            .iter()
            .find(|c| c["control"] == "wall_timeout")
            .unwrap();
        assert_eq!(wall["enforced"], true);
        assert!(wall["mechanism"].as_str().unwrap().contains("SIGKILL"));
    }
    assert_eq!(records[0]["status"], "success");
    assert_eq!(records[1]["status"], "timeout");
    assert_eq!(records[1]["limits_hit"], serde_json::json!(["wall_time"]));
    assert!(records[1]["duration_ms"].as_u64().unwrap() >= 400);
    assert_ne!(records[0]["policy_digest"], records[1]["policy_digest"]);
    // The allow-list names the variable (it is part of the policy), never its value.
    let env = records[0]["controls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["control"] == "environment")
        .unwrap();
    assert_eq!(env["requested"], "allow [APIZR_AUDIT_SECRET]");
}

#[test]
fn the_environment_variable_names_the_sink_and_a_bad_sink_runs_nothing() {
    let dir = work("env");
    let audit = dir.join("audit.jsonl");
    let out = execute(&dir, SECRET_ARG, "{}", audit.to_str(), true);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let records = lines(&audit);
    assert_eq!(records.len(), 1);
    assert_eq!(
        records[0]["policy_digest"],
        "sha256:e8b05fb2d6f3c81bb27a3a9fe4bca7d4ab28b001b3a73c2230e19314c5201d6b"
    );
    let bad = dir.join("no-such-dir").join("audit.jsonl");
    let out = execute(&dir, SECRET_ARG, "{}", bad.to_str(), false);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("audit file"));
}

#[test]
fn calls_refused_before_a_worker_are_audited_too() {
    let dir = work("early");
    let audit = dir.join("audit.jsonl");
    // A number where a `str` is required: invalid_input from validation, after planning.
    std::fs::write(dir.join("policy.json"), "{}").unwrap();
    std::fs::write(dir.join("args.json"), r#"{"token": 4242424242}"#).unwrap();
    let run = |policy: &str| {
        std::fs::write(dir.join("policy.json"), policy).unwrap();
        Command::new(env!("CARGO_BIN_EXE_apizr"))
            .current_dir(&dir)
            .args(["execute", "mod.py", "f", "--arguments", "args.json"])
            .args(["--policy", "policy.json", "--audit"])
            .arg(&audit)
            .output()
            .unwrap()
    };
    assert_eq!(run("{}").status.code(), Some(1));
    assert_eq!(run(r#"{"bogus": 1}"#).status.code(), Some(1));
    let text = std::fs::read_to_string(&audit).unwrap();
    assert!(!text.contains("4242424242"), "{text}");
    let records: Vec<Json> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["status"], "invalid_input");
    assert_eq!(records[0]["capability_id"], "python:mod:f");
    assert_eq!(
        records[0]["executable_digest"],
        sha256_of(&dir.join("mod.py")).as_str()
    );
    assert_eq!(records[0]["controls"], serde_json::json!([]));
    // An invalid policy: nothing resolved yet, so the capability is as requested.
    assert_eq!(records[1]["status"], "invalid_input");
    assert_eq!(records[1]["capability_id"], "f");
    assert_eq!(records[1]["policy_digest"], "");
}
