//! Bound calls really run Python (CPython) through the runtime's call API: the warm pool
//! (`mode = "direct"`), a fresh governed process per call (default and strict v1 policies,
//! where a network attempt is stopped) and the container backend (v2), sync and async.
//!
//! Not a libtest harness (`harness = false`): `main` must call `apizr_runtime::init()` first,
//! as every program with governed bindings does, because v1 calls re-execute this binary as
//! their launcher.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::time::Duration;

use apizr_runtime::CallError;

#[apizr_runtime::python(file = "tests/fixtures/py/calc.py")]
fn add(a: i64, b: Option<i64>) -> Result<i64, CallError>;

#[apizr_runtime::python(file = "tests/fixtures/py/calc.py", mode = "direct")]
fn scale(
    values: &[f64],
    factor: f64,
    label: Option<String>,
) -> Result<BTreeMap<String, f64>, CallError>;

#[apizr_runtime::python(file = "tests/fixtures/py/calc.py", function = "add", mode = "direct")]
async fn add_direct(a: i64, b: Option<i64>) -> Result<i64, CallError>;

#[apizr_runtime::python(
    file = "tests/fixtures/py/calc.py",
    function = "greet",
    policy = "tests/fixtures/policies/strict.json"
)]
async fn hello(name: String, punct: Option<String>) -> Result<String, CallError>;

#[apizr_runtime::python(
    file = "tests/fixtures/py/net.py",
    policy = "tests/fixtures/policies/strict.json",
    allow_conditional
)]
fn connect(port: u16) -> Result<String, CallError>;

#[apizr_runtime::python(
    file = "tests/fixtures/py/net.py",
    function = "connect",
    mode = "direct",
    allow_conditional
)]
fn connect_ungoverned(port: u16) -> Result<String, CallError>;

#[apizr_runtime::python(
    file = "tests/fixtures/py/calc.py",
    function = "add",
    policy = "tests/fixtures/policies/v2_absent.json",
    runtime_image = "sha256:0000000000000000000000000000000000000000000000000000000000000000",
    runtime_platform = "linux/amd64"
)]
fn add_in_container(a: i64, b: Option<i64>) -> Result<i64, CallError>;

type Case = (&'static str, fn() -> Result<(), String>);

fn check(condition: bool, what: String) -> Result<(), String> {
    if condition { Ok(()) } else { Err(what) }
}

fn direct_pool() -> Result<(), String> {
    let scaled = scale(&[1.0, 2.5], 2.0, Some("x".into())).map_err(|e| e.to_string())?;
    let expected = BTreeMap::from([("x0".to_string(), 2.0), ("x1".to_string(), 5.0)]);
    check(scaled == expected, format!("scale: {scaled:?}"))?;
    // Invalid arguments are refused before any worker runs, with the reference's detail.
    let error = scale(&[f64::NAN], 1.0, None).err();
    check(
        error.as_ref().map(CallError::status) == Some("invalid_input"),
        format!("NaN argument: {error:?}"),
    )
}

fn default_v1_policy() -> Result<(), String> {
    let sum = add(2, None).map_err(|e| e.to_string())?;
    check(sum == 4, format!("add(2) = {sum}"))?;
    let sum = add(2, Some(40)).map_err(|e| e.to_string())?;
    check(sum == 42, format!("add(2, 40) = {sum}"))
}

/// A listener that would accept: without the policy's control the connection succeeds
/// (proved by the ungoverned direct call), under `network: deny` it is stopped.
fn strict_policy_stops_the_network() -> Result<(), String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let open = connect_ungoverned(port).map_err(|e| format!("ungoverned: {e}"))?;
    check(open == "connected", format!("ungoverned connect: {open}"))?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    while listener.accept().is_ok() {}
    let result = connect(port);
    let error = result.clone().err();
    check(
        error.as_ref().map(CallError::status) == Some("execution_failed"),
        format!("strict connect: {result:?}"),
    )?;
    std::thread::sleep(Duration::from_millis(50));
    check(
        listener.accept().is_err(),
        "a governed connection reached the listener".into(),
    )
}

