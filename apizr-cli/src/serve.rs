//! `apizr serve rest|mcp [SOURCE] [--policy FILE] [--select NAMES] [--host] [--port] …`: the
//! generated server, straight from this binary — no code generation, no cargo build.
//!
//! The source is inspected exactly as `generate` does (same selection and eligibility
//! refusals), then served by `apizr_runtime::serve` in direct mode (warm pool), with a v1
//! `--policy` governed (a fresh sandboxed worker per call), or with a v2 `--policy` plus
//! `--runtime-image/--runtime-platform` in a fresh container per call. Without SOURCE the bundled
//! example (`examples/pricing.py`) is served, which makes `apizr serve rest` a one-command demo.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, anyhow, bail};
use apizr_codegen::package::PackageInput;
use apizr_inspect::interface::PlanError;
use apizr_inspect::{InspectOptions, interface, on_inspect_stack};
use apizr_ir::SourceKind;
use apizr_ir::plan::BoundSource;
use apizr_ir::policy::AnyPolicy;
use apizr_runtime::oci::RuntimeImage;
use apizr_runtime::serve::{
    ExecutionMode, ServeSource, ServeSpec, ServerArgs, ServicePlan, Transport, serve_plan_blocking,
};
use apizr_runtime::{Executable, PackageFiles};
use clap::{Args, Subcommand};

use crate::execute::Platform;

/// The bundled example served when SOURCE is omitted.
const EXAMPLE: &[u8] = include_bytes!("../../examples/pricing.py");
const EXAMPLE_MODULE: &str = "pricing";
const MAX_POLICY_BYTES: u64 = 1_048_576;

const SERVE_EXAMPLES: &str = "\
Examples:
  apizr serve rest                                  serve the bundled example on 127.0.0.1:8000
  apizr serve rest examples/pricing.py --port 9000
  curl -s localhost:9000/capabilities/total -d '{\"prices\": [1, 2.5]}'
  apizr serve rest tools.py --policy policy.json    governed: one sandboxed worker per call
  apizr serve rest tools.py --select f --allow-conditional   also a `conditional` function
  apizr serve rest tools.py --policy v2.json --runtime-image sha256:… --runtime-platform linux/amd64
  apizr serve rest tools.py --host 0.0.0.0 --token \"$TOKEN\"
  apizr serve rest --bundle generated/                a generated project, without cargo build
  apizr serve rest src/ --select pkg.number:intcomma --allow-conditional   a module of a package
  apizr serve mcp tools.py --http --port 8001       MCP Streamable HTTP at /mcp";

#[derive(Debug, Subcommand)]
pub enum ServeCommand {
    /// Serve capabilities over REST (POST /capabilities/<name>, /docs, /openapi.json, /metrics)
    #[command(after_help = SERVE_EXAMPLES)]
    Rest(ServeArgs),
    /// Serve capabilities as MCP tools (stdio by default, or Streamable HTTP at /mcp)
    #[command(after_help = SERVE_EXAMPLES)]
    Mcp(ServeArgs),
    /// Serve the code interpreter as one MCP tool, `python` (input {"code": string},
    /// structured result apizr.interpreter-result/v1), over stdio
    #[command(after_help = INTERPRETER_EXAMPLES)]
    Interpreter(InterpreterServeArgs),
}

const INTERPRETER_EXAMPLES: &str = "\
The tier, policy and import allowlist are the server's (flags); clients send only code.
With --session, a client's calls share one persistent interpreter (variables, imports,
workspace files) that ends with the client or the server, after --idle-timeout seconds
without a call, or when a call times out (docker tiers: one container for the session,
removed when it ends). Over --http each MCP session (mcp-session-id) is a client with its
own interpreter session; a request without one runs fresh.

Examples:
  apizr serve interpreter                               local tier, default policy
  apizr serve interpreter --policy strict.json --session
  apizr serve interpreter --tier docker --image apizr-ci/worker:dev
  apizr serve interpreter --http --port 8765 --session  per-client sessions at /mcp";

