//! `apizr execute` against the reference's recorded answers.
//!
//! Every case under `tests/fixtures/execute/cases/<name>/` holds a source, an arguments file,
//! a policy and `expected.json` (the reference's stdout and exit code, recorded by
//! `scripts/refresh-execute-goldens`). Envelopes are compared as parsed JSON with exact numbers
//! (the reference prints pydantic-style floats). A case whose `case.json` has an
//! `ours` entry documents a deliberate difference: our status must be one of `ours.statuses`.
//! A `pending` entry names a known difference owned by another component; it must still
//! differ (the test fails once it matches, so the marker cannot outlive the fix).

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use apizr_ir::Value;
use apizr_ir::admission::parse_permissive;
use serde_json::Value as Json;

fn cases_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/execute/cases")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// Sources used by many cases live once in `tests/fixtures/execute/sources/`; a case that
/// does not carry its own copy gets that one (the missing-source case names a file that exists
/// nowhere, so it stays missing).
fn supply_shared_source(source: &str, work: &Path) {
    let shared = cases_root().join("../sources").join(source);
    if !work.join(source).exists() && shared.is_file() {
        std::fs::copy(shared, work.join(source)).unwrap();
    }
}

/// A fresh copy per run: tests run in parallel and several run the same case (a shared
/// directory would be removed under a running call).
fn work_dir(name: &str) -> PathBuf {
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("execute-cases")
        .join(format!("{name}-{}", SEQ.fetch_add(1, Ordering::Relaxed)));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn run_case(case: &Path, extra: &[&str]) -> (Json, Output) {
    let spec: Json =
        serde_json::from_slice(&std::fs::read(case.join("case.json")).unwrap()).unwrap();
    let name = case.file_name().unwrap().to_str().unwrap();
    let work = work_dir(name);
    copy_dir(case, &work);
    supply_shared_source(spec["source"].as_str().unwrap(), &work);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_apizr"));
    cmd.current_dir(&work)
        .env("APIZR_TEST_VAR", "hello")
        .arg("execute")
        .arg(spec["source"].as_str().unwrap())
        .arg(spec["capability"].as_str().unwrap())
        .arg("--arguments")
        .arg(
            spec.get("arguments")
                .and_then(Json::as_str)
                .unwrap_or("arguments.json"),
        )
        .arg("--policy")
        .arg("policy.json");
    for arg in spec["extra_args"].as_array().unwrap() {
        cmd.arg(arg.as_str().unwrap());
    }
    cmd.args(extra);
    let output = cmd.output().unwrap();
    (spec, output)
}

fn envelope(stdout: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(stdout).ok()?;
    let line = text.strip_suffix('\n')?;
    if line.contains('\n') {
        return None;
    }
    parse_permissive(line.as_bytes()).ok()
}

fn status_of(envelope: &Value) -> Option<&str> {
    match envelope.get("status") {
        Some(Value::Str(s)) => Some(s),
        _ => None,
    }
}

#[test]
fn execute_matches_the_reference() {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(cases_root())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 70, "{} cases", cases.len());
    let (mut identical, mut documented) = (0, 0);
    let mut pending = Vec::new();
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let expected: Json =
            serde_json::from_slice(&std::fs::read(case.join("expected.json")).unwrap()).unwrap();
        let reference = envelope(expected["stdout"].as_str().unwrap().as_bytes()).unwrap();
        let (spec, output) = run_case(case, &[]);
        let code = output.status.code();
        let Some(ours) = envelope(&output.stdout) else {
            failures.push(format!(
                "{name}: stdout is not one envelope line: {:?}",
                output
            ));
            continue;
        };
        let ours_status = status_of(&ours).unwrap_or("").to_string();
        let exit_ok = code == Some(if ours_status == "success" { 0 } else { 1 });
        let same = ours == reference && code == expected["exit"].as_i64().map(|c| c as i32);
        if let Some(why) = spec.get("pending").and_then(Json::as_str) {
            // A known difference owned by another component: it must still differ, so the
            // marker is removed as soon as the fix lands.
            if same {
                failures.push(format!(
                    "{name}: pending case now matches; remove `pending`"
                ));
            } else {
                pending.push(format!("{name}: {why}"));
            }
        } else if same {
            identical += 1;
        } else if let Some(allowed) = spec.get("ours").and_then(|o| o["statuses"].as_array()) {
            if allowed.iter().any(|s| s.as_str() == Some(&ours_status)) && exit_ok {
                documented += 1;
            } else {
                failures.push(format!("{name}: {ours_status} not in {allowed:?}"));
            }
        } else {
            failures.push(format!(
                "{name}: ours {code:?} {} | reference {} {}\nstderr: {}",
                String::from_utf8_lossy(&output.stdout).trim(),
                expected["exit"],
                expected["stdout"].as_str().unwrap().trim(),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    eprintln!(
        "execute parity: {identical} identical, {documented} documented differences, {} pending, {} failures, {} cases",
        pending.len(),
        failures.len(),
        cases.len()
    );
    for p in &pending {
        eprintln!("pending: {p}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn report_does_not_change_stdout_and_carries_the_digest_chain() {
    let case = cases_root().join("success_pricing_total");
    let (_, plain) = run_case(&case, &[]);
    let report_path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("execute-report.json");
    let (_, with_report) = run_case(&case, &["--report", report_path.to_str().unwrap()]);
    assert_eq!(plain.stdout, with_report.stdout);
    assert_eq!(
        String::from_utf8_lossy(&plain.stdout),
        "{\"schema_version\":\"apizr.execution-result/v1\",\"status\":\"success\",\"value\":36.0}\n"
    );
    let report: Json = serde_json::from_slice(&std::fs::read(&report_path).unwrap()).unwrap();
    let digests = &report["digests"];
    let expected = [
        (
            "source",
            "cbca7424f6c23afc9b8b8d3b9827d60bb8dba4838fa5d0452a3768c5ca0bb329",
        ),
        (
            "ir",
            "41fe9bf4dbdfdba4bc16fc70fe42eebf528c3afeb4578f755568889c84707a99",
        ),
        (
            "readiness",
            "c7f86ae4dd0b01439c3a27bd9d447f7631eb339d07140870c6ac28282ed8e9d2",
        ),
        (
            "interface",
            "cf8dc938fe6d6a0b087b26bfa55dd3b107bd402e914ac25f4ab2f8f48e0420b6",
        ),
        (
            "policy",
            "e8b05fb2d6f3c81bb27a3a9fe4bca7d4ab28b001b3a73c2230e19314c5201d6b",
        ),
        (
            "plan",
            "622d5b653228184876b9654d56c2a6b8f7137f5d5685ecfa37c6b903b34f0f6c",
        ),
    ];
    for (key, value) in expected {
        assert_eq!(
            digests[key],
            Json::String(format!("sha256:{value}")),
            "{key}"
        );
    }
    assert_eq!(report["status"], "success");
    assert!(report["runtime"]["controls"].is_array());
    // Durations are milliseconds, never serde's `{"secs","nanos"}` form of a Duration.
    assert!(
        report["runtime"]["total_ms"].is_u64(),
        "{}",
        report["runtime"]
    );
    assert!(report["runtime"]["worker_ms"].is_u64());
    // `apizr execute` starts its worker for the call (no pool: no reason to give).
    assert_eq!(report["runtime"]["process"], "cold");
    assert!(report["runtime"].get("cold_reason").is_none());
    assert!(!report.to_string().contains("\"nanos\""));
    // Without FILE the report goes to stderr.
    let (_, to_stderr) = run_case(&case, &["--report"]);
    assert_eq!(plain.stdout, to_stderr.stdout);
    let stderr: Json = serde_json::from_slice(&to_stderr.stderr).unwrap();
    assert_eq!(stderr["digests"]["plan"], digests["plan"]);
}

#[test]
fn invalid_arguments_never_reach_a_worker_and_say_why() {
    let case = cases_root().join("invalid_positional_gap");
    let (_, output) = run_case(&case, &["--report"]);
    let report: Json = serde_json::from_slice(&output.stderr).unwrap();
    assert_eq!(report["stage"], "validate");
    assert_eq!(
        report["detail"],
        "Supply preceding positional-only field: a"
    );
    assert!(report["runtime"].is_null(), "no worker was started");
}

#[test]
fn usage_errors_exit_2() {
    let output = Command::new(env!("CARGO_BIN_EXE_apizr"))
        .args(["execute", "x.py", "f", "--arguments", "a.json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let output = Command::new(env!("CARGO_BIN_EXE_apizr"))
        .args(["execute", "x.py", "f", "--arguments", "a", "--policy", "p"])
        .args(["--runtime-platform", "linux/ppc"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

/// Our documented behaviour for the deny controls the reference always refuses: either the
/// runtime enforces them (the report names the mechanism) or, on a host that cannot, it
/// refuses with `policy_refused` and the report says which control.
#[test]
fn deny_controls_are_enforced_or_refused() {
    for (case, control) in [
        ("deny_network", "network"),
        ("deny_filesystem", "filesystem"),
        ("deny_subprocess", "subprocess"),
    ] {
        let (_, output) = run_case(&cases_root().join(case), &["--report"]);
        let ours = envelope(&output.stdout).unwrap();
        let report: Json = serde_json::from_slice(&output.stderr).unwrap();
        let runtime = &report["runtime"];
        match status_of(&ours) {
            Some("success") => {
                let entry = runtime["controls"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|c| c["control"] == control)
                    .unwrap();
                assert_eq!(entry["enforced"], true, "{case}");
                assert!(entry["mechanism"].is_string(), "{case}: {entry}");
            }
            Some("policy_refused") => {
                assert!(
                    runtime["refused"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|c| c == control),
                    "{case}: {runtime}"
                );
            }
            other => panic!("{case}: unexpected status {other:?}"),
        }
    }
}

/// A call that ends before a worker runs says why in one stderr line (`apizr execute:
/// <status>: <stage>: <detail>`, naming the file, the policy field, the capability or the
/// argument path); stdout keeps the reference's envelope bytes and the exit code stays 1. With
/// `--report` on stderr the line is left out: stderr stays one JSON document.
#[test]
fn failures_before_a_worker_say_why_on_one_stderr_line() {
    for (case, want) in [
        (
            "missing_arguments_file",
            "invalid_input: arguments: absent.json: No such file or directory",
        ),
        (
            "invalid_syntax_arguments",
            "invalid_input: arguments: arguments.json: Expecting property name",
        ),
        (
            "policy_unknown_key",
            "invalid_input: policy: policy.json: bogus: unknown field; expected one of",
        ),
        (
            "policy_string_int",
            "invalid_input: policy: policy.json: limits.wall_time_ms: expected an integer",
        ),
        (
            "policy_v2_without_image",
            "invalid_input: policy: OCI policy requires --runtime-image and --runtime-platform",
        ),
        ("missing_source", "invalid_input: source: missing.py: "),
        (
            "deny_network_unknown_capability",
            "invalid_input: plan: Unknown capability selection: nope",
        ),
        (
            "ineligible_generator",
            "policy_refused: plan: cannot run gen: unsupported (APIZR-READY-005, APIZR-READY-016)",
        ),
        (
            "require_known_effects",
            "policy_refused: plan: unknown_required_effect: network",
        ),
        (
            "invalid_missing_field",
            "invalid_input: validate: Missing required field: x (at /x: expected integer, \
             found missing)",
        ),
        (
            "invalid_int_true",
            "invalid_input: validate: Value does not match the declared input type (at /x: \
             expected integer, found boolean)",
        ),
    ] {
        let dir = cases_root().join(case);
        let expected: Json =
            serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
        let (spec, output) = run_case(&dir, &[]);
        assert_eq!(output.status.code(), Some(1), "{case}");
        // (Cases with an `ours` entry document a deliberate status difference.)
        if spec.get("ours").is_none() {
            assert_eq!(
                String::from_utf8_lossy(&output.stdout),
                expected["stdout"].as_str().unwrap(),
                "{case}"
            );
        }
        let stderr = String::from_utf8(output.stderr).unwrap();
        let want = format!("apizr execute: {want}");
        assert!(stderr.starts_with(&want), "{case}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{case}: {stderr}");
        // The report on stderr holds the same stage and detail, and nothing else is printed.
        let (_, reported) = run_case(&dir, &["--report"]);
        let report: Json = serde_json::from_slice(&reported.stderr).unwrap();
        let from_report = format!(
            "apizr execute: {}: {}: {}",
            report["status"].as_str().unwrap(),
            report["stage"].as_str().unwrap(),
            report["detail"].as_str().unwrap()
        );
        assert!(stderr.starts_with(&from_report), "{case}: {report}");
    }
}
