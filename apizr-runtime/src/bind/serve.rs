//! Serving registered `#[python]` bindings and `#[endpoint]` functions with the same server as
//! `apizr serve` ([`crate::serve::Service`] behind the REST and MCP transports).
//!
//! * [`plan`] — a registration list (`apizr_runtime::capabilities![...]`) as a
//!   [`ServicePlan`]: one spec per source (the embedded file, checked against its digests,
//!   with its own policy: direct pool, v1 or v2), holding the contracts of every binding of
//!   that file, module and policy, plus the native endpoints. Bindings of one source share
//!   one spec, so a module's functions share one warm pool (and its module state) as under
//!   `apizr serve FILE`; bindings of other files or modules are further specs of the same
//!   server. A bound function is served under its Python name, as `apizr serve` serves it.
//! * [`serve_main`] — the whole `main` of such a program after [`crate::init`]:
//!   `PROGRAM rest|mcp [server flags]`, the same flags as `apizr serve` (`--help` lists them).

use std::process::ExitCode;

use apizr_ir::policy::AnyPolicy;
use apizr_ir::surface::Transport;
use clap::Parser as _;

use super::CallError;
use super::private::{Governance, PythonBinding, Registration};
use super::run;
use crate::local::runtime::LauncherLocation;
use crate::oci::RuntimeImage;
use crate::serve::args::ServerArgs;
use crate::serve::options::SpecOverrides;
use crate::serve::spec::{ExecutionMode, Gates, ServeSource, ServeSpec};
use crate::serve::{ServicePlan, serve_plan_blocking};
use crate::status::Status;

/// The command line of a program serving registered bindings.
#[derive(Debug, Clone, clap::Parser)]
#[command(
    about = "Serve this program's Python functions and native endpoints (REST or MCP).",
    long_about = "Serve this program's Python functions and native endpoints (REST or MCP).\n\n\
        Every Python function runs under the policy it was bound with (checked when the \
        program was compiled); native endpoints run under their declared limits."
)]
pub struct RegisteredArgs {
    /// The transport
    #[arg(value_enum)]
    pub transport: TransportArg,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `rest` or `mcp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TransportArg {
    Rest,
    Mcp,
}

impl From<TransportArg> for Transport {
    fn from(arg: TransportArg) -> Transport {
        match arg {
            TransportArg::Rest => Transport::Rest,
            TransportArg::Mcp => Transport::Mcp,
        }
    }
}

/// The plan of a registration list under the server flags' overrides.
pub fn plan(
    registrations: Vec<Registration>,
    overrides: &SpecOverrides,
) -> Result<ServicePlan, CallError> {
    let mut gates = Gates::default();
    if let Some(n) = overrides.concurrency {
        gates.concurrency = n.max(1);
    }
    let mut plan = ServicePlan {
        gates,
        audit: overrides.audit.clone(),
        ..ServicePlan::default()
    };
    // The binding that opened each spec (same index as `plan.specs`).
    let mut sources: Vec<&'static PythonBinding> = Vec::new();
    for registration in registrations {
        match registration {
            Registration::Python(binding) => {
                if let Some(i) = sources.iter().position(|s| same_source(s, binding)) {
                    let (contract, _) = run::parts(binding)?;
                    plan.specs[i]
                        .capabilities
                        .push(crate::serve::ServedCapability::new(contract));
                    continue;
                }
                let mut spec = python_spec(binding)?;
                overrides.apply(&mut spec);
                plan.specs.push(spec);
                sources.push(binding);
            }
            Registration::Native(endpoint) => plan.native.push(endpoint),
        }
    }
    plan.names()
        .map_err(|e| CallError::new(Status::BindingFailed, e.to_string()))?;
    Ok(plan)
}

/// Two bindings of the same executable bytes, module and policy run in one spec.
fn same_source(a: &PythonBinding, b: &PythonBinding) -> bool {
    a.digests.executable == b.digests.executable
        && a.module == b.module
        && a.governance == b.governance
}

/// The spec of one bound function: its embedded source, contract and policy.
fn python_spec(binding: &'static PythonBinding) -> Result<ServeSpec, CallError> {
    let (contract, executable) = run::parts(binding)?;
    let unavailable = |why: String| {
        CallError::new(
            Status::BackendUnavailable,
            format!("`{}`: {why}", binding.rust_name),
        )
    };
    let policy = |text: &str| {
        AnyPolicy::from_slice(text.as_bytes()).map_err(|e| unavailable(format!("policy: {e}")))
    };
    let mut launcher = LauncherLocation::CurrentExe;
    let mode = match binding.governance {
        Governance::Direct => ExecutionMode::Direct {
            workers: run::DIRECT_WORKERS,
            timeout: None,
        },
        Governance::V1 { policy: text } => {
            launcher = run::launcher(binding)?;
            ExecutionMode::Governed {
                policy: policy(text)?,
                image: None,
            }
        }
        Governance::V2 {
            policy: text,
            image,
            platform,
        } => ExecutionMode::Governed {
            policy: policy(text)?,
            image: Some(
                RuntimeImage::parse(image, platform)
                    .map_err(|e| unavailable(format!("runtime image: {e}")))?,
            ),
        },
    };
    let source = ServeSource {
        executable,
        module: binding.module.to_string(),
        executable_path: format!("source/{}.py", binding.module.replace('.', "/")),
        ir_digest: None,
        readiness_digest: None,
    };
    let mut spec = ServeSpec::from_contracts(vec![contract], source, mode);
    spec.launcher = launcher;
    Ok(spec)
}

/// The whole `main` of a program serving `registrations` (call [`crate::init`] before it).
/// Exit codes: 0 after SIGINT/SIGTERM, 1 when the server cannot start, 2 for a bad command
/// line.
pub fn serve_main(registrations: Vec<Registration>) -> ExitCode {
    let args = match RegisteredArgs::try_parse() {
        Ok(args) => args,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2));
        }
    };
    let result = plan(registrations, &args.server.overrides())
        .map_err(|e| e.to_string())
        .and_then(|plan| {
            serve_plan_blocking(args.transport.into(), plan, args.server.options())
                .map_err(|e| e.to_string())
        });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
