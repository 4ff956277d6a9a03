//! The proof obligation of readiness v2 on real code: every function v2 calls ready in a pinned
//! subset of PyPI wheels (`tests/readiness-corpus/requirements.txt`, exact versions and
//! hashes; `.ci/run` downloads and unpacks them into `target/readiness-corpus/src`) is served
//! from its package directory in the strict sandbox (a fresh worker per call: no network, no
//! subprocess, sandboxed filesystem), and calls with arguments generated from their request
//! schemas (up to [`CALLS_PER_MODULE`] per module, each importing the module afresh) end in
//! anything but `worker_failed`/`binding_failed`. A module v2 proves harmless
//! that fails at import in the sandbox is a prover bug.
//!
//! A module that fails at import and a function that raises both end in `execution_failed`, so
//! the import is checked where the worker reports it: a traceback through the worker's module
//! loader in the server's log. A control package that raises at import proves the check
//! catches one.
//!
//! The verdict under test is the package-aware one (`inspect_dir`), and `serve DIR --select
//! --readiness v2` gives the selected modules that same verdict: the functions are served
//! without `--allow-conditional`, so a function `inspect DIR` calls ready that serve refused
//! would fail the test too. Functions ready only with declared third-party dependencies
//! (READY-020) are left out: the sandbox's interpreter has none installed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use apizr_inspect::InspectOptions;
use apizr_inspect::project::{ProjectOptions, inspect_dir};
use apizr_ir::ReadinessPolicy;

#[path = "support/schema_example.rs"]
mod schema_example;
#[path = "support/served.rs"]
mod served;
use served::Served;

const STRICT: &str = r#"{"network":{"mode":"deny"},"filesystem":{"mode":"sandbox"},"subprocess":{"mode":"deny"},"resources":{"memory_bytes":268435456,"pids":16},"limits":{"wall_time_ms":60000}}"#;

/// Calls per module: the import (the proof obligation) happens on each, in a fresh worker;
/// every ready function is still selected, so serving binds and plans them all.
const CALLS_PER_MODULE: usize = 3;

/// At most `n` of `items`, spread evenly (first and last included).
fn spread<T>(items: &[T], n: usize) -> Vec<&T> {
    if items.len() <= n {
        return items.iter().collect();
    }
    (0..n)
        .map(|i| &items[i * (items.len() - 1) / (n - 1)])
        .collect()
}

/// The v2-ready functions (without READY-020) of every module of `dir`.
fn ready_functions(dir: &Path) -> BTreeMap<String, Vec<String>> {
    let options = ProjectOptions {
        inspect: InspectOptions {
            readiness: ReadinessPolicy::V2,
            ..InspectOptions::default()
        },
        threads: Some(2),
        keep_envelopes: true,
    };
    let project = inspect_dir(dir, &options).unwrap();
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for entry in &project.modules {
        let Ok(report) = &entry.result else {
            continue;
        };
        let envelope: serde_json::Value = serde_json::from_slice(&report.envelope).unwrap();
        for assessment in envelope["readiness"]["assessments"].as_array().unwrap() {
            let declared = assessment["dimensions"]["execution"]["reasons"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["code"] == "APIZR-READY-020");
            if assessment["can_generate_interface"] == true && !declared {
                let module = entry.module.clone().unwrap();
                let symbol = assessment["source"]["symbol"].as_str().unwrap();
                out.entry(module).or_default().push(symbol.to_string());
            }
        }
    }
    out
}

/// `schema` with every `#/components/schemas/…` reference replaced by its target.
fn inline(schema: &serde_json::Value, openapi: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref") {
                let name = target.trim_start_matches("#/components/schemas/");
                return inline(&openapi["components"]["schemas"][name], openapi);
            }
            Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), inline(v, openapi)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| inline(v, openapi)).collect()),
        other => other.clone(),
    }
}

/// The worker's traceback when a module failed at import (a frame of its module loader).
fn import_failure(log: &Path) -> Option<String> {
    let text = std::fs::read_to_string(log).unwrap();
    ["in _load_package_module", "in _load_module"]
        .iter()
        .any(|frame| text.contains(frame))
        .then_some(text)
}

