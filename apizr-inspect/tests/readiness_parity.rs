//! Readiness parity against the reference oracle.
//!
//! Every `tests/fixtures/inspect/readiness/*.py` (module = file stem, or `--module-name X` from a
//! sibling `*.args`) has a committed `*.json`, generated with
//! `/work/oracle-venv/bin/apizr inspect FILE --format json [ARGS] > FILE.json`
//! (outerspace-apizr 0.4.6, CPython 3.11.7).
//!
//! * `readiness_parity_with_oracle_ir` — the readiness rules alone: the oracle's own Capability
//!   IR (rebuilt from the JSON) and IR digest are fed to `readiness::assess`, and the canonical
//!   readiness bytes must equal the oracle's byte for byte. Independent of discovery.
//! * `envelope_parity` — end to end through `inspect_bytes`: the canonical readiness bytes and
//!   the whole `--format json` envelope must equal the oracle's.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use apizr_inspect::{InspectOptions, ParsedModule, inspect_bytes, readiness};
use apizr_ir::*;
use serde_json::Value as Json;
use similar::TextDiff;

/// The committed corpus, or `APIZR_READINESS_FIXTURES` (a directory of `.py` + oracle `.json`
/// files) for exploratory differential runs.
fn fixture_dir() -> PathBuf {
    match std::env::var_os("APIZR_READINESS_FIXTURES") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/inspect/readiness"),
    }
}

fn fixtures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    files
}

fn module_name(path: &Path) -> String {
    let args = std::fs::read_to_string(path.with_extension("args")).unwrap_or_default();
    let mut words = args.split_whitespace();
    while let Some(word) = words.next() {
        if word == "--module-name" {
            return words.next().unwrap().to_string();
        }
    }
    path.file_stem().unwrap().to_str().unwrap().to_string()
}

/// The canonical bytes of the envelope's `readiness` member (keys are sorted, so it is the text
/// between `"readiness":` and `,"readiness_digest":`).
fn readiness_member(envelope: &str) -> String {
    let start = envelope.find("\"readiness\":").unwrap() + "\"readiness\":".len();
    let end = envelope.rfind(",\"readiness_digest\":").unwrap();
    format!("{}\n", &envelope[start..end])
}

fn s(v: &Json) -> String {
    v.as_str().unwrap().to_string()
}

fn digest(v: &Json) -> Digest {
    Digest {
        algorithm: "sha256",
        value: s(&v["value"]),
    }
}

fn evidence(v: &Json) -> Evidence {
    match v.as_str().unwrap() {
        "declared" => Evidence::Declared,
        "observed" => Evidence::Observed,
        "inferred" => Evidence::Inferred,
        _ => Evidence::Unknown,
    }
}

fn span(v: &Json) -> Span {
    Span {
        module: s(&v["module"]),
        symbol: s(&v["symbol"]),
        line: v["line"].as_u64().unwrap() as u32,
        end_line: v["end_line"].as_u64().unwrap() as u32,
    }
}

fn declared_type(v: &Json) -> Option<DeclaredType> {
    if v.is_null() {
        return None;
    }
    let form = match v["form"].as_str().unwrap() {
        "name" => TypeForm::Name,
        "attribute" => TypeForm::Attribute,
        "subscript" => TypeForm::Subscript,
        "union" => TypeForm::Union,
        "forward_reference" => TypeForm::ForwardReference,
        "literal" => TypeForm::Literal,
        _ => TypeForm::Unknown,
    };
    Some(DeclaredType {
        declared: s(&v["declared"]),
        form,
        evidence: evidence(&v["evidence"]),
    })
}

fn expression(v: &Json) -> Expression {
    Expression {
        declared: s(&v["declared"]),
        evidence: evidence(&v["evidence"]),
    }
}

fn signature(v: &Json) -> Signature {
    let parameters = v["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| Parameter {
            name: s(&p["name"]),
            kind: match p["kind"].as_str().unwrap() {
                "positional_only" => ParameterKind::PositionalOnly,
                "keyword_only" => ParameterKind::KeywordOnly,
                _ => ParameterKind::PositionalOrKeyword,
            },
            required: p["required"].as_bool().unwrap(),
            annotation: declared_type(&p["annotation"]),
            default: (!p["default"].is_null()).then(|| expression(&p["default"])),
            evidence: evidence(&p["evidence"]),
        })
        .collect();
    Signature {
        parameters,
        returns: Returns {
            annotation: declared_type(&v["returns"]["annotation"]),
            enforcement: "none",
        },
    }
}

