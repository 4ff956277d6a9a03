//! Real-world parity and robustness on CPython's own standard library.
//!
//! Why: hand-written fixtures cover the rules one at a time; the stdlib is a large body of
//! real, varied Python (huge modules, every syntax feature of 3.11, odd encodings, files
//! that deliberately fail to parse). Two checks:
//!
//! * `stdlib_sample_matches_oracle` — a deterministic sample (recorded by
//!   `scripts/refresh-goldens` into `tests/stdlib-sample/sample.json`) is re-inspected with our
//!   binary; exit code, capability IDs, diagnostic codes, `ir_digest` and `readiness_digest`
//!   must equal the reference's. The recorded sha256 of each file must match the file on this
//!   machine: a different Python build is a FAILURE (with instructions), never a silent skip,
//!   because a skipped parity test looks exactly like a passing one.
//! * `no_panic_over_whole_stdlib` — every `.py` file under the stdlib directory (except
//!   `site-packages`) is inspected in-process; any panic is a failure. Errors (exit 2) are fine.
//!
//! `APIZR_STDLIB_DIR` overrides the stdlib directory recorded in the sample.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "conformance/support.rs"]
#[allow(dead_code)]
mod support;

/// Same stack the CLI gives an inspection thread (`apizr_inspect::project::INSPECT_STACK_BYTES`),
/// so "does not overflow here" means "does not overflow in the CLI".
const INSPECT_STACK_BYTES: usize = 256 * 1024 * 1024;

fn sample() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/stdlib-sample/sample.json");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap()
}

fn stdlib_dir(sample: &Value) -> PathBuf {
    match std::env::var_os("APIZR_STDLIB_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(sample["stdlib_dir"].as_str().unwrap()),
    }
}

fn workers() -> usize {
    std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8)
}

