//! Readiness v2 and imports inside `try`/`except ImportError`: an import in any part of a
//! nested `try` (its body, handlers, `else`, `finally`) is handled by the outer handler; an
//! import of a module of the package is still judged by the package rule (its top level runs
//! when the import succeeds). Each safe case and near miss is also run in real CPython
//! (`-I -S`, the package root on `sys.path`): the safe ones import cleanly, the near misses
//! raise.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod v2_support;

use std::path::Path;

use apizr_ir::ReadinessPolicy;

const PROBE: &str = "\n\ndef probe(x: int) -> int:\n    return x\n";

/// The brotli fallback of `urllib3.response`: a third-party import in the inner handler.
const NESTED: &str = "try:\n    try:\n        import brotlicffi as brotli\n    except ImportError:\n        import brotli\nexcept ImportError:\n    brotli = None\n";
/// The same with an outer handler that does not catch `ImportError`.
const NESTED_NEAR: &str = "try:\n    try:\n        import brotlicffi as brotli\n    except ImportError:\n        import brotli\nexcept KeyError:\n    brotli = None\n";

/// Whether `probe` is ready, and the (line, column) of the READY-015 culprits.
fn single_file(source: &str) -> (bool, Vec<(u32, u32)>) {
    let (ready, culprits) = v2_support::probe(source, ReadinessPolicy::V2);
    let imports = culprits
        .iter()
        .filter(|c| c.code == "APIZR-READY-015")
        .map(|c| (c.line, c.column))
        .collect();
    (ready, imports)
}

/// Run `code` in CPython with `root` on `sys.path`: `None` when it succeeds, else the name of
/// the exception it raised.
fn cpython(root: &Path, code: &str) -> Option<String> {
    let driver = format!(
        "import sys\nsys.path.insert(0, {root:?})\ntry:\n    exec(compile({code:?}, 'fixture', 'exec'), {{'__name__': 'fixture'}})\nexcept BaseException as e:\n    print(type(e).__name__)\n",
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
fn an_import_in_a_nested_try_is_handled_by_the_outer_handler() {
    let (ready, culprits) = single_file(&format!("{NESTED}{PROBE}"));
    assert!(ready, "not proved: {culprits:?}");
    let (ready, culprits) = single_file(&format!("{NESTED_NEAR}{PROBE}"));
    assert!(!ready);
    // `import brotli` (line 5, column 16: the module name) stays a reason.
    assert!(culprits.contains(&(5, 16)), "{culprits:?}");
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(cpython(empty.path(), NESTED), None);
    assert_eq!(
        cpython(empty.path(), NESTED_NEAR).as_deref(),
        Some("ModuleNotFoundError")
    );
}

/// `pkg/__init__.py` imports `pkg.helper` in a `try` whose handler catches `ImportError`.
fn package(helper: &str) -> tempfile::TempDir {
    package_with(helper, "", None)
}

fn package_with(helper: &str, extra: &str, requirements: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("pkg");
    std::fs::create_dir(&pkg).unwrap();
    let init = format!(
        "try:\n    from . import helper\nexcept ImportError:\n    helper = None\n{extra}{PROBE}"
    );
    std::fs::write(pkg.join("__init__.py"), init).unwrap();
    std::fs::write(pkg.join("helper.py"), helper).unwrap();
    if let Some(requirements) = requirements {
        std::fs::write(dir.path().join("requirements.txt"), requirements).unwrap();
    }
    dir
}

/// Whether `pkg.probe` is ready, and the lines of its READY-015 culprits.
fn package_verdict(dir: &Path) -> (bool, Vec<u32>) {
    let (ready, lines, _) = package_reasons(dir);
    (ready, lines)
}

/// Whether `pkg.probe` is ready, the lines of its READY-015 culprits, its reason codes.
fn package_reasons(dir: &Path) -> (bool, Vec<u32>, Vec<String>) {
    let (envelope, explanation) = v2_support::package_module(dir, "__init__.py");
    let ready = envelope["readiness"]["assessments"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["can_generate_interface"] == true);
    let lines = explanation
        .module_reasons
        .iter()
        .filter(|r| r.code == "APIZR-READY-015")
        .flat_map(|r| &r.culprits)
        .map(|c| c.span.line)
        .collect();
    let codes = envelope["readiness"]["assessments"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["dimensions"]["execution"]["reasons"].as_array().unwrap())
        .map(|r| r["code"].as_str().unwrap().to_string())
        .collect();
    (ready, lines, codes)
}

#[test]
fn a_handled_import_of_a_module_of_the_package_is_still_judged() {
    let safe = package("def helper(x: int) -> int:\n    return x\n");
    let (ready, lines) = package_verdict(safe.path());
    assert!(ready, "not proved: {lines:?}");
    assert_eq!(cpython(safe.path(), "import pkg"), None);
    // The helper's top level raises something else than `ImportError`: the handler does not
    // help, and the import runs it whenever it succeeds.
    let near = package("print('effect')\nraise RuntimeError('boom')\n");
    let (ready, lines) = package_verdict(near.path());
    assert!(!ready);
    assert!(lines.contains(&2), "{lines:?}");
    assert_eq!(
        cpython(near.path(), "import pkg").as_deref(),
        Some("RuntimeError")
    );
}

#[test]
fn a_handled_import_of_a_declared_distribution_keeps_ready_020() {
    // The bundle installs `somedist`: the import then runs its code, which v2 trusts only
    // explicitly. In CPython without it the handler runs.
    let extra = "try:\n    import somedist\nexcept ImportError:\n    somedist = None\n";
    let helper = "def helper(x: int) -> int:\n    return x\n";
    let declared = package_with(helper, extra, Some("somedist\n"));
    let (ready, lines, codes) = package_reasons(declared.path());
    assert!(ready, "not proved: {lines:?}");
    assert!(codes.iter().any(|c| c == "APIZR-READY-020"), "{codes:?}");
    assert_eq!(cpython(declared.path(), "import pkg"), None);
}

/// The READY-004 notes of a single-file module, and whether `probe` is ready.
fn statement_notes(source: &str) -> (bool, Vec<String>) {
    let (ready, culprits) = v2_support::probe(source, ReadinessPolicy::V2);
    (ready, v2_support::notes(&culprits, "APIZR-READY-004"))
}

/// `packaging.metadata`'s fallback: after a `try` whose handler defines the class only when
/// the builtin is missing, the name is bound either way (an arm that leaves a builtin's name
/// unbound leaves the builtin visible); a name that is no builtin stays maybe unbound.
#[test]
fn a_builtin_left_unbound_by_one_arm_is_still_bound_after_the_branch() {
    let safe = "try:\n    ExceptionGroup\nexcept NameError:\n    class ExceptionGroup(Exception):\n        pass\nimport sys\nif sys.maxsize < 0:\n    EncodingWarning = 1\nE = (ExceptionGroup, EncodingWarning)\n";
    let (ready, notes) = statement_notes(&format!("{safe}{PROBE}"));
    assert!(ready, "not proved: {notes:?}");
    let near = "import sys\nif sys.maxsize < 0:\n    AGroup = 1\nE = AGroup\n";
    let (ready, notes) = statement_notes(&format!("{near}{PROBE}"));
    assert!(!ready);
    assert!(
        notes.iter().any(|n| n.contains("(line 4, column 5)")),
        "{notes:?}"
    );
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(cpython(empty.path(), safe), None);
    assert_eq!(cpython(empty.path(), near).as_deref(), Some("NameError"));
}
