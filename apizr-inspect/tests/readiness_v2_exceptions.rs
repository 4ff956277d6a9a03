//! Readiness v2 and classes with several builtin exception bases: for every pair of a sample
//! of builtin exceptions (one per solid base, their parents and aliases), `class E(A, B)` is
//! proved only when real CPython builds it (instance layouts and MRO), and it is proved for
//! the pairs that only share `BaseException`'s layout.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod v2_support;

use apizr_inspect::{InspectOptions, inspect_bytes};
use apizr_ir::{ReadinessPolicy, SourceKind};

const SAMPLE: &[&str] = &[
    "BaseException",
    "Exception",
    "KeyboardInterrupt",
    "SystemExit",
    "ValueError",
    "KeyError",
    "UnicodeError",
    "UnicodeDecodeError",
    "UserWarning",
    "OSError",
    "IOError",
    "ConnectionError",
    "BrokenPipeError",
    "TimeoutError",
    "ImportError",
    "ModuleNotFoundError",
    "SyntaxError",
    "TabError",
    "StopIteration",
    "NameError",
    "AttributeError",
    "EncodingWarning",
    "BaseExceptionGroup",
    "ExceptionGroup",
    "int",
];

fn ready(source: &str) -> bool {
    let options = InspectOptions {
        readiness: ReadinessPolicy::V2,
        ..InspectOptions::default()
    };
    let outcome = apizr_inspect::on_inspect_stack(|| {
        inspect_bytes(source.as_bytes(), SourceKind::Python, "fixture", options)
    })
    .unwrap()
    .unwrap();
    outcome
        .inspection
        .readiness
        .assessments
        .iter()
        .find(|a| a.source.symbol == "probe")
        .unwrap()
        .can_generate_interface
}

#[test]
fn pairs_of_exception_bases_are_proved_only_when_cpython_builds_the_class() {
    let pairs: Vec<(&str, &str)> = SAMPLE
        .iter()
        .flat_map(|a| SAMPLE.iter().map(move |b| (*a, *b)))
        .collect();
    let sources: Vec<String> = pairs
        .iter()
        .map(|(a, b)| format!("class E({a}, {b}):\n    pass\n"))
        .collect();
    let driver = r#"
import json, sys
for source in json.loads(sys.stdin.read()):
    try:
        exec(compile(source, "fixture", "exec"), {"__name__": "fixture"})
        print("ok")
    except TypeError:
        print("TypeError")
"#;
    let output =
        v2_support::python_stdin(driver, serde_json::to_string(&sources).unwrap().as_bytes());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let builds: Vec<bool> = stdout.lines().map(|l| l == "ok").collect();
    assert_eq!(
        builds.len(),
        sources.len(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let (mut unsound, mut proved) = (Vec::new(), Vec::new());
    for ((source, pair), builds) in sources.iter().zip(&pairs).zip(&builds) {
        let module = format!("{source}\n\ndef probe(x: int) -> int:\n    return x\n");
        if ready(&module) {
            proved.push(*pair);
            if !builds {
                unsound.push(*pair);
            }
        }
    }
    assert!(
        unsound.is_empty(),
        "proved but TypeError in CPython: {unsound:?}"
    );
    // Layouts that combine: two sharing `BaseException`'s, one of `OSError`'s with one of
    // `BaseException`'s, two spellings of the same solid base.
    for wanted in [
        ("ValueError", "KeyError"),
        ("ValueError", "UserWarning"),
        ("ConnectionError", "ValueError"),
        ("BrokenPipeError", "TimeoutError"),
        ("ModuleNotFoundError", "UnicodeError"),
    ] {
        assert!(proved.contains(&wanted), "not proved: {wanted:?}");
    }
}
