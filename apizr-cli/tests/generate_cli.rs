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
            r#"{"execution": {"mode": "direct"}, "files": [".dockerignore", "Cargo.lock", "Cargo.toml","#
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

/// Nothing in the project depends on where it is written or from where (the checkout path
/// in `Cargo.toml` is absolute, the lock file is resolved from the checkout's lock).
#[test]
fn output_is_independent_of_cwd_and_output_path() {
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
    assert_eq!(
        left.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        right.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    for ((path, l), (_, r)) in left.iter().zip(&right) {
        assert_eq!(l, r, "{path} differs between output locations");
    }
}

/// The runtime is the version requirement of this release, patched to the checkout by an
/// absolute path; the shipped Cargo.lock is complete (`cargo update --workspace --locked
/// --offline` accepts it without a change; `metadata` would also download every platform's
/// crates) and holds only what the transport needs; `--no-lockfile` leaves it out.
#[test]
fn projects_pin_the_runtime_and_ship_a_complete_lock_file() {
    let tmp = TempDir::new("lock");
    let (code, stdout, stderr) = run(
        tmp.path(),
        &["generate", "rest", &pricing(), "--output-dir", "o"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(r#""Cargo.lock", "Cargo.toml""#), "{stdout}");
    let cargo_toml = std::fs::read_to_string(tmp.path().join("o/Cargo.toml")).unwrap();
    let runtime = workspace_root()
        .join("apizr-runtime")
        .canonicalize()
        .unwrap();
    assert!(
        cargo_toml.contains(&format!(
            "apizr-runtime = {{ version = \"={}\", features = [\"rest\", \"macros\"] }}",
            env!("CARGO_PKG_VERSION")
        )),
        "{cargo_toml}"
    );
    assert!(
        cargo_toml.contains(&format!(
            "[patch.crates-io]\napizr-runtime = {{ path = \"{}\" }}",
            runtime.display()
        )),
        "{cargo_toml}"
    );
    let lock = std::fs::read_to_string(tmp.path().join("o/Cargo.lock")).unwrap();
    assert!(lock.contains("name = \"apizr-rest-pricing\""), "{lock}");
    assert!(lock.contains("name = \"axum\""), "{lock}");
    // Only the REST feature's crates (the MCP SDK is not locked), and the macros of the
    // `#[python]` bindings with the inspector they run inside the compiler.
    assert!(!lock.contains("name = \"rmcp\""));
    for name in ["apizr-macros", "apizr-macros-backend", "apizr-inspect"] {
        assert!(lock.contains(&format!("name = \"{name}\"")), "{name}");
    }
    // The parser the macro runs is optimized by name, in both profiles.
    for profile in ["dev", "release"] {
        assert!(
            cargo_toml.contains(&format!(
                "[profile.{profile}.package.ruff_python_parser]\nopt-level = 3"
            )),
            "{cargo_toml}"
        );
    }
    let locked = std::process::Command::new(env!("CARGO"))
        .args(["update", "--workspace", "--locked", "--offline"])
        .current_dir(tmp.path().join("o"))
        .output()
        .unwrap();
    assert!(
        locked.status.success(),
        "{}",
        String::from_utf8_lossy(&locked.stderr)
    );
    let (code, stdout, _) = run(
        tmp.path(),
        &[
            "generate",
            "rest",
            &pricing(),
            "--output-dir",
            "n",
            "--no-lockfile",
        ],
    );
    assert_eq!(code, 0);
    assert!(!stdout.contains("Cargo.lock"), "{stdout}");
    assert!(!tmp.path().join("n/Cargo.lock").exists());
}

/// The whole tree as text, with the machine-specific parts redacted: the checkout path in
/// `Cargo.toml` (and so that file's size) and the lock file's content (it follows the
/// workspace's Cargo.lock; `projects_pin_the_runtime_and_ship_a_complete_lock_file` checks it).
fn tree_text(root: &Path) -> String {
    let mut out = String::new();
    for (path, bytes) in read_tree(root) {
        if path == "Cargo.lock" {
            out.push_str("=== Cargo.lock (resolved from the checkout's Cargo.lock)\n");
            continue;
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let mut redacted = false;
        let text = text
            .lines()
            .map(|line| {
                if line.starts_with("apizr-runtime = { path = ") {
                    redacted = true;
                    "apizr-runtime = { path = \"<checkout>/apizr-runtime\" }"
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
    let mut name = format!("{}-{transport}-{mode}", source.replace('.', "_"));
    if extra.contains(&"--scale-to-zero") {
        name.push_str("-scale-to-zero");
    }
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
fn snapshots_scale_to_zero() {
    snapshot("pricing.py", "rest", "v1", &["--scale-to-zero"]);
    snapshot("pricing.py", "mcp", "direct", &["--scale-to-zero"]);
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

/// `--readiness v2`: a module v1 refuses (a dataclass and a logger at module level) generates
/// under v2, whose readiness report (`readiness.json`) is v2's; v1 stays the default and
/// refuses.
#[test]
fn readiness_v2_generates_what_v1_refuses() {
    let tmp = TempDir::new("cli-readiness");
    let source = tmp.path().join("shapes.py");
    std::fs::write(
        &source,
        "import logging\nfrom dataclasses import dataclass\n\nlog = logging.getLogger(__name__)\n\n\
         @dataclass\nclass Box:\n    width: int = 1\n\n\ndef area(width: int, height: int) -> int:\n    \
         return width * height\n",
    )
    .unwrap();
    let source = source.to_string_lossy().into_owned();
    let v1 = [
        "generate",
        "rest",
        &source,
        "--output-dir",
        "v1",
        "--no-lockfile",
    ];
    let (code, _, stderr) = run(tmp.path(), &v1);
    assert_ne!(code, 0, "v1 refuses: {stderr}");
    assert!(!tmp.path().join("v1/openapi.json").exists());
    let v2 = [
        "generate",
        "rest",
        &source,
        "--output-dir",
        "v2",
        "--no-lockfile",
        "--readiness",
        "v2",
    ];
    let (code, _, stderr) = run(tmp.path(), &v2);
    assert_eq!(code, 0, "{stderr}");
    let openapi = std::fs::read_to_string(tmp.path().join("v2/openapi.json")).unwrap();
    assert!(openapi.contains("area"), "{openapi}");
    let readiness = std::fs::read_to_string(tmp.path().join("v2/readiness.json")).unwrap();
    assert!(readiness.contains("apizr.readiness/v2"), "{readiness}");
    // A module of a package directory taking a dataclass of a sibling module: the generated
    // project's contract names the class in its real module (the worker builds it from
    // there) and its OpenAPI document has the class's exact schema. Its local imports are
    // proved with the package (the verdict of `inspect DIR`): no `--allow-conditional`.
    let package = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../apizr-inspect/tests/data/input_types_pkg"
    );
    let pkg = [
        "generate",
        "rest",
        package,
        "--select",
        "shop.api:move",
        "--output-dir",
        "pkg",
        "--no-lockfile",
        "--readiness",
        "v2",
    ];
    let (code, _, stderr) = run(tmp.path(), &pkg);
    assert_eq!(code, 0, "{stderr}");
    let openapi = std::fs::read_to_string(tmp.path().join("pkg/openapi.json")).unwrap();
    let point = r#""additionalProperties":false,"properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x"],"type":"object""#;
    let compact: String = openapi.split_whitespace().collect();
    assert!(compact.contains(point), "{openapi}");
    let bundle = walk_text(&tmp.path().join("pkg"));
    assert!(
        bundle.contains(r#""module":"shop.models""#)
            || bundle.contains(r#""module": "shop.models""#),
        "no contract names shop.models"
    );
}

/// Every UTF-8 file under `dir`, concatenated.
fn walk_text(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.push_str(&walk_text(&path));
        } else if let Ok(text) = std::fs::read_to_string(&path) {
            out.push_str(&text);
        }
    }
    out
}
