//! `apizr image build`: build an OCI worker image offline from a local base image or a root
//! filesystem tarball, and print its identity `{"image","platform","provider"}` (the values
//! `apizr execute --runtime-image/--runtime-platform` take).
//!
//! Beyond the reference, whose builder is a repository script that needs a registry: nothing
//! is pulled, no Dockerfile or BuildKit is involved; progress goes to stderr, the identity
//! JSON to stdout (and to `--output`). The work is in `apizr_runtime::oci::build`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use apizr_runtime::oci::RuntimeImage;
use apizr_runtime::oci::build::{BuildSource, build_image};
use apizr_runtime::oci::engine::Engine;
use clap::{Args, Subcommand};

const BUILD_EXAMPLES: &str = "\
Examples:
  apizr image build --base apizr-ci/python-base:bookworm-stdlib --tag apizr/worker:dev
  apizr image build --rootfs rootfs.tar --output worker-image.json
  apizr image build --project generated/ --base apizr-ci/python-base:bookworm-stdlib
  apizr image build --base \"$(jq -r .image worker-image.json)\" --package src/ --wheelhouse wheels/
  apizr execute f.py total --arguments a.json --policy v2.json \\
      --runtime-image \"$(jq -r .image worker-image.json)\" --runtime-platform linux/amd64

The base must contain python3 (3.11 or newer, with its standard library: _json, ctypes,
asyncio). Nothing is pulled: the base must already be on the engine (DOCKER_HOST).

--package: under an apizr.execution/v2 policy every call runs in the runtime image, so a
package that declares requirements (pyproject.toml [project] dependencies, requirements.txt)
needs a worker image that carries them. This layers a virtual environment on --base (a worker
image) from the wheels of --wheelhouse only (no network; every wheel pinned by version and
sha256; pip from a pip-*.whl there when the base has no ensurepip) and labels the image with
the requirement set. `apizr serve|generate … --runtime-image ID` then starts only when the
image's set is exactly the package's.";

#[derive(Debug, Subcommand)]
pub enum ImageCommand {
    /// Build a worker image offline and print {"image","platform","provider"}
    #[command(after_help = BUILD_EXAMPLES)]
    Build(BuildArgs),
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("from").required(true).args(["base", "rootfs"])))]
pub struct BuildArgs {
    /// A base image already on the engine (name, tag or ID) that has python3
    #[arg(long, value_name = "IMAGE")]
    pub base: Option<String>,
    /// A root filesystem tarball to import as the base
    #[arg(long, value_name = "FILE.tar")]
    pub rootfs: Option<PathBuf>,
    /// Tag the result (repository[:tag])
    #[arg(long, value_name = "T")]
    pub tag: Option<String>,
    /// Also write the identity JSON to FILE
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// A generated project (apizr generate rest|mcp) to make into a server image on --base
    /// (tag: the project's own image reference unless --tag); prints {"image","tag"}
    #[arg(long, value_name = "DIR", requires = "base", conflicts_with = "rootfs")]
    pub project: Option<PathBuf>,
    /// A package directory (as apizr serve DIR takes it): install its declared requirements
    /// into a virtual environment on --base, a worker image, for serving it under an
    /// apizr.execution/v2 policy; prints {"image","platform","provider"}
    #[arg(
        long,
        value_name = "DIR",
        requires_all = ["base", "wheelhouse"],
        conflicts_with_all = ["rootfs", "project"]
    )]
    pub package: Option<PathBuf>,
    /// --package: the local wheels to install from (offline: every requirement and its
    /// dependencies must be a wheel here)
    #[arg(long, value_name = "DIR", requires = "package")]
    pub wheelhouse: Option<PathBuf>,
    /// --project: use this built server binary instead of running cargo build
    #[arg(long, value_name = "FILE", requires = "project")]
    pub binary: Option<PathBuf>,
    /// --project: the cargo profile to build the server with [default: release]
    #[arg(
        long,
        value_name = "NAME",
        requires = "project",
        conflicts_with = "binary"
    )]
    pub profile: Option<String>,
}

pub fn run(command: &ImageCommand) -> Result<ExitCode> {
    match command {
        ImageCommand::Build(args) => build(args),
    }
}

fn build(args: &BuildArgs) -> Result<ExitCode> {
    if let (Some(dir), Some(base)) = (&args.project, &args.base) {
        return crate::image_project::build(dir, base, args);
    }
    if let (Some(dir), Some(wheelhouse), Some(base)) = (&args.package, &args.wheelhouse, &args.base)
    {
        return crate::image_environment::build(dir, wheelhouse, base, args);
    }
    let engine = Engine::from_env().context("cannot use the Docker engine")?;
    eprintln!(
        "apizr image build: engine {} (API {})",
        engine.server_version, engine.api_version
    );
    let source = match (&args.base, &args.rootfs) {
        (Some(base), _) => BuildSource::Base(base),
        (None, Some(path)) => BuildSource::Rootfs(path),
        (None, None) => anyhow::bail!("one of --base or --rootfs is required"),
    };
    let mut progress = |line: &str| eprintln!("apizr image build: {line}");
    let image = build_image(&engine, source, args.tag.as_deref(), &mut progress)
        .context("image build failed")?;
    print_identity(&image, args)
}

/// The built worker image's identity on stdout, and in `--output FILE`.
pub fn print_identity(image: &RuntimeImage, args: &BuildArgs) -> Result<ExitCode> {
    let json = serde_json::to_string(image).context("encoding the image identity")?;
    if let Some(path) = &args.output {
        std::fs::write(path, format!("{json}\n"))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    println!("{json}");
    Ok(ExitCode::SUCCESS)
}