#[derive(Debug, Args)]
pub struct InterpreterServeArgs {
    #[command(flatten)]
    pub interpreter: crate::run::InterpreterArgs,
    /// Keep one persistent session per client (over HTTP: per MCP session)
    #[arg(long)]
    pub session: bool,
    /// Serve Streamable HTTP at /mcp instead of stdio
    #[arg(long)]
    pub http: bool,
    /// With --http: address to listen on (a non-loopback address needs --token or --insecure)
    #[arg(long, default_value = "127.0.0.1", requires = "http")]
    pub host: String,
    /// With --http: port to listen on (0: any free port, printed on stderr)
    #[arg(long, default_value_t = 8000, requires = "http")]
    pub port: u16,
    /// With --http: bearer token every request must carry [env: APIZR_TOKEN]
    #[arg(long, requires = "http")]
    pub token: Option<String>,
    /// With --http: allow a non-loopback address without a token
    #[arg(long, requires = "http")]
    pub insecure: bool,
    /// With --http --session: sessions open at once (each holds a process or a container);
    /// a call that would open one more is refused
    #[arg(long, value_name = "N", default_value_t = apizr_runtime::serve::mcp::interpreter::DEFAULT_MAX_SESSIONS, requires = "session")]
    pub max_sessions: usize,
    /// With --session: end the session after this many seconds without a call
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 600,
        requires = "session"
    )]
    pub idle_timeout: u64,
    /// `local` tier: keep N processes pre-started per policy for one-shot runs, each started
    /// with every control of a cold run and used for one run only (sessions keep their own
    /// process); 0 starts each run's process when it arrives [env: APIZR_INTERPRETER_PRESTART]
    /// [default: 2]
    #[arg(long, value_name = "N")]
    pub prestart: Option<usize>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The `.py` file or `.ipynb` notebook to serve (default: the bundled example), or a
    /// package directory (what goes on `sys.path`) with `--select MODULE:FUNCTION,…`
    pub source: Option<PathBuf>,
    /// Serve a generated project directory (its verified contract files) instead of SOURCE
    #[arg(long, value_name = "DIR", conflicts_with_all = ["source", "module_name", "select", "policy"])]
    pub bundle: Option<PathBuf>,
    /// Logical dotted module name (default: the file stem)
    #[arg(long, value_name = "NAME")]
    pub module_name: Option<String>,
    /// Comma-separated function names or capability IDs (default: all; all must be READY);
    /// for a package directory `pkg.mod:func,pkg.other:g` (one or more of its modules)
    #[arg(long, value_name = "NAMES")]
    pub select: Option<String>,
    /// Also serve selected `conditional` capabilities (needs --select; their reasons are
    /// printed at start). `unsupported` and `ambiguous` ones are still refused
    #[arg(long, requires = "select", conflicts_with = "bundle")]
    pub allow_conditional: bool,
    /// Readiness policy for a source file: v1 (the reference's) or v2
    #[arg(long, value_enum, default_value_t = crate::cli::Readiness::V1, conflicts_with = "bundle")]
    pub readiness: crate::cli::Readiness,
    /// Execution policy: `apizr.execution/v1` (one fresh sandboxed worker per call) or
    /// `apizr.execution/v2` (one fresh container per call; needs --runtime-image/-platform)
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Full `sha256:` image ID (see `apizr image build`) for `apizr.execution/v2` policies
    #[arg(long, value_name = "sha256:…", conflicts_with = "bundle")]
    pub runtime_image: Option<String>,
    /// OCI platform for `apizr.execution/v2` policies
    #[arg(long, value_enum, conflicts_with = "bundle")]
    pub runtime_platform: Option<Platform>,
    /// Where to listen, the token, limits and tuning (the flags of generated servers)
    #[command(flatten)]
    pub server: ServerArgs,
}

pub fn run(command: &ServeCommand) -> anyhow::Result<ExitCode> {
    let (transport, args) = match command {
        ServeCommand::Rest(a) => (Transport::Rest, a),
        ServeCommand::Mcp(a) => (Transport::Mcp, a),
        ServeCommand::Interpreter(a) => return serve_interpreter(a),
    };
    let mut specs = build_specs(args)?.into_iter();
    // Never empty: a package selection names at least one module.
    let first = specs.next().context("nothing to serve")?;
    // One source per module of a package (each its own executable, closure and workers), as
    // `#[python]` bindings are served: names unique across them, one readiness for all.
    let mut plan = ServicePlan::from(first);
    plan.specs.extend(specs);
    for spec in &mut plan.specs {
        args.server.overrides().apply(spec);
    }
    let options = args.server.options();
    serve_plan_blocking(transport, plan, options).map_err(|e| anyhow!(e))?;
    Ok(ExitCode::SUCCESS)
}

