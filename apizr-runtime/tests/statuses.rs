//! Every v1 status from a real CPython worker, plus the reference's boundary vectors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use apizr_runtime::ir::json::Value;
use apizr_runtime::ir::{ParameterKind, TypeKind};
use apizr_runtime::{Executable, ExecutionKind};
use common::*;

use ParameterKind::{KeywordOnly, PositionalOnly, PositionalOrKeyword};

const PRICING: &str = "def total(prices: list[float], *, tax: float = 0.2) -> float:\n    \"\"\"Sum prices with tax.\"\"\"\n    return sum(prices) * (1 + tax)\n\n\nasync def greet(name: str, /, punct: str = \"!\") -> str:\n    return f\"Hello {name}{punct}\"\n";

fn total_call() -> apizr_runtime::CallRequest {
    call(
        PRICING,
        "total",
        vec![
            param(
                "prices",
                PositionalOrKeyword,
                true,
                ts_items(TypeKind::List, vec![ts(TypeKind::Float)], false),
            ),
            param("tax", KeywordOnly, false, ts(TypeKind::Float)),
        ],
        &[("prices", Value::Array(vec![Value::Int(10), Value::Int(20)]))],
    )
}

#[test]
fn success_matches_the_reference_vector() {
    let out = runtime().execute(&total_call());
    assert_eq!(
        envelope_text(&out),
        "{\"schema_version\":\"apizr.execution-result/v1\",\"status\":\"success\",\"value\":36.0}\n",
        "{:?}",
        out.report
    );
}

#[test]
fn async_with_positional_only_argument() {
    let mut c = call(
        PRICING,
        "greet",
        vec![
            param("name", PositionalOnly, true, ts(TypeKind::Str)),
            param("punct", PositionalOrKeyword, false, ts(TypeKind::Str)),
        ],
        &[],
    );
    assert_eq!(c.execution, ExecutionKind::Async);
    c.positional = vec![Value::Str("Ada".into())];
    let out = runtime().execute(&c);
    assert_eq!(
        out.envelope.value,
        Value::Str("Hello Ada!".into()),
        "{:?}",
        out.report
    );
}

