//! Parity of governed v2 (OCI) generation with the reference (outerspace-apizr 0.4.6): goldens
//! in `tests/fixtures/generate/parity-v2/` recorded by `scripts/refresh-generate-v2-goldens`
//! for every generate source × {rest, mcp} × {default v2 policy on linux/amd64, a strict one
//! (subprocess deny, small resources, an allowed variable) on linux/arm64}.
//!
//! Checked: the exit code, the summary's `execution` block, `openapi.json` / `mcp-tools.json`
//! bytes, the transport manifest and `execution/bundle.json` without `artifacts` (the digests
//! cover different runtime files by design), the sha256 of `execution/policy.json` and of every
//! ContainerPlan, and that every reference file outside its Python runtime exists in ours.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "generate/support.rs"]
mod support;

use std::path::Path;

use serde_json::Value;

use support::{TempDir, apizr, workspace_root};

fn reference_runtime_file(path: &str) -> bool {
    matches!(
        path,
        "app.py" | "server.py" | "requirements.txt" | "execution/worker.py"
    ) || path.starts_with("apizr_")
}

fn sha(path: &Path) -> String {
    apizr_runtime::ir::Digest::sha256(&std::fs::read(path).unwrap()).value
}

fn without_artifacts(path: &Path) -> Value {
    let mut value: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    value.as_object_mut().unwrap().remove("artifacts");
    value
}

fn check(golden_path: &Path) -> Vec<String> {
    let golden: Value = serde_json::from_slice(&std::fs::read(golden_path).unwrap()).unwrap();
    let name = golden_path
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    // `<source>-<transport>-<policy>.json`
    let mut parts = name.trim_end_matches(".json").rsplitn(3, '-');
    let (_policy, transport, source) = (
        parts.next().unwrap(),
        parts.next().unwrap().to_string(),
        parts.next().unwrap().to_string(),
    );
    let tmp = TempDir::new("parity-v2");
    let argv: Vec<String> = golden["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    std::fs::write(
        tmp.path().join(&argv[1]),
        serde_json::to_vec(&golden["policy"]).unwrap(),
    )
    .unwrap();
    let src = workspace_root()
        .join("tests/fixtures/generate/sources")
        .join(&source);
    let mut args = vec!["generate", transport.as_str(), src.to_str().unwrap()];
    // The lock file is not part of the reference's output and costs a cargo run.
    args.extend(["--output-dir", "out", "--no-lockfile"]);
    args.extend(argv.iter().map(String::as_str));
    let out = apizr(tmp.path(), &args);
    let mut problems = Vec::new();
    let mut expect = |what: &str, ok: bool| {
        if !ok {
            problems.push(format!("{name}: {what}"));
        }
    };
    let code = i64::from(out.status.code().unwrap_or(-1));
    expect("exit code", Some(code) == golden["exit"].as_i64());
    if code != 0 {
        return problems;
    }
    let dir = tmp.path().join("out");
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    expect(
        "execution block",
        summary["execution"] == golden["execution"],
    );
    let interface = if transport == "rest" {
        "openapi.json"
    } else {
        "mcp-tools.json"
    };
    expect(
        interface,
        golden["interface"].as_str() == Some(sha(&dir.join(interface)).as_str()),
    );
    let manifest = without_artifacts(&dir.join(format!("apizr-{transport}.json")));
    let want: Value = serde_json::from_str(golden["manifest"].as_str().unwrap()).unwrap();
    expect("manifest", manifest == want);
    let bundle = without_artifacts(&dir.join("execution/bundle.json"));
    let want: Value = serde_json::from_str(golden["bundle"].as_str().unwrap()).unwrap();
    expect("execution/bundle.json", bundle == want);
    for (path, digest) in golden["plans"].as_object().unwrap() {
        let file = dir.join(path);
        expect(
            path,
            file.is_file() && digest.as_str() == Some(sha(&file).as_str()),
        );
    }
    for file in golden["files"].as_array().unwrap() {
        let file = file.as_str().unwrap();
        if !reference_runtime_file(file) {
            expect(&format!("missing {file}"), dir.join(file).is_file());
        }
    }
    problems
}

#[test]
fn v2_generation_matches_the_reference() {
    let dir = workspace_root().join("tests/fixtures/generate/parity-v2");
    let mut goldens: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    goldens.sort();
    assert!(goldens.len() >= 16, "goldens missing in {}", dir.display());
    let problems: Vec<String> = goldens.iter().flat_map(|g| check(g)).collect();
    assert!(
        problems.is_empty(),
        "{} of {} v2 goldens differ:\n{}",
        problems.len(),
        goldens.len(),
        problems.join("\n")
    );
}
