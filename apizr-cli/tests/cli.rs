//! End-to-end tests of the `apizr` binary: real processes, real files, exit codes and bytes.
//!
//! Single-file behaviour (exit codes, output modes, error rendering) and the directory mode
//! (module naming, skipping rules, determinism, symlinks, isolation of failures).

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use apizr_ir::Digest;
use serde_json::Value;

const PRICING_SOURCE_DIGEST: &str =
    "cbca7424f6c23afc9b8b8d3b9827d60bb8dba4838fa5d0452a3768c5ca0bb329";
const PRICING_IR_DIGEST: &str = "41fe9bf4dbdfdba4bc16fc70fe42eebf528c3afeb4578f755568889c84707a99";
const PRICING_READINESS_DIGEST: &str =
    "c7f86ae4dd0b01439c3a27bd9d447f7631eb339d07140870c6ac28282ed8e9d2";

/// The oracle's digests for `examples/notebook.ipynb` (outerspace-apizr 0.4.6, nbconvert 7.17.2).
const NOTEBOOK_IR_DIGEST: &str = "5318c1457cc606ea838359230e8560832fb5a07f1a215c73cb961367a5fd2628";
const NOTEBOOK_READINESS_DIGEST: &str =
    "dd86bebb26d14f1a2491aabd06c05e6ab3547f560673f18e87b50b7908fc9f3b";

fn apizr(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_apizr"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn apizr_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_apizr"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn code(output: &Output) -> i32 {
    output.status.code().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn example(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name);
    path.to_str().unwrap().to_string()
}

/// A fresh, empty directory under the target dir (no tempfile dependency needed).
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, rel: &str, text: &str) -> PathBuf {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, text).unwrap();
    path
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Top-level command line

