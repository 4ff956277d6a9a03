//! Readiness v2 and the workers' standard library (`readiness/v2/stdlib_names.rs`, generated
//! by `scripts/gen-stdlib-table.py`): `from M import N` is proved only when the stdlib module
//! `M` binds `N` or has a submodule `N` on CPython 3.11, and `import a.b` only when `a.b`
//! exists and imports without effects. v1 keeps the reference tool's verdict.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use apizr_inspect::{InspectOptions, inspect_bytes};
use apizr_ir::{ReadinessPolicy, SourceKind};

const PROBE: &str = "\n\ndef probe(x: int) -> int:\n    return x\n";

/// Whether `probe` is ready, and the READY-004 culprit notes (`line:column note`).
fn inspect(source: &str, policy: ReadinessPolicy) -> (bool, Vec<String>) {
    let options = InspectOptions {
        explain: true,
        readiness: policy,
        ..InspectOptions::default()
    };
    let outcome = apizr_inspect::on_inspect_stack(|| {
        inspect_bytes(source.as_bytes(), SourceKind::Python, "fixture", options)
    })
    .unwrap()
    .unwrap();
    let probe = outcome
        .inspection
        .readiness
        .assessments
        .iter()
        .find(|a| a.source.symbol == "probe")
        .expect("every source defines probe");
    let notes = outcome
        .explanation
        .unwrap()
        .module_reasons
        .iter()
        .filter(|r| r.code == "APIZR-READY-004")
        .flat_map(|r| &r.culprits)
        .map(|c| {
            let note = c.note.clone().unwrap_or_default();
            format!("{}:{} {note}", c.span.line, c.span.column)
        })
        .collect();
    (probe.can_generate_interface, notes)
}

/// Run `source` in CPython as a worker does (isolated, no site): (success, stdout, stderr).
fn run_in_cpython(source: &str) -> (bool, String, String) {
    let output = std::process::Command::new("python3")
        .args(["-I", "-S", "-B", "-c", source])
        .output()
        .expect("python3 runs (CI installs it)");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Names and submodules the table lists are proved (a submodule that is not yet an
/// attribute too), and the module imports cleanly in CPython; so is a missing name under a
/// handler of `ImportError`.
#[test]
fn stdlib_names_the_table_lists_are_ready_and_import_in_cpython() {
    let sources = [
        "from os import path\nfrom xml import dom\nfrom collections import abc\n\
         from typing import TYPE_CHECKING\nimport xml.etree.ElementTree\nimport os.path\n\
         from email.mime import text\n",
        "try:\n    from os import nonexistent_thing\nexcept ImportError:\n    pass\n",
        "try:\n    import xml.nope\nexcept ImportError:\n    pass\n",
    ];
    for source in sources {
        let source = format!("{source}{PROBE}");
        let (ready, notes) = inspect(&source, ReadinessPolicy::V2);
        assert!(ready, "{source}: {notes:?}");
        let (ok, _, stderr) = run_in_cpython(&source);
        assert!(ok, "{source}: {stderr}");
    }
}

/// The near misses: a name the module does not bind, a submodule that does not exist, a
/// module whose import has effects. v2 keeps READY-004 with line and column of the part at
/// fault and a precise reason; CPython raises `ImportError`/`ModuleNotFoundError` (or prints,
/// for `this`). v1 keeps the reference's verdict (ready).
#[test]
fn missing_stdlib_names_stay_unproved_and_raise_in_cpython() {
    let cases = [
        (
            "from os import path, nonexistent_thing\n",
            "1:22 `os` binds no name `nonexistent_thing` on CPython 3.11",
            "ImportError: cannot import name 'nonexistent_thing' from 'os'",
        ),
        (
            "import xml.nope\n",
            "1:8 a standard-library module the workers' CPython 3.11 does not have",
            "ModuleNotFoundError: No module named 'xml.nope'",
        ),
        (
            "from xml import nope as other\n",
            "1:17 `xml` binds no name `nope` on CPython 3.11",
            "ImportError: cannot import name 'nope' from 'xml'",
        ),
        (
            "from xml.nope import x\n",
            "1:6 a standard-library module the workers' CPython 3.11 does not have",
            "ModuleNotFoundError: No module named 'xml.nope'",
        ),
    ];
    for (import, note, error) in cases {
        let source = format!("{import}{PROBE}");
        let (ready, notes) = inspect(&source, ReadinessPolicy::V2);
        assert!(!ready, "{import}");
        assert!(
            notes.iter().any(|n| n.starts_with(note)),
            "{import}: {notes:?}"
        );
        assert!(
            notes
                .iter()
                .any(|n| n.contains("readiness v2 cannot prove it harmless")),
            "{import}: {notes:?}"
        );
        let (v1_ready, _) = inspect(&source, ReadinessPolicy::V1);
        assert!(v1_ready, "{import}: v1 keeps the reference's verdict");
        let (ok, _, stderr) = run_in_cpython(&source);
        assert!(!ok && stderr.contains(error), "{import}: {stderr}");
    }
    // `this` prints the Zen of Python when imported, even under a handler of ImportError.
    let source = format!("try:\n    import this\nexcept ImportError:\n    pass\n{PROBE}");
    let (ready, notes) = inspect(&source, ReadinessPolicy::V2);
    assert!(!ready, "{notes:?}");
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("2:12 a standard-library module whose import has effects")),
        "{notes:?}"
    );
    let (ok, stdout, _) = run_in_cpython(&source);
    assert!(ok && stdout.contains("The Zen of Python"), "{stdout}");
}

/// The table is what the generator computes on this host's worker interpreters (`python3`
/// and the worker image's Debian bookworm `/usr/bin/python3.11`), so it cannot rot.
#[test]
fn the_stdlib_table_regenerates_from_cpython() {
    let script = apizr_test_support::workspace_root().join("scripts/gen-stdlib-table.py");
    let Some(debian) = apizr_test_support::external_tool(
        "APIZR_WORKER_IMAGE_PYTHON",
        "/usr/bin/python3.11",
        "the worker image's CPython 3.11 (Debian bookworm python3.11)",
    ) else {
        return;
    };
    let output = std::process::Command::new("python3")
        .arg(&script)
        .arg("--check")
        .args(["--python", "python3", "--python"])
        .arg(&debian)
        .output();
    let output = match output {
        Ok(output) => output,
        Err(error) => {
            apizr_test_support::skip(format!("python3 is required: {error}"));
            return;
        }
    };
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