fn async_calls() -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let greeting = hello("Ada".into(), None).await.map_err(|e| e.to_string())?;
        check(greeting == "Hello, Ada!", format!("hello: {greeting}"))?;
        let greeting = hello("Ada".into(), Some("?".into()))
            .await
            .map_err(|e| e.to_string())?;
        check(greeting == "Hello, Ada?", format!("hello: {greeting}"))?;
        let sum = add_direct(1, Some(2)).await.map_err(|e| e.to_string())?;
        check(sum == 3, format!("add_direct: {sum}"))
    })
}

/// The v2 binding goes to the container backend: a pinned image that the engine does not
/// have is `runtime_image_unavailable` (no engine at all: `backend_unavailable`, a failure
/// under CI).
fn v2_goes_to_the_container_backend() -> Result<(), String> {
    let error = add_in_container(1, None).err();
    let status = error.as_ref().map(CallError::status);
    if status == Some("backend_unavailable") {
        apizr_test_support::skip(format!("no container engine ({error:?})"));
        return Ok(());
    }
    check(
        status == Some("runtime_image_unavailable"),
        format!("v2: {error:?}"),
    )
}

/// A governed bound call writes the same audit line as `apizr execute` (the backend writes it)
/// to `APIZR_AUDIT_FILE`: run in a child process of this binary with the variable set (the
/// executor of a binding is built once per process, when the variable is read).
fn bound_calls_write_the_audit_line() -> Result<(), String> {
    let file = std::env::temp_dir().join(format!("apizr-calls-audit-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = std::process::Command::new(exe)
        .arg(AUDIT_CHILD)
        .env("APIZR_AUDIT_FILE", &file)
        .output()
        .map_err(|e| e.to_string())?;
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let _ = std::fs::remove_file(&file);
    check(
        out.status.success(),
        format!("child: {}", String::from_utf8_lossy(&out.stderr)),
    )?;
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{e}: {text}"))?;
    check(lines.len() == 1, format!("one line per call: {text}"))?;
    let line = &lines[0];
    check(
        line["schema_version"] == "apizr.audit/v1"
            && line["capability_id"] == "python:calc:add"
            && line["status"] == "success",
        format!("audit line: {text}"),
    )?;
    // The digests are the ones compiled into the binding.
    let digests = add::__APIZR_BINDING.digests;
    check(
        line["executable_digest"] == digests.executable
            && digests.policy.is_some_and(|p| line["policy_digest"] == p),
        format!("digests {digests:?} vs {text}"),
    )
}

/// The argument that makes this binary the audit child.
const AUDIT_CHILD: &str = "__apizr_audit_child";

fn main() {
    apizr_runtime::init();
    if std::env::args().nth(1).as_deref() == Some(AUDIT_CHILD) {
        let sum = add(1, Some(2));
        std::process::exit(if sum == Ok(3) { 0 } else { 1 });
    }
    let cases: [Case; 6] = [
        ("direct_pool", direct_pool),
        ("default_v1_policy", default_v1_policy),
        (
            "strict_policy_stops_the_network",
            strict_policy_stops_the_network,
        ),
        ("async_calls", async_calls),
        (
            "v2_goes_to_the_container_backend",
            v2_goes_to_the_container_backend,
        ),
        (
            "bound_calls_write_the_audit_line",
            bound_calls_write_the_audit_line,
        ),
    ];
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    // nextest lists with `--list --format terse` (and `--ignored`: there are none here).
    if std::env::args().any(|a| a == "--list") {
        if std::env::args().any(|a| a == "--ignored") {
            return;
        }
        for (name, _) in cases {
            println!("{name}: test");
        }
        return;
    }
    let mut failed = 0;
    for (name, case) in cases {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        match case() {
            Ok(()) => println!("test {name} ... ok"),
            Err(why) => {
                failed += 1;
                println!("test {name} ... FAILED: {why}");
            }
        }
    }
    if failed > 0 {
        std::process::exit(1);
    }
}
