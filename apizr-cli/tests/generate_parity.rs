//! Parity of `apizr generate` with the reference (outerspace-apizr 0.4.6) over the inspect
//! corpus: goldens in `tests/fixtures/generate/parity/**` recorded by
//! `scripts/refresh-generate-goldens`.
//!
//! For each input and each of rest/mcp × direct/v1 (default policy): the exit code must
//! match; on success `openapi.json` / `mcp-tools.json` must be byte-identical, the transport
//! manifest and `execution/bundle.json` must be equal once `artifacts` is removed (the digests
//! cover different runtime files by design), every policy/plan file must have the reference's
//! sha256, and every reference file that is not part of its Python runtime must exist in ours.
//! All inputs are checked before one summary failure. `APIZR_GENERATE_ONLY=<substring>`
//! restricts the run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "generate/support.rs"]
mod support;

use std::path::Path;

use serde_json::Value;

use support::{TempDir, apizr, workspace_root};

/// The reference's own Python runtime files, which a Rust project replaces.
fn reference_runtime_file(path: &str) -> bool {
    matches!(
        path,
        "app.py" | "server.py" | "requirements.txt" | "execution/worker.py"
    ) || path.starts_with("apizr_")
}

fn without_artifacts(text: &[u8]) -> Value {
    let mut value: Value = serde_json::from_slice(text).unwrap();
    value.as_object_mut().unwrap().remove("artifacts");
    value
}

fn check_mode(source: &Path, args: &[String], mode: &str, golden: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let (transport, governed) = match mode {
        "rest" => ("rest", false),
        "mcp" => ("mcp", false),
        "rest-v1" => ("rest", true),
        _ => ("mcp", true),
    };
    let tmp = TempDir::new("parity");
    let policy = tmp.path().join("policy.json");
    std::fs::write(&policy, "{}\n").unwrap();
    let out_dir = tmp.path().join("out");
    let mut argv: Vec<String> = vec![
        "generate".into(),
        transport.into(),
        source.file_name().unwrap().to_string_lossy().into_owned(),
        "--output-dir".into(),
        out_dir.to_string_lossy().into_owned(),
        // The lock file is not part of the reference's output and costs a cargo run.
        "--no-lockfile".into(),
    ];
    argv.extend(args.iter().cloned());
    if governed {
        argv.push("--execution-policy".into());
        argv.push(policy.to_string_lossy().into_owned());
    }
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let output = apizr(source.parent().unwrap(), &argv);
    let expected_exit = golden["exit"].as_i64().unwrap();
    let exit = i64::from(output.status.code().unwrap_or(-1));
    if exit != expected_exit {
        problems.push(format!(
            "{mode}: exit {exit}, expected {expected_exit} ({})",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
        return problems;
    }
    if exit != 0 {
        if output.stderr.is_empty() {
            problems.push(format!("{mode}: failed without a message"));
        }
        if out_dir.exists() {
            problems.push(format!("{mode}: failed but wrote {}", out_dir.display()));
        }
        return problems;
    }
    let interface = if transport == "rest" {
        "openapi.json"
    } else {
        "mcp-tools.json"
    };
    let ours = std::fs::read(out_dir.join(interface)).unwrap_or_default();
    if ours != golden["interface"].as_str().unwrap().as_bytes() {
        problems.push(format!("{mode}: {interface} differs"));
    }
    let manifest = std::fs::read(out_dir.join(format!("apizr-{transport}.json"))).unwrap();
    let expected: Value = serde_json::from_str(golden["manifest"].as_str().unwrap()).unwrap();
    if without_artifacts(&manifest) != expected {
        problems.push(format!("{mode}: manifest differs"));
    }
    if governed {
        let bundle = std::fs::read(out_dir.join("execution/bundle.json")).unwrap();
        let expected: Value = serde_json::from_str(golden["bundle"].as_str().unwrap()).unwrap();
        if without_artifacts(&bundle) != expected {
            problems.push(format!("{mode}: execution/bundle.json differs"));
        }
        for (path, digest) in golden["plans"].as_object().unwrap() {
            let bytes = std::fs::read(out_dir.join(path)).unwrap_or_default();
            let ours = apizr_ir::Digest::sha256(&bytes).value;
            if ours != digest.as_str().unwrap() {
                problems.push(format!("{mode}: {path} differs"));
            }
        }
    }
    for file in golden["files"].as_array().unwrap() {
        let file = file.as_str().unwrap();
        if !reference_runtime_file(file) && !out_dir.join(file).is_file() {
            problems.push(format!("{mode}: missing {file}"));
        }
    }
    let stdout: Value = serde_json::from_slice(&output.stdout).unwrap();
    let listed: Vec<&str> = stdout["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    let on_disk: Vec<String> = support::read_tree(&out_dir)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    if listed != on_disk {
        problems.push(format!(
            "{mode}: stdout files {listed:?} != on disk {on_disk:?}"
        ));
    }
    problems
}

#[test]
fn generate_matches_reference() {
    let root = workspace_root();
    let goldens = root.join("tests/fixtures/generate/parity");
    let corpus = root.join("tests/fixtures/inspect");
    let only = std::env::var("APIZR_GENERATE_ONLY").ok();
    let mut files = Vec::new();
    let mut stack = vec![goldens.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 100, "only {} goldens", files.len());
    let (mut checked, mut passed, mut successes) = (0, 0, 0);
    let mut report = String::new();
    for golden_path in files {
        let rel = golden_path
            .strip_prefix(&goldens)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if only.as_deref().is_some_and(|o| !rel.contains(o)) {
            continue;
        }
        let source_rel = rel.strip_suffix(".json").unwrap();
        let source = match source_rel.strip_prefix("sources/") {
            Some(name) => root.join("tests/fixtures/generate/sources").join(name),
            None => corpus.join(source_rel),
        };
        let args_file = source.with_extension("args");
        let args: Vec<String> = match std::fs::read_to_string(&args_file) {
            Ok(text) => shell_words(&text),
            Err(_) => Vec::new(),
        };
        let work = TempDir::new("src");
        let copy = work.path().join(source.file_name().unwrap());
        std::fs::copy(&source, &copy).unwrap();
        let golden: Value = serde_json::from_slice(&std::fs::read(&golden_path).unwrap()).unwrap();
        for (mode, expected) in golden.as_object().unwrap() {
            checked += 1;
            if expected["exit"] == 0 {
                successes += 1;
            }
            let problems = check_mode(&copy, &args, mode, expected);
            if problems.is_empty() {
                passed += 1;
            } else {
                report.push_str(&format!("{rel}:\n  {}\n", problems.join("\n  ")));
            }
        }
    }
    eprintln!(
        "generate parity: {passed}/{checked} runs match ({successes} successful generations)"
    );
    assert!(report.is_empty(), "{passed}/{checked} match\n{report}");
}

/// The corpus `.args` files use simple shell quoting (`''`, `'a b'`, bare words).
fn shell_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut quote = false;
    for c in text.trim().chars() {
        match c {
            '\'' => {
                quote = !quote;
                in_word = true;
            }
            c if c.is_whitespace() && !quote => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            c => {
                current.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(current);
    }
    words
}
