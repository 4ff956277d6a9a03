//! A module of a package directory that imports no file of the directory is served as the
//! single file it is (`apizr_inspect::package::PackageIndex::stands_alone`): its parents'
//! `__init__` never run, so a package whose `__init__` fails at import does not take it down,
//! and `generate DIR --select pkg.mod:f` is byte for byte `generate pkg/mod.py --module-name
//! pkg.mod --select f`. A
//! sibling that imports its package is still bundled and imported with its parents, and fails
//! or is refused as before. The real binary, real CPython workers (warm pool and the strict
//! sandbox), real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

#[path = "support/served.rs"]
mod served;
use served::Served;

const STRICT: &str = r#"{"network":{"mode":"deny"},"filesystem":{"mode":"sandbox"},"subprocess":{"mode":"deny"},"resources":{"memory_bytes":268435456,"pids":16},"limits":{"wall_time_ms":60000}}"#;

/// `broken/__init__.py` fails at import; `broken.alone` never imports its package (ready for
/// readiness v1); `broken.inside` imports it relatively (READY-015, conditional).
fn fixture(name: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("serve-package-alone")
        .join(name);
    let _ = std::fs::remove_dir_all(&root);
    let package = root.join("src/broken");
    std::fs::create_dir_all(&package).unwrap();
    let files = [
        ("__init__.py", "import apizr_no_such_module\n"),
        ("alone.py", "def double(x: int) -> int:\n    return 2 * x\n"),
        (
            "inside.py",
            "from . import alone\n\n\ndef triple(x: int) -> int:\n    return alone.double(x) + x\n",
        ),
    ];
    for (file, text) in files {
        std::fs::write(package.join(file), text).unwrap();
    }
    std::fs::write(root.join("strict.json"), STRICT).unwrap();
    root
}

fn apizr(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_apizr"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_module_that_never_imports_its_package_is_served_without_its_parents() {
    let root = fixture("serve");
    let (src, policy) = (root.join("src"), root.join("strict.json"));
    let (src, policy) = (src.to_str().unwrap(), policy.to_str().unwrap());
    // No flags beyond the mode: `broken.alone:double` is ready (v1) and answers, directly
    // (warm pool) and in the strict sandbox (a fresh worker per call).
    for mode in [["--workers", "1"], ["--policy", policy]] {
        let mut args = vec![src, "--select", "broken.alone:double"];
        args.extend(mode);
        let server =
            Served::spawn_ready(&args, &[], Duration::from_secs(30), Duration::from_secs(30));
        assert_eq!(
            server.post("double", r#"{"x": 21}"#),
            (200, "42".into()),
            "{mode:?}"
        );
    }
    // The sibling imports its package: refused as conditional without the flag, precisely…
    let refused = apizr(&["serve", "rest", src, "--select", "broken.inside:triple"]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("cannot serve triple: conditional (APIZR-READY-015)"),
        "{refused:?}"
    );
    // …and with it, served beside the single file in one strict server: still imported by its
    // dotted name, parents first, so its call fails at `broken/__init__.py` while the single
    // file's call answers.
    let log = root.join("server.log");
    let args = [
        src,
        "--select",
        "broken.alone:double,broken.inside:triple",
        "--allow-conditional",
        "--policy",
        policy,
    ];
    let server = Served::spawn_ready_logging(
        &args,
        &[],
        Duration::from_secs(30),
        Duration::from_secs(30),
        std::fs::File::create(&log).unwrap().into(),
    );
    assert_eq!(server.post("double", r#"{"x": 2}"#), (200, "4".into()));
    let (status, body) = server.post("triple", r#"{"x": 2}"#);
    drop(server);
    assert_eq!(status, 500, "{body}");
    let log = std::fs::read_to_string(&log).unwrap();
    for needle in [
        "in _load_package_module",
        "source/broken/__init__.py",
        "No module named 'apizr_no_such_module'",
    ] {
        assert!(log.contains(needle), "{needle}: {log}");
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// Every file of a generated project, by path.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(name, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

#[test]
fn generating_a_module_that_stands_alone_is_generating_its_file() {
    let root = fixture("generate");
    let src = root.join("src");
    let file = src.join("broken/alone.py");
    for transport in ["rest", "mcp"] {
        let out = |name: &str| root.join(format!("{transport}-{name}"));
        let generate = |source: &Path, select: &str, to: &Path, extra: &[&str]| {
            let mut args = vec!["generate", transport, source.to_str().unwrap()];
            args.extend(["--select", select, "--no-lockfile", "--output-dir"]);
            args.push(to.to_str().unwrap());
            args.extend(extra);
            let output = apizr(&args);
            assert!(output.status.success(), "{output:?}");
        };
        generate(&src, "broken.alone:double", &out("dir"), &[]);
        generate(
            &file,
            "double",
            &out("file"),
            &["--module-name", "broken.alone"],
        );
        let from_dir = tree(&out("dir"));
        // The single-file layout of a dotted name: its parent an empty module, not the
        // package's failing `__init__.py`.
        assert!(from_dir.contains_key("source/broken/alone.py"));
        assert_eq!(
            from_dir.get("source/broken/__init__.py").map(Vec::len),
            Some(0)
        );
        assert!(
            from_dir == tree(&out("file")),
            "{transport}: the trees differ"
        );
        // The sibling that imports its package ships its closure, parents included.
        generate(
            &src,
            "broken.inside:triple",
            &out("inside"),
            &["--allow-conditional"],
        );
        let inside = tree(&out("inside"));
        let init = inside.get("source/broken/__init__.py").unwrap();
        assert_eq!(init, b"import apizr_no_such_module\n");
        for file in ["alone.py", "inside.py"] {
            assert!(
                inside.contains_key(&format!("source/broken/{file}")),
                "{:?}",
                inside.keys()
            );
        }
    }
    std::fs::remove_dir_all(&root).unwrap();
}