#[test]
fn output_limit_boundary_is_77_plus_n() {
    let rt = runtime();
    for (n, want) in [(51, "success"), (52, "output_limit")] {
        let mut c = call0(&format!("def f():\n    return 'x' * {n}\n"), "f");
        c.policy = policy(r#"{"limits":{"max_output_bytes":128}}"#);
        let out = rt.execute(&c);
        assert_eq!(status(&out), want, "n={n}: {:?}", out.report);
        if want == "success" {
            assert_eq!(out.envelope.canonical_bytes().unwrap().len(), 128);
        }
    }
}

#[test]
fn input_exactly_at_the_limit_passes_and_one_more_byte_fails() {
    let rt = runtime();
    // {"s":"xxxx"}\n = 9 + len bytes.
    let make = |len: usize, limit: usize| {
        let mut c = call(
            "def f(s):\n    return len(s)\n",
            "f",
            vec![param("s", PositionalOrKeyword, true, ts(TypeKind::Any))],
            &[("s", Value::Str("x".repeat(len)))],
        );
        c.policy = policy(&format!(r#"{{"limits":{{"max_input_bytes":{limit}}}}}"#));
        c
    };
    let at = rt.execute(&make(91, 100));
    assert_eq!(status(&at), "success", "{:?}", at.report);
    assert_eq!(at.envelope.value, Value::Int(91));
    let over = rt.execute(&make(92, 100));
    assert_eq!(status(&over), "invalid_input");
    assert_eq!(over.report.limits_hit, vec!["input".to_string()]);
}

#[test]
fn exceptions_system_exit_and_hard_exit() {
    let rt = runtime();
    for (body, want) in [
        ("raise ValueError('boom')", "execution_failed"),
        ("raise SystemExit(0)", "execution_failed"),
        ("raise KeyboardInterrupt()", "execution_failed"),
        ("import os\n    os._exit(3)", "worker_failed"),
        ("import os\n    os._exit(0)", "worker_failed"),
    ] {
        let out = rt.execute(&call0(&format!("def f():\n    {body}\n"), "f"));
        assert_eq!(status(&out), want, "{body}: {:?}", out.report);
        assert_eq!(out.envelope.value, Value::Null);
    }
    let import_time = rt.execute(&call0("raise SystemExit(1)\ndef f():\n    return 1\n", "f"));
    assert_eq!(status(&import_time), "execution_failed");
    let syntax = rt.execute(&call0("def f(:\n", "f"));
    assert_eq!(status(&syntax), "execution_failed");
}

#[test]
fn timeouts_cover_sync_and_async_sleep() {
    let rt = runtime();
    for source in [
        "import time\ndef f():\n    time.sleep(30)\n",
        "import asyncio\nasync def f():\n    await asyncio.sleep(30)\n",
    ] {
        let mut c = call0(source, "f");
        c.policy = policy(r#"{"limits":{"wall_time_ms":700}}"#);
        let started = std::time::Instant::now();
        let out = rt.execute(&c);
        assert_eq!(status(&out), "timeout", "{source}");
        assert!(started.elapsed().as_millis() < 3000);
        assert_eq!(out.report.limits_hit, vec!["wall_time".to_string()]);
    }
}

#[test]
fn prints_never_corrupt_the_frame() {
    let source = "import sys, os\ndef f():\n    print('{\"schema_version\": 1}' * 1000)\n    sys.stdout.write('x')\n    os.write(1, b'raw bytes on fd 1')\n    print('err', file=sys.stderr)\n    return 'ok'\n";
    let out = runtime().execute(&call0(source, "f"));
    assert_eq!(
        out.envelope.value,
        Value::Str("ok".into()),
        "{:?}",
        out.report
    );
    assert!(out.report.stderr.contains("raw bytes on fd 1"));
}

#[test]
fn non_json_results_are_result_invalid() {
    let rt = runtime();
    for expr in [
        "{1, 2}",
        "float('nan')",
        "float('inf')",
        "{1: 'a'}",
        "object()",
        "b'bytes'",
        "[{'a': {2}}]",
        "(lambda: 0)",
    ] {
        let out = rt.execute(&call0(&format!("def f():\n    return {expr}\n"), "f"));
        assert_eq!(status(&out), "result_invalid", "{expr}");
    }
    let deep = rt.execute(&call0(
        "def f():\n    x = []\n    for _ in range(100):\n        x = [x]\n    return x\n",
        "f",
    ));
    assert_eq!(status(&deep), "result_invalid");
}

#[test]
fn tuples_become_lists_and_json_is_canonical() {
    let out = runtime().execute(&call0(
        "def f():\n    return {'b': (1, (2.5, None)), 'a': 'é\\u2028', 'c': 10**30, 'd': 1e-7, 'e': True}\n",
        "f",
    ));
    assert_eq!(
        envelope_text(&out),
        "{\"schema_version\":\"apizr.execution-result/v1\",\"status\":\"success\",\"value\":{\"a\":\"é\u{2028}\",\"b\":[1,[2.5,null]],\"c\":1000000000000000000000000000000,\"d\":1e-07,\"e\":true}}\n"
    );
}

#[test]
fn fresh_state_per_call() {
    let rt = runtime();
    let source = "COUNTER = []\ndef f(acc=[]):\n    acc.append(1)\n    COUNTER.append(1)\n    return [len(acc), len(COUNTER)]\n";
    for _ in 0..2 {
        let out = rt.execute(&call(
            source,
            "f",
            vec![param("acc", PositionalOrKeyword, false, ts(TypeKind::Any))],
            &[],
        ));
        assert_eq!(
            out.envelope.value,
            Value::Array(vec![Value::Int(1), Value::Int(1)])
        );
    }
}

#[test]
fn typespec_conversion_builds_tuples_and_sets() {
    let source = "def f(p, s, u):\n    return [type(p).__name__, type(s).__name__, sorted(s), type(u).__name__, type(p[1]).__name__]\n";
    let int = ts(TypeKind::Int);
    let fixed = ts_items(
        TypeKind::Tuple,
        vec![int.clone(), ts(TypeKind::Float)],
        false,
    );
    let set = ts_items(TypeKind::Set, vec![int.clone()], false);
    let union = ts_items(
        TypeKind::Union,
        vec![
            ts_items(TypeKind::Tuple, vec![int.clone()], true),
            ts_items(TypeKind::List, vec![int.clone()], false),
        ],
        false,
    );
    let c = call(
        source,
        "f",
        vec![
            param("p", PositionalOrKeyword, true, fixed),
            param("s", PositionalOrKeyword, true, set),
            param("u", PositionalOrKeyword, true, union),
        ],
        &[
            ("p", Value::Array(vec![Value::Int(1), Value::Int(2)])),
            ("s", Value::Array(vec![Value::Int(2), Value::Int(1)])),
            ("u", Value::Array(vec![Value::Int(3)])),
        ],
    );
    let out = runtime().execute(&c);
    let want = serde_json_value(r#"["tuple","set",[1,2],"tuple","float"]"#);
    assert_eq!(out.envelope.value, want, "{:?}", out.report);
}

fn serde_json_value(text: &str) -> Value {
    apizr_ir::json::parse(text.as_bytes(), apizr_ir::json::Dialect::Strict).unwrap()
}

#[test]
fn binding_failures() {
    let rt = runtime();
    let shape = |source: &str, params| rt.execute(&call(source, "f", params, &[]));
    let any = ts(TypeKind::Any);
    for (source, params) in [
        ("def f(a):\n    return 1\n", vec![]),
        ("def f(*a):\n    return 1\n", vec![]),
        ("def f(**k):\n    return 1\n", vec![]),
        ("def f():\n    yield 1\n", vec![]),
        ("f = print\n", vec![]),
        ("def g():\n    return 1\n", vec![]),
        (
            "def f(a=1):\n    return 1\n",
            vec![param("a", PositionalOrKeyword, true, any.clone())],
        ),
        (
            "def f(a, /):\n    return 1\n",
            vec![param("a", PositionalOrKeyword, true, any.clone())],
        ),
    ] {
        let out = shape(source, params);
        assert_eq!(status(&out), "binding_failed", "{source}");
    }
    // async mismatch: an async def called as sync.
    let mut c = call0("async def f():\n    return 1\n", "f");
    c.execution = ExecutionKind::Sync;
    assert_eq!(status(&rt.execute(&c)), "binding_failed");
    // Module-name clashes: the vector was observed on the reference (`apizr execute
    // --module-name NAME`, outerspace-apizr 0.4.6).
    for (module, want) in [
        ("json", "binding_failed"),
        ("calendar", "binding_failed"),
        ("pydantic", "binding_failed"),
        ("collections.abc", "binding_failed"),
        ("os.path", "binding_failed"),
        ("turtle", "success"),
        ("wave", "success"),
        ("app", "success"),
        ("pkg.sub", "success"),
        ("xml.foo", "success"),
    ] {
        let mut c = call0("def f():\n    return 1\n", "f");
        c.module = module.into();
        assert_eq!(status(&rt.execute(&c)), want, "{module}");
    }
}

#[test]
fn dotted_modules_get_parent_packages() {
    let mut c = call0(
        "import sys\ndef f():\n    return [__name__, __package__, __file__, type(sys.modules['pkg.sub']).__name__]\n",
        "f",
    );
    c.module = "pkg.sub.mod".into();
    let out = runtime().execute(&c);
    assert_eq!(
        out.envelope.value,
        serde_json_value(r#"["pkg.sub.mod","pkg.sub","source/pkg/sub/mod.py","module"]"#)
    );
}

/// A module of a package: the package's files travel in the request; the worker imports the
/// module by name, parents first, so relative and absolute intra-package imports work, a
/// directory without `__init__.py` is a namespace package, and every file's digest is checked.
#[test]
fn a_module_of_a_package_imports_its_siblings_and_every_file_is_checked() {
    let module = "from . import helper\nfrom pkg import ROOT\nfrom ns.deep import value\n\
                  def f():\n    return [helper.twice(2), ROOT, value, __name__, __package__]\n";
    let files = |helper: &str| apizr_runtime::PackageFiles {
        files: [
            ("pkg/__init__.py", "ROOT = 'root ran'\n"),
            ("pkg/helper.py", helper),
            ("pkg/mod.py", module),
            ("ns/deep.py", "value = 'namespace'\n"),
        ]
        .into_iter()
        .map(|(path, text)| (path.to_string(), text.as_bytes().to_vec()))
        .collect(),
        requirements: Vec::new(),
    };
    let rt = runtime();
    let mut c = call0(module, "f");
    c.module = "pkg.mod".into();
    c.executable = c
        .executable
        .clone()
        .with_package(files("def twice(x):\n    return 2 * x\n"));
    let out = rt.execute(&c);
    assert_eq!(
        out.envelope.value,
        serde_json_value(r#"[4,"root ran","namespace","pkg.mod","pkg"]"#),
        "{:?}",
        out.report
    );
    // The same request with one sibling's bytes replaced after their digest was taken (what
    // a corrupted frame would carry): the worker refuses before importing anything.
    let payload = apizr_runtime::protocol::encode_request(&c, None).unwrap();
    let twice = apizr_runtime::protocol::base64(b"def twice(x):\n    return 2 * x\n");
    let other = apizr_runtime::protocol::base64(b"def twice(x):\n    return 3 * x\n");
    let text = String::from_utf8(payload).unwrap();
    assert!(text.contains(&twice));
    assert_eq!(
        worker_answer(text.replace(&twice, &other).as_bytes()),
        "source_mismatch"
    );
    assert_eq!(worker_answer(text.as_bytes()), "success");
    // The module's own file must be the executable that was bound.
    let mut other_module = c.clone();
    other_module.executable.package = Some(std::sync::Arc::new(apizr_runtime::PackageFiles {
        files: [(
            "pkg/mod.py".to_string(),
            b"def f():\n    return 0\n".to_vec(),
        )]
        .into_iter()
        .collect(),
        requirements: Vec::new(),
    }));
    assert_eq!(status(&rt.execute(&other_module)), "source_mismatch");
}

/// The status a bare worker (`python3 -I -S -c worker.py`, no launcher) answers `payload` with.
fn worker_answer(payload: &[u8]) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("python3")
        .args(["-I", "-S", "-c", apizr_runtime::worker::WORKER_SOURCE])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let frame = apizr_runtime::protocol::encode_frame(payload);
    child.stdin.take().unwrap().write_all(&frame).unwrap();
    let out = child.wait_with_output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout[8..]).unwrap();
    doc["status"].as_str().unwrap().to_string()
}

#[test]
fn source_mismatch_and_invalid_input() {
    let rt = runtime();
    let mut c = call0("def f():\n    return 1\n", "f");
    c.executable = Executable {
        bytes: b"def f():\n    return 2\n".to_vec(),
        digest: c.executable.digest.clone(),
        package: None,
        import_time: Default::default(),
    };
    assert_eq!(status(&rt.execute(&c)), "source_mismatch");
    // Argument that does not convert to its TypeSpec (the planner should have caught it).
    let bad = call(
        "def f(a):\n    return a\n",
        "f",
        vec![param("a", PositionalOrKeyword, true, ts(TypeKind::Int))],
        &[("a", Value::Str("1".into()))],
    );
    assert_eq!(status(&rt.execute(&bad)), "invalid_input");
    let nan = call(
        "def f(a):\n    return a\n",
        "f",
        vec![param("a", PositionalOrKeyword, true, ts(TypeKind::Any))],
        &[("a", Value::Float(f64::NAN))],
    );
    assert_eq!(status(&rt.execute(&nan)), "invalid_input");
}

#[test]
fn environment_allowlist_versus_inherit() {
    // CARGO_MANIFEST_DIR is set in this process by cargo: the stand-in for a host secret.
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    let rt = runtime();
    let source = "import os\ndef f():\n    return [os.environ.get('CARGO_MANIFEST_DIR'), os.environ.get('APIZR_SERVED_PROCESS'), sorted(k for k in os.environ if k not in ('LC_CTYPE', 'APIZR_SERVED_PROCESS'))]\n";
    let mut c = call0(source, "f");
    let hidden = rt.execute(&c);
    assert_eq!(
        hidden.envelope.value,
        serde_json_value(r#"[null,"1",[]]"#),
        "{:?}",
        hidden.report
    );
    c.policy = policy(r#"{"environment":{"allow":["CARGO_MANIFEST_DIR"]}}"#);
    let allowed = rt.execute(&c);
    let dir = env!("CARGO_MANIFEST_DIR");
    let Value::Array(items) = &allowed.envelope.value else {
        panic!("{:?}", allowed)
    };
    assert_eq!(items[0], Value::Str(dir.into()));
    c.policy = policy(r#"{"environment":{"inherit":true}}"#);
    let inherited = rt.execute(&c);
    let Value::Array(items) = &inherited.envelope.value else {
        panic!("{:?}", inherited)
    };
    assert_eq!(items[0], Value::Str(dir.into()));
    assert!(matches!(&items[2], Value::Array(names) if names.len() > 3));
}

#[test]
fn every_status_is_reachable() {
    // One compact sweep that names the status each vector produces (the detailed tests above
    // pin the boundaries); policy_refused comes from a runtime without a launcher.
    let rt = runtime();
    let mut seen = std::collections::BTreeSet::new();
    seen.insert(status(&rt.execute(&call0("def f():\n    return 1\n", "f"))));
    seen.insert(status(
        &rt.execute(&call0("def f():\n    raise ValueError\n", "f")),
    ));
    seen.insert(status(
        &rt.execute(&call0("def f():\n    return {1}\n", "f")),
    ));
    seen.insert(status(&rt.execute(&call0("def g():\n    return 1\n", "f"))));
    seen.insert(status(
        &rt.execute(&call0("import os\ndef f():\n    os._exit(3)\n", "f")),
    ));
    let mut big = call0("def f():\n    return 'x' * 1000\n", "f");
    big.policy = policy(r#"{"limits":{"max_output_bytes":128}}"#);
    seen.insert(status(&rt.execute(&big)));
    let mut slow = call0("import time\ndef f():\n    time.sleep(5)\n", "f");
    slow.policy = policy(r#"{"limits":{"wall_time_ms":300}}"#);
    seen.insert(status(&rt.execute(&slow)));
    let mut mismatch = call0("def f():\n    return 1\n", "f");
    mismatch.executable.digest = apizr_runtime::ir::Digest::sha256(b"other");
    seen.insert(status(&rt.execute(&mismatch)));
    let mut input = call(
        "def f(a):\n    return 1\n",
        "f",
        vec![param("a", PositionalOrKeyword, true, ts(TypeKind::Any))],
        &[("a", Value::Str("x".repeat(20)))],
    );
    input.policy = policy(r#"{"limits":{"max_input_bytes":10}}"#);
    seen.insert(status(&rt.execute(&input)));
    let root = temp_root("bare");
    let bare = apizr_runtime::LocalRuntime::new(apizr_runtime::RuntimeConfig {
        launcher: apizr_runtime::LauncherLocation::None,
        temp_root: root.to_path_buf(),
        ..apizr_runtime::RuntimeConfig::default()
    });
    let mut denied = call0("def f():\n    return 1\n", "f");
    denied.policy = policy(r#"{"network":{"mode":"deny"}}"#);
    seen.insert(status(&bare.execute(&denied)));
    assert_eq!(seen.len(), 10, "{seen:?}");
}

#[test]
fn audit_records_identities_and_never_argument_values() {
    let root = temp_root("audit");
    let path = root.join("audit.jsonl");
    let sink = std::sync::Arc::new(apizr_runtime::audit::FileAuditSink::open(&path).unwrap());
    let rt = runtime_in(&root).with_audit(sink);
    let c = call(
        "def f(secret):\n    return 1\n",
        "f",
        vec![param(
            "secret",
            PositionalOrKeyword,
            true,
            ts(TypeKind::Str),
        )],
        &[("secret", Value::Str("hunter2-argument-value".into()))],
    );
    let out = rt.execute(&c);
    assert_eq!(status(&out), "success");
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 1);
    let line = serde_json_value(text.trim_end());
    assert_eq!(line.get("status"), Some(&Value::Str("success".into())));
    assert_eq!(
        line.get("executable_digest"),
        Some(&Value::Str(c.executable.digest.prefixed()))
    );
    assert_eq!(
        line.get("policy_digest"),
        Some(&Value::Str(
            "sha256:e8b05fb2d6f3c81bb27a3a9fe4bca7d4ab28b001b3a73c2230e19314c5201d6b".into()
        ))
    );
    assert!(!text.contains("hunter2"));
}
