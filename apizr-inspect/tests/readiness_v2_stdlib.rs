//! Readiness v2 and the workers' standard library (`readiness/v2/stdlib_names.rs`, generated
//! by `scripts/gen-stdlib-table.py`): `from M import N` is proved only when the stdlib module
//! `M` binds `N` or has a submodule `N` on CPython 3.11, and `import a.b` only when `a.b`
//! exists and imports without effects. v1 keeps the reference tool's verdict.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod v2_support;

use apizr_ir::ReadinessPolicy;

const PROBE: &str = "\n\ndef probe(x: int) -> int:\n    return x\n";

/// Whether `probe` is ready, and the READY-004 culprit notes (`line:column note`).
fn inspect(source: &str, policy: ReadinessPolicy) -> (bool, Vec<String>) {
    let (ready, culprits) = v2_support::probe(source, policy);
    let notes = culprits
        .iter()
        .filter(|c| c.code == "APIZR-READY-004")
        .map(|c| {
            let note = c.note.clone().unwrap_or_default();
            format!("{}:{} {note}", c.line, c.column)
        })
        .collect();
    (ready, notes)
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

const CLASS_PRELUDE: &str = "import enum\nimport io\nimport socketserver\nimport traceback\n\
import types\nimport typing\nimport typing as t\n\
from http.client import HTTPConnection as _HTTPConnection\n\
from http.server import BaseHTTPRequestHandler, HTTPServer\n\
_KT = typing.TypeVar(\"_KT\")\n_VT = typing.TypeVar(\"_VT\")\n_T = t.TypeVar(\"_T\")\n";

/// Class statements over stdlib bases of the generated table (`stdlib_classes.txt`): typing
/// aliases through `__mro_entries__`, `property`, io, http.server, socketserver mixins,
/// `types.ModuleType`, `traceback.FrameSummary`, exceptions of one layout. Each is proved
/// and the module imports cleanly in CPython.
#[test]
fn classes_over_stdlib_bases_are_ready_and_import_in_cpython() {
    let classes = [
        "class Recent(typing.Generic[_KT, _VT], typing.MutableMapping[_KT, _VT]):\n    pass\n",
        "class ItemView(typing.Set[typing.Tuple[str, str]]):\n    pass\n",
        "class Headers(typing.MutableMapping[str, str]):\n    pass\n",
        "class cached(property, t.Generic[_T]):\n    pass\n",
        "class Raw(io.IOBase):\n    pass\n",
        "class Handler(BaseHTTPRequestHandler):\n    pass\n",
        "class Server(HTTPServer):\n    pass\n\n\n\
         class Threaded(socketserver.ThreadingMixIn, Server):\n    pass\n\n\n\
         class Forking(socketserver.ForkingMixIn, Server):\n    pass\n",
        "class Conn(_HTTPConnection):\n    pass\n\n\nclass Secure(Conn):\n    pass\n",
        "class Lazy(types.ModuleType):\n    pass\n\n\nclass Moved(Lazy):\n    pass\n",
        "class Frame(traceback.FrameSummary):\n    pass\n",
        "class Unexpected(AssertionError, UnicodeError):\n    pass\n",
        "class Pair(typing.Mapping[str, str], typing.Generic[_T]):\n    pass\n",
        // A class of the table is a type where typing needs one.
        "def f(x: typing.Optional[HTTPServer], y: io.IOBase) -> typing.List[types.ModuleType]:\n    return []\n",
    ];
    for class in classes {
        let source = format!("{CLASS_PRELUDE}\n\n{class}{PROBE}");
        let (ready, notes) = inspect(&source, ReadinessPolicy::V2);
        assert!(ready, "{class}: {notes:?}");
        let (ok, _, stderr) = run_in_cpython(&source);
        assert!(ok, "{class}: {stderr}");
    }
}

/// The near misses of each accepted shape: a lay-out conflict, a final class, an MRO CPython
/// cannot linearise, a metaclass conflict, `Generic` twice or plain, a type variable missing
/// from `Generic[...]`, nonempty `__slots__` under a tuple alias. v2 keeps READY-004 on the
/// class statement (line and column in the explanation); CPython raises `TypeError`.
#[test]
fn stdlib_base_near_misses_stay_unproved_and_raise_in_cpython() {
    let cases = [
        ("class X(int, str):\n    pass\n", "lay-out conflict"),
        (
            "class M(types.ModuleType, property):\n    pass\n",
            "lay-out conflict",
        ),
        (
            "class B(bool):\n    pass\n",
            "is not an acceptable base type",
        ),
        (
            "class F(types.FunctionType):\n    pass\n",
            "is not an acceptable base type",
        ),
        (
            "class E(typing.Mapping[str, str], typing.MutableMapping[str, str]):\n    pass\n",
            "consistent method resolution",
        ),
        (
            "class S(socketserver.BaseServer, HTTPServer):\n    pass\n",
            "consistent method resolution",
        ),
        (
            "class N(typing.MutableMapping[str, str], enum.Enum):\n    pass\n",
            "metaclass conflict",
        ),
        (
            "class G(typing.Generic[_T], typing.Generic[_KT]):\n    pass\n",
            "Cannot inherit from Generic[...] multiple times",
        ),
        (
            "class G(typing.Generic[_KT], typing.Mapping[_KT, _VT]):\n    pass\n",
            "are not listed in Generic",
        ),
        (
            "class G(typing.Generic):\n    pass\n",
            "Cannot inherit from plain Generic",
        ),
        (
            "class T(typing.Tuple[int, int]):\n    __slots__ = (\"a\",)\n",
            "nonempty __slots__ not supported",
        ),
        (
            "def f(x: typing.Optional[io.Nonexistent]) -> None:\n    pass\n",
            "has no attribute 'Nonexistent'",
        ),
    ];
    let line = CLASS_PRELUDE.lines().count() + 3;
    for (class, error) in cases {
        let source = format!("{CLASS_PRELUDE}\n\n{class}{PROBE}");
        let (ready, notes) = inspect(&source, ReadinessPolicy::V2);
        assert!(!ready, "{class}");
        assert!(
            notes.iter().any(|n| n.starts_with(&format!("{line}:"))
                && n.contains("readiness v2 cannot prove it harmless")),
            "{class}: {notes:?}"
        );
        let (ok, _, stderr) = run_in_cpython(&source);
        assert!(!ok && stderr.contains(error), "{class}: {stderr}");
    }
}