/// `apizr serve interpreter`: the `python` tool over stdio until the client closes stdin.
fn serve_interpreter(args: &InterpreterServeArgs) -> anyhow::Result<ExitCode> {
    use apizr_runtime::interpreter::SessionOptions;
    use apizr_runtime::serve::mcp::interpreter::{InterpreterHandler, serve_interpreter_on};
    let mut environment = args.interpreter.environment()?;
    prestart_interpreter(&mut environment, args);
    let session = args.session.then(|| SessionOptions {
        idle_timeout: std::time::Duration::from_secs(args.idle_timeout.max(1)),
    });
    let handler = InterpreterHandler::new(environment, session, args.max_sessions.max(1));
    let http = args.http.then(|| apizr_runtime::serve::ServeOptions {
        host: args.host.clone(),
        port: args.port,
        token: args
            .token
            .clone()
            .or_else(|| std::env::var("APIZR_TOKEN").ok())
            .filter(|t| !t.is_empty()),
        insecure: args.insecure,
        mcp_http: true,
        ..apizr_runtime::serve::ServeOptions::default()
    });
    serve_interpreter_on(handler, http).map_err(|e| anyhow!(e))?;
    Ok(ExitCode::SUCCESS)
}

/// Size the interpreter's pre-start pool (`--prestart`, else the environment, else the
/// default) and say on stderr when one-shot runs go cold instead.
fn prestart_interpreter(
    environment: &mut apizr_runtime::interpreter::Environment,
    args: &InterpreterServeArgs,
) {
    use apizr_runtime::interpreter::NoPrestart;
    use apizr_runtime::local::prestart::PrestartConfig;
    use apizr_runtime::serve::mcp::interpreter::{
        DEFAULT_PRESTART, PRESTART_ENV, PRESTART_WAIT_ENV,
    };
    let size = args
        .prestart
        .or_else(|| {
            std::env::var(PRESTART_ENV)
                .ok()
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(DEFAULT_PRESTART);
    let wait = std::env::var(PRESTART_WAIT_ENV)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|ms| *ms > 0)
        .map(std::time::Duration::from_millis);
    let config = PrestartConfig {
        wait,
        ..PrestartConfig::with_size(size)
    };
    match environment.start_prestart(config) {
        Ok(()) | Err(NoPrestart::Off) | Err(NoPrestart::Tier) => {}
        Err(why) => eprintln!("apizr: one-shot runs start their process cold: {why}"),
    }
}

/// Inspect the source and plan its contracts, or load a generated project (`--bundle`): one
/// spec, or for a package directory one per selected module.
pub fn build_specs(args: &ServeArgs) -> anyhow::Result<Vec<ServeSpec>> {
    if let Some(dir) = &args.bundle {
        // One source, or one per module of a package's bundle.
        let plan = ServicePlan::from_bundle_dir(dir).map_err(|e| anyhow!(e))?;
        return Ok(plan.specs);
    }
    let (bytes, kind, module) = match &args.source {
        Some(path) if path.is_dir() => {
            let inputs = package_source(path, args)?;
            // Under a v2 policy, the server starts only if the runtime image carries the
            // package's requirement set (`OciExecutor::check_requirements`).
            // Readiness v2 resolves types imported from the package's other modules.
            let index = apizr_inspect::package::PackageIndex::scan(path)?;
            let mut assessed = assess_in_package(&index, &inputs, args)?.map(Vec::into_iter);
            return inputs
                .into_iter()
                .map(|input| {
                    // `None`: a module that stands alone, served as its file would be.
                    let requirements = input.requirements.specifiers;
                    let package = input.files.map(|files| PackageFiles {
                        files,
                        requirements,
                    });
                    let select = Some(input.selection.as_str());
                    let index = package.as_ref().map(|_| &index);
                    let inspected = match (&package, &mut assessed) {
                        (Some(_), Some(assessed)) => assessed.next(),
                        _ => None,
                    };
                    let source = (input.source, SourceKind::Python, input.module);
                    spec_of(args, source, select, (package, index), inspected)
                })
                .collect();
        }
        Some(path) => {
            let (bytes, kind) = apizr_inspect::source::read_source(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let module = match &args.module_name {
                Some(m) => m.clone(),
                None => apizr_inspect::source::default_module_name(path)?,
            };
            (bytes, kind, module)
        }
        None => (
            EXAMPLE.to_vec(),
            SourceKind::Python,
            args.module_name
                .clone()
                .unwrap_or_else(|| EXAMPLE_MODULE.into()),
        ),
    };
    Ok(vec![spec_of(
        args,
        (bytes, kind, module),
        args.select.as_deref(),
        (None, None),
        None,
    )?])
}

/// Under readiness v2, the modules served with their package (not standing alone), assessed
/// as `inspect DIR --readiness v2` assesses them (one implementation of the package rule,
/// [`apizr_inspect::project::inspect_modules_in_dir`]), in the order of `inputs`; `None`
/// under v1, where a module is assessed alone.
fn assess_in_package(
    index: &apizr_inspect::package::PackageIndex,
    inputs: &[PackageInput],
    args: &ServeArgs,
) -> anyhow::Result<Option<Vec<(apizr_inspect::Outcome, apizr_inspect::ParsedModule)>>> {
    let options = InspectOptions {
        readiness: args.readiness.policy(),
        ..InspectOptions::default()
    };
    if options.readiness != apizr_ir::ReadinessPolicy::V2 {
        return Ok(None);
    }
    let packaged: Vec<(&str, &[u8])> = inputs
        .iter()
        .filter(|input| input.files.is_some())
        .map(|input| (input.module.as_str(), input.source.as_slice()))
        .collect();
    let provides = Default::default();
    let assessed =
        apizr_inspect::project::inspect_modules_in_dir(index, &packaged, options, &provides)?;
    Ok(Some(assessed))
}

/// One source (bytes, kind, module name) inspected (unless `inspected` already is), planned
/// for `select` and bound to its execution mode; `package`: the module's import closure when
/// it is a module of a package, and the package's index.
fn spec_of(
    args: &ServeArgs,
    (bytes, kind, module): (Vec<u8>, SourceKind, String),
    select: Option<&str>,
    (package, index): (
        Option<PackageFiles>,
        Option<&apizr_inspect::package::PackageIndex>,
    ),
    inspected: Option<(apizr_inspect::Outcome, apizr_inspect::ParsedModule)>,
) -> anyhow::Result<ServeSpec> {
    let selection = select.map(interface::parse_selection).transpose()?;
    let options = InspectOptions {
        readiness: args.readiness.policy(),
        ..InspectOptions::default()
    };
    // Inspection and planning recurse over the syntax tree: run them on a large stack.
    let (outcome, contracts, conditional) = on_inspect_stack(|| {
        let (outcome, parsed) = match inspected {
            Some(inspected) => inspected,
            None => {
                apizr_inspect::inspect_bytes_in_index(&bytes, kind, &module, options, None, index)?
            }
        };
        let planned = match (&selection, args.allow_conditional) {
            // The same rule as `generate --allow-conditional` (one implementation).
            (Some(selection), true) => apizr_codegen::conditional::plan_in_package(
                &parsed,
                &outcome.inspection,
                selection,
                index,
            ),
            _ => interface::plan_in_package(
                &parsed,
                &outcome.inspection,
                selection.as_deref(),
                index,
            )
            .map(|contracts| (contracts, None)),
        };
        let (contracts, conditional) =
            planned.map_err(|e| serve_refusal(e, args.allow_conditional))?;
        anyhow::Ok((outcome, contracts, conditional))
    })??;
    if let Some(conditional) = &conditional {
        announce_conditional(conditional);
    }
    let inspection = outcome.inspection.clone();
    let bound = BoundSource::of(&inspection);
    let mut executable = Executable::new(outcome.executable);
    if executable.digest != bound.executable_digest {
        bail!("the executable bytes do not match the inspected digest");
    }
    if let Some(package) = package {
        executable = executable.with_package(package);
    }
    // Decided here, once, from the readiness the module is served under.
    let in_package = executable.package.is_some();
    executable = executable.with_import_time(apizr_ir::import_time::ImportTime::of_report(
        &inspection.readiness,
        in_package,
    ));
    let mode = match &args.policy {
        Some(path) => read_policy(path, args)?,
        None if args.runtime_image.is_some() || args.runtime_platform.is_some() => {
            bail!("--runtime-image/--runtime-platform require an apizr.execution/v2 policy")
        }
        None => ExecutionMode::Direct {
            workers: apizr_runtime::serve::bundle::default_workers(),
            timeout: None,
        },
    };
    Ok(ServeSpec::from_contracts(
        contracts,
        ServeSource {
            executable,
            module,
            executable_path: bound.executable_path,
            ir_digest: Some(bound.ir_digest),
            readiness_digest: Some(bound.readiness_digest),
        },
        mode,
    ))
}

/// A package directory (`DIR --select pkg.mod:func,…`): each selected module with its import
/// closure, and a note when the package declares requirements (serve installs nothing: the
/// workers import them from `APIZR_PYTHON`'s virtual environment, as generated images do, or
/// under v2 from the runtime image's).
fn package_source(dir: &std::path::Path, args: &ServeArgs) -> anyhow::Result<Vec<PackageInput>> {
    if args.module_name.is_some() {
        bail!(
            "--module-name does not apply to a package directory: --select MODULE:FUNCTION \
             names the module"
        );
    }
    let input = on_inspect_stack(|| apizr_codegen::package::load(dir, args.select.as_deref()))??;
    if let Some(first) = input.first()
        && let Some(origin) = &first.requirements.origin
        && !first.requirements.specifiers.is_empty()
    {
        // Under v2 the calls run in the runtime image, which must carry them (checked at
        // start-up); elsewhere the workers run on this host.
        let where_from = if args.runtime_image.is_some() {
            "the --runtime-image must carry them (checked at start-up; apizr image build \
             --package builds one)"
        } else {
            "install them into a virtual environment and set APIZR_PYTHON to its bin/python"
        };
        eprintln!(
            "apizr serve: {} declares requirements ({}); serve installs nothing: {where_from}",
            origin.display(),
            first.requirements.specifiers.join(", ")
        );
    }
    Ok(input)
}

/// The planner's refusal, worded for `serve` (see [`crate::refusal`]), with the flag that
/// serves `conditional` capabilities.
fn serve_refusal(error: PlanError, allow_conditional: bool) -> anyhow::Error {
    let Some(list) = crate::refusal::refused_capabilities(&error) else {
        return anyhow!(error);
    };
    let hint = if allow_conditional {
        "--allow-conditional covers conditional capabilities only"
    } else {
        "serve only ready capabilities (--select NAMES), or conditional ones with \
         --select NAMES --allow-conditional"
    };
    anyhow!("cannot serve {list}; {hint}")
}

/// `--allow-conditional`: which conditional capabilities are served and why they are
/// conditional, so the choice stays visible (a generated project records it in its manifest).
fn announce_conditional(conditional: &apizr_ir::Value) {
    let apizr_ir::Value::Object(map) = conditional else {
        return;
    };
    for (id, record) in map {
        let reasons = match record.get("reasons") {
            Some(apizr_ir::Value::Array(codes)) => codes
                .iter()
                .filter_map(|c| match c {
                    apizr_ir::Value::Str(code) => Some(code.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(", "),
            _ => String::new(),
        };
        eprintln!("apizr serve: serving conditional capability {id} ({reasons})");
    }
}

/// A v1 policy (governed) or a v2 policy with its image (containers), checked as `execute`
/// checks them: a v2 document needs both image flags, a v1 document none, neither may require
/// a known effect (effects are never inferred) and a v2 policy must not be refused.
fn read_policy(path: &std::path::Path, args: &ServeArgs) -> anyhow::Result<ExecutionMode> {
    let meta = std::fs::metadata(path).with_context(|| format!("{}", path.display()))?;
    if meta.len() > MAX_POLICY_BYTES {
        bail!("{} is larger than {MAX_POLICY_BYTES} bytes", path.display());
    }
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path)?)
        .with_context(|| format!("{} is not JSON", path.display()))?;
    let image = if AnyPolicy::is_v2_document(&doc) {
        let (Some(image), Some(platform)) = (&args.runtime_image, args.runtime_platform) else {
            bail!("OCI policy requires --runtime-image and --runtime-platform");
        };
        Some(RuntimeImage::parse(image, platform.as_str()).map_err(|e| anyhow!(e))?)
    } else if args.runtime_image.is_some() || args.runtime_platform.is_some() {
        bail!("--runtime-image/--runtime-platform require an apizr.execution/v2 policy");
    } else {
        None
    };
    let policy = AnyPolicy::from_json(&doc).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    if let Some(refusal) = policy.refusal() {
        bail!("{}: {refusal}", path.display());
    }
    if let Some(effect) = policy.effects().require_known.first() {
        bail!("policy requires a known {effect} effect, but v1 never infers effects");
    }
    Ok(ExecutionMode::Governed { policy, image })
}
