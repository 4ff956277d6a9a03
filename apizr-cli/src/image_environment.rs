//! `apizr image build --base WORKER --package DIR --wheelhouse W [--tag T]`: the runtime image
//! for serving a package that declares requirements under an `apizr.execution/v2` policy.
//!
//! The requirements are read by the one reader serve, generate and readiness v2 use
//! (`apizr_inspect::package::requirements::find`), so the label the image gets is exactly the
//! set `apizr serve DIR` will require of it. Everything is checked before the engine is asked
//! for anything: the directory declares requirements, the wheelhouse is a readable directory
//! of wheels. The work is `apizr_runtime::oci::environment`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use apizr_inspect::package::requirements;
use apizr_runtime::oci::engine::Engine;
use apizr_runtime::oci::environment::{Environment, build_environment_image};

use crate::image::BuildArgs;

/// Largest wheel read (a wheelhouse is read into memory for the image layer).
const MAX_WHEEL_BYTES: u64 = 256 << 20;

pub fn build(dir: &Path, wheelhouse: &Path, base: &str, args: &BuildArgs) -> Result<ExitCode> {
    if !dir.is_dir() {
        bail!("--package {}: not a directory", dir.display());
    }
    let declared = requirements::find(dir)?;
    if declared.specifiers.is_empty() {
        bail!(
            "--package {}: declares no requirements (pyproject.toml [project] dependencies, \
             requirements.txt): a plain worker image (apizr image build --base IMAGE) serves it",
            dir.display()
        );
    }
    let environment = Environment {
        requirements: declared.specifiers,
        wheels: wheels(wheelhouse)?,
    };
    let engine = Engine::from_env().context("cannot use the Docker engine")?;
    eprintln!(
        "apizr image build: requirements of {} ({}), engine {} (API {})",
        dir.display(),
        declared
            .origin
            .as_deref()
            .map_or_else(String::new, |p| p.display().to_string()),
        engine.server_version,
        engine.api_version
    );
    let mut progress = |line: &str| eprintln!("apizr image build: {line}");
    let image = build_environment_image(
        &engine,
        base,
        &environment,
        args.tag.as_deref(),
        &mut progress,
    )
    .context("image build failed")?;
    crate::image::print_identity(&image, args)
}

/// The `*.whl` files of `dir` (regular files; links are not followed), by name.
fn wheels(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>> {
    let at = |path: &Path| format!("--wheelhouse {}", path.display());
    let mut wheels = BTreeMap::new();
    for entry in std::fs::read_dir(dir).with_context(|| at(dir))? {
        let entry = entry.with_context(|| at(dir))?;
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if !name.ends_with(".whl") {
            continue;
        }
        let meta = entry.metadata().with_context(|| at(&path))?;
        if !meta.is_file() {
            bail!("{}: not a regular file", at(&path));
        }
        if meta.len() > MAX_WHEEL_BYTES {
            bail!("{}: larger than {MAX_WHEEL_BYTES} bytes", at(&path));
        }
        let bytes = std::fs::read(&path).with_context(|| at(&path))?;
        wheels.insert(name, bytes);
    }
    if wheels.is_empty() {
        bail!("{}: holds no *.whl file", at(dir));
    }
    Ok(wheels)
}
