//! `apizr generate rest|mcp SOURCE --output-dir DIR`: a deployable Rust server project for the
//! selected capabilities of one Python file or notebook, or of modules of a package directory
//! (`DIR --select pkg.mod:func,pkg.other:g,…`, [`apizr_codegen::package`]).
//!
//! The generator is the `apizr-codegen` library (everything but the final write is a pure
//! function over bytes). This layer reads the inputs, maps errors to the reference's exit
//! codes (2 for unusable input, 1 for an eligibility refusal) and prints the reference's
//! stdout summary.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use apizr_codegen::deploy::Autoscaling;
use apizr_codegen::output;
use apizr_codegen::package::PackageInput;
use apizr_codegen::{GenerateError, Request, RuntimeDependency, ServedPackage, Transport};
use apizr_ir::SourceKind;
use clap::{Args, Subcommand};

use crate::execute::Platform;

/// The policy file is read up to this many bytes (the reference's limit).
const MAX_POLICY_BYTES: u64 = 1_048_576;

#[derive(Debug, Subcommand)]
pub enum GenerateCommand {
    /// Generate a REST server project (axum; openapi.json identical to apizr 0.4.6)
    Rest(GenerateArgs),
    /// Generate an MCP server project (stdio and Streamable HTTP; mcp-tools.json as 0.4.6)
    Mcp(GenerateArgs),
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// The `.py` file or `.ipynb` notebook (never imported or executed), or a package
    /// directory (what goes on `sys.path`) with `--select MODULE:FUNCTION,…`
    pub source: PathBuf,
    /// Where to write the project: absent or an empty directory
    #[arg(long, value_name = "DIR")]
    pub output_dir: PathBuf,
    /// Logical dotted module name (default: the file stem)
    #[arg(long, value_name = "NAME")]
    pub module_name: Option<String>,
    /// Comma-separated capability names or IDs (default: all); for a package directory,
    /// `pkg.mod:func,pkg.other:g` (functions of one or more of its modules, one per name)
    #[arg(long, value_name = "NAMES")]
    pub select: Option<String>,
    /// A package's requirements are installed in the image offline from the wheels of DIR
    /// (copied into the project; `pip install --no-index --find-links`)
    #[arg(long, value_name = "DIR")]
    pub wheelhouse: Option<PathBuf>,
    /// Governed execution: an `apizr.execution/v1` policy file (`{}` is the default policy)
    #[arg(long, value_name = "FILE")]
    pub execution_policy: Option<PathBuf>,
    /// OCI image ID (`apizr.execution/v2` policies only)
    #[arg(long, value_name = "sha256:…")]
    pub runtime_image: Option<String>,
    /// OCI platform (`apizr.execution/v2` policies only)
    #[arg(long, value_enum)]
    pub runtime_platform: Option<Platform>,
    /// Also expose explicitly selected capabilities whose readiness is `conditional`; their
    /// readiness reasons are recorded in the manifest (the reference refuses them)
    #[arg(long)]
    pub allow_conditional: bool,
    /// Readiness policy deciding which capabilities are ready: v1 (the reference's) or v2
    #[arg(long, value_enum, default_value_t = crate::cli::Readiness::V1)]
    pub readiness: crate::cli::Readiness,
    /// Do not resolve a `Cargo.lock` for the project (by default cargo resolves one offline,
    /// preferring the versions of the apizr checkout)
    #[arg(long)]
    pub no_lockfile: bool,
    /// k8s/: a Knative Service that scales to zero when idle, instead of the Deployment,
    /// Service and HorizontalPodAutoscaler (needs Knative Serving in the cluster)
    #[arg(long)]
    pub scale_to_zero: bool,
}

/// Run `generate rest|mcp`; messages go to stderr as `apizr generate <kind>: <message>`.
pub fn run(command: &GenerateCommand) -> ExitCode {
    let (transport, args) = match command {
        GenerateCommand::Rest(args) => (Transport::Rest, args),
        GenerateCommand::Mcp(args) => (Transport::Mcp, args),
    };
    match generate(transport, args) {
        Ok(summary) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("apizr generate {}: {error}", transport.name());
            ExitCode::from(error.exit_code())
        }
    }
}

