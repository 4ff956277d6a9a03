//! Readiness explanations: for every input under `tests/fixtures/inspect/explain/`, the text report
//! (`apizr inspect FILE`) and the explanation document (`apizr inspect FILE --explain`) are
//! insta snapshots. Beyond the snapshots, each run checks what must hold for any input: the
//! envelope (`--format json`) is unchanged by explaining, the document names the readiness
//! digest it explains, every reason of every assessment is explained exactly once (module-level
//! reasons once per module), each with a culprit and a fix; and the corpus covers all 19 codes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "generate/support.rs"]
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;
use support::{TempDir, apizr, workspace_root};

fn corpus() -> PathBuf {
    workspace_root().join("tests/fixtures/inspect/explain")
}

fn inputs() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".py") || n.ends_with(".ipynb"))
        .collect();
    names.sort();
    names
}

fn run(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = apizr(dir, args);
    let code = out.status.code().unwrap_or(-1);
    (code, String::from_utf8(out.stdout).unwrap())
}

/// (line, code, parameter) of every reason in an assessment or explanation reason list.
type Key = (u64, String, Option<String>);

fn key(reason: &Value) -> Key {
    (
        reason["line"].as_u64().unwrap(),
        reason["code"].as_str().unwrap().to_string(),
        reason["parameter"].as_str().map(str::to_string),
    )
}

fn envelope_reasons(assessment: &Value) -> Vec<Key> {
    let mut out = Vec::new();
    for dimension in ["binding", "execution", "inputs", "outputs"] {
        for reason in assessment["dimensions"][dimension]["reasons"]
            .as_array()
            .unwrap()
        {
            out.push(key(reason));
        }
    }
    out.sort();
    out
}

