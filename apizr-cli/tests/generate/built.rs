//! Shared by the tests that build generated projects and their images: generate a project,
//! move it, build it `--locked --offline` into the shared `target/generated`; build its image
//! on the offline base image; talk to a container over HTTP from the inside.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::support::{apizr, workspace_root};

/// Generate `transport` for `source` (governed by `policy`, a v1 policy document, when given),
/// move the project two directories up (a depth-relative runtime path would no longer
/// resolve) and build it; returns (project dir, binary).
pub fn generate_and_build(
    transport: &str,
    source: &Path,
    policy: Option<&str>,
) -> (PathBuf, PathBuf) {
    let module = source.file_stem().unwrap().to_str().unwrap();
    generate_and_build_module(transport, source, module, policy, &[])
}

/// [`generate_and_build`] for any source (a package directory with `--select`, `extra`
/// generate flags) whose served module is `module` (the binary is `apizr-<transport>-<module
/// with '.' as '-'>`).
pub fn generate_and_build_module(
    transport: &str,
    source: &Path,
    module: &str,
    policy: Option<&str>,
    extra: &[&str],
) -> (PathBuf, PathBuf) {
    let root = workspace_root();
    let projects = root.join("target/generated/projects");
    std::fs::create_dir_all(&projects).unwrap();
    let name = format!(
        "{module}-{transport}-{}-{}",
        policy.is_some(),
        std::process::id()
    );
    let dir = projects.join(&name);
    let staging = projects.join(format!("{name}.staging"));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&staging);
    let generated_at = staging.join("one/deeper");
    let policy_file = projects.join(format!("policy-{name}.json"));
    let mut argv = vec![
        "generate",
        transport,
        source.to_str().unwrap(),
        "--output-dir",
        generated_at.to_str().unwrap(),
    ];
    if let Some(policy) = policy {
        std::fs::write(&policy_file, policy).unwrap();
        argv.extend(["--execution-policy", policy_file.to_str().unwrap()]);
    }
    argv.extend(extra);
    let out = apizr(&projects, &argv);
    let _ = std::fs::remove_file(&policy_file);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::rename(&generated_at, &dir).unwrap();
    std::fs::remove_dir_all(&staging).unwrap();
    assert!(dir.join("Cargo.lock").is_file(), "no Cargo.lock generated");
    let target = root.join("target/generated");
    let status = Command::new(env!("CARGO"))
        .args([
            "build",
            "--quiet",
            "--locked",
            "--offline",
            "--manifest-path",
        ])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "cargo build --locked of the moved, generated {transport} project failed"
    );
    let binary = target.join(format!(
        "debug/apizr-{transport}-{}",
        module.replace(['.', '_'], "-")
    ));
    assert!(binary.is_file());
    (dir, binary)
}

/// A docker engine answers (else the skip rule: a failure under `CI=true`).
pub fn docker_available() -> bool {
    let ok = Command::new("docker")
        .args(["info", "--format", "{{.ServerVersion}}"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        apizr_test_support::skip("no docker engine");
    }
    ok
}

/// `docker <args>` for each entry, on drop (containers and images a test created).
pub struct DockerCleanup(pub Vec<Vec<String>>);

impl Drop for DockerCleanup {
    fn drop(&mut self) {
        for args in &self.0 {
            let _ = Command::new("docker").args(args).output();
        }
    }
}

/// `docker build` the generated project in `dir` on the offline base image
/// (`APIZR_BASE_IMAGE_TAG`) as `tag`; the Dockerfile copies `target/release/<package>`, and the
/// debug `binary` serves a test as well.
pub fn build_image(dir: &Path, binary: &Path, tag: &str) {
    let base = std::env::var("APIZR_BASE_IMAGE_TAG")
        .unwrap_or_else(|_| "apizr-ci/python-base:bookworm-stdlib".into());
    let release = dir.join("target/release");
    std::fs::create_dir_all(&release).unwrap();
    std::fs::copy(binary, release.join(binary.file_name().unwrap())).unwrap();
    let out = Command::new("docker")
        .args([
            "build",
            "--quiet",
            "--build-arg",
            &format!("BASE_IMAGE={base}"),
            "-t",
            tag,
            ".",
        ])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "docker build: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One HTTP request to the server of container `name` on port 8000, made from inside the
/// container by its own python3 (port publishing is not available on every CI engine, and this
/// also works under `--network none`); `token`: send `Authorization: Bearer <token>`.
/// Returns (status, body); status 0 when the request itself failed.
pub fn request_inside(
    name: &str,
    method: &str,
    path: &str,
    body: &str,
    token: Option<&str>,
) -> (u16, String) {
    let script = format!(
        "import sys, urllib.request, urllib.error\n\
         req = urllib.request.Request('http://127.0.0.1:8000{path}', method='{method}', \
         data={data}, headers={{'content-type': 'application/json'{auth}}})\n\
         try:\n    r = urllib.request.urlopen(req, timeout=30); code, text = r.status, r.read()\n\
         except urllib.error.HTTPError as e:\n    code, text = e.code, e.read()\n\
         except Exception as e:\n    code, text = 0, repr(e).encode()\n\
         sys.stdout.write(str(code) + ' ' + text.decode())",
        data = if body.is_empty() {
            "None".to_string()
        } else {
            format!("{body:?}.encode()")
        },
        auth = token
            .map(|t| format!(", 'authorization': 'Bearer {t}'"))
            .unwrap_or_default(),
    );
    let out = Command::new("docker")
        .args(["exec", name, "python3", "-c", &script])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (code, body) = text.split_once(' ').unwrap_or(("0", ""));
    (code.parse().unwrap_or(0), body.to_string())
}

/// The container's log (stdout and stderr), for assertion messages.
pub fn logs(name: &str) -> String {
    let out = Command::new("docker")
        .args(["logs", name])
        .output()
        .unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Container `name` serving the service fixture (`tests/fixtures/generate/sources/service.py`)
/// becomes ready (`/readyz` 200 within 60 s), then `total` is refused without the bearer
/// `token` (401) and answered with it.
pub fn ready_then_total(name: &str, token: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while request_inside(name, "GET", "/readyz", "", None).0 != 200 {
        assert!(
            Instant::now() < deadline,
            "container never became ready: {}",
            logs(name)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    let call = r#"{"prices":[1.0,2.0]}"#;
    let (status, _) = request_inside(name, "POST", "/capabilities/total", call, None);
    assert_eq!(status, 401, "calls need the bearer token");
    let (status, body) = request_inside(name, "POST", "/capabilities/total", call, Some(token));
    assert_eq!((status, body.as_str()), (200, "3.5999999999999996"));
}
