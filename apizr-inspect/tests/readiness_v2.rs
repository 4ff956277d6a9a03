//! Readiness v2 over fixtures (`tests/data/readiness_v2/<construct>.{safe,unsafe}.py`): every
//! fixture ends with `def probe(x: int) -> int`. A `safe` fixture's top level is proved under
//! v2 (no READY-004, `probe` can become an interface) while v1 refuses it; an `unsafe` one
//! keeps a READY-004 reason under v2, explained with the statement's line and column. The
//! snapshot records, per fixture, v1's and v2's READY-004 lines and v2's explanation notes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::path::Path;

use apizr_inspect::{InspectOptions, inspect_bytes};
use apizr_ir::{ReadinessPolicy, SourceKind};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/readiness_v2");

struct Verdict {
    ready: bool,
    r004_lines: Vec<u32>,
    notes: Vec<String>,
    policy: &'static str,
}

fn inspect(bytes: &[u8], policy: ReadinessPolicy) -> Verdict {
    let options = InspectOptions {
        explain: true,
        readiness: policy,
        ..InspectOptions::default()
    };
    let outcome = apizr_inspect::on_inspect_stack(|| {
        inspect_bytes(bytes, SourceKind::Python, "fixture", options)
    })
    .unwrap()
    .unwrap();
    let report = &outcome.inspection.readiness;
    let probe = report
        .assessments
        .iter()
        .find(|a| a.source.symbol == "probe")
        .expect("every fixture defines probe");
    let r004_lines = probe
        .dimensions
        .execution
        .reasons
        .iter()
        .filter(|r| r.code == "APIZR-READY-004")
        .map(|r| r.line)
        .collect();
    let explanation = outcome.explanation.unwrap();
    let notes = explanation
        .module_reasons
        .iter()
        .filter(|r| r.code == "APIZR-READY-004")
        .flat_map(|r| &r.culprits)
        .map(|c| {
            format!(
                "{}:{} {}",
                c.span.line,
                c.span.column,
                c.note.clone().unwrap_or_default()
            )
        })
        .collect();
    Verdict {
        ready: probe.can_generate_interface,
        r004_lines,
        notes,
        policy: report.policy_version,
    }
}

fn fixtures() -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(DIR)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p: std::path::PathBuf| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(Path::new(&p)).unwrap())
        })
        .collect()
}

