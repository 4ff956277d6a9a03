#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The bad-input matrix: each input gets a precise error and nothing panics or overflows.

use std::path::{Path, PathBuf};

use apizr_inspect::{InspectError, InspectOptions, inspect_bytes, inspect_path, source};
use apizr_ir::SourceKind;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("apizr-frontend-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn inspect(path: &Path) -> Result<apizr_inspect::Outcome, InspectError> {
    inspect_path(path, None, InspectOptions::default())
}

fn py(bytes: &[u8]) -> Result<apizr_inspect::Outcome, InspectError> {
    inspect_bytes(bytes, SourceKind::Python, "m", InspectOptions::default())
}

#[test]
fn paths_symlinks_and_file_types() {
    let dir = scratch("paths");
    std::fs::write(dir.join("real.py"), "x = 1\n").unwrap();
    std::os::unix::fs::symlink("real.py", dir.join("link.py")).unwrap();
    std::os::unix::fs::symlink("missing.py", dir.join("dangling.py")).unwrap();
    std::os::unix::fs::symlink("loop2.py", dir.join("loop1.py")).unwrap();
    std::os::unix::fs::symlink("loop1.py", dir.join("loop2.py")).unwrap();
    std::fs::create_dir(dir.join("realdir")).unwrap();
    std::fs::write(dir.join("realdir/inner.py"), "y = 2\n").unwrap();
    std::os::unix::fs::symlink("realdir", dir.join("linkdir")).unwrap();
    std::fs::create_dir(dir.join("dir.py")).unwrap();
    std::fs::write(dir.join("notes.txt"), "x = 1\n").unwrap();
    std::os::unix::fs::symlink("notes.txt", dir.join("via_txt.py")).unwrap();

    // Oracle: symlinked files and directories are followed; the module is the given stem.
    let out = inspect(&dir.join("link.py")).unwrap();
    assert_eq!(out.inspection.capability_ir.source.module, "link");
    assert!(inspect(&dir.join("linkdir/inner.py")).is_ok());
    assert!(inspect(&dir.join("via_txt.py")).is_ok());
    assert!(inspect(&dir.join("real.py/")).is_ok());

    let message = |p: &str| inspect(&dir.join(p)).err().unwrap().to_string();
    assert!(message("dangling.py").contains("dangling symbolic link"));
    assert!(message("loop1.py").contains("symbolic link loop"));
    assert!(message("dir.py").contains("is a directory, not a regular file"));
    assert!(message("missing.py").contains("no such file or directory"));
    assert!(message("nodir/x.py").contains("no such file or directory"));
    assert!(matches!(
        inspect(&dir.join("notes.txt")),
        Err(InspectError::UnsupportedSuffix { .. })
    ));
    assert!(matches!(
        inspect(Path::new("/dev/null.py")),
        Err(InspectError::Read { .. })
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn devices_are_not_regular_files() {
    let dir = scratch("dev");
    std::os::unix::fs::symlink("/dev/null", dir.join("null.py")).unwrap();
    let err = inspect(&dir.join("null.py")).err().unwrap();
    assert!(err.to_string().contains("not a regular file"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn size_limit_is_exact() {
    let dir = scratch("size");
    let limit = source::MAX_SOURCE_BYTES as usize;
    let mut ok = vec![b'#'; limit - 1];
    ok.push(b'\n');
    std::fs::write(dir.join("ok.py"), &ok).unwrap();
    assert!(inspect(&dir.join("ok.py")).is_ok());
    ok.push(b'\n');
    std::fs::write(dir.join("big.py"), &ok).unwrap();
    assert!(matches!(
        inspect(&dir.join("big.py")),
        Err(InspectError::TooLarge { size, limit: 16_777_216 }) if size == 16_777_217
    ));
    assert!(matches!(py(&ok), Err(InspectError::TooLarge { .. })));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn decoding_errors_are_precise() {
    let err = py(b"x = 1\ns = '\xff'\n").err().unwrap();
    assert_eq!(err.position().map(|p| (p.line, p.column)), Some((2, 6)));
    let err = py(b"x = 1\0\n").err().unwrap();
    assert!(err.to_string().contains("null bytes"), "{err}");
    let err = py(b"# coding: klingon\n").err().unwrap();
    assert!(
        err.to_string().contains("unknown encoding: klingon"),
        "{err}"
    );
    let ok = py(b"# -*- coding: latin-1 -*-\ndef f(a='\xe9'): pass\n").unwrap();
    assert_eq!(ok.inspection.capability_ir.capabilities.len(), 1);
}

#[test]
fn structure_limits() {
    let nested = |n: usize| format!("x = {}{}\n", "[".repeat(n), "]".repeat(n));
    assert!(py(nested(126).as_bytes()).is_ok());
    assert!(matches!(
        py(nested(127).as_bytes()),
        Err(InspectError::StructureLimit { .. })
    ));
    assert!(matches!(
        py(nested(200).as_bytes()),
        Err(InspectError::StructureLimit { .. })
    ));
    assert!(matches!(
        py(nested(201).as_bytes()),
        Err(InspectError::Syntax { .. })
    ));
    let many = "x = 1\n".repeat(25_000);
    assert!(matches!(
        py(many.as_bytes()),
        Err(InspectError::StructureLimit { .. })
    ));
}

#[test]
fn module_names_and_notebook_roots() {
    let bad = inspect_bytes(
        b"",
        SourceKind::Python,
        "my-file",
        InspectOptions::default(),
    );
    assert!(matches!(bad, Err(InspectError::ModuleName { .. })));
    let err = inspect_bytes(b"[]", SourceKind::Notebook, "nb", InspectOptions::default())
        .err()
        .unwrap();
    assert!(err.to_string().contains("must be an object"), "{err}");
    let err = inspect_bytes(b"{", SourceKind::Notebook, "nb", InspectOptions::default())
        .err()
        .unwrap();
    assert!(err.to_string().contains("not valid JSON"), "{err}");
}

/// Generated pathological nesting, 10k to 1M levels, on a 2 MiB thread and on this thread.
fn deep_inputs() -> Vec<String> {
    let mut out = Vec::new();
    for n in [10_000usize, 100_000, 1_000_000] {
        out.push(format!("x = {}1\n", "-".repeat(n)));
        out.push(format!("x = {}1\n", "not ".repeat(n / 4)));
        out.push(format!("x = a{}\n", ".a".repeat(n)));
        out.push(format!("x = 1{}\n", "+1".repeat(n)));
        out.push(format!("x = f{}\n", "()".repeat(n)));
        out.push(format!("x = x{}\n", "[0]".repeat(n)));
        out.push(format!("x = {}1\n", "lambda: ".repeat(n / 8)));
        out.push(format!("x = {}1\n", "2**".repeat(n)));
        out.push(format!("x = {}1\n", "1 if x else ".repeat(n / 10)));
        out.push(format!("x = {}\n", "(".repeat(n)));
        out.push(format!("x = {}\n", "f'{".repeat(n / 3)));
        out.push(format!("x = {}1\n", "await ".repeat(n / 6)));
        out.push(format!(
            "if x:\n{}",
            (1..200)
                .map(|i| format!("{}if x:\n", " ".repeat(i)))
                .collect::<String>()
        ));
        out.push("if a: pass\n".to_string() + &"elif b: pass\n".repeat(n / 10));
    }
    out
}

/// Wide but flat: accepted or refused by the node budget, never a crash.
fn wide_inputs() -> Vec<String> {
    [10_000usize, 100_000, 1_000_000]
        .iter()
        .map(|n| format!("x = a{}\n", " and a".repeat(n / 6)))
        .collect()
}

fn run_all(inputs: &[String], must_fail: bool) {
    for source in inputs {
        let result = py(source.as_bytes());
        assert!(
            !must_fail || result.is_err(),
            "{} accepted",
            &source[..30.min(source.len())]
        );
        let nb = serde_json::json!({"cells": [{"cell_type": "code", "execution_count": null,
            "metadata": {}, "outputs": [], "source": source}], "metadata": {},
            "nbformat": 4, "nbformat_minor": 4})
        .to_string();
        let _ = inspect_bytes(
            nb.as_bytes(),
            SourceKind::Notebook,
            "nb",
            InspectOptions::default(),
        );
    }
}

#[test]
fn deep_nesting_never_overflows_a_small_stack() {
    let inputs = deep_inputs();
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || {
            run_all(&inputs, true);
            run_all(&wide_inputs(), false);
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn deep_nesting_never_overflows_the_test_thread() {
    run_all(&deep_inputs(), true);
    run_all(&wide_inputs(), false);
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn pythonish() -> impl Strategy<Value = String> {
        let atoms = prop::sample::select(vec![
            "x",
            "1",
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            "-",
            "not ",
            "lambda: ",
            ".a",
            "**",
            " if ",
            " else ",
            ",",
            ":",
            "\n",
            "    ",
            "'",
            "\"",
            "f'",
            "{x}",
            "#",
            "\\\n",
            "%",
            "!",
            "?",
            "def f(a=1):\n",
            "class A:\n",
            "\r\n",
            "\r",
            "é",
            "\u{0}",
            "await ",
            "yield ",
            ";",
        ]);
        prop::collection::vec(atoms, 0..200).prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            let _ = inspect_bytes(&bytes, SourceKind::Python, "m", InspectOptions::default());
            let _ = inspect_bytes(&bytes, SourceKind::Notebook, "m", InspectOptions::default());
        }

        #[test]
        fn pythonish_text_never_panics(text in pythonish()) {
            let _ = inspect_bytes(text.as_bytes(), SourceKind::Python, "m", InspectOptions::default());
            let nb = serde_json::json!({"cells": [{"cell_type": "code", "execution_count": null,
                "metadata": {}, "outputs": [], "source": text}], "metadata": {},
                "nbformat": 4, "nbformat_minor": 4}).to_string();
            for strip in [false, true] {
                let _ = inspect_bytes(nb.as_bytes(), SourceKind::Notebook, "m",
                    InspectOptions { strip_magics: strip, ..InspectOptions::default() });
            }
        }
    }
}
