//! `apizr image build --project` on the real Docker engine: a generated REST project becomes its
//! server image offline (one layer on the base image through the Engine API, no Dockerfile
//! build), and the image runs under `--network none`: non-root, the bundle digest labelled,
//! bearer token enforced, `/readyz` 200, one call answered.
//!
//! apizr runs cargo itself (`--profile dev` in the shared `target/generated`, so the binary
//! `generate_and_build` built is reused, not rebuilt). Needs a Docker engine and the base image
//! of `scripts/ci-docker-setup` (`APIZR_BASE_IMAGE_TAG`); under `CI=true` a missing engine fails
//! the test. It is in the nextest group `generated-projects` (`.config/nextest.toml`): the
//! generated projects share one target dir and package names.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "generate/built.rs"]
mod built;
#[path = "generate/support.rs"]
mod support;

use std::process::Command;
use std::time::Instant;

use support::workspace_root;

const TOKEN: &str = "s3cret";

#[test]
fn generated_project_becomes_an_image_with_apizr_image_build() {
    if !built::docker_available() {
        return;
    }
    let base = std::env::var("APIZR_BASE_IMAGE_TAG")
        .unwrap_or_else(|_| "apizr-ci/python-base:bookworm-stdlib".into());
    let source = workspace_root().join("tests/fixtures/generate/sources/service.py");
    let (dir, _binary) = built::generate_and_build("rest", &source, None);
    let id = std::process::id();
    let tag = format!("apizr-image-project-test:{id}");
    let name = format!("apizr-image-project-test-{id}");
    let _cleanup = built::DockerCleanup(vec![
        vec!["rm".into(), "-f".into(), name.clone()],
        vec!["image".into(), "rm".into(), "-f".into(), tag.clone()],
    ]);

    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_apizr"))
        .args(["image", "build", "--project"])
        .arg(&dir)
        .args(["--base", &base, "--tag", &tag, "--profile", "dev"])
        .env(
            "CARGO_TARGET_DIR",
            workspace_root().join("target/generated"),
        )
        // Everything the lock file names is already in cargo's cache (built just above).
        .env("CARGO_NET_OFFLINE", "true")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "apizr image build --project: {stderr}"
    );
    eprintln!("apizr image build --project: {:?}", started.elapsed());
    let built: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(built["tag"], tag.as_str(), "{stderr}");
    let image = built["image"].as_str().unwrap();
    assert!(image.starts_with("sha256:"), "{image}");

    let out = Command::new("docker")
        .args(["run", "-d", "--name", &name, "--network", "none"])
        .args(["-e", &format!("APIZR_TOKEN={TOKEN}"), &tag])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "docker run: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let inspect = |format: &str| {
        let out = Command::new("docker")
            .args(["inspect", "--format", format, &name])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(
        inspect("{{.Image}}"),
        image,
        "the container runs the built image"
    );
    assert_eq!(inspect("{{.Config.User}}"), "65532:65532");
    let manifest = std::fs::read(dir.join("apizr-rest.json")).unwrap();
    assert_eq!(
        inspect("{{index .Config.Labels \"org.apizr.bundle.digest\"}}"),
        apizr_ir::Digest::sha256(&manifest).prefixed()
    );

    built::ready_then_total(&name, TOKEN);
    let _ = std::fs::remove_dir_all(&dir);
}
