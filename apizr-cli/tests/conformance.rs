//! Byte-for-byte conformance of `apizr inspect` with the reference tool (outerspace-apizr 0.4.6).
//!
//! Why: IR and readiness digests are identities that other tools persist, so "close" is wrong.
//! Every fixture under `tests/fixtures/inspect/**` carries goldens recorded from the reference by
//! `scripts/refresh-goldens` (see `tests/fixtures/inspect/README.md` for the convention). This
//! test runs the built binary on each input with `--ir` and with `--format json` (plus the
//! fixture's `.args`), and compares stdout bytes and the exit code. stderr is not compared (our
//! messages are worded differently on purpose), but a failing run (exit 2) must explain itself.
//!
//! All fixtures are checked before the test fails once with a summary, so one run shows the
//! whole picture. Set `APIZR_CONFORMANCE_ONLY=<substring>` to restrict the run to matching
//! fixture paths while working on one area.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

#[path = "conformance/support.rs"]
mod support;

use support::{Fixture, RunOutput, fixtures_root, list_fixtures, materialise, run_apizr};

/// One fixture's verdict: empty `problems` means it passed.
struct Verdict {
    rel: String,
    problems: Vec<String>,
    details: String,
}

fn golden(fixture: &Fixture, suffix: &str) -> Result<Vec<u8>, String> {
    let path = fixture.golden_path(suffix);
    std::fs::read(&path)
        .map_err(|_| format!("missing golden {suffix} (run scripts/refresh-goldens to record it)"))
}

fn check_mode(
    mode: &str,
    out: &RunOutput,
    expected_stdout: &[u8],
    expected_exit: i32,
    verdict: &mut Verdict,
) {
    match out.code {
        Some(code) if code == expected_exit => {}
        Some(code) => verdict
            .problems
            .push(format!("{mode}: exit {code}, expected {expected_exit}")),
        None => verdict
            .problems
            .push(format!("{mode}: no exit code ({})", out.signal_note())),
    }
    if out.stdout != expected_stdout {
        verdict.problems.push(format!("{mode}: stdout differs"));
        verdict.details.push_str(&support::explain_difference(
            mode,
            expected_stdout,
            &out.stdout,
        ));
    }
    if expected_exit == 2 && out.stderr.iter().all(u8::is_ascii_whitespace) {
        verdict.problems.push(format!(
            "{mode}: exit 2 expected with a message on stderr, got none"
        ));
    }
}

fn check_fixture(fixture: &Fixture, scratch: &Path) -> Verdict {
    let mut verdict = Verdict {
        rel: fixture.rel.clone(),
        problems: Vec::new(),
        details: String::new(),
    };
    let goldens = (
        golden(fixture, "ir"),
        golden(fixture, "json"),
        golden(fixture, "exit"),
    );
    let (ir, json, exit) = match goldens {
        (Ok(ir), Ok(json), Ok(exit)) => (ir, json, exit),
        (a, b, c) => {
            for err in [a.err(), b.err(), c.err()].into_iter().flatten() {
                verdict.problems.push(err);
            }
            return verdict;
        }
    };
    let expected_exit: i32 = match String::from_utf8_lossy(&exit).trim().parse() {
        Ok(code) => code,
        Err(_) => {
            verdict.problems.push("unreadable .exit golden".to_string());
            return verdict;
        }
    };
    let input = match materialise(fixture, scratch) {
        Ok(path) => path,
        Err(err) => {
            verdict
                .problems
                .push(format!("cannot materialise input: {err}"));
            return verdict;
        }
    };
    for (mode, flags, expected) in [
        ("--ir", &["--ir"][..], &ir),
        ("--format json", &["--format", "json"][..], &json),
    ] {
        let mut args: Vec<String> = vec!["inspect".into(), input.display().to_string()];
        args.extend(flags.iter().map(|s| s.to_string()));
        args.extend(fixture.args.iter().cloned());
        match run_apizr(&args) {
            Ok(out) => check_mode(mode, &out, expected, expected_exit, &mut verdict),
            Err(err) => verdict.problems.push(format!("{mode}: {err}")),
        }
    }
    verdict
}

fn scratch_dir(index: usize) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("conformance")
        .join(index.to_string())
}

