//! `apizr image build --project DIR --base IMG [--tag T]`: a generated project as a server
//! image, offline — the same image its `Dockerfile` describes (bundle at /srv/apizr, the
//! server binary, non-root user, health check, entrypoint; `apizr_codegen::deploy`), made with
//! the Engine API from a base image already on the engine (one layer: no Dockerfile build, no
//! BuildKit, no registry).
//!
//! Order: the project is read and its bundle checked against the manifest's digests, then the
//! base image is looked up, and only then is the server compiled (`cargo build --locked
//! --profile release` in the project, honouring `CARGO_TARGET_DIR`), so a wrong directory or a
//! missing base fails in a second, not after a build. `--binary` uses a built server instead.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, Result, bail};
use apizr_codegen::project_image::ProjectImage;
use apizr_runtime::oci::build::{BuildError, TarWriter};
use apizr_runtime::oci::engine::Engine;
use apizr_runtime::oci::layer::{Step, add_layer, add_layer_with_step};

use crate::image::BuildArgs;

/// The ustar name field: longer paths would need the prefix field, which the writer lacks.
const MAX_TAR_PATH: usize = 99;
/// A generous bound for installing wheels offline (no downloads; pip itself is the slow part).
const INSTALL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

pub fn build(dir: &Path, base: &str, args: &BuildArgs) -> Result<ExitCode> {
    let project = ProjectImage::read(dir)?;
    let tag = args
        .tag
        .clone()
        .unwrap_or_else(|| project.reference.clone());
    let engine = Engine::from_env().context("cannot use the Docker engine")?;
    eprintln!(
        "apizr image build: project {} ({}), engine {} (API {})",
        project.package,
        project.transport.name(),
        engine.server_version,
        engine.api_version
    );
    if engine.image_inspect(base)?.is_none() {
        return Err(BuildError::BaseAbsent(base.to_string()).into());
    }
    let binary = match &args.binary {
        Some(path) => path.clone(),
        None => cargo_build(dir, &project.package, args.profile.as_deref())?,
    };
    let server = std::fs::read(&binary).with_context(|| format!("{}", binary.display()))?;
    eprintln!(
        "apizr image build: server {} ({} bytes)",
        binary.display(),
        server.len()
    );
    let archive = archive(&project, &server)?;
    let id = match &project.install {
        None => add_layer(&engine, base, &archive, &project.config(), Some(&tag)),
        // The Dockerfile's `RUN sh python/install.sh`: the same script, as root, before the
        // image's non-root user; offline (no network in the step, wheels from the project).
        Some(install) => {
            eprintln!(
                "apizr image build: installing the requirements into {} ({} files of python/, no network)",
                apizr_codegen::deploy::VENV_DIR,
                install.files.len()
            );
            let step = Step {
                argv: vec!["sh".into(), apizr_codegen::deploy::install_script()],
                user: "0:0",
                what: "python/install.sh",
                timeout: INSTALL_TIMEOUT,
            };
            add_layer_with_step(
                &engine,
                base,
                &archive,
                &project.config(),
                &step,
                Some(&tag),
            )
        }
    }
    .context("image build failed")?;
    eprintln!("apizr image build: {tag} = {id}");
    let json = serde_json::json!({"image": id, "tag": tag}).to_string();
    if let Some(path) = &args.output {
        std::fs::write(path, format!("{json}\n"))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    println!("{json}");
    Ok(ExitCode::SUCCESS)
}

/// The layer: the bundle under the image's bundle directory (read-only for the server's
/// user), the server binary, and for a package with requirements the project's `python/`
/// (where the `Dockerfile` copies it).
fn archive(project: &ProjectImage, server: &[u8]) -> Result<Vec<u8>> {
    let root = apizr_codegen::deploy::BUNDLE_DIR.trim_start_matches('/');
    let mut tar = TarWriter::default();
    let mut dirs = std::collections::BTreeSet::new();
    // Every parent directory once, before its first entry.
    let mut add_dirs = |tar: &mut TarWriter, path: &str| {
        let mut at = 0;
        while let Some(slash) = path[at..].find('/') {
            at += slash;
            if dirs.insert(path[..at].to_string()) {
                tar.dir(&path[..at], 0o755);
            }
            at += 1;
        }
    };
    let python = apizr_codegen::deploy::PYTHON_DIR.trim_start_matches('/');
    let install = project.install.iter().flat_map(|i| &i.files);
    let entries = project
        .files
        .iter()
        .map(|(relative, bytes)| (root, relative, bytes))
        .chain(install.map(|(relative, bytes)| (python, relative, bytes)));
    for (root, relative, bytes) in entries {
        let path = format!("{root}/{relative}");
        if path.len() > MAX_TAR_PATH {
            bail!(
                "{relative}: path too long for the image layer ({} > {MAX_TAR_PATH} bytes)",
                path.len()
            );
        }
        add_dirs(&mut tar, &path);
        tar.file(&path, bytes, 0o444);
    }
    let binary = project.binary_path();
    let binary = binary.trim_start_matches('/');
    add_dirs(&mut tar, binary);
    tar.file(binary, server, 0o555);
    Ok(tar.finish())
}

/// `cargo build --locked --profile P` in the project; the path of the server binary, from
/// cargo's own artifact messages (so `CARGO_TARGET_DIR` and profiles need no guessing).
fn cargo_build(dir: &Path, package: &str, profile: Option<&str>) -> Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from);
    let profile = profile.unwrap_or("release");
    let mut command = Command::new(&cargo);
    command
        .args([
            "build",
            "--profile",
            profile,
            "--message-format=json-render-diagnostics",
        ])
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    // A project generated with its lock file builds exactly that resolution.
    if dir.join("Cargo.lock").is_file() {
        command.arg("--locked");
    }
    eprintln!(
        "apizr image build: cargo build --profile {profile} ({})",
        dir.display()
    );
    let mut child = command
        .spawn()
        .with_context(|| format!("cannot run {}", cargo.display()))?;
    let mut executable = None;
    if let Some(stdout) = child.stdout.take() {
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line?;
            let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            if message["reason"] == "compiler-artifact"
                && message["target"]["name"] == package
                && let Some(path) = message["executable"].as_str()
            {
                executable = Some(PathBuf::from(path));
            }
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("cargo build of {} failed ({status})", dir.display());
    }
    executable.with_context(|| format!("cargo built no binary named {package}"))
}