#[test]
fn safe_fixtures_are_ready_under_v2_and_unsafe_ones_keep_an_explained_reason() {
    let mut summary = String::new();
    let mut failures = Vec::new();
    for (name, bytes) in fixtures() {
        let v1 = inspect(&bytes, ReadinessPolicy::V1);
        let v2 = inspect(&bytes, ReadinessPolicy::V2);
        assert_eq!(v1.policy, "apizr.readiness/v1");
        assert_eq!(v2.policy, "apizr.readiness/v2");
        let safe = name.contains(".safe.");
        if safe && (!v2.ready || !v2.r004_lines.is_empty()) {
            failures.push(format!(
                "{name}: expected ready under v2, got {:?}",
                v2.notes
            ));
        }
        if safe && v1.r004_lines.is_empty() {
            failures.push(format!(
                "{name}: v1 already accepts it; the fixture proves nothing"
            ));
        }
        if !safe && (v2.ready || v2.r004_lines.is_empty()) {
            failures.push(format!("{name}: expected a READY-004 reason under v2"));
        }
        // Every remaining reason names its statement with line and column.
        if !safe
            && !v2
                .notes
                .iter()
                .any(|n| n.contains("readiness v2 cannot prove"))
        {
            failures.push(format!("{name}: no v2 explanation in {:?}", v2.notes));
        }
        writeln!(
            summary,
            "{name}\n  v1 READY-004 lines: {:?}\n  v2 READY-004 lines: {:?}",
            v1.r004_lines, v2.r004_lines
        )
        .unwrap();
        for note in &v2.notes {
            writeln!(summary, "    {note}").unwrap();
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    insta::assert_snapshot!("readiness_v2_fixtures", summary);
}

#[test]
fn v1_stays_the_default_and_v2_has_its_own_digest() {
    let bytes = std::fs::read(Path::new(DIR).join("calls.safe.py")).unwrap();
    let run = |options: InspectOptions| {
        apizr_inspect::on_inspect_stack(|| inspect_bytes(&bytes, SourceKind::Python, "m", options))
            .unwrap()
            .unwrap()
            .inspection
    };
    let default = run(InspectOptions::default());
    let v1 = run(InspectOptions {
        readiness: ReadinessPolicy::V1,
        ..InspectOptions::default()
    });
    let v2 = run(InspectOptions {
        readiness: ReadinessPolicy::V2,
        ..InspectOptions::default()
    });
    assert_eq!(default.readiness_digest, v1.readiness_digest);
    assert_eq!(default.readiness.policy_version, "apizr.readiness/v1");
    assert_ne!(v1.readiness_digest, v2.readiness_digest);
    assert_eq!(
        v1.ir_digest, v2.ir_digest,
        "the IR does not depend on the readiness policy"
    );
}

/// The proof obligation for the fixtures: every module v2 calls safe runs its top level in
/// CPython (isolated, no site, warnings as errors) without raising.
#[test]
fn safe_fixtures_import_cleanly_in_cpython() {
    for (name, _) in fixtures().iter().filter(|(n, _)| n.contains(".safe.")) {
        let path = Path::new(DIR).join(name);
        let output = std::process::Command::new("python3")
            .args(["-I", "-S", "-W", "error"])
            .arg(&path)
            .output()
            .expect("python3 runs (CI installs it)");
        assert!(
            output.status.success(),
            "{name} failed at import: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// The near-misses of instantiation and `__slots__` at import (`instances_*.unsafe.py`,
/// `slots_*.unsafe.py`, which v2 leaves unproved) really fail in CPython: a call that does
/// not fit the fields or `__init__`, an `__init__` that converts, a store a property or
/// `__slots__` refuses, a builtin base whose `__new__` refuses the keyword, a shadowed `super`,
/// a `__set_name__` that raises; slots that conflict with a class variable, nonempty slots on
/// an `int` subclass, a slot that is not an identifier.
#[test]
fn instance_and_slots_near_misses_raise_in_cpython() {
    let near_misses: Vec<_> = fixtures()
        .into_iter()
        .filter(|(n, _)| {
            (n.starts_with("instances_") || n.starts_with("slots_")) && n.contains(".unsafe.")
        })
        .collect();
    assert!(near_misses.len() >= 11, "{}", near_misses.len());
    for (name, _) in near_misses {
        let output = std::process::Command::new("python3")
            .args(["-I", "-S", "-B", "-W", "error"])
            .arg(Path::new(DIR).join(&name))
            .output()
            .expect("python3 runs (CI installs it)");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success() && stderr.contains("Error"),
            "{name} imported cleanly: {stderr}"
        );
    }
}

/// A base named twice raises `TypeError` in CPython (`duplicate base class`), for local and
/// stdlib bases alike: v2 keeps READY-004 on the class statement, named with line and column.
#[test]
fn duplicate_bases_stay_unproved_and_raise_in_cpython() {
    for bases in ["A, A", "object, object", "Exception, Exception", "int, int"] {
        let source = format!(
            "class A:\n    pass\n\n\nclass C({bases}):\n    pass\n\n\ndef probe(x: int) -> int:\n    return x\n"
        );
        let v2 = inspect(source.as_bytes(), ReadinessPolicy::V2);
        assert!(!v2.ready, "{bases}: {:?}", v2.notes);
        assert_eq!(v2.r004_lines, vec![5], "{bases}: {:?}", v2.notes);
        assert!(
            v2.notes
                .iter()
                .any(|n| n.starts_with("5:") && n.contains("readiness v2 cannot prove")),
            "{bases}: {:?}",
            v2.notes
        );
        let output = std::process::Command::new("python3")
            .args(["-I", "-S", "-c", &source])
            .output()
            .expect("python3 runs (CI installs it)");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success() && stderr.contains("TypeError: duplicate base class"),
            "{bases}: {stderr}"
        );
    }
}
