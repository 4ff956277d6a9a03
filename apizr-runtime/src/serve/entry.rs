//! The entry points of a server: [`bundle_main`], the whole `main` of a generated project
//! (after `launcher::run_if_requested()`), and [`serve_blocking`] / [`serve`], which start a
//! transport for a [`ServeSpec`] (also used by `apizr serve`).
//!
//! `bundle_main` parses the flags ([`BundleArgs`]: the same server flags as `apizr serve`,
//! described in `--help`), loads and verifies the bundle, starts the tokio runtime and serves.
//! The bundle is `--bundle DIR`, else `APIZR_BUNDLE`, else the nearest ancestor of the binary
//! holding `capability-ir.json`, else the working directory when it holds one, else the
//! directory given to [`bundle_main_in`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser as _;

use super::args::BundleArgs;
use super::error::ServeError;
use super::options::{ServeOptions, Transport};
use super::service::ServicePlan;
use super::spec::ServeSpec;

/// The nearest ancestor of the running binary holding `capability-ir.json`, else the working
/// directory when it holds one.
fn find_bundle(fallback: Option<&Path>) -> Option<PathBuf> {
    let marker = "capability-ir.json";
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe.ancestors().skip(1) {
            if dir.join(marker).is_file() {
                return Some(dir.to_path_buf());
            }
        }
    }
    if let Ok(cwd) = std::env::current_dir()
        && cwd.join(marker).is_file()
    {
        return Some(cwd);
    }
    fallback.map(Path::to_path_buf)
}

/// The whole `main` of a generated project.
pub fn bundle_main(transport: Transport) -> ExitCode {
    bundle_main_in(transport, None)
}

/// As [`bundle_main`], with a last-resort bundle directory (a generated `main.rs` may pass
/// `Some(Path::new(env!("CARGO_MANIFEST_DIR")))`).
pub fn bundle_main_in(transport: Transport, default_dir: Option<&Path>) -> ExitCode {
    let parsed = match BundleArgs::try_parse() {
        Ok(parsed) => parsed,
        // --help (exit 0) or a usage error (exit 2), printed by clap.
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2));
        }
    };
    let Some(dir) = parsed.bundle_dir().or_else(|| find_bundle(default_dir)) else {
        eprintln!("error: no bundle found; pass --bundle DIR");
        return ExitCode::from(2);
    };
    // One source, or one per module of a package; the flags apply to each.
    let result = ServicePlan::from_bundle_dir(&dir).and_then(|mut plan| {
        for spec in &mut plan.specs {
            parsed.server.overrides().apply(spec);
        }
        if let Some(first) = plan.specs.first() {
            plan.gates = first.gates;
        }
        serve_plan_blocking(transport, plan, parsed.server.options())
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// Build the tokio runtime and serve until interrupted.
pub fn serve_blocking(
    transport: Transport,
    spec: ServeSpec,
    options: ServeOptions,
) -> Result<(), ServeError> {
    serve_plan_blocking(transport, ServicePlan::from(spec), options)
}

/// As [`serve_blocking`], for any [`ServicePlan`] (registered bindings and native endpoints).
pub fn serve_plan_blocking(
    transport: Transport,
    plan: ServicePlan,
    options: ServeOptions,
) -> Result<(), ServeError> {
    options.check_exposure()?;
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        // Half the cores: the other half runs the Python workers, and fewer I/O threads mean
        // fewer cross-thread wake-ups per call (measured: +10-15% req/s on 2 cores).
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        builder.worker_threads((cores / 2).max(1));
    }
    let runtime = builder
        .enable_all()
        .build()
        .map_err(|source| ServeError::Server {
            what: "tokio",
            source,
        })?;
    runtime.block_on(serve_plan(transport, plan, options))
}

/// Serve on the current tokio runtime.
pub async fn serve(
    transport: Transport,
    spec: ServeSpec,
    options: ServeOptions,
) -> Result<(), ServeError> {
    serve_plan(transport, ServicePlan::from(spec), options).await
}

/// Serve a [`ServicePlan`] on the current tokio runtime.
pub async fn serve_plan(
    transport: Transport,
    plan: ServicePlan,
    options: ServeOptions,
) -> Result<(), ServeError> {
    match transport {
        #[cfg(feature = "rest")]
        Transport::Rest => super::rest::run_rest_plan(plan, options).await,
        #[cfg(feature = "mcp")]
        Transport::Mcp => super::mcp::run_mcp_plan(plan, options).await,
        #[allow(unreachable_patterns)]
        other => {
            let _ = (plan, options);
            Err(ServeError::MissingTransport(other.label()))
        }
    }
}
