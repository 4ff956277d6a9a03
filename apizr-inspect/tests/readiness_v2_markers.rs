//! Readiness v2 and marker decorators imported from a module of the package (`from .utils
//! import pass_context`, jinja2's filters): the marker's stored values are proved at the end
//! of its module, so an importer's `@pass_context` on a function or a method is proved; a
//! marker whose value is not bound at the end of its module, or applied to a `property`,
//! stays a READY-004 reason at its line and column, and really raises in CPython (`-I -S`,
//! the package root on `sys.path`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod v2_support;

use std::path::Path;

const UTILS: &str = "import enum\n\n\ndef pass_context(f):\n    \"\"\"Mark f.\"\"\"\n    f.pass_arg = _PassArg.context\n    return f\n\n\nclass _PassArg(enum.Enum):\n    context = enum.auto()\n";
/// The same marker reading a name its module never binds.
const UTILS_NEAR: &str = "def pass_context(f):\n    f.pass_arg = CONTEXT\n    return f\n";
const FILTERS: &str = "from .utils import pass_context\n\n\n@pass_context\ndef do_x(x: int) -> int:\n    return x\n\n\nclass K:\n    @pass_context\n    def m(self) -> int:\n        return 1\n\n\ndef probe(x: int) -> int:\n    return x\n";
/// A method turned into a `property` before the marker runs.
const FILTERS_NEAR: &str = "from .utils import pass_context\n\n\nclass K:\n    @pass_context\n    @property\n    def m(self) -> int:\n        return 1\n\n\ndef probe(x: int) -> int:\n    return x\n";

fn package(utils: &str, filters: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("pkg");
    std::fs::create_dir(&pkg).unwrap();
    std::fs::write(pkg.join("__init__.py"), "").unwrap();
    std::fs::write(pkg.join("utils.py"), utils).unwrap();
    std::fs::write(pkg.join("filters.py"), filters).unwrap();
    dir
}

/// Whether `pkg.filters.probe` is ready, and the notes of the module's READY-004 culprits.
fn verdict(dir: &Path) -> (bool, Vec<String>) {
    let (envelope, explanation) = v2_support::package_module(dir, "filters.py");
    let ready = envelope["readiness"]["assessments"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| {
            a["capability_id"].as_str().unwrap().ends_with(":probe")
                && a["can_generate_interface"] == true
        });
    let notes = explanation
        .module_reasons
        .iter()
        .filter(|r| r.code == "APIZR-READY-004")
        .flat_map(|r| &r.culprits)
        .filter_map(|c| c.note.clone())
        .collect();
    (ready, notes)
}

/// `import pkg.filters` in CPython: `None` when it succeeds, else the exception's name.
fn cpython(root: &Path) -> Option<String> {
    let driver = format!(
        "import sys\nsys.path.insert(0, {root:?})\ntry:\n    import pkg.filters\nexcept BaseException as e:\n    print(type(e).__name__)\n",
        root = root.to_str().unwrap(),
    );
    let output = std::process::Command::new("python3")
        .args(["-I", "-S", "-c", &driver])
        .output()
        .expect("python3 runs (CI installs it)");
    let stdout = String::from_utf8(output.stdout).unwrap();
    stdout.lines().last().map(str::to_string)
}

#[test]
fn an_imported_marker_is_proved_and_its_near_misses_stay_unproved_and_raise_in_cpython() {
    let safe = package(UTILS, FILTERS);
    let (ready, notes) = verdict(safe.path());
    assert!(ready, "not proved: {notes:?}");
    assert_eq!(cpython(safe.path()), None);

    // The decorator `pass_context` on line 4, column 2 / line 5, column 6.
    for (utils, filters, at, raises) in [
        (UTILS_NEAR, FILTERS, "(line 4, column 2)", "NameError"),
        (UTILS, FILTERS_NEAR, "(line 5, column 6)", "AttributeError"),
    ] {
        let near = package(utils, filters);
        let (ready, notes) = verdict(near.path());
        assert!(!ready, "{filters}");
        assert!(notes.iter().any(|n| n.contains(at)), "{at}: {notes:?}");
        assert_eq!(cpython(near.path()).as_deref(), Some(raises));
    }
}
