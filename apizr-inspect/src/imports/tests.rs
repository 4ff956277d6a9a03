//! Import scanning: mellea's environment and `ImportRestrictions` cases, plus the bypasses
//! its AST walk and llm-sandbox's regex miss.

use super::*;

fn allowed(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn bad(code: &str, list: &[&str]) -> Vec<String> {
    let refs = scan_imports(code).unwrap();
    unauthorized(&refs, &allowed(list))
        .into_iter()
        .map(str::to_string)
        .collect()
}

#[test]
fn statement_forms_are_checked_by_their_first_component() {
    assert_eq!(bad("import subprocess", &["os", "sys"]), ["subprocess"]);
    assert_eq!(
        bad("import os, sys, pathlib", &["os", "sys", "pathlib"]),
        Vec::<String>::new()
    );
    assert_eq!(bad("import a, os", &["a"]), ["os"]);
    assert_eq!(bad("import os.path as p", &["sys"]), ["os"]);
    assert_eq!(
        bad("from urllib.request import urlopen", &["os"]),
        ["urllib"]
    );
    assert_eq!(
        bad("from pathlib.posixpath import join", &["pathlib"]),
        Vec::<String>::new()
    );
    assert_eq!(bad("from .pkg import x", &["os"]), ["pkg"]);
}

#[test]
fn nested_imports_are_found_and_reported_in_first_seen_order_once() {
    let code = "def f():\n    import socket\n    class C:\n        import subprocess\nif x:\n    import socket\ntry:\n    from urllib import parse\nexcept Exception:\n    pass\ng = lambda: __import__('ctypes')\n";
    assert_eq!(
        bad(code, &["os"]),
        ["socket", "subprocess", "urllib", "ctypes"]
    );
}

#[test]
fn relative_from_import_names_the_imported_names() {
    // mellea's environment check misses this form entirely.
    assert_eq!(
        bad("from . import subprocess as sp", &["os"]),
        ["subprocess"]
    );
    let refs = scan_imports("from . import a, b").unwrap();
    assert!(refs.iter().all(|r| r.kind == ImportKind::RelativeName));
}

#[test]
fn dynamic_import_calls_with_literals_are_caught() {
    assert_eq!(bad("__import__('os')", &["sys"]), ["os"]);
    assert_eq!(bad("m = __import__('os.path')", &["sys"]), ["os"]);
    assert_eq!(
        bad(
            "import importlib\nimportlib.import_module('socket')",
            &["importlib"]
        ),
        ["socket"]
    );
    assert_eq!(
        bad(
            "from importlib import import_module\nimport_module(name='ssl')",
            &["importlib"]
        ),
        ["ssl"]
    );
    assert_eq!(
        bad("import builtins\nbuiltins.__import__('pty')", &["builtins"]),
        ["pty"]
    );
    assert_eq!(bad("__import__('json')", &["json"]), Vec::<String>::new());
}

#[test]
fn non_literal_import_calls_cannot_be_proven_allowed() {
    assert_eq!(
        bad("n = 'o' + 's'\n__import__(n)", &["os"]),
        ["__import__(…)"]
    );
    assert_eq!(
        bad(
            "import importlib\nimportlib.import_module('.x', 'pkg')",
            &["importlib"]
        ),
        ["importlib.import_module(…)"]
    );
}

#[test]
fn exec_and_compile_literals_are_scanned() {
    assert_eq!(bad("exec('import os')", &["sys"]), ["os"]);
    assert_eq!(bad("exec(\"exec('import socket')\")", &[]), ["socket"]);
    assert_eq!(
        bad("eval(compile('__import__(\"pty\")', 'x', 'eval'))", &[]),
        ["pty"]
    );
    // Comment-looking text inside strings does not hide what follows (llm-sandbox's regex
    // strips it as a comment).
    assert_eq!(bad("print('#'); import os", &["builtins"]), ["os"]);
    let refs = scan_imports("x = 1\nexec('import os')\n").unwrap();
    assert_eq!(refs[0].position, Position { line: 2, column: 1 });
}

#[test]
fn empty_allowlist_blocks_every_import_and_no_imports_pass() {
    assert_eq!(bad("import os\nimport sys", &[]), ["os", "sys"]);
    assert_eq!(bad("print(1 + 1)", &[]), Vec::<String>::new());
}

#[test]
fn positions_and_syntax_errors_are_precise() {
    let refs = scan_imports("x = 1\n  \nif x:\n    import socket\n").unwrap();
    assert_eq!(
        refs[0].position,
        Position {
            line: 4,
            column: 12
        }
    );
    match scan_imports("def f(:\n    pass\n") {
        Err(InspectError::Syntax { position, .. }) => assert_eq!(position.line, 1),
        other => panic!("expected a syntax error, got {other:?}"),
    }
    // Nesting beyond the budget is refused before the parser recurses.
    let deep = format!("x = {}1{}", "(".repeat(300), ")".repeat(300));
    assert!(scan_imports(&deep).is_err());
}
