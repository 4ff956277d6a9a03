//! Readiness v2 proves a private copy of a standard-library module (Markdown's `htmlparser`:
//! `find_spec`, `module_from_spec`, `spec.loader.exec_module`, stores into the copy, the copy
//! registered in `sys.modules` under a fresh name, a class based on the copy's class). Each
//! near miss stays unproved at its line and column, and raises or has its effect in CPython —
//! each snippet in a fresh interpreter, since they change `sys.modules` and a stdlib module.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod v2_support;

use apizr_ir::ReadinessPolicy;

const HEAD: &str = "import importlib.util\nimport re\nimport sys\nspec = importlib.util.find_spec('html.parser')\nhtmlparser = importlib.util.module_from_spec(spec)\n";
const EXEC: &str = "spec.loader.exec_module(htmlparser)\n";
const TAIL: &str = "\n\ndef probe(x: int) -> int:\n    return x\n";

const SAFE: &str = "sys.modules['fixture_htmlparser'] = htmlparser\nhtmlparser.piclose = re.compile(r'\\?>')\nhtmlparser.incomplete = htmlparser.entityref\nclass Extractor(htmlparser.HTMLParser):\n    def close(self):\n        return 1\n";
/// The safe fixture's effects stay on the copy: the real module is unchanged.
const SAFE_EFFECT: &str = "sys.modules['fixture_htmlparser'] is ns['htmlparser'] and __import__('html.parser').parser.piclose.pattern == '>' and ns['htmlparser'].piclose.pattern == '\\\\?>' and issubclass(ns['Extractor'], ns['htmlparser'].HTMLParser)";

enum Outcome {
    Raises(&'static str),
    Effect(&'static str),
}
use Outcome::{Effect, Raises};

/// (the statements after `HEAD`, the culprit's text, what CPython does).
const NEAR_MISSES: &[(&str, &str, Outcome)] = &[
    // Read before the module ran: it binds nothing yet.
    (
        "x = htmlparser.entityref\nspec.loader.exec_module(htmlparser)",
        "htmlparser.entityref",
        Raises("AttributeError"),
    ),
    // A store into the real module changes what every importer of `html.parser` gets.
    (
        "spec.loader.exec_module(htmlparser)\nimport html.parser\nhtml.parser.piclose = re.compile('x')",
        "html.parser.piclose",
        Effect("__import__('html.parser').parser.piclose.pattern == 'x'"),
    ),
    // A dunder of the module object: `__dict__` is read-only.
    (
        "spec.loader.exec_module(htmlparser)\nhtmlparser.__dict__ = {}",
        "htmlparser.__dict__",
        Raises("AttributeError"),
    ),
    // A standard-library name in `sys.modules`: later imports of `json` get the copy.
    (
        "spec.loader.exec_module(htmlparser)\nsys.modules['json'] = htmlparser",
        "sys.modules['json']",
        Effect("__import__('json').__name__ == 'html.parser'"),
    ),
    // A module the workers do not have: `find_spec` returns None.
    (
        "spec2 = importlib.util.find_spec('html.parsr')\nm = importlib.util.module_from_spec(spec2)",
        "importlib.util.find_spec('html.parsr')",
        Raises("AttributeError"),
    ),
];

/// Each snippet in its own `python3 -I -S`: "ok <effect>" or "raises <exception>".
const DRIVER: &str = r#"
import json, sys
case = json.loads(sys.stdin.read())
ns = {"__name__": "fixture"}
try:
    exec(compile(case["source"], "fixture", "exec"), ns)
except BaseException as e:
    print("raises " + type(e).__name__)
else:
    print("ok " + str(bool(case["effect"] and eval(case["effect"]))))
"#;

fn in_cpython(source: &str, effect: &str) -> String {
    let case = serde_json::json!({"source": source, "effect": effect});
    let output = v2_support::python_stdin(DRIVER, case.to_string().as_bytes());
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        !stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout.trim().to_string()
}

#[test]
fn a_private_copy_of_a_stdlib_module_is_proved_and_its_near_misses_are_not() {
    let safe = format!("{HEAD}{EXEC}{SAFE}{TAIL}");
    let (ready, culprits) = v2_support::probe(&safe, ReadinessPolicy::V2);
    assert!(
        ready,
        "{:?}",
        v2_support::notes(&culprits, "APIZR-READY-004")
    );
    assert_eq!(in_cpython(&safe, SAFE_EFFECT), "ok True");
    for (statements, culprit, outcome) in NEAR_MISSES {
        let source = format!("{HEAD}{statements}{TAIL}");
        let (ready, culprits) = v2_support::probe(&source, ReadinessPolicy::V2);
        let notes = v2_support::notes(&culprits, "APIZR-READY-004");
        let (line, column) = source
            .lines()
            .enumerate()
            .find_map(|(i, l)| l.find(culprit).map(|at| (i + 1, at + 1)))
            .expect("the culprit is in the source");
        let at = format!("(line {line}, column {column})");
        assert!(
            !ready && notes.iter().any(|n| n.contains(&at)),
            "{statements}: not unproved at {at}: {notes:?}"
        );
        let got = match outcome {
            Raises(_) => in_cpython(&source, ""),
            Effect(check) => in_cpython(&source, check),
        };
        let want = match outcome {
            Raises(name) => format!("raises {name}"),
            Effect(_) => "ok True".to_string(),
        };
        assert_eq!(got, want, "{statements}");
    }
}