#[test]
fn inspect_matches_reference_goldens() {
    let only = std::env::var("APIZR_CONFORMANCE_ONLY").ok();
    let fixtures: Vec<Fixture> = list_fixtures()
        .into_iter()
        .filter(|f| only.as_deref().is_none_or(|o| f.rel.contains(o)))
        .collect();
    assert!(
        !fixtures.is_empty(),
        "no fixtures under {}",
        fixtures_root().display()
    );

    let next = AtomicUsize::new(0);
    let verdicts: Mutex<Vec<Verdict>> = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    let Some(fixture) = fixtures.get(index) else {
                        break;
                    };
                    let verdict = check_fixture(fixture, &scratch_dir(index));
                    verdicts.lock().unwrap().push(verdict);
                }
            });
        }
    });
    let mut verdicts = verdicts.into_inner().unwrap();
    verdicts.sort_by(|a, b| a.rel.cmp(&b.rel));

    let failed: Vec<&Verdict> = verdicts.iter().filter(|v| !v.problems.is_empty()).collect();
    for verdict in &failed {
        eprintln!("\n==== {} ====", verdict.rel);
        for problem in &verdict.problems {
            eprintln!("  - {problem}");
        }
        eprint!("{}", verdict.details);
    }
    eprintln!(
        "\n{}",
        support::category_table(
            &verdicts
                .iter()
                .map(|v| (v.rel.as_str(), v.problems.is_empty()))
                .collect::<Vec<_>>()
        )
    );
    let passed = verdicts.len() - failed.len();
    eprintln!("conformance: {passed}/{} fixtures pass", verdicts.len());
    if !failed.is_empty() {
        let names: Vec<&str> = failed.iter().map(|v| v.rel.as_str()).collect();
        panic!(
            "{} of {} fixtures differ from the reference goldens:\n  {}",
            failed.len(),
            verdicts.len(),
            names.join("\n  ")
        );
    }
}