#[test]
fn version_prints_name_and_version() {
    let out = apizr(&["--version"]);
    assert_eq!(code(&out), 0);
    assert_eq!(
        stdout(&out),
        format!("apizr {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn unknown_subcommand_is_a_usage_error() {
    let out = apizr(&["frobnicate"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("frobnicate"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
}

#[test]
fn no_command_shows_usage_and_exits_2() {
    let out = apizr(&[]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("inspect"));
}

#[test]
fn help_pages_have_examples_and_exit_codes() {
    let out = apizr(&["help", "inspect"]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert!(text.contains("Examples:"), "{text}");
    assert!(text.contains("Exit status:"), "{text}");
    assert!(text.contains("--strip-magics"), "{text}");
}

#[test]
fn completions_are_generated_for_bash_zsh_and_fish() {
    for shell in ["bash", "zsh", "fish"] {
        let out = apizr(&["completion", shell]);
        assert_eq!(code(&out), 0, "{shell}");
        let script = stdout(&out);
        assert!(script.contains("apizr"), "{shell}");
        assert!(script.contains("inspect"), "{shell}");
        assert!(script.contains("module-name"), "{shell}");
    }
    assert_eq!(code(&apizr(&["completion", "tcsh"])), 2);
}

// ---------------------------------------------------------------------------------------------
// Single file: output modes and exit codes

#[test]
fn format_and_ir_are_mutually_exclusive() {
    let out = apizr(&[
        "inspect",
        &example("pricing.py"),
        "--format",
        "json",
        "--ir",
    ]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("--ir"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let out = apizr(&["inspect", &example("pricing.py"), "--format", "yaml"]);
    assert_eq!(code(&out), 2);
}

#[test]
fn ir_bytes_hash_to_the_envelope_ir_digest() {
    let ir = apizr(&["inspect", &example("pricing.py"), "--ir"]);
    let envelope = apizr(&["inspect", &example("pricing.py"), "--format", "json"]);
    assert_eq!(code(&ir), 0);
    assert_eq!(code(&envelope), 0);
    assert!(ir.stdout.ends_with(b"}\n"));
    let doc = json(&envelope);
    assert_eq!(
        doc["ir_digest"]["value"],
        Digest::sha256(&ir.stdout).value.as_str()
    );
    assert_eq!(doc["schema_version"], "apizr.inspection/v1");
    // The envelope is canonical: re-encoding the IR member gives the --ir bytes.
    let ir_doc: Value = serde_json::from_slice(&ir.stdout).unwrap();
    assert_eq!(doc["capability_ir"], ir_doc);
}

#[test]
fn pricing_example_matches_the_reference_vector() {
    let out = apizr(&["inspect", &example("pricing.py"), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(
        doc["capability_ir"]["source"]["digest"]["value"],
        PRICING_SOURCE_DIGEST
    );
    assert_eq!(doc["ir_digest"]["value"], PRICING_IR_DIGEST);
    assert_eq!(doc["readiness_digest"]["value"], PRICING_READINESS_DIGEST);
}

#[test]
fn notebook_example_matches_the_reference_vector() {
    let out = apizr(&["inspect", &example("notebook.ipynb"), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["capability_ir"]["source"]["kind"], "notebook");
    assert_eq!(doc["ir_digest"]["value"], NOTEBOOK_IR_DIGEST);
    assert_eq!(doc["readiness_digest"]["value"], NOTEBOOK_READINESS_DIGEST);
}

#[test]
fn notebook_magics_are_refused_with_a_hint_or_stripped_with_a_warning() {
    let dir = scratch("magics");
    write(
        &dir,
        "magic.ipynb",
        r#"{"cells":[{"cell_type":"code","execution_count":null,"id":"a1","metadata":{},"outputs":[],
"source":["%matplotlib inline\n","def f(x: int) -> int:\n","    return x"]}],
"metadata":{},"nbformat":4,"nbformat_minor":5}"#,
    );
    let refused = apizr_in(&dir, &["inspect", "magic.ipynb"]);
    assert_eq!(code(&refused), 2);
    assert!(refused.stdout.is_empty());
    let err = stderr(&refused);
    assert!(err.starts_with("apizr inspect: magic.ipynb:"), "{err}");
    assert!(err.contains("--strip-magics"), "{err}");
    let stripped = apizr_in(
        &dir,
        &[
            "inspect",
            "magic.ipynb",
            "--strip-magics",
            "--format",
            "json",
        ],
    );
    assert_eq!(code(&stripped), 0, "{}", stderr(&stripped));
    assert!(
        stderr(&stripped).starts_with("warning: magic.ipynb"),
        "{}",
        stderr(&stripped)
    );
    let doc = json(&stripped);
    assert_eq!(doc["capability_ir"]["capabilities"][0]["name"], "f");
}

#[test]
fn text_report_shows_the_digests_of_the_json_envelope() {
    let text = apizr(&["inspect", &example("pricing.py")]);
    let envelope = json(&apizr(&[
        "inspect",
        &example("pricing.py"),
        "--format",
        "json",
    ]));
    assert_eq!(code(&text), 0);
    let report = stdout(&text);
    let ir_digest = envelope["ir_digest"]["value"].as_str().unwrap();
    let readiness_digest = envelope["readiness_digest"]["value"].as_str().unwrap();
    assert!(report.contains(&format!("sha256:{ir_digest}")), "{report}");
    assert!(
        report.contains(&format!("sha256:{readiness_digest}")),
        "{report}"
    );
    assert!(report.contains("apizr.readiness/v1"), "{report}");
    assert!(
        !report.contains('\x1b'),
        "no colour when stdout is not a terminal"
    );
    for assessment in envelope["readiness"]["assessments"].as_array().unwrap() {
        let symbol = assessment["source"]["symbol"].as_str().unwrap();
        assert!(report.contains(symbol), "{symbol} missing from {report}");
    }
}

#[test]
fn module_name_option_changes_identity() {
    let out = apizr(&[
        "inspect",
        &example("pricing.py"),
        "--ir",
        "--module-name",
        "shop.pricing",
    ]);
    assert_eq!(code(&out), 0);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["source"]["module"], "shop.pricing");
    let bad = apizr(&["inspect", &example("pricing.py"), "--module-name", "a..b"]);
    assert_eq!(code(&bad), 2);
    assert!(
        stderr(&bad).starts_with("apizr inspect: "),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn unsupported_assessment_exits_1_and_conditional_exits_0() {
    let dir = scratch("exit-codes");
    let generator = write(&dir, "gen.py", "def numbers():\n    yield 1\n");
    let out = apizr(&["inspect", generator.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "generator is unsupported: {}", stdout(&out));
    let duplicate = write(
        &dir,
        "dup.py",
        "def f(x: int) -> int:\n    return x\n\n\ndef f(x: int) -> int:\n    return x\n",
    );
    assert_eq!(code(&apizr(&["inspect", duplicate.to_str().unwrap()])), 1);
    let conditional = write(
        &dir,
        "cond.py",
        "import numpy\n\n\ndef f(x: int) -> int:\n    return x\n",
    );
    let out = apizr(&["inspect", conditional.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "conditional only: {}", stdout(&out));
    assert_eq!(
        json(&out)["readiness"]["assessments"][0]["state"],
        "conditional"
    );
    let empty = write(&dir, "empty.py", "");
    assert_eq!(code(&apizr(&["inspect", empty.to_str().unwrap()])), 0);
}

// ---------------------------------------------------------------------------------------------
// Single file: errors

#[test]
fn syntax_error_has_position_source_line_and_caret() {
    let dir = scratch("syntax");
    write(&dir, "broken.py", "x = 1\ndef f(:\n    pass\n");
    let out = apizr_in(&dir, &["inspect", "broken.py"]);
    assert_eq!(code(&out), 2);
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines[0].starts_with("apizr inspect: broken.py:2:"), "{err}");
    assert!(lines.len() >= 4, "{err}");
    assert_eq!(lines[2], "2 | def f(:", "{err}");
    assert!(lines[3].trim_end().ends_with('^'), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // The caret sits under the column the first line names.
    let column: usize = lines[0]
        .trim_start_matches("apizr inspect: broken.py:2:")
        .split(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        lines[3].find('^').unwrap() - "  | ".len() + 1,
        column,
        "{err}"
    );
}

#[test]
fn read_errors_are_one_line() {
    let out = apizr(&["inspect", "/nonexistent/apizr/missing.py"]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("apizr inspect: /nonexistent/apizr/missing.py"),
        "{err}"
    );
}

#[test]
fn unsupported_suffix_exits_2() {
    let dir = scratch("suffix");
    write(&dir, "notes.txt", "def f():\n    pass\n");
    let out = apizr_in(&dir, &["inspect", "notes.txt"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("notes.txt"), "{}", stderr(&out));
}

#[test]
fn invalid_file_stem_suggests_module_name() {
    let dir = scratch("stem");
    write(&dir, "my-file.py", "def f():\n    pass\n");
    let out = apizr_in(&dir, &["inspect", "my-file.py"]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.starts_with("apizr inspect: "), "{err}");
    assert!(err.contains("--module-name"), "{err}");
    let fixed = apizr_in(&dir, &["inspect", "my-file.py", "--module-name", "my_file"]);
    assert_eq!(code(&fixed), 0, "{}", stderr(&fixed));
}

// ---------------------------------------------------------------------------------------------
// Directory mode

/// A small project with everything the walker must handle.
fn project_tree(name: &str) -> PathBuf {
    let dir = scratch(name);
    let ok = "def f(x: int) -> int:\n    return x\n";
    write(&dir, "pkg/__init__.py", "");
    write(&dir, "pkg/sub/mod.py", ok);
    write(&dir, "pkg/bad.py", "def broken(:\n");
    write(&dir, "my-file.py", ok);
    write(&dir, "top.py", ok);
    write(&dir, "README.md", "not python\n");
    write(&dir, ".hidden/secret.py", ok);
    write(&dir, "pkg/__pycache__/cached.py", ok);
    write(&dir, "node_modules/dep/x.py", ok);
    write(&dir, "lib/site-packages/thirdparty.py", ok);
    write(&dir, "venv/pyvenv.cfg", "home = /usr/bin\n");
    write(&dir, "venv/lib/inside_venv.py", ok);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.join("pkg"), dir.join("linked")).unwrap();
        std::os::unix::fs::symlink(dir.join("top.py"), dir.join("linked_file.py")).unwrap();
    }
    dir
}

fn paths(doc: &Value) -> Vec<String> {
    doc["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap().to_string())
        .collect()
}

fn entry<'a>(doc: &'a Value, path: &str) -> &'a Value {
    doc["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["path"] == path)
        .unwrap()
}

#[test]
fn directory_mode_walks_names_and_skips() {
    let dir = project_tree("dir-walk");
    let out = apizr(&["inspect", dir.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "some files fail: {}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["schema_version"], "apizr.project-inspection/v1");
    assert_eq!(
        paths(&doc),
        [
            "my-file.py",
            "pkg/__init__.py",
            "pkg/bad.py",
            "pkg/sub/mod.py",
            "top.py"
        ]
    );
    assert_eq!(entry(&doc, "pkg/__init__.py")["module"], "pkg");
    assert_eq!(entry(&doc, "pkg/sub/mod.py")["module"], "pkg.sub.mod");
    assert_eq!(entry(&doc, "top.py")["module"], "top");
    let inspection = &entry(&doc, "pkg/sub/mod.py")["inspection"];
    assert_eq!(inspection["schema_version"], "apizr.inspection/v1");
    assert_eq!(
        inspection["capability_ir"]["source"]["module"],
        "pkg.sub.mod"
    );

    let bad = &entry(&doc, "pkg/bad.py")["error"];
    assert_eq!(bad["kind"], "syntax");
    assert_eq!(bad["line"], 1);
    assert!(bad["column"].as_u64().unwrap() >= 1);
    assert!(entry(&doc, "pkg/bad.py").get("inspection").is_none());

    assert_eq!(entry(&doc, "my-file.py")["error"]["kind"], "module_name");

    let summary = &doc["summary"];
    assert_eq!(summary["modules"], 5);
    assert_eq!(summary["failed"], 2);
    assert_eq!(summary["inspected"], 3);
}

#[test]
fn directory_output_is_deterministic_and_canonical() {
    let dir = project_tree("dir-determinism");
    let root = dir.to_str().unwrap();
    let first = apizr(&["inspect", root, "--format", "json"]);
    let second = apizr(&["inspect", root, "--format", "json", "--threads", "1"]);
    let third = apizr(&["inspect", root, "--format", "json", "--threads", "7"]);
    assert_eq!(first.stdout, second.stdout);
    assert_eq!(first.stdout, third.stdout);
    // The same tree elsewhere gives the same bytes: no absolute paths leak into the document.
    let moved = project_tree("dir-determinism-moved");
    let elsewhere = apizr(&["inspect", moved.to_str().unwrap(), "--format", "json"]);
    assert_eq!(first.stdout, elsewhere.stdout);
    assert!(first.stdout.ends_with(b"}\n"));
    assert!(!first.stdout[..first.stdout.len() - 1].contains(&b'\n'));
    // Keys are sorted at the top level and in the summary.
    let text = stdout(&first);
    assert!(text.starts_with("{\"modules\":[{"), "{text}");
    let tail = &text[text.rfind("],\"project_digest\":").unwrap()..];
    assert!(
        tail.contains(
            "},\"schema_version\":\"apizr.project-inspection/v1\",\"summary\":{\"assessments\":{\"ambiguous\":"
        ),
        "{tail}"
    );
    assert!(
        tail.ends_with(",\"failed\":2,\"inspected\":3,\"modules\":5,\"needing_attention\":0}}\n"),
        "{tail}"
    );
}

#[test]
fn project_digest_follows_its_definition() {
    let dir = project_tree("dir-digest");
    let doc = json(&apizr(&[
        "inspect",
        dir.to_str().unwrap(),
        "--format",
        "json",
    ]));
    let mut items: Vec<(String, String, String)> = doc["modules"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| {
            let inspection = m.get("inspection")?;
            Some((
                m["module"].as_str()?.to_string(),
                inspection["ir_digest"]["value"].as_str()?.to_string(),
                inspection["readiness_digest"]["value"]
                    .as_str()?
                    .to_string(),
            ))
        })
        .collect();
    items.sort();
    let body: Vec<String> = items
        .iter()
        .map(|(module, ir, readiness)| {
            format!(
                "{{\"ir_digest\":{{\"algorithm\":\"sha256\",\"value\":\"{ir}\"}},\"module\":\"{module}\",\
                 \"readiness_digest\":{{\"algorithm\":\"sha256\",\"value\":\"{readiness}\"}}}}"
            )
        })
        .collect();
    let canonical = format!("[{}]\n", body.join(","));
    assert_eq!(
        doc["project_digest"]["value"],
        Digest::sha256(canonical.as_bytes()).value.as_str()
    );
    assert_eq!(doc["project_digest"]["algorithm"], "sha256");
}

#[test]
fn clean_directory_exits_0_and_text_lists_every_module() {
    let dir = scratch("dir-clean");
    write(&dir, "a.py", "def f(x: int) -> int:\n    return x\n");
    write(
        &dir,
        "b/__init__.py",
        "def g(y: str) -> str:\n    return y\n",
    );
    let out = apizr(&["inspect", dir.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let text = stdout(&out);
    assert!(text.contains("a.py"), "{text}");
    assert!(text.contains("b/__init__.py"), "{text}");
    assert!(text.contains("project digest: sha256:"), "{text}");
    let json_out = json(&apizr(&[
        "inspect",
        dir.to_str().unwrap(),
        "--format",
        "json",
    ]));
    let digest = json_out["project_digest"]["value"].as_str().unwrap();
    assert!(text.contains(digest), "{text}");
}

#[test]
fn empty_directory_and_directory_named_like_a_file() {
    let dir = scratch("dir-empty");
    let out = apizr(&["inspect", dir.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0);
    assert_eq!(json(&out)["modules"], Value::Array(vec![]));
    let odd = dir.join("looks_like.py");
    fs::create_dir_all(&odd).unwrap();
    write(&odd, "inner.py", "def f():\n    pass\n");
    let out = apizr(&["inspect", odd.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(paths(&json(&out)), ["inner.py"]);
}

#[test]
fn directory_mode_rejects_single_file_options() {
    let dir = project_tree("dir-options");
    let root = dir.to_str().unwrap();
    let out = apizr(&["inspect", root, "--ir"]);
    assert_eq!(code(&out), 2);
    assert!(out.stdout.is_empty());
    let out = apizr(&["inspect", root, "--module-name", "x"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("--module-name"));
}

/// `inspect DIR --readiness v2 --wheelhouse W`: the wheels say which import names the declared
/// distributions install (`PyYAML` → `yaml`: ready with declared dependencies, READY-020);
/// a missing wheelhouse, a file that is not a wheel, or the flag on a single file are exit 2
/// naming what is wrong.
#[test]
fn inspect_reads_import_names_from_the_wheelhouse_and_refuses_bad_ones() {
    let tmp = scratch("wheelhouse");
    let project = tmp.join("project");
    let wheels = tmp.join("wheels");
    fs::create_dir_all(&project).unwrap();
    fs::create_dir_all(&wheels).unwrap();
    fs::write(project.join("requirements.txt"), "PyYAML>=6\n").unwrap();
    let app = project.join("app.py");
    fs::write(
        &app,
        "import yaml\n\n\ndef f(x: int) -> int:\n    return x\n",
    )
    .unwrap();
    let wheel = wheels.join("PyYAML-6.0.1-py3-none-any.whl");
    let script = "import sys, zipfile\n\
                  with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n\
                  \x20   z.writestr('yaml/__init__.py', '')\n\
                  \x20   z.writestr('PyYAML-6.0.1.dist-info/METADATA', 'Name: PyYAML\\n')\n";
    let status = Command::new("python3")
        .args(["-c", script, wheel.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
    let (dir, wheels_arg) = (project.to_str().unwrap(), wheels.to_str().unwrap());
    let codes = |out: &Output| String::from_utf8_lossy(&out.stdout).to_string();
    let without = apizr(&["inspect", dir, "--readiness", "v2"]);
    assert!(
        codes(&without).contains("APIZR-READY-015"),
        "{}",
        codes(&without)
    );
    let with = apizr(&[
        "inspect",
        dir,
        "--readiness",
        "v2",
        "--wheelhouse",
        wheels_arg,
    ]);
    assert!(codes(&with).contains("APIZR-READY-020"), "{}", codes(&with));
    assert!(
        !codes(&with).contains("APIZR-READY-015"),
        "{}",
        codes(&with)
    );
    // `generate DIR --readiness v2` reads the same wheels it bundles: with them `f` is ready
    // (READY-020) and generated; without them `yaml` is not known to be PyYAML's (READY-015).
    let generate = |wheelhouse: &[&str], out: &str| {
        let out = tmp.join(out);
        let mut args = vec![
            "generate",
            "rest",
            dir,
            "--select",
            "app:f",
            "--readiness",
            "v2",
        ];
        args.extend(wheelhouse);
        args.extend(["--output-dir", out.to_str().unwrap(), "--no-lockfile"]);
        (apizr(&args), out)
    };
    let (bundled, out) = generate(&["--wheelhouse", wheels_arg], "with-wheels");
    let stderr = String::from_utf8_lossy(&bundled.stderr);
    assert_eq!(bundled.status.code(), Some(0), "{stderr}");
    let readiness = fs::read_to_string(out.join("readiness.json")).unwrap();
    assert!(readiness.contains("APIZR-READY-020"), "{readiness}");
    let (unbundled, _) = generate(&[], "without-wheels");
    let stderr = String::from_utf8_lossy(&unbundled.stderr);
    assert_ne!(unbundled.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("f: conditional (APIZR-READY-015)"),
        "{stderr}"
    );
    // Bad input: exit 2 with the path.
    let missing = tmp.join("missing");
    fs::write(wheels.join("notes-1.0-py3-none-any.whl"), "not a zip").unwrap();
    for (args, expected) in [
        (
            ["inspect", dir, "--wheelhouse", missing.to_str().unwrap()],
            missing.display().to_string(),
        ),
        (
            ["inspect", dir, "--wheelhouse", wheels_arg],
            "notes-1.0-py3-none-any.whl: not a zip archive".to_string(),
        ),
        (
            ["inspect", app.to_str().unwrap(), "--wheelhouse", wheels_arg],
            "`--wheelhouse` applies to a package directory".to_string(),
        ),
    ] {
        let out = apizr(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(&expected), "{args:?}: {stderr}");
    }
    let _ = fs::remove_dir_all(&tmp);
}