/// The control: a package whose `__init__` raises, served the same way, is caught by
/// [`import_failure`] (so a real import failure cannot pass unnoticed). Its module imports
/// its package: a module that imports no file of the directory is served alone, without it.
fn control_is_caught(scratch: &Path, policy: &Path) {
    let root = scratch.join("control");
    std::fs::create_dir_all(root.join("broken")).unwrap();
    std::fs::write(
        root.join("broken/__init__.py"),
        "raise RuntimeError('import fails')\n",
    )
    .unwrap();
    std::fs::write(
        root.join("broken/mod.py"),
        "import broken\n\n\ndef f(x: int) -> int:\n    return x\n",
    )
    .unwrap();
    let log = scratch.join("control.log");
    let args = [
        root.to_str().unwrap(),
        "--select",
        "broken.mod:f",
        "--allow-conditional",
        "--policy",
        policy.to_str().unwrap(),
    ];
    let server = Served::spawn_ready_logging(
        &args,
        &[],
        Duration::from_secs(60),
        Duration::from_secs(60),
        std::fs::File::create(&log).unwrap().into(),
    );
    let (status, body) = server.post("f", r#"{"x": 1}"#);
    drop(server);
    assert_ne!(status, 200, "{body}");
    let caught = import_failure(&log).expect("the control's import failure is in the log");
    assert!(caught.contains("import fails"), "{caught}");
}

fn corpus() -> Option<PathBuf> {
    apizr_test_support::external_tool(
        "APIZR_READINESS_CORPUS",
        "target/readiness-corpus/src",
        "the pinned readiness corpus (.ci/run downloads tests/readiness-corpus/requirements.txt)",
    )
}

#[test]
fn v2_ready_functions_of_real_packages_import_and_run_in_the_strict_sandbox() {
    let Some(corpus) = corpus() else {
        return;
    };
    // One directory per run: two runs of this test over one target directory (two corpora
    // checked at once) must not remove each other's logs.
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("readiness-corpus-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let policy = scratch.join("strict.json");
    std::fs::write(&policy, STRICT).unwrap();
    control_is_caught(&scratch, &policy);
    let mut packages: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    packages.sort();
    assert!(packages.len() >= 3, "{packages:?}");
    let (mut modules, mut calls, mut failures) = (0, 0, Vec::new());
    for package in &packages {
        for (module, functions) in ready_functions(package) {
            modules += 1;
            let select: Vec<String> = functions.iter().map(|f| format!("{module}:{f}")).collect();
            let select = select.join(",");
            let args = [
                package.to_str().unwrap(),
                "--select",
                &select,
                "--readiness",
                "v2",
                "--policy",
                policy.to_str().unwrap(),
            ];
            let log = scratch.join(format!("{module}.log"));
            let server = Served::spawn_ready_logging(
                &args,
                &[],
                Duration::from_secs(60),
                Duration::from_secs(60),
                std::fs::File::create(&log).unwrap().into(),
            );
            let (status, body) = server.try_request("GET", "/openapi.json", "").unwrap();
            assert_eq!(status, 200, "{module}: {body}");
            let openapi: serde_json::Value = serde_json::from_str(&body).unwrap();
            for function in spread(&functions, CALLS_PER_MODULE) {
                let path = format!("/capabilities/{function}");
                let schema = &openapi["paths"][&path]["post"]["requestBody"]["content"]["application/json"]
                    ["schema"];
                let arguments = schema_example::example(&inline(schema, &openapi));
                let (status, body) = server.post(function, &arguments.to_string());
                calls += 1;
                let what = format!("{module}:{function}({arguments}) -> {status} {body}");
                eprintln!("{}", what.chars().take(160).collect::<String>());
                if ["worker_failed", "binding_failed", "policy_refused"]
                    .iter()
                    .any(|s| body.contains(s))
                    || status == 404
                {
                    failures.push(what);
                }
            }
            drop(server);
            if let Some(traceback) = import_failure(&log) {
                failures.push(format!("{module} failed at import:\n{traceback}"));
            }
        }
    }
    if std::env::var_os("APIZR_KEEP_CORPUS_LOGS").is_none() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("{modules} modules, {calls} calls");
    assert!(
        modules >= 6 && calls >= 15,
        "{modules} modules, {calls} calls"
    );
}
