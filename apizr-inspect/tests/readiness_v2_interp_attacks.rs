//! Attacks on the readiness v2 interpreter (`v2/interp`), read against CPython's semantics
//! (`tests/data/readiness_v2_interp_attacks`). Each `near_*` package's top level calls its own
//! code where the interpreter once followed a model CPython does not share (`__class__`
//! rebound or hooked under `isinstance`, identity of objects rebuilt at each read, nested
//! annotations, an annotated attribute target, `except` of a non-exception, `issubclass` of an
//! object with `__bases__`, a submodule shadowing a builtin, a dict display a class body
//! changed): it stays unproved with the construct at fault named by line and column, and
//! raises in CPython. `safe` keeps the exact cases proved: identity of objects the call created, `isinstance` of a plain instance, the
//! `TypeError` of `issubclass(1, C)` and a `KeyError` caught by `LookupError` in a tuple.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod v2_support;

use std::path::Path;

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/readiness_v2_interp_attacks"
);

/// Whether `probe` of package `package` is ready, and the culprits (line, column, note) of
/// its module's reasons.
fn verdict(package: &str) -> (bool, Vec<(u32, u32, String)>) {
    v2_support::package_verdict(Path::new(DIR), &format!("{package}/__init__.py"), "probe")
}

fn run_in_cpython(package: &str) -> std::process::Output {
    let script = format!("import sys\nsys.path.insert(0, {DIR:?})\nimport {package}\n");
    v2_support::python_isolated(&script)
}

/// Each near miss: the package, the culprit's line and column, the words of its note, and
/// the exception CPython raises importing it.
const NEAR_MISSES: &[(&str, u32, u32, &str, &str)] = &[
    // A property named `__class__`: `isinstance(x, str)` is true in CPython.
    ("near_classprop", 9, 8, "would run a hook", "IndexError"),
    // A class attribute `__class__ = str` (a plain attribute of the type wins too).
    ("near_classattr", 6, 8, "would run a hook", "IndexError"),
    // `self.__class__ = Other` changes the instance's type.
    ("near_classset", 7, 9, "meets a descriptor", "IndexError"),
    // `isinstance` reads `__class__` through `__getattribute__`.
    (
        "near_getattribute",
        11,
        8,
        "would run a hook",
        "RuntimeError: hook ran",
    ),
    // `g is g`: one function, rebuilt at each read of its name.
    ("near_identity", 6, 8, "does not know", "IndexError"),
    // `g() is g()`: the same default list twice.
    ("near_identity_default", 6, 8, "does not know", "IndexError"),
    // A nested `def`'s annotations are evaluated when it runs.
    (
        "near_nested_annotation",
        2,
        5,
        "does not model",
        "NameError: name 'missing_name'",
    ),
    // `b.missing.attr: int` evaluates `b.missing`.
    (
        "near_annassign_target",
        7,
        5,
        "does not model",
        "AttributeError: 'Box' object has no attribute 'missing'",
    ),
    // `except len:` raises `TypeError` when an exception is matched against it.
    (
        "near_except_nonexc",
        4,
        12,
        "does not know",
        "TypeError: catching classes that do not inherit from BaseException",
    ),
    // `issubclass(obj, C)` of an object with a `__bases__` tuple does not raise.
    (
        "near_issubclass_bases",
        11,
        9,
        "does not know",
        "IndexError",
    ),
    // A class body stores into the module's dict display: it is not the display any more.
    ("near_classbody_store", 9, 8, "does not know", "IndexError"),
    // Importing submodule `len` binds `len` in the package over the builtin.
    (
        "near_submodule_builtin",
        5,
        12,
        "reads a name not bound",
        "TypeError: 'module' object is not callable",
    ),
    // Importing submodule `util` rebinds `util` over the package's `def util()`: every v2
    // rule (not only the interpreter) reads such a name as unknown.
    (
        "near_submodule_def",
        9,
        12,
        "reads a name not bound",
        "TypeError: 'module' object is not callable",
    ),
    (
        "near_submodule_call",
        7,
        5,
        "reads a name not bound",
        "TypeError: 'module' object is not callable",
    ),
];

#[test]
fn attacks_on_the_interpreter_stay_unproved_with_the_construct_at_fault() {
    for (package, line, column, words, _) in NEAR_MISSES {
        let (ready, culprits) = verdict(package);
        assert!(!ready, "{package}");
        assert!(
            culprits
                .iter()
                .any(|(l, c, note)| l == line && c == column && note.contains(words)),
            "{package}: {culprits:?}"
        );
    }
}

#[test]
fn in_cpython_the_attacks_raise_at_import() {
    for (package, _, _, _, expected) in NEAR_MISSES {
        let output = run_in_cpython(package);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success() && stderr.contains(expected),
            "{package}: {stderr}"
        );
    }
}

#[test]
fn exact_cases_next_to_the_attacks_stay_proved_and_import() {
    let (ready, culprits) = verdict("safe");
    assert!(ready, "{culprits:?}");
    let output = run_in_cpython("safe");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