fn generate(transport: Transport, args: &GenerateArgs) -> Result<String, GenerateError> {
    // Path checks first: nothing is read or rendered for an output path we would refuse.
    output::check_path(&args.output_dir)?;
    let policy = match &args.execution_policy {
        Some(path) => Some(read_limited(path, MAX_POLICY_BYTES)?),
        None => None,
    };
    let (source, kind, module, selection, package) = if args.source.is_dir() {
        let (input, package) = package_source(args)?;
        (
            input.source,
            SourceKind::Python,
            input.module,
            Some(input.selection),
            package,
        )
    } else {
        if let Some(dir) = &args.wheelhouse {
            return Err(GenerateError::Input(format!(
                "--wheelhouse {}: only a package directory has requirements to install",
                dir.display()
            )));
        }
        let (source, kind) = apizr_inspect::source::read_source(&args.source)
            .map_err(|e| GenerateError::Input(e.to_string()))?;
        // As in `inspect` (and the reference), an empty `--module-name ''` means the file stem.
        let module = match &args.module_name {
            Some(name) if !name.is_empty() => name.clone(),
            _ => apizr_inspect::source::default_module_name(&args.source)
                .map_err(|e| GenerateError::Input(e.to_string()))?,
        };
        (source, kind, module, args.select.clone(), None)
    };
    let request = Request {
        transport,
        source,
        kind,
        module,
        selection,
        package,
        policy,
        runtime_image: args.runtime_image.clone(),
        runtime_platform: args.runtime_platform.map(|p| p.as_str().to_string()),
        runtime_dependency: checkout_runtime().map_or_else(RuntimeDependency::version, |dir| {
            RuntimeDependency::Checkout(dir.to_string_lossy().into_owned())
        }),
        allow_conditional: args.allow_conditional,
        readiness: args.readiness.policy(),
        autoscaling: if args.scale_to_zero {
            Autoscaling::ScaleToZero
        } else {
            Autoscaling::Hpa
        },
    };
    let mut generated = apizr_codegen::generate(&request)?;
    if !args.no_lockfile {
        add_lockfile(transport, &mut generated);
    }
    output::write_tree(&args.output_dir, &generated.tree)?;
    Ok(generated.summary)
}

/// A package directory: the modules `--select` names (the first is the request's source), the
/// union of their import closures, their requirements and (`--wheelhouse`) the wheels to
/// install them from.
fn package_source(
    args: &GenerateArgs,
) -> Result<(PackageInput, Option<ServedPackage>), GenerateError> {
    if args.module_name.is_some() {
        return Err(GenerateError::Input(
            "--module-name does not apply to a package directory: --select MODULE:FUNCTION \
             names the module"
                .into(),
        ));
    }
    let inputs = apizr_inspect::on_inspect_stack(|| {
        apizr_codegen::package::load(&args.source, args.select.as_deref())
    })
    .map_err(|e| GenerateError::Io(e.to_string()))??;
    // Every module of a directory shares its requirements.
    let declared = inputs
        .first()
        .is_some_and(|i| !i.requirements.specifiers.is_empty());
    let wheelhouse = match &args.wheelhouse {
        Some(dir) if !declared => {
            return Err(GenerateError::Input(format!(
                "--wheelhouse {}: {} declares no requirements (pyproject.toml [project] \
                 dependencies or requirements.txt)",
                dir.display(),
                args.source.display()
            )));
        }
        Some(dir) => read_wheelhouse(dir)?,
        None => BTreeMap::new(),
    };
    // One module that stands alone: no package (generated as its file would be, same bytes);
    // several modules: one bundle of their closures. The directory resolves types imported
    // from its other modules (readiness v2).
    let (input, mut package) = apizr_codegen::package::served(inputs, wheelhouse)?;
    if let Some(package) = &mut package {
        package.root = Some(args.source.clone());
    }
    Ok((input, package))
}

/// The `*.whl` files directly in `dir` (name → bytes); at least one.
fn read_wheelhouse(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, GenerateError> {
    let failed =
        |e: std::io::Error| GenerateError::Input(format!("--wheelhouse {}: {e}", dir.display()));
    let mut wheels = BTreeMap::new();
    for entry in std::fs::read_dir(dir).map_err(failed)? {
        let entry = entry.map_err(failed)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".whl") && entry.file_type().map_err(failed)?.is_file() {
            wheels.insert(name, std::fs::read(entry.path()).map_err(failed)?);
        }
    }
    if wheels.is_empty() {
        return Err(GenerateError::Input(format!(
            "--wheelhouse {}: no .whl files in it",
            dir.display()
        )));
    }
    Ok(wheels)
}

/// The `apizr-runtime` directory of the checkout this binary was built from, while it exists
/// (absolute and canonical: the project then builds wherever it is copied on this machine).
fn checkout_runtime() -> Option<PathBuf> {
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../apizr-runtime")
        .canonicalize()
        .ok()?;
    runtime.join("Cargo.toml").is_file().then_some(runtime)
}

/// Add the project's `Cargo.lock`, resolved offline by cargo from the checkout's lock file
/// (or from the local registry cache without a checkout). A project without a lock file is
/// still a valid project, so a failure is a warning that says why, not a refusal.
fn add_lockfile(transport: Transport, generated: &mut apizr_codegen::Generated) {
    let seed =
        checkout_runtime().and_then(|runtime| std::fs::read(runtime.join("../Cargo.lock")).ok());
    let cargo = std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from);
    match apizr_codegen::lockfile::resolve(&generated.tree, &cargo, seed.as_deref()) {
        Ok(lock) => generated.insert_file("Cargo.lock", lock),
        Err(error) => eprintln!(
            "apizr generate {}: warning: no Cargo.lock written: {error}",
            transport.name()
        ),
    }
}

fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, GenerateError> {
    let file =
        std::fs::File::open(path).map_err(|e| GenerateError::Input(format!("{e}: {path:?}")))?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| GenerateError::Input(format!("{e}: {path:?}")))?;
    if bytes.len() as u64 > limit {
        return Err(GenerateError::Input(format!(
            "Execution policy exceeds {limit} bytes"
        )));
    }
    Ok(bytes)
}