/// Run `f` over `items` on a few threads (each with `stack` bytes); results keep item order.
fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    stack: usize,
    name: &str,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|scope| {
        for i in 0..workers() {
            std::thread::Builder::new()
                .name(format!("{name}-{i}"))
                .stack_size(stack)
                .spawn_scoped(scope, || {
                    loop {
                        let index = next.fetch_add(1, Ordering::SeqCst);
                        let Some(item) = items.get(index) else { break };
                        let result = f(item);
                        results.lock().unwrap().push((index, result));
                    }
                })
                .unwrap();
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, r)| r).collect()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Problems for one sampled file (empty = parity).
fn check_entry(dir: &Path, entry: &Value, python: &str) -> Vec<String> {
    let rel = entry["path"].as_str().unwrap();
    let path = dir.join(rel);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) => {
            return vec![format!(
                "cannot read {}: {e}. The sample was recorded from CPython {python}'s stdlib; \
                 install that build or set APIZR_STDLIB_DIR to its lib/python3.11 directory",
                path.display()
            )];
        }
    };
    let sha = apizr_ir::Digest::sha256(&bytes).value;
    if entry["sha256"] != sha.as_str() {
        return vec![format!(
            "sha256 of {} is {sha}, the sample recorded {}: this machine's stdlib is not the \
             CPython {python} build the goldens come from. Point APIZR_STDLIB_DIR at that build, \
             or re-record with scripts/refresh-goldens (needs the reference oracle)",
            path.display(),
            entry["sha256"]
        )];
    }
    let path_text = path.display().to_string();
    let args = [
        "inspect".to_string(),
        path_text,
        "--format".into(),
        "json".into(),
    ];
    let run = match support::run_apizr(&args) {
        Ok(run) => run,
        Err(e) => return vec![e],
    };
    let expected_exit = entry["exit"].as_i64().unwrap();
    let mut problems = Vec::new();
    if run.code.map(i64::from) != Some(expected_exit) {
        problems.push(format!("exit {:?}, reference {expected_exit}", run.code));
    }
    if expected_exit == 2 {
        if run.stderr.iter().all(u8::is_ascii_whitespace) {
            problems.push("exit 2 without a message on stderr".to_string());
        }
        return problems;
    }
    let Ok(doc) = serde_json::from_slice::<Value>(&run.stdout) else {
        problems.push("stdout is not a JSON document".to_string());
        return problems;
    };
    let ir = &doc["capability_ir"];
    let ids: Vec<String> = ir["capabilities"]
        .as_array()
        .map(|caps| {
            caps.iter()
                .filter_map(|c| c["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if ids != strings(&entry["capability_ids"]) {
        problems.push(format!("capability ids differ: ours {ids:?}"));
    }
    let codes: Vec<String> = ir["diagnostics"]
        .as_array()
        .map(|d| {
            d.iter()
                .filter_map(|c| c["code"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if codes != strings(&entry["diagnostic_codes"]) {
        problems.push(format!(
            "diagnostic codes differ: ours {codes:?}, reference {:?}",
            strings(&entry["diagnostic_codes"])
        ));
    }
    for key in ["ir_digest", "readiness_digest"] {
        if doc[key]["value"] != entry[key] {
            problems.push(format!("{key} differs"));
        }
    }
    problems
}

#[test]
fn stdlib_sample_matches_oracle() {
    let sample = sample();
    let dir = stdlib_dir(&sample);
    let python = sample["python"].as_str().unwrap_or("?").to_string();
    let entries = sample["files"].as_array().unwrap().clone();
    assert!(
        entries.len() >= 60,
        "the sample must hold at least 60 files"
    );
    let results = parallel_map(&entries, 2 << 20, "stdlib-sample", |entry| {
        check_entry(&dir, entry, &python)
    });
    let mut failed = Vec::new();
    for (entry, problems) in entries.iter().zip(&results) {
        if !problems.is_empty() {
            let rel = entry["path"].as_str().unwrap();
            eprintln!("==== {rel} ====");
            for problem in problems {
                eprintln!("  - {problem}");
            }
            failed.push(rel);
        }
    }
    eprintln!(
        "stdlib sample: {}/{} files match the reference",
        entries.len() - failed.len(),
        entries.len()
    );
    assert!(
        failed.is_empty(),
        "{} of {} stdlib files differ from the reference:\n  {}",
        failed.len(),
        entries.len(),
        failed.join("\n  ")
    );
}

fn collect_py(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name();
        if kind.is_dir() {
            if name != "site-packages" && name != "__pycache__" {
                collect_py(&path, out);
            }
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "py") {
            out.push(path);
        }
    }
}

enum Outcome {
    Inspected,
    Refused,
    Panicked(String),
}

#[test]
fn no_panic_over_whole_stdlib() {
    let sample = sample();
    let dir = stdlib_dir(&sample);
    let mut files = Vec::new();
    collect_py(&dir, &mut files);
    files.sort();
    assert!(
        files.len() > 1000,
        "expected the whole CPython stdlib under {}, found {} .py files; set APIZR_STDLIB_DIR",
        dir.display(),
        files.len()
    );

    // Keep panics from our scan threads off the terminal (they are reported below); any other
    // thread's panic goes to the previous hook, so other tests' messages still show.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let scan = std::thread::current()
            .name()
            .is_some_and(|n| n.starts_with("stdlib-scan"));
        if !scan {
            previous(info);
        }
    }));

    let start = Instant::now();
    let results = parallel_map(&files, INSPECT_STACK_BYTES, "stdlib-scan", |path| {
        let began = Instant::now();
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
            apizr_inspect::inspect_path(path, None, apizr_inspect::InspectOptions::default())
        }));
        let outcome = match outcome {
            Ok(Ok(_)) => Outcome::Inspected,
            Ok(Err(_)) => Outcome::Refused,
            Err(payload) => Outcome::Panicked(
                payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "non-string panic payload".to_string()),
            ),
        };
        (outcome, began.elapsed())
    });
    let elapsed = start.elapsed();

    let mut panics = Vec::new();
    let (mut inspected, mut refused) = (0, 0);
    for (path, (outcome, _)) in files.iter().zip(&results) {
        match outcome {
            Outcome::Inspected => inspected += 1,
            Outcome::Refused => refused += 1,
            Outcome::Panicked(msg) => panics.push(format!(
                "{}: {}",
                path.strip_prefix(&dir).unwrap_or(path).display(),
                msg.lines().next().unwrap_or("")
            )),
        }
    }
    let mut slowest: Vec<(&PathBuf, Duration)> =
        files.iter().zip(results.iter().map(|(_, d)| *d)).collect();
    slowest.sort_by_key(|entry| std::cmp::Reverse(entry.1));
    eprintln!(
        "stdlib scan: {} files in {:.1}s: {inspected} inspected, {refused} refused (exit 2), {} panicked",
        files.len(),
        elapsed.as_secs_f64(),
        panics.len()
    );
    for (path, took) in slowest.iter().take(5) {
        eprintln!("  slow: {:>6} ms {}", took.as_millis(), path.display());
    }
    assert!(
        panics.is_empty(),
        "{} stdlib files panic the inspector:\n  {}",
        panics.len(),
        panics.join("\n  ")
    );
}
