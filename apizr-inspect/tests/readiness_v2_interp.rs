//! Readiness v2 runs calls of the package's own code at import with an interpreter of an
//! exactly modelled subset of Python (`tests/data/readiness_v2_interp`): `plug` builds a
//! mistune-like `html = create(...)` (classes with `super()`, name mangling, a staticmethod,
//! a dict comprehension over a class attribute, `getattr`, `callable`, `isinstance`, a
//! `try`/`except ValueError`, a loop, lambdas stored, plugins loaded with
//! `importlib.import_module` into a module's cache dict), and its functions are ready and run
//! in CPython. Each `near_*` package is a near miss that stays unproved, with the construct
//! at fault named by line and column, and raises (or has its effect) in CPython.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod v2_support;

use std::path::Path;

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/readiness_v2_interp"
);

/// Whether function `symbol` of module `path_suffix` is ready, and the culprits (line,
/// column, note) of the module's reasons.
fn verdict(path_suffix: &str, symbol: &str) -> (bool, Vec<(u32, u32, String)>) {
    v2_support::package_verdict(Path::new(DIR), path_suffix, symbol)
}

#[test]
fn a_plugin_registry_built_at_import_is_proved() {
    for (module, symbol) in [
        ("plug/__init__.py", "create"),
        ("plug/__init__.py", "rules_count"),
        ("plug/plugins/strike.py", "strike"),
        ("plug/plugins/table.py", "table"),
    ] {
        let (ready, culprits) = verdict(module, symbol);
        assert!(
            ready,
            "{module} {symbol}: {:?}",
            culprits.iter().map(|c| &c.2).collect::<Vec<_>>()
        );
    }
}

/// The ready functions import and run in the workers' isolated CPython: the registry the
/// interpreter followed is the one CPython builds (4 rules, 1 renderer method, 1 table rule).
#[test]
fn in_cpython_the_proved_registry_imports_and_runs() {
    let script = format!(
        "import sys\nsys.path.insert(0, {DIR:?})\nimport plug\nprint(plug.rules_count(1))\n"
    );
    let output = v2_support::python_isolated(&script);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "7");
}

/// Each near miss: the package, the culprit's line and column, and the words of its note.
const NEAR_MISSES: &[(&str, u32, u32, &str)] = &[
    // A plugin that appends to a list another module binds (its items v2 may know).
    (
        "near_foreign",
        3,
        1,
        "changes an object that existed before it",
    ),
    // `__init__` reads a property.
    ("near_property", 3, 21, "meets a descriptor"),
    // A class with a metaclass.
    ("near_meta", 10, 9, "a metaclass"),
    // A class with `__setattr__`.
    ("near_setattr", 3, 9, "would run a hook"),
    // An endless recursion.
    ("near_recursion", 2, 12, "recurses too deep"),
    // `import_module` of a module whose top level is not proved.
    ("near_unproved", 5, 12, "imports a module not proved"),
    // `import_module` of a module that imports a name from the half-initialised importer.
    (
        "near_cycle",
        5,
        12,
        "imports a module not proved (or in an import cycle)",
    ),
    // A dict display changed by an item store (v2/dicts.rs) is not recalled as displayed.
    ("near_store", 6, 12, "a value the interpreter does not know"),
    // The same, the store in a class body.
    (
        "near_class_store",
        9,
        12,
        "a value the interpreter does not know",
    ),
    // A call inside a function body proved by kinds is not run with the module's globals
    // (`x` there is the parameter); the top-level call runs `"s" + 1`.
    ("near_local", 5, 12, "does not model"),
];

#[test]
fn near_misses_stay_unproved_with_the_construct_at_fault() {
    for (package, line, column, words) in NEAR_MISSES {
        let (ready, culprits) = verdict(&format!("{package}/__init__.py"), "probe");
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
fn in_cpython_near_misses_raise_or_change_what_existed() {
    for (package, expected) in [
        (
            "near_property",
            "AttributeError: 'Box' object has no attribute '_missing'",
        ),
        ("near_meta", "RuntimeError: no instances"),
        ("near_setattr", "AttributeError: frozen"),
        ("near_recursion", "RecursionError"),
        ("near_unproved", "FileNotFoundError"),
        (
            "near_cycle",
            "ImportError: cannot import name 'NAME' from partially initialized",
        ),
        ("near_store", "TypeError: can only concatenate str"),
        ("near_class_store", "TypeError: can only concatenate str"),
        ("near_local", "TypeError: can only concatenate str"),
    ] {
        let script = format!("import sys\nsys.path.insert(0, {DIR:?})\nimport {package}\n");
        let output = v2_support::python_isolated(&script);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success() && stderr.contains(expected),
            "{package}: {stderr}"
        );
    }
    // The plugin's append changed another module's list.
    let script = format!(
        "import sys\nsys.path.insert(0, {DIR:?})\nimport near_foreign\nfrom near_foreign.names import NAMES\nprint(NAMES)\n"
    );
    let output = v2_support::python_isolated(&script);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "['a', 'b', {}]"
    );
}