/// The goldens themselves must be coherent, independently of our binary: this catches a
/// broken refresh, hand edits, and a `.gen` materialiser that drifted from the Python one
/// (the golden source digest is the sha256 of the bytes the reference saw).
#[test]
fn goldens_are_self_consistent() {
    let mut problems = Vec::new();
    let fixtures = list_fixtures();
    for fixture in &fixtures {
        let (Ok(ir), Ok(json), Ok(exit)) = (
            golden(fixture, "ir"),
            golden(fixture, "json"),
            golden(fixture, "exit"),
        ) else {
            problems.push(format!("{}: missing goldens", fixture.rel));
            continue;
        };
        let exit = String::from_utf8_lossy(&exit).into_owned();
        if !matches!(exit.as_str(), "0\n" | "1\n" | "2\n") {
            problems.push(format!("{}: .exit is {exit:?}", fixture.rel));
            continue;
        }
        if exit == "2\n" {
            if !ir.is_empty() || !json.is_empty() {
                problems.push(format!(
                    "{}: exit 2 but non-empty stdout golden",
                    fixture.rel
                ));
            }
            continue;
        }
        let envelope: serde_json::Value = match serde_json::from_slice(&json) {
            Ok(v) => v,
            Err(err) => {
                problems.push(format!("{}: .json does not parse: {err}", fixture.rel));
                continue;
            }
        };
        let ir_digest = apizr_ir::Digest::sha256(&ir).value;
        if envelope["ir_digest"]["value"] != ir_digest.as_str() {
            problems.push(format!("{}: sha256(.ir) != .json ir_digest", fixture.rel));
        }
        let Ok(bytes) = support::input_bytes(fixture) else {
            problems.push(format!("{}: cannot materialise input", fixture.rel));
            continue;
        };
        let digest = apizr_ir::Digest::sha256(&bytes).value;
        if envelope["capability_ir"]["source"]["digest"]["value"] != digest.as_str() {
            problems.push(format!(
                "{}: golden source digest is not sha256 of the (materialised) input",
                fixture.rel
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "incoherent goldens:\n  {}",
        problems.join("\n  ")
    );
}

/// The corpus has to stay large enough to mean something (a minimum per category).
#[test]
fn corpus_covers_the_contract() {
    let fixtures = list_fixtures();
    assert!(fixtures.len() >= 150, "only {} fixtures", fixtures.len());
    for category in ["unparse", "encoding", "modules", "exit", "notebooks"] {
        let n = fixtures.iter().filter(|f| f.category() == category).count();
        assert!(n >= 8, "category {category} has only {n} fixtures");
    }
    let exits: Vec<String> = fixtures
        .iter()
        .filter_map(|f| std::fs::read_to_string(f.golden_path("exit")).ok())
        .collect();
    for code in ["0\n", "1\n", "2\n"] {
        assert!(exits.iter().any(|e| e == code), "no fixture exits {code:?}");
    }
    for must in [
        "encoding/pricing.py",
        "encoding/empty.py",
        "exit/over_16mib.gen",
        "exit/exactly_16mib.gen",
        "exit/ast_nodes_160k.gen",
        "exit/nesting_150.py",
        "exit/not_python.gen",
        "modules/pkg_sub_mod.py",
        "notebooks/nbformat_4_0.ipynb",
    ] {
        assert!(
            fixtures.iter().any(|f| f.rel == must),
            "missing fixture {must}"
        );
    }
}

/// The reference's published digests (pricing.py and friends) are pinned here, so a refresh
/// with a broken oracle environment cannot silently rewrite them.
#[test]
fn contract_vectors_are_pinned_in_goldens() {
    let root = fixtures_root();
    let pricing = std::fs::read(root.join("encoding/pricing.json")).unwrap();
    let pricing: serde_json::Value = serde_json::from_slice(&pricing).unwrap();
    assert_eq!(
        pricing["ir_digest"]["value"],
        "41fe9bf4dbdfdba4bc16fc70fe42eebf528c3afeb4578f755568889c84707a99"
    );
    assert_eq!(
        pricing["readiness_digest"]["value"],
        "c7f86ae4dd0b01439c3a27bd9d447f7631eb339d07140870c6ac28282ed8e9d2"
    );
    let empty = std::fs::read(root.join("encoding/empty.ir")).unwrap();
    assert_eq!(
        apizr_ir::Digest::sha256(&empty).value,
        "4dca669986c32017a34dbddc854c32311792fe16619237947e49b9c9673b5edc"
    );
    let generated = support::input_bytes(
        &list_fixtures()
            .into_iter()
            .find(|f| f.rel == "exit/exactly_16mib.gen")
            .unwrap(),
    )
    .unwrap();
    assert_eq!(generated.len(), 16 * 1024 * 1024);
    let over = support::input_bytes(
        &list_fixtures()
            .into_iter()
            .find(|f| f.rel == "exit/over_16mib.gen")
            .unwrap(),
    )
    .unwrap();
    assert_eq!(over.len(), 16 * 1024 * 1024 + 1);
}

/// Identity depends on bytes and module name only: the same file copied
/// elsewhere and named by a relative path from another working directory gives the same bytes.
/// Checked on every committed fixture of one category to keep it quick.
#[test]
fn output_does_not_depend_on_path() {
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("path-independence");
    let mut problems = Vec::new();
    let fixtures: Vec<Fixture> = list_fixtures()
        .into_iter()
        .filter(|f| f.category() == "encoding")
        .collect();
    assert!(!fixtures.is_empty());
    for fixture in fixtures {
        let dir = scratch.join(fixture.rel.replace('/', "_"));
        std::fs::create_dir_all(&dir).unwrap();
        let name = fixture
            .input
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        std::fs::copy(&fixture.input, dir.join(&name)).unwrap();
        let mut in_place = vec!["inspect".to_string(), fixture.input.display().to_string()];
        let mut relative = vec!["inspect".to_string(), name];
        for args in [&mut in_place, &mut relative] {
            args.extend(["--format".to_string(), "json".to_string()]);
            args.extend(fixture.args.iter().cloned());
        }
        let a = run_apizr(&in_place).unwrap();
        let b = support::run_apizr_in(&relative, Some(&dir)).unwrap();
        if (a.code, &a.stdout) != (b.code, &b.stdout) {
            problems.push(fixture.rel.clone());
        }
    }
    assert!(
        problems.is_empty(),
        "output depends on the path for: {problems:?}"
    );
}

/// The harness's own parsers must agree with what `scripts/refresh-goldens` does.
#[test]
fn split_words_matches_shlex() {
    assert_eq!(
        support::split_words("--module-name pkg.sub.mod\n"),
        ["--module-name", "pkg.sub.mod"]
    );
    assert_eq!(
        support::split_words("--module-name ''"),
        ["--module-name", ""]
    );
    assert_eq!(
        support::split_words("--module-name 'a b'"),
        ["--module-name", "a b"]
    );
    assert_eq!(
        support::split_words(r#"a "b \" c" d\ e"#),
        ["a", "b \" c", "d e"]
    );
}

#[test]
fn gen_recipes() {
    let (bytes, suffix) =
        support::run_gen("# c\nsuffix .txt\ntext \"a\\n\\x41\"\nrepeat \"xy\" 3\npad \"ab\" 12\n")
            .unwrap();
    assert_eq!(suffix, ".txt");
    assert_eq!(bytes, b"a\nAxyxyxyaba");
    assert!(support::run_gen("bogus \"x\"").is_err());
    assert!(support::run_gen("text \"unterminated").is_err());
}