/// Rebuild the oracle's Capability IR from its JSON.
fn ir_from_json(v: &Json) -> CapabilityIr {
    let source = &v["source"];
    let record = SourceRecord {
        kind: if source["kind"] == "notebook" {
            SourceKind::Notebook
        } else {
            SourceKind::Python
        },
        module: s(&source["module"]),
        digest: digest(&source["digest"]),
        transformed_digest: (!source["transformed_digest"].is_null())
            .then(|| digest(&source["transformed_digest"])),
    };
    let capabilities = v["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Capability {
            id: s(&c["id"]),
            name: s(&c["name"]),
            qualified_name: s(&c["qualified_name"]),
            kind: CapabilityKind::Function,
            source: span(&c["source"]),
            docstring: c["docstring"].as_str().map(str::to_string),
            execution: match c["execution"].as_str().unwrap() {
                "sync" => ExecutionKind::Sync,
                "async" => ExecutionKind::Async,
                "generator" => ExecutionKind::Generator,
                _ => ExecutionKind::AsyncGenerator,
            },
            signature: signature(&c["signature"]),
            decorators: c["decorators"]
                .as_array()
                .unwrap()
                .iter()
                .map(expression)
                .collect(),
            overloads: c["overloads"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| Overload {
                    evidence: evidence(&o["evidence"]),
                    signature: signature(&o["signature"]),
                    source: span(&o["source"]),
                })
                .collect(),
            availability: if c["availability"]["value"] == "unconditional" {
                Availability::UNCONDITIONAL
            } else {
                Availability::UNKNOWN
            },
            effects: Effects::UNKNOWN,
            evidence: evidence(&c["evidence"]),
        })
        .collect();
    let kinds = DiagnosticKind::ALL;
    let diagnostics = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let kind = kinds
                .iter()
                .find(|k| k.code() == d["code"] && k.message() == d["message"])
                .unwrap();
            Diagnostic::new(*kind, span(&d["source"]))
        })
        .collect();
    CapabilityIr {
        schema_version: CAPABILITY_SCHEMA,
        source: record,
        capabilities,
        diagnostics,
    }
}

fn diff(name: &str, expected: &str, actual: &str) -> String {
    let pretty =
        |t: &str| serde_json::to_string_pretty(&serde_json::from_str::<Json>(t).unwrap()).unwrap();
    let (e, a) = (pretty(expected), pretty(actual));
    let text = TextDiff::from_lines(&e, &a)
        .unified_diff()
        .header("oracle", "ours")
        .to_string();
    format!("--- {name}\n{text}")
}

fn report(label: &str, total: usize, failures: &[String]) {
    for failure in failures {
        eprintln!("{failure}");
    }
    eprintln!(
        "{label}: {}/{} fixtures match the oracle",
        total - failures.len(),
        total
    );
}

#[test]
fn fixture_corpus_is_large_enough() {
    let files = fixtures();
    assert!(files.len() >= 70, "only {} fixtures", files.len());
    for path in files {
        assert!(
            path.with_extension("json").exists(),
            "{path:?} has no oracle output"
        );
    }
}

#[test]
fn readiness_parity_with_oracle_ir() {
    let files = fixtures();
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let envelope = std::fs::read_to_string(path.with_extension("json")).unwrap();
        let json: Json = serde_json::from_str(&envelope).unwrap();
        let ir = ir_from_json(&json["capability_ir"]);
        let bytes = std::fs::read(path).unwrap();
        let text = apizr_inspect::decode::decode_python(&bytes).unwrap();
        let parsed = ParsedModule::parse(text, module_name(path)).unwrap();
        let report = readiness::assess(&parsed, &ir, digest(&json["ir_digest"]));
        let ours = String::from_utf8(canonical_bytes(&report).unwrap()).unwrap();
        let expected = readiness_member(&envelope);
        if ours != expected {
            failures.push(diff(&name, &expected, &ours));
        }
    }
    report("readiness (oracle IR)", files.len(), &failures);
    assert!(
        failures.is_empty(),
        "{} readiness mismatches",
        failures.len()
    );
}

#[test]
fn envelope_parity() {
    let files = fixtures();
    let mut failures = Vec::new();
    let mut readiness_ok = 0;
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let envelope = std::fs::read_to_string(path.with_extension("json")).unwrap();
        let bytes = std::fs::read(path).unwrap();
        let outcome = match inspect_bytes(
            &bytes,
            SourceKind::Python,
            &module_name(path),
            InspectOptions::default(),
        ) {
            Ok(outcome) => outcome,
            Err(error) => {
                failures.push(format!("--- {name}: inspect failed: {error}"));
                continue;
            }
        };
        let readiness =
            String::from_utf8(canonical_bytes(&outcome.inspection.readiness).unwrap()).unwrap();
        if readiness == readiness_member(&envelope) {
            readiness_ok += 1;
        }
        let ours = String::from_utf8(canonical_bytes(&outcome.inspection).unwrap()).unwrap();
        if ours != envelope {
            failures.push(diff(&name, &envelope, &ours));
        }
    }
    report("envelope (end to end)", files.len(), &failures);
    eprintln!(
        "readiness bytes (end to end): {readiness_ok}/{} match",
        files.len()
    );
    assert!(
        failures.is_empty(),
        "{} envelope mismatches",
        failures.len()
    );
}
