//! Every `openapi.json` we generate is a valid OpenAPI 3.1 document according to
//! `openapi-spec-validator` (PyPI). Inputs: the generate sources plus every corpus input the
//! reference generates a REST project for (from the parity goldens).
//!
//! The validator's Python comes from `OPENAPI_VALIDATOR_PYTHON` or
//! `target/openapi-venv/bin/python` (created by `.ci/run`); without it the test is skipped,
//! except under CI where it is required.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "generate/support.rs"]
mod support;

use std::path::PathBuf;
use std::process::Command;

use support::{TempDir, apizr, workspace_root};

const VALIDATE: &str = r#"
import sys
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename
bad = 0
for path in sys.argv[1:]:
    spec, _ = read_from_filename(path)
    try:
        validate(spec)
    except Exception as error:
        bad += 1
        print(f"{path}: {error}")
print(f"{len(sys.argv) - 1 - bad}/{len(sys.argv) - 1} valid")
sys.exit(1 if bad else 0)
"#;

fn validator_python() -> Option<PathBuf> {
    apizr_test_support::openapi_validator_python()
}

/// Inputs the reference turns into a REST project.
fn inputs() -> Vec<(PathBuf, Vec<String>)> {
    let root = workspace_root();
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root.join("tests/fixtures/generate/sources")).unwrap() {
        out.push((entry.unwrap().path(), Vec::new()));
    }
    let goldens = root.join("tests/fixtures/generate/parity");
    let mut stack = vec![goldens.clone()];
    let mut files = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().unwrap() != "sources" {
                    stack.push(path);
                }
            } else {
                files.push(path);
            }
        }
    }
    {
        for golden in files {
            let value: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&golden).unwrap()).unwrap();
            if value["rest"]["exit"] != 0 {
                continue;
            }
            let rel = golden
                .strip_prefix(&goldens)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let source = root
                .join("tests/fixtures/inspect")
                .join(rel.strip_suffix(".json").unwrap());
            let args = std::fs::read_to_string(source.with_extension("args"))
                .map(|a| {
                    a.split_whitespace()
                        .map(|w| w.trim_matches('\'').to_string())
                        .collect()
                })
                .unwrap_or_default();
            out.push((source, args));
        }
    }
    out.sort();
    out
}

/// Readiness v2 input types (`Sequence[T]`, `bytes`, `bytearray`) in a generated REST and MCP
/// project: `openapi.json`'s request body and `mcp-tools.json`'s input schema are the same
/// exact schema (`contentEncoding: base64` strings, arrays); the OpenAPI document is validated
/// with the others.
fn readiness_v2_types(tmp: &TempDir) -> PathBuf {
    let source = workspace_root().join("apizr-runtime/tests/input_types_data/arrays.py");
    let source = source.to_string_lossy().into_owned();
    for (kind, dir) in [("rest", "v2rest"), ("mcp", "v2mcp")] {
        let argv = [
            "generate",
            kind,
            &source,
            "--output-dir",
            dir,
            "--no-lockfile",
            "--readiness",
            "v2",
        ];
        let out = apizr(tmp.path(), &argv);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let read = |path: &str| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(tmp.path().join(path)).unwrap()).unwrap()
    };
    let openapi = read("v2rest/openapi.json");
    let tools = read("v2mcp/mcp-tools.json");
    let request = &openapi["paths"]["/capabilities/blobs"]["post"]["requestBody"]["content"]["application/json"]
        ["schema"];
    let tool = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "blobs")
        .unwrap();
    assert_eq!(request, &tool["inputSchema"]);
    let b64 = serde_json::json!({"contentEncoding": "base64", "type": "string"});
    assert_eq!(request["properties"]["data"], b64);
    assert_eq!(
        request["properties"]["parts"],
        serde_json::json!({"items": b64, "type": "array"})
    );
    tmp.path().join("v2rest/openapi.json")
}

#[test]
fn generated_openapi_documents_are_valid() {
    let Some(python) = validator_python() else {
        return;
    };
    let tmp = TempDir::new("openapi");
    let mut documents = Vec::new();
    for (i, (source, args)) in inputs().into_iter().enumerate() {
        let out_dir = tmp.path().join(format!("p{i}"));
        let mut argv = vec![
            "generate".to_string(),
            "rest".into(),
            source.to_string_lossy().into_owned(),
            "--output-dir".into(),
            out_dir.to_string_lossy().into_owned(),
            "--no-lockfile".into(),
        ];
        argv.extend(args);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let out = apizr(tmp.path(), &argv);
        assert!(
            out.status.success(),
            "{argv:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        documents.push(out_dir.join("openapi.json"));
    }
    assert!(documents.len() >= 40, "only {} documents", documents.len());
    documents.push(readiness_v2_types(&tmp));
    let out = Command::new(python)
        .arg("-c")
        .arg(VALIDATE)
        .args(&documents)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    eprintln!("{report}");
    assert!(
        out.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
