//! `apizr generate` command-line behaviour: output-directory safety, refusals and exit codes
//! (messages as the reference's where it has one), determinism, and insta snapshots of whole
//! generated trees for several fixtures × {rest, mcp} × {direct, governed v1}, plus governed v2
//! (OCI) for `pricing.py`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "generate/support.rs"]
mod support;

use std::path::Path;

use support::{TempDir, apizr, read_tree, workspace_root};

fn sources() -> std::path::PathBuf {
    workspace_root().join("tests/fixtures/generate/sources")
}

fn run(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = apizr(cwd, args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn pricing() -> String {
    sources().join("pricing.py").to_string_lossy().into_owned()
}

#[test]
fn output_directory_must_be_empty() {
    let tmp = TempDir::new("cli");
    std::fs::create_dir(tmp.path().join("out")).unwrap();
    std::fs::write(tmp.path().join("out/keep"), "x").unwrap();
    let (code, stdout, stderr) = run(
        tmp.path(),
        &["generate", "rest", &pricing(), "--output-dir", "out"],
    );
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert_eq!(
        stderr.trim(),
        "apizr generate rest: Output directory must be empty; no files were overwritten"
    );
    assert_eq!(
        std::fs::read_dir(tmp.path().join("out")).unwrap().count(),
        1
    );
    // An existing empty directory is fine.
    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    let (code, _, stderr) = run(
        tmp.path(),
        &["generate", "rest", &pricing(), "--output-dir", "empty"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(tmp.path().join("empty/openapi.json").is_file());
}

#[test]
fn parent_traversal_and_symlinks_are_refused() {
    let tmp = TempDir::new("cli");
    std::fs::create_dir(tmp.path().join("same")).unwrap();
    let (code, _, stderr) = run(
        tmp.path(),
        &[
            "generate",
            "mcp",
            &pricing(),
            "--output-dir",
            "same/../same/x",
        ],
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("Output path cannot contain parent traversal"),
        "{stderr}"
    );
    std::os::unix::fs::symlink(tmp.path().join("same"), tmp.path().join("link")).unwrap();
    let (code, _, stderr) = run(
        tmp.path(),
        &["generate", "mcp", &pricing(), "--output-dir", "link/sub"],
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert!(!tmp.path().join("same/sub").exists());
}

#[test]
fn refusals_and_exit_codes() {
    let tmp = TempDir::new("cli");
    std::fs::write(
        tmp.path().join("cond.py"),
        "import logging\nlog = logging.getLogger()\ndef f(x: int) -> int:\n    return x\n",
    )
    .unwrap();
    std::fs::write(tmp.path().join("none.py"), "x = 1\n").unwrap();
    std::fs::write(
        tmp.path().join("v2.json"),
        r#"{"schema_version":"apizr.execution/v2"}"#,
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("inherit.json"),
        r#"{"schema_version":"apizr.execution/v2","network":{"mode":"inherit"}}"#,
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("effects.json"),
        r#"{"effects":{"require_known":["network"]}}"#,
    )
    .unwrap();
    let p = pricing();
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (
            vec!["cond.py"],
            1,
            "Generation refused; select only eligible capabilities: f: conditional (APIZR-READY-004)",
        ),
        (vec!["none.py"], 2, "No callable declarations to generate"),
        (
            vec![&p, "--select", "nope"],
            2,
            "Unknown capability selection: nope",
        ),
        (
            vec![&p, "--select", " ,"],
            2,
            "Selection requires non-empty capability names or IDs",
        ),
        (
            vec![&p, "--runtime-image", "sha256:00"],
            2,
            "Runtime image/platform require an OCI v2 execution policy",
        ),
        (
            vec![&p, "--execution-policy", "v2.json"],
            2,
            "OCI policy requires --runtime-image and --runtime-platform",
        ),
        (
            vec![
                &p,
                "--execution-policy",
                "inherit.json",
                "--runtime-image",
                IMAGE,
                "--runtime-platform",
                "linux/amd64",
            ],
            2,
            "unsupported_control",
        ),
        (
            vec![&p, "--execution-policy", "effects.json"],
            2,
            "unknown_required_effect",
        ),
    ];
    for (i, (args, want_code, want_message)) in cases.into_iter().enumerate() {
        let out_dir = format!("out{i}");
        let mut argv = vec!["generate", "rest"];
        argv.extend(args.iter().copied());
        argv.extend(["--output-dir", &out_dir]);
        let (code, stdout, stderr) = run(tmp.path(), &argv);
        assert_eq!(code, want_code, "{argv:?}: {stderr}");
        assert!(stdout.is_empty(), "{argv:?}");
        assert_eq!(
            stderr.trim(),
            format!("apizr generate rest: {want_message}"),
            "{argv:?}"
        );
        assert!(
            !tmp.path().join(&out_dir).exists(),
            "{argv:?} wrote something"
        );
    }
}

#[test]
fn selection_and_summary() {
    let tmp = TempDir::new("cli");
    let (code, stdout, stderr) = run(
        tmp.path(),
        &[
            "generate",
            "rest",
            &pricing(),
            "--output-dir",
            "o",
            "--select",
            "python:pricing:total",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with(
            r#"{"execution": {"mode": "direct"}, "files": [".dockerignore", "Cargo.toml","#
        ),
        "{stdout}"
    );
    let openapi = std::fs::read_to_string(tmp.path().join("o/openapi.json")).unwrap();
    assert!(openapi.contains("/capabilities/total") && !openapi.contains("/capabilities/greet"));
    let tree = read_tree(&tmp.path().join("o"));
    for (path, _) in &tree {
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(tmp.path().join("o").join(path))
                .unwrap()
                .permissions(),
        );
        assert_eq!(mode & 0o7777 & !0o022, 0o644 & !0o022, "{path}");
    }
}

#[test]
fn output_is_independent_of_cwd_and_output_path_except_the_runtime_path() {
    let a = TempDir::new("det-a");
    let b = TempDir::new("det-b");
    let nested = b.path().join("x/y");
    std::fs::create_dir_all(&nested).unwrap();
    assert_eq!(
        run(
            a.path(),
            &["generate", "mcp", &pricing(), "--output-dir", "o"]
        )
        .0,
        0
    );
    assert_eq!(
        run(
            &nested,
            &["generate", "mcp", &pricing(), "--output-dir", "deep/o"]
        )
        .0,
        0
    );
    let left = read_tree(&a.path().join("o"));
    let right = read_tree(&nested.join("deep/o"));
    assert_eq!(left.len(), right.len());
    for ((lp, lb), (rp, rb)) in left.iter().zip(&right) {
        assert_eq!(lp, rp);
        if lp != "Cargo.toml" {
            assert_eq!(lb, rb, "{lp} differs between output locations");
        }
    }
}

/// The whole tree as text, with the machine-specific runtime path replaced.
fn tree_text(root: &Path) -> String {
    let mut out = String::new();
    for (path, bytes) in read_tree(root) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        // The relative path to the checkout depends on where the checkout lives, and so does
        // the size of the file that holds it: redact both.
        let mut redacted = false;
        let text = text
            .lines()
            .map(|line| {
                if line.starts_with("apizr-runtime = { path = ") {
                    redacted = true;
                    "apizr-runtime = { path = \"<checkout>/apizr-runtime\", features = [..] }"
                } else {
                    line
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let size = if redacted {
            "size depends on the checkout path".to_string()
        } else {
            format!("{} bytes", bytes.len())
        };
        out.push_str(&format!("=== {path} ({size})\n{text}\n"));
    }
    out
}

/// A fixed runtime image for v2 snapshots (the generator never contacts Docker).
const IMAGE: &str = "sha256:8a417c32cbac95bd620c831c66a45993213f970572d4a833d5aa63387a0e06ac";

/// `mode`: `direct`, `v1` (default v1 policy) or `v2` (default v2 policy + [`IMAGE`]).
fn snapshot(source: &str, transport: &str, mode: &str, extra: &[&str]) {
    let tmp = TempDir::new("snap");
    std::fs::write(tmp.path().join("policy.json"), "{}").unwrap();
    std::fs::write(
        tmp.path().join("v2.json"),
        r#"{"schema_version":"apizr.execution/v2"}"#,
    )
    .unwrap();
    let src = sources().join(source).to_string_lossy().into_owned();
    let mut argv = vec!["generate", transport, &src, "--output-dir", "out"];
    match mode {
        "v1" => argv.extend(["--execution-policy", "policy.json"]),
        "v2" => argv.extend([
            "--execution-policy",
            "v2.json",
            "--runtime-image",
            IMAGE,
            "--runtime-platform",
            "linux/amd64",
        ]),
        _ => {}
    }
    argv.extend(extra.iter().copied());
    let (code, stdout, stderr) = run(tmp.path(), &argv);
    assert_eq!(code, 0, "{stderr}");
    let name = format!("{}-{transport}-{mode}", source.replace('.', "_"));
    insta::assert_snapshot!(
        name,
        format!(
            "$ {}\n{stdout}{}",
            argv.join(" ").replace(&src, source),
            tree_text(&tmp.path().join("out"))
        )
    );
}

#[test]
fn snapshots_pricing() {
    for transport in ["rest", "mcp"] {
        for mode in ["direct", "v1", "v2"] {
            snapshot("pricing.py", transport, mode, &[]);
        }
    }
}

#[test]
fn snapshots_shapes_with_module_name() {
    for transport in ["rest", "mcp"] {
        for mode in ["direct", "v1"] {
            snapshot(
                "shapes.py",
                transport,
                mode,
                &["--module-name", "pkg.sub.shapes"],
            );
        }
    }
}

#[test]
fn snapshots_notebook() {
    snapshot("notebook.ipynb", "rest", "direct", &[]);
    snapshot("notebook.ipynb", "mcp", "v1", &[]);
}

#[test]
fn allow_conditional_exposes_selected_conditional_capabilities() {
    let tmp = TempDir::new("cli");
    std::fs::write(
        tmp.path().join("cond.py"),
        "import logging\nlog = logging.getLogger()\ndef f(x: int) -> int:\n    return x\n",
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("amb.py"),
        "def f(x: int) -> int:\n    return x\ndef f(x: str) -> str:\n    return x\n",
    )
    .unwrap();
    // Without --select the flag is refused; without the flag the reference's refusal stands.
    let (code, _, stderr) = run(
        tmp.path(),
        &[
            "generate",
            "mcp",
            "cond.py",
            "--output-dir",
            "a",
            "--allow-conditional",
        ],
    );
    assert_eq!(
        (code, stderr.trim()),
        (
            2,
            "apizr generate mcp: --allow-conditional requires --select"
        )
    );
    let (code, _, _) = run(
        tmp.path(),
        &[
            "generate",
            "mcp",
            "cond.py",
            "--output-dir",
            "b",
            "--select",
            "f",
        ],
    );
    assert_eq!(code, 1);
    let (code, _, stderr) = run(
        tmp.path(),
        &[
            "generate",
            "mcp",
            "cond.py",
            "--output-dir",
            "c",
            "--select",
            "f",
            "--allow-conditional",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("c/apizr-mcp.json")).unwrap())
            .unwrap();
    assert_eq!(
        manifest["conditional"],
        serde_json::json!({"python:cond:f": {"reasons": ["APIZR-READY-004"], "state": "conditional"}})
    );
    assert_eq!(manifest["tools"][0]["tool_name"], "f");
    // Non-conditional, non-ready capabilities keep the reference's refusal (exit 1).
    let (code, _, stderr) = run(
        tmp.path(),
        &[
            "generate",
            "mcp",
            "amb.py",
            "--output-dir",
            "d",
            "--select",
            "f",
            "--allow-conditional",
        ],
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("Generation refused; select only eligible capabilities"),
        "{stderr}"
    );
}