#[test]
fn explanations_match_snapshots_and_the_report() {
    let dir = corpus();
    let mut covered = BTreeSet::new();
    for name in inputs() {
        let (text_code, text) = run(&dir, &["inspect", &name]);
        let (json_code, json) = run(&dir, &["inspect", &name, "--explain"]);
        let (envelope_code, envelope) = run(&dir, &["inspect", &name, "--format", "json"]);
        assert_eq!(text_code, envelope_code, "{name}: exit codes differ");
        assert_eq!(json_code, envelope_code, "{name}: exit codes differ");
        let doc: Value = serde_json::from_str(&json).unwrap();
        insta::assert_snapshot!(format!("{name}.txt"), text);
        // Pretty-printed for review; the canonical form is checked below.
        insta::assert_snapshot!(
            format!("{name}.json"),
            serde_json::to_string_pretty(&doc).unwrap()
        );
        let envelope: Value = serde_json::from_str(&envelope).unwrap();
        assert_eq!(doc["schema_version"], "apizr.explanation/v1");
        assert_eq!(
            doc["readiness_digest"], envelope["readiness_digest"],
            "{name}"
        );
        let canonical = apizr_ir::canonical_bytes(&doc).unwrap();
        assert_eq!(
            json.as_bytes(),
            canonical.as_slice(),
            "{name}: not canonical JSON"
        );

        let module: Vec<Key> = doc["module_reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(key)
            .collect();
        let explained: BTreeMap<&str, &Value> = doc["capabilities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["capability_id"].as_str().unwrap(), c))
            .collect();
        for assessment in envelope["readiness"]["assessments"].as_array().unwrap() {
            let id = assessment["capability_id"].as_str().unwrap();
            let capability = explained[id];
            assert_eq!(capability["state"], assessment["state"], "{name} {id}");
            let mut keys: Vec<Key> = capability["reasons"]
                .as_array()
                .unwrap()
                .iter()
                .map(key)
                .collect();
            if capability["module_reasons"] == true {
                keys.extend(module.iter().cloned());
            }
            let before = keys.len();
            keys.sort();
            keys.dedup();
            assert_eq!(
                before,
                keys.len(),
                "{name} {id}: a reason is explained twice"
            );
            assert_eq!(keys, envelope_reasons(assessment), "{name} {id}");
            covered.extend(keys.into_iter().map(|(_, code, _)| code));
        }
        let all_reasons = doc["module_reasons"].as_array().unwrap().iter().chain(
            doc["capabilities"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|c| c["reasons"].as_array().unwrap()),
        );
        for reason in all_reasons {
            let culprits = reason["culprits"].as_array().unwrap();
            assert!(
                !culprits.is_empty(),
                "{name}: {} has no culprit",
                reason["code"]
            );
            for culprit in culprits {
                assert!(culprit["span"]["line"].as_u64().unwrap() >= 1);
                assert!(!culprit["text"].as_str().unwrap().is_empty());
            }
            assert!(!reason["fix"].as_str().unwrap().is_empty());
        }
    }
    let all: BTreeSet<String> = (1..=19).map(|n| format!("APIZR-READY-{n:03}")).collect();
    let missing: Vec<&String> = all.difference(&covered).collect();
    assert!(
        missing.is_empty(),
        "codes without an explanation case: {missing:?}"
    );
}

#[test]
fn explaining_never_changes_the_hashed_bytes() {
    let dir = corpus();
    for name in inputs() {
        let (_, ir) = run(&dir, &["inspect", &name, "--ir"]);
        let (_, envelope) = run(&dir, &["inspect", &name, "--format", "json"]);
        let doc: Value = serde_json::from_str(&envelope).unwrap();
        let digest = sha256_hex(ir.as_bytes());
        assert_eq!(doc["ir_digest"]["value"], digest.as_str(), "{name}");
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    apizr_ir::Digest::sha256(bytes).value
}

#[test]
fn notebook_reasons_name_the_cell() {
    let (_, json) = run(&corpus(), &["inspect", "notebook.ipynb", "--explain"]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    let culprit = &doc["module_reasons"][0]["culprits"][0];
    assert_eq!(culprit["text"], "pandas");
    assert_eq!(
        culprit["cell"],
        serde_json::json!({"execution_count": 3, "line": 1, "number": 2})
    );
}

#[test]
fn explain_conflicts_with_ir_and_format() {
    let dir = corpus();
    for extra in [["--ir", ""], ["--format", "json"]] {
        let mut args = vec!["inspect", "ready.py", "--explain"];
        args.extend(extra.iter().filter(|a| !a.is_empty()));
        let (code, _) = run(&dir, &args);
        assert_eq!(code, 2, "{args:?}");
    }
}

#[test]
fn a_package_init_alone_keeps_the_reference_name_and_says_the_package_name() {
    let tmp = TempDir::new("explain-init");
    let package = tmp.path().join("shapes");
    std::fs::create_dir(&package).unwrap();
    std::fs::write(
        package.join("__init__.py"),
        "def area(w: float, h: float) -> float:\n    return w * h\n",
    )
    .unwrap();
    let out = apizr(
        tmp.path(),
        &["inspect", "shapes/__init__.py", "--format", "json"],
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The module name is hashed: it stays the reference's.
    assert_eq!(doc["capability_ir"]["source"]["module"], "__init__");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--module-name shapes"), "{stderr}");
    // An explicit name wins and needs no note.
    let named = apizr(
        tmp.path(),
        &[
            "inspect",
            "shapes/__init__.py",
            "--format",
            "json",
            "--module-name",
            "shapes",
        ],
    );
    let doc: Value = serde_json::from_slice(&named.stdout).unwrap();
    assert_eq!(doc["capability_ir"]["source"]["module"], "shapes");
    assert!(named.stderr.is_empty());
    // Inspecting the package directory gives the root `__init__.py` the package's name.
    let dir = apizr(tmp.path(), &["inspect", "shapes", "--format", "json"]);
    let doc: Value = serde_json::from_slice(&dir.stdout).unwrap();
    assert_eq!(doc["modules"][0]["module"], "shapes");
}

#[test]
fn directories_name_packages_report_shared_names_and_explain_counts() {
    let tmp = TempDir::new("explain-dir");
    let root = tmp.path().join("tools");
    std::fs::create_dir_all(root.join("fmt")).unwrap();
    let ok = "def f(x: int) -> int:\n    return x\n";
    std::fs::write(root.join("__init__.py"), "").unwrap();
    std::fs::write(root.join("fmt.py"), ok).unwrap();
    std::fs::write(
        root.join("fmt/__init__.py"),
        "import numpy\n\n".to_string() + ok,
    )
    .unwrap();

    let out = apizr(tmp.path(), &["inspect", "tools", "--format", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let modules: Vec<&str> = doc["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["module"].as_str().unwrap())
        .collect();
    assert_eq!(modules, ["tools", "tools.fmt", "tools.fmt"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("module name `tools.fmt` is also the name of fmt/__init__.py"),
        "{stderr}"
    );

    let text = apizr(tmp.path(), &["inspect", "tools"]);
    let table = String::from_utf8_lossy(&text.stdout);
    assert!(
        table.contains("caps: functions in the Capability IR"),
        "{table}"
    );
    assert!(table.contains("APIZR-READY-015"), "{table}");

    let explained = apizr(tmp.path(), &["inspect", "tools", "--explain"]);
    let doc: Value = serde_json::from_slice(&explained.stdout).unwrap();
    assert_eq!(doc["schema_version"], "apizr.project-explanation/v1");
    let fmt = doc["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["path"] == "fmt/__init__.py")
        .unwrap();
    assert_eq!(
        fmt["explanation"]["module_reasons"][0]["culprits"][0]["text"],
        "numpy"
    );
}
