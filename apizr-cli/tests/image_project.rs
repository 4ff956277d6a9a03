//! `apizr image build --project` refuses what it cannot build, early and precisely: a directory
//! that is not a generated project, a bundle file that no longer matches the manifest, and a
//! base image the engine does not have (before any compilation). The successful build, run and
//! call are in `image_project_e2e.rs`, which shares the generated projects' target dir.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "generate/support.rs"]
mod support;

use std::process::Command;

use support::{TempDir, apizr, workspace_root};

fn generate(root: &std::path::Path) -> std::path::PathBuf {
    let source = workspace_root().join("tests/fixtures/generate/sources/pricing.py");
    let out = apizr(
        root,
        &[
            "generate",
            "rest",
            source.to_str().unwrap(),
            "--output-dir",
            "p",
            "--no-lockfile",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    root.join("p")
}

#[test]
fn a_directory_that_is_not_a_project_is_refused() {
    let tmp = TempDir::new("image");
    let out = apizr(
        tmp.path(),
        &["image", "build", "--project", ".", "--base", "any:image"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "apizr image: .: not a generated apizr project (no apizr-rest.json or apizr-mcp.json"
        ),
        "{stderr}"
    );
}

#[test]
fn a_tampered_bundle_is_refused_before_anything_is_built() {
    let tmp = TempDir::new("image");
    let dir = generate(tmp.path());
    std::fs::write(dir.join("source/pricing.py"), "def total(): return 0\n").unwrap();
    let out = apizr(
        &dir,
        &["image", "build", "--project", ".", "--base", "any:image"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("source/pricing.py: does not match its digest in apizr-rest.json"),
        "{stderr}"
    );
    assert!(!dir.join("target").exists(), "nothing may be compiled");
}

#[test]
fn a_missing_base_image_is_refused_before_compiling() {
    let engine = Command::new("docker")
        .args(["info", "--format", "{{.ServerVersion}}"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !engine {
        apizr_test_support::skip("no docker engine");
        return;
    }
    let tmp = TempDir::new("image");
    let dir = generate(tmp.path());
    let base = format!("apizr-no-such-base:{}", std::process::id());
    let out = apizr(&dir, &["image", "build", "--project", ".", "--base", &base]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "base image {base} is not present on the engine (apizr never pulls; load or import it first)"
        )),
        "{stderr}"
    );
    assert!(!dir.join("target").exists(), "nothing may be compiled");
}

#[test]
fn project_flags_need_a_base_and_exclude_rootfs() {
    let tmp = TempDir::new("image");
    let out = apizr(tmp.path(), &["image", "build", "--project", "."]);
    assert_eq!(out.status.code(), Some(2));
    let out = apizr(
        tmp.path(),
        &["image", "build", "--project", ".", "--rootfs", "r.tar"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
}
