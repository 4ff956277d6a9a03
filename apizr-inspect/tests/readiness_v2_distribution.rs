//! Readiness v2 proves `importlib.metadata.version(__name__)` (humanize's `__version__`) only
//! in a package directory that holds the distribution's `*.dist-info/METADATA`, which bundles
//! carry and the worker serves to `importlib.metadata` (`package::dist_info`). Each near miss
//! stays unproved at the argument's line and column, and raises in CPython when imported as
//! bundles import it (the directory first on `sys.path`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod v2_support;

use std::path::Path;

const INIT: &str = "import importlib.metadata\n__version__ = importlib.metadata.version(__name__)\n\n\ndef probe(x: int) -> int:\n    return x\n";
const METADATA: &str = "Metadata-Version: 2.1\nName: vpkg\nVersion: 1.2.3\n";

/// `__init__.py`, the dist-info (directory, METADATA bytes), the culprit's position, the error
/// CPython raises.
type NearMiss<'a> = (&'a str, Option<(&'a str, &'a [u8])>, &'a str, &'a str);

/// A package `vpkg` with `init` as its `__init__.py` and `dist_info` (directory, METADATA
/// bytes) at the root.
fn fixture(root: &Path, init: &str, dist_info: Option<(&str, &[u8])>) {
    std::fs::create_dir(root.join("vpkg")).unwrap();
    std::fs::write(root.join("vpkg/__init__.py"), init).unwrap();
    if let Some((dir, metadata)) = dist_info {
        std::fs::create_dir(root.join(dir)).unwrap();
        std::fs::write(root.join(dir).join("METADATA"), metadata).unwrap();
    }
}

/// Whether `vpkg.probe` is ready, and the notes of the READY-004 culprits.
fn verdict(root: &Path) -> (bool, Vec<String>) {
    let (envelope, explanation) = v2_support::package_module(root, "vpkg/__init__.py");
    let ready = envelope["readiness"]["assessments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["source"]["symbol"] == "probe")
        .unwrap()["can_generate_interface"]
        == true;
    let notes = explanation
        .module_reasons
        .iter()
        .filter(|r| r.code == "APIZR-READY-004")
        .flat_map(|r| r.culprits.iter().filter_map(|c| c.note.clone()))
        .collect();
    (ready, notes)
}

/// `import vpkg` in `python3 -I -S` with `root` first on `sys.path`: stderr when it fails.
fn import_in_cpython(root: &Path) -> Result<String, String> {
    let script = format!(
        "import sys\nsys.path.insert(0, {:?})\nimport vpkg\nprint(vpkg.__version__)\n",
        root.to_str().unwrap()
    );
    let output = std::process::Command::new("python3")
        .args(["-I", "-S", "-B", "-c", &script])
        .output()
        .expect("python3 runs (CI installs it)");
    match output.status.success() {
        true => Ok(String::from_utf8_lossy(&output.stdout).trim().to_string()),
        false => Err(String::from_utf8_lossy(&output.stderr).into_owned()),
    }
}

#[test]
fn a_version_of_a_carried_distribution_is_proved_and_near_misses_stay_unproved_and_raise() {
    // Safe: the module's own name, and a literal spelled as PEP 503 allows.
    let literal = INIT.replace("version(__name__)", "version('VPKG')");
    for init in [INIT, literal.as_str()] {
        let dir = tempfile::tempdir().unwrap();
        fixture(
            dir.path(),
            init,
            Some(("vpkg-1.2.3.dist-info", METADATA.as_bytes())),
        );
        let (ready, notes) = verdict(dir.path());
        assert!(ready, "{init}\n{notes:?}");
        assert_eq!(import_in_cpython(dir.path()), Ok("1.2.3".to_string()));
    }
    // Near misses: no metadata, another distribution's, `__name__` rebound, not UTF-8.
    let rebound = INIT.replace(
        "import importlib.metadata\n",
        "import importlib.metadata\n__name__ = 'other'\n",
    );
    let cases: [NearMiss; 4] = [
        (
            INIT,
            None,
            "(line 2, column 42)",
            "PackageNotFoundError: No package metadata was found for vpkg",
        ),
        (
            INIT,
            Some(("other-1.0.dist-info", METADATA.as_bytes())),
            "(line 2, column 42)",
            "PackageNotFoundError: No package metadata was found for vpkg",
        ),
        (
            &rebound,
            Some(("vpkg-1.2.3.dist-info", METADATA.as_bytes())),
            "(line 3, column 42)",
            "PackageNotFoundError: No package metadata was found for other",
        ),
        (
            INIT,
            Some(("vpkg-1.2.3.dist-info", b"Name: vpkg\nSummary: \xff\n")),
            "(line 2, column 42)",
            "UnicodeDecodeError",
        ),
    ];
    for (init, dist_info, at, error) in cases {
        let dir = tempfile::tempdir().unwrap();
        fixture(dir.path(), init, dist_info);
        let (ready, notes) = verdict(dir.path());
        assert!(
            !ready && notes.iter().any(|n| n.contains(at)),
            "{init} {dist_info:?}\n{notes:?}"
        );
        let raised = import_in_cpython(dir.path()).unwrap_err();
        assert!(raised.contains(error), "{raised}");
    }
}
