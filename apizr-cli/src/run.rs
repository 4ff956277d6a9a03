//! `apizr run [--tier T] [--policy FILE] (FILE | -c CODE)`: run a piece of Python code in one
//! of the interpreter tiers and print its `apizr.interpreter-result/v1` JSON.
//!
//! Exit status: 0 the code ran and exited 0 (or the static tier accepted it); 1 it did not
//! succeed — non-zero exit, timeout, refused policy, unauthorized import, failed packages —
//! and the result says why; 2 the command line or an input file is wrong (nothing ran, one
//! line on stderr).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use apizr_runtime::audit::FileAuditSink;
use apizr_runtime::interpreter::{
    Capability, CapabilityPolicy, DockerConfig, Environment, EnvironmentOptions, Interpreter,
    InterpreterConfig,
};
use apizr_runtime::oci::{Engine, RuntimeImage};
use clap::Args;

/// Files (policy, code) are read up to this many bytes.
const MAX_POLICY_BYTES: u64 = 1_048_576;
const MAX_CODE_BYTES: u64 = 16 * 1024 * 1024;

pub const RUN_EXAMPLES: &str = "\
Tiers:
  static         parse and check imports only; never executes
  local          (default) the local sandbox, under the policy; restrictions it cannot
                 enforce are refused unless listed in the policy's declared_only
  local_unsafe   a plain subprocess with the host environment; no restriction (unsafe)
  docker         a hardened container (needs --image), under the policy
  docker_unsafe  a container with the engine's defaults (unsafe)

Exit status:
  0  the code ran and exited 0 (static: it parsed and its imports are allowed)
  1  it did not succeed; the printed result says why
  2  the command line, the policy or the code file is invalid (nothing ran)

Examples:
  apizr run -c 'print(1 + 1)'
  apizr run analysis.py --policy policy.json --working-directory out/
  apizr run --tier static --allow-import json,math -c 'import os'
  apizr run --tier docker --image apizr-ci/worker:dev -c 'import sys; print(sys.version)'
  apizr run --package cowsay -c 'import cowsay; cowsay.cow(\"hi\")'";

#[derive(Debug, Args, Clone)]
pub struct InterpreterArgs {
    /// The execution tier: static, local_unsafe, local, docker_unsafe or docker
    #[arg(long, default_value = "local", value_name = "TIER")]
    pub tier: String,
    /// A capability policy (JSON; mellea's CapabilityPolicy fields); default: the tier's
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Top-level modules the code may import (comma-separated; repeatable); default: any
    #[arg(long = "allow-import", value_name = "NAMES", value_delimiter = ',')]
    pub allow_import: Option<Vec<String>>,
    /// Packages to install into an isolated environment first (repeatable)
    #[arg(long = "package", value_name = "SPEC")]
    pub packages: Vec<String>,
    /// Local tiers: the working directory; docker tiers: where artifacts are copied
    #[arg(long, value_name = "DIR")]
    pub working_directory: Option<PathBuf>,
    /// Accept these restrictions as declared only when this host cannot enforce them
    /// (comma-separated policy field names)
    #[arg(long = "declared-only", value_name = "FIELDS", value_delimiter = ',')]
    pub declared_only: Vec<String>,
    /// Docker tiers: the image (a tag or a full `sha256:` ID; `$APIZR_INTERPRETER_IMAGE`),
    /// built by `apizr image build`
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// Install packages only from this directory of wheels (`$APIZR_WHEELHOUSE`)
    #[arg(long, value_name = "DIR")]
    pub wheelhouse: Option<PathBuf>,
    /// Append one audit record per run (apizr.audit/v1 JSON line: tier, code and policy
    /// digests, status, duration, limits hit, exit) to this file
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The Python file to run (`-` reads standard input)
    #[arg(required_unless_present = "code", conflicts_with = "code")]
    pub file: Option<PathBuf>,
    /// The code to run
    #[arg(short = 'c', value_name = "CODE")]
    pub code: Option<String>,
    #[command(flatten)]
    pub interpreter: InterpreterArgs,
}

pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let code = match (&args.code, &args.file) {
        (Some(code), _) => code.clone(),
        (None, Some(file)) => read_code(file)?,
        (None, None) => bail!("give a FILE or -c CODE"),
    };
    let env = args.interpreter.environment()?;
    let result = env.execute(&code);
    println!("{}", result.to_json());
    Ok(if result.success {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

impl InterpreterArgs {
    /// The environment these flags describe, with its audit file when one was given (an
    /// audit file that cannot be opened is a command-line error: nothing runs unaudited).
    pub fn environment(&self) -> anyhow::Result<Environment> {
        let (interpreter, options) = self.build()?;
        let env = interpreter
            .environment(&self.tier, options)
            .context("interpreter")?;
        Ok(match &self.audit {
            Some(path) => {
                let sink = FileAuditSink::open(path)
                    .with_context(|| format!("--audit {}", path.display()))?;
                env.with_audit(Arc::new(sink))
            }
            None => env,
        })
    }

    /// The interpreter and the environment options these flags describe.
    pub fn build(&self) -> anyhow::Result<(Interpreter, EnvironmentOptions)> {
        let mut policy = match &self.policy {
            Some(path) => {
                let text = read_text(path, MAX_POLICY_BYTES)?;
                Some(
                    CapabilityPolicy::from_json_str(&text)
                        .with_context(|| format!("{}", path.display()))?,
                )
            }
            None => None,
        };
        if !self.declared_only.is_empty() {
            let fields = self
                .declared_only
                .iter()
                .map(|f| {
                    serde_json::from_value::<Capability>(serde_json::Value::String(f.clone()))
                        .map_err(|_| anyhow::anyhow!("--declared-only: unknown policy field {f:?}"))
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            let tier_default = match self.tier.as_str() {
                "docker" => CapabilityPolicy::docker(),
                _ => CapabilityPolicy::local(),
            };
            let p = policy.get_or_insert(tier_default);
            p.declared_only.extend(fields);
        }
        let mut config = InterpreterConfig::default();
        if let Some(w) = &self.wheelhouse {
            config.wheelhouse = Some(std::path::absolute(w)?);
        }
        let image = self.image.clone().or_else(|| {
            std::env::var("APIZR_INTERPRETER_IMAGE")
                .ok()
                .filter(|s| !s.is_empty())
        });
        if let Some(reference) = image.filter(|_| self.tier.starts_with("docker")) {
            config.docker = DockerConfig {
                image: Some(resolve_image(&reference)?),
                ..DockerConfig::default()
            };
        }
        Ok((
            Interpreter::new(config),
            EnvironmentOptions {
                policy,
                allowed_imports: self.allow_import.clone(),
                working_directory: self.working_directory.clone(),
                packages: self.packages.clone(),
            },
        ))
    }
}

/// A full image ID and platform from a tag or ID, asking the engine.
fn resolve_image(reference: &str) -> anyhow::Result<RuntimeImage> {
    let engine = Engine::from_env().context("--image: container engine")?;
    let doc = engine
        .image_inspect(reference)
        .context("--image")?
        .with_context(|| {
            format!("--image: the engine has no image {reference:?} (it never pulls)")
        })?;
    let text = |k: &str| {
        doc.get(k)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let platform = format!("{}/{}", text("Os"), text("Architecture"));
    RuntimeImage::parse(&text("Id"), &platform).map_err(|e| anyhow::anyhow!("--image: {e}"))
}

fn read_code(path: &Path) -> anyhow::Result<String> {
    if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .take(MAX_CODE_BYTES + 1)
            .read_to_end(&mut bytes)
            .context("standard input")?;
        if bytes.len() as u64 > MAX_CODE_BYTES {
            bail!("standard input: more than {MAX_CODE_BYTES} bytes");
        }
        return String::from_utf8(bytes)
            .map_err(|e| anyhow::anyhow!("standard input: not UTF-8 ({e})"));
    }
    read_text(path, MAX_CODE_BYTES)
}

fn read_text(path: &Path, limit: u64) -> anyhow::Result<String> {
    let file = std::fs::File::open(path).with_context(|| format!("{}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("{}", path.display()))?;
    if bytes.len() as u64 > limit {
        bail!("{}: more than {limit} bytes", path.display());
    }
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{}: not UTF-8 (at byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}
