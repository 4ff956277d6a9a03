//! Shared helpers for the integration tests: real CPython workers through the real launcher.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use apizr_runtime::ir::SourceKind;
use apizr_runtime::ir::import_time::ImportTime;
use apizr_runtime::ir::json::Value;
use apizr_runtime::ir::policy::PolicyV1;
use apizr_runtime::ir::{ParameterKind, TypeKind, TypeSpec};
use apizr_runtime::local::prestart::{self, PrestartConfig, ProcessSource};
use apizr_runtime::{
    BindingParameter, CallOutcome, CallRequest, Executable, ExecutionKind, LauncherLocation,
    LocalRuntime, RuntimeConfig,
};

#[cfg(feature = "oci")]
pub mod oci;

/// A temp root unique to one test, so /proc scans can find exactly this test's processes.
/// Removed with everything in it when dropped (also when the test fails), so tests leave
/// nothing in the temp dir.
#[derive(Debug)]
pub struct TempRoot(tempfile::TempDir);

impl std::ops::Deref for TempRoot {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for TempRoot {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

pub fn temp_root(tag: &str) -> TempRoot {
    let dir = tempfile::Builder::new()
        .prefix(&format!("apizr-rt-test-{tag}-"))
        .tempdir()
        .unwrap();
    TempRoot(dir)
}

/// The runtime the tests use. Under `APIZR_TEST_V1_PRESTART=1` (the hostile suites' second
/// pass in CI) it serves every call through a pre-started worker and answers it before its
/// process has exited, as servers do ([`prestarted_in`]).
pub fn runtime_in(root: &Path) -> LocalRuntime {
    if through_pool() {
        return prestarted_in(root, prestart::MAX_IDLE);
    }
    cold_runtime_in(root)
}

/// Whether this run serves every call through the pre-start pool.
pub fn through_pool() -> bool {
    std::env::var_os("APIZR_TEST_V1_PRESTART").is_some_and(|v| v == "1")
}

/// A runtime without a pool.
pub fn cold_runtime_in(root: &Path) -> LocalRuntime {
    LocalRuntime::new(RuntimeConfig {
        launcher: LauncherLocation::Binary(PathBuf::from(env!("CARGO_BIN_EXE_apizr-launch"))),
        temp_root: root.to_path_buf(),
        ..RuntimeConfig::default()
    })
}

/// One pre-started worker per key; a call that finds none waits for it (so every call is
/// served by a worker started before its request).
pub fn waiting_pool(max_idle: std::time::Duration) -> PrestartConfig {
    PrestartConfig {
        size: 1,
        max_idle,
        wait: Some(std::time::Duration::from_secs(30)),
    }
}

/// A runtime whose calls all go through pre-started workers, configured as in a server:
/// each call is answered on its response frame and its end is awaited in the background
/// ([`exec`] waits for it, so a test sees what the call left behind).
pub fn prestarted_in(root: &Path, max_idle: std::time::Duration) -> LocalRuntime {
    let rt = cold_runtime_in(root);
    rt.answer_before_exit();
    assert!(rt.start_prestart(waiting_pool(max_idle)));
    rt
}

/// A runtime whose per-call directories go to the system temp dir (each call removes its own).
pub fn runtime() -> LocalRuntime {
    runtime_in(&std::env::temp_dir())
}

pub fn policy(text: &str) -> PolicyV1 {
    PolicyV1::from_json(&serde_json::from_str(text).unwrap()).unwrap()
}

pub fn ts(kind: TypeKind) -> TypeSpec {
    TypeSpec::simple(kind)
}

pub fn ts_items(kind: TypeKind, items: Vec<TypeSpec>, variadic: bool) -> TypeSpec {
    TypeSpec {
        items,
        variadic,
        ..TypeSpec::simple(kind)
    }
}

pub fn param(
    name: &str,
    kind: ParameterKind,
    required: bool,
    type_spec: TypeSpec,
) -> BindingParameter {
    BindingParameter {
        name: name.into(),
        kind,
        required,
        type_spec,
    }
}

/// A call of `function` in module `module` with keyword arguments only.
pub fn call(
    source: &str,
    function: &str,
    params: Vec<BindingParameter>,
    kwargs: &[(&str, Value)],
) -> CallRequest {
    let execution = if source.contains(&format!("async def {function}")) {
        ExecutionKind::Async
    } else {
        ExecutionKind::Sync
    };
    CallRequest {
        capability_id: format!("python:m:{function}"),
        executable: Executable::new(source.as_bytes().to_vec())
            .with_import_time(import_time_of(source)),
        module: "m".into(),
        function: function.into(),
        execution,
        parameters: params,
        returns: None,
        positional: vec![],
        keyword: kwargs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect::<BTreeMap<_, _>>(),
        policy: PolicyV1::default(),
    }
}

/// The readiness verdict on importing `source` (module `m`) ahead of its call, as a server
/// decides it (the real inspector, readiness v1): pre-started workers (the hostile suites'
/// pool pass) import a module ahead exactly when a server would.
pub fn import_time_of(source: &str) -> ImportTime {
    let options = apizr_inspect::InspectOptions::default();
    match apizr_inspect::on_inspect_stack(|| {
        apizr_inspect::inspect_bytes(source.as_bytes(), SourceKind::Python, "m", options)
    }) {
        Ok(Ok(outcome)) => ImportTime::of_report(&outcome.inspection.readiness, false),
        _ => ImportTime::Unknown,
    }
}

/// A zero-argument call.
pub fn call0(source: &str, function: &str) -> CallRequest {
    call(source, function, vec![], &[])
}

pub fn status(outcome: &CallOutcome) -> &'static str {
    outcome.envelope.status.wire_name()
}

pub fn envelope_text(outcome: &CallOutcome) -> String {
    String::from_utf8(outcome.envelope.canonical_bytes().unwrap()).unwrap()
}

/// PIDs of live processes whose working directory is under `root` or whose command line
/// contains `marker`.
pub fn processes_of(root: &Path, marker: &str) -> Vec<(i32, String)> {
    let root = root.to_string_lossy().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if pid == std::process::id() as i32 {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        if stat.contains(") Z ") {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        let cwd = std::fs::read_link(entry.path().join("cwd"))
            .map(|p| p.to_string_lossy().to_string())
            .unwrap_or_default();
        if cwd.starts_with(&root) || (!marker.is_empty() && cmdline.contains(marker)) {
            found.push((pid, cmdline.chars().take(80).collect()));
        }
    }
    found
}

/// Whether this run is CI: the project's one detector ([`apizr_test_support::in_ci`]).
pub fn ci() -> bool {
    apizr_test_support::in_ci()
}

/// A host mechanism a test needs. Outside CI a missing one skips the test (returns false,
/// with a note); under CI it fails the test: nothing passes by not running.
#[track_caller]
pub fn require(present: bool, what: &str) -> bool {
    if !present {
        apizr_test_support::skip(format!("this host cannot enforce {what}"));
    }
    present
}

/// Every control row of `outcome` named `control`, which must be enforced (see [`require`]).
pub fn enforced(outcome: &CallOutcome, control: &str) -> bool {
    let row = outcome
        .report
        .controls
        .iter()
        .find(|c| c.control == control);
    require(row.is_some_and(|r| r.enforced), control)
}

/// The strictest v1 policy the tool accepts (what the issue's attacks ran under).
pub const STRICT: &str = r#"{"network":{"mode":"deny"},"filesystem":{"mode":"sandbox"},"subprocess":{"mode":"deny"},"resources":{"memory_bytes":268435456,"pids":16}}"#;
/// The default policy.
pub const DEFAULT: &str = "{}";

/// The envelope's value as JSON.
pub fn value(outcome: &CallOutcome) -> serde_json::Value {
    let text = envelope_text(outcome);
    serde_json::from_str::<serde_json::Value>(&text).unwrap()["value"].clone()
}

/// Run `function` of `source` (no arguments) under `policy_text`.
pub fn run(rt: &LocalRuntime, source: &str, function: &str, policy_text: &str) -> CallOutcome {
    let mut c = call0(source, function);
    c.policy = policy(policy_text);
    exec(rt, &c)
}

/// `rt.execute(call)`, then waits until the call's end (answered on its frame) is cleaned
/// up, so what it left behind can be checked; when the run goes [`through_pool`], also checks
/// that a call that ran a worker got a pre-started one (so the attack really met a
/// pre-started worker).
pub fn exec(rt: &LocalRuntime, call: &CallRequest) -> CallOutcome {
    let out = rt.execute(call);
    assert!(
        rt.settle(std::time::Duration::from_secs(30)),
        "a call did not end"
    );
    if through_pool() && out.report.process.is_some() {
        assert_eq!(
            out.report.process,
            Some(ProcessSource::Prestarted),
            "{:?}",
            out.report
        );
        // A module readiness finds harmless to import was imported ahead of its call.
        let ahead = call.executable.import_time == ImportTime::Harmless;
        assert_eq!(out.report.preimported, Some(ahead), "{:?}", out.report);
    }
    out
}

/// Remove a test's temp root (tests leave nothing behind).
pub fn cleanup(root: &Path) {
    let _ = std::fs::remove_dir_all(root);
}
