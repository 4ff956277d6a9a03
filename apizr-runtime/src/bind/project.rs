//! The `main` of a generated project: its `#[python]` bindings (one per capability, checked
//! against the Python source when the project was compiled) served by the same
//! [`crate::serve::Service`] as `apizr serve`, with the contract files compiled in.
//!
//! Start-up check: the binary carries its source (the bindings' `include_bytes!`) and the
//! project's manifest and interface document (`include_bytes!` in `main.rs`). Before serving,
//! [`verify`] holds them against each other: the interface document hashes to the manifest's
//! digest, every binding's executable and policy digests are the manifest's, and the document
//! built from the bindings' contracts is byte for byte the project's `openapi.json` /
//! `mcp-tools.json`. A project built after one of its files was edited (a Python body, a
//! policy, a contract file) therefore refuses to start, naming the file, instead of serving
//! something its manifest does not describe. Nothing needs to be read from the disk: the
//! binary runs wherever it is copied.
//!
//! `--bundle DIR` (the project's image passes its copy of the project files): DIR is also
//! verified as `apizr serve --bundle` verifies it (every artifact against the manifest's
//! digests), and its manifest must be the compiled-in one byte for byte, so an image whose
//! files were altered, or hold another project's, refuses to start.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use apizr_ir::admission::parse_permissive;
use apizr_ir::interface::InvocationContract;
use apizr_ir::{Digest, Value};
use clap::Parser as _;

use super::private::{Governance, PythonBinding, Registration};
use crate::serve::args::ServerArgs;
use crate::serve::options::Transport;
use crate::serve::serve_plan_blocking;

/// The command line of a generated project.
#[derive(Debug, Clone, clap::Parser)]
#[command(
    about = "Serve the capabilities of this generated apizr project (REST or MCP).",
    long_about = "Serve the capabilities of this generated apizr project (REST or MCP).\n\n\
        The Python source, the manifest (apizr-rest.json / apizr-mcp.json) and the interface \
        document are compiled into this binary. At start-up the server verifies every digest \
        the manifest records for them and refuses to start on a mismatch.",
    disable_version_flag = true
)]
pub struct ProjectArgs {
    /// Also verify this copy of the project files [env: APIZR_BUNDLE]: every digest of its
    /// manifest, which must be the manifest compiled into this binary
    #[arg(long, value_name = "DIR")]
    pub bundle: Option<PathBuf>,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// The contract files a generated project compiles in.
#[derive(Debug, Clone, Copy)]
pub struct ProjectFiles {
    /// The transport manifest (`apizr-rest.json` / `apizr-mcp.json`).
    pub manifest: &'static [u8],
    /// The interface document (`openapi.json` / `mcp-tools.json`).
    pub interface: &'static [u8],
}

/// Why a generated project refuses to start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProjectError {
    #[error("{0}: not a readable manifest: {1}")]
    Manifest(&'static str, String),
    #[error("{manifest} records no {what}")]
    Missing {
        manifest: &'static str,
        what: String,
    },
    #[error("{file}: the compiled-in copy does not match the digest {manifest} records")]
    Digest {
        file: String,
        manifest: &'static str,
    },
    #[error(
        "`{function}`: its {what} does not match {manifest} (was {file} edited after generation?)"
    )]
    Binding {
        function: &'static str,
        what: &'static str,
        file: String,
        manifest: &'static str,
    },
    #[error("{0} built from the compiled bindings differs from the project's {0}")]
    Interface(&'static str),
    #[error("no Python binding is registered")]
    Empty,
    #[error("{0}")]
    Bundle(String),
    #[error("{0}: not the manifest this binary was built with")]
    OtherManifest(PathBuf),
}

/// `--bundle DIR`: verified as `apizr serve --bundle` does, and holding this binary's manifest.
pub fn verify_bundle(
    transport: Transport,
    files: &ProjectFiles,
    dir: &Path,
) -> Result<(), ProjectError> {
    crate::serve::ServicePlan::from_bundle_dir(dir)
        .map_err(|e| ProjectError::Bundle(e.to_string()))?;
    let path = dir.join(transport.manifest_file());
    match std::fs::read(&path) {
        Ok(bytes) if bytes == files.manifest => Ok(()),
        _ => Err(ProjectError::OtherManifest(path)),
    }
}

fn digest_of(v: Option<&Value>) -> Option<String> {
    match (v?.get("algorithm"), v?.get("value")) {
        (Some(Value::Str(a)), Some(Value::Str(h))) if a == "sha256" => Some(format!("sha256:{h}")),
        _ => None,
    }
}

/// Hold the compiled-in files and bindings against each other (see the module docs).
pub fn verify(
    transport: Transport,
    files: &ProjectFiles,
    bindings: &[&'static PythonBinding],
) -> Result<(), ProjectError> {
    let manifest_file = transport.manifest_file();
    let interface_file = transport.interface_file();
    let manifest = parse_permissive(files.manifest)
        .map_err(|e| ProjectError::Manifest(manifest_file, e.to_string()))?;
    let missing = |what: &str| ProjectError::Missing {
        manifest: manifest_file,
        what: what.to_string(),
    };
    let artifact = |rel: &str| digest_of(manifest.get("artifacts").and_then(|a| a.get(rel)));
    let recorded = artifact(interface_file).ok_or_else(|| missing(interface_file))?;
    if Digest::sha256(files.interface).prefixed() != recorded {
        return Err(ProjectError::Digest {
            file: interface_file.to_string(),
            manifest: manifest_file,
        });
    }
    let executable_path = match manifest.get("executable_path") {
        Some(Value::Str(path)) => path.clone(),
        _ => return Err(missing("executable_path")),
    };
    let executable =
        digest_of(manifest.get("executable_digest")).ok_or_else(|| missing("executable_digest"))?;
    let module = match manifest.get("source").and_then(|s| s.get("module")) {
        Some(Value::Str(module)) => module.clone(),
        _ => return Err(missing("source.module")),
    };
    let policy = artifact("execution/policy.json");
    let mut contracts: Vec<InvocationContract> = Vec::with_capacity(bindings.len());
    for binding in bindings {
        let mismatch = |what, file: &str| ProjectError::Binding {
            function: binding.rust_name,
            what,
            file: file.to_string(),
            manifest: manifest_file,
        };
        if binding.digests.executable != executable {
            return Err(mismatch("source", &executable_path));
        }
        if binding.module != module {
            return Err(mismatch("module", &executable_path));
        }
        let bound_policy = match binding.governance {
            Governance::Direct => None,
            Governance::V1 { .. } | Governance::V2 { .. } => binding.digests.policy,
        };
        if bound_policy != policy.as_deref() {
            return Err(mismatch("policy", "execution/policy.json"));
        }
        let (contract, _) =
            super::run::parts(binding).map_err(|_| mismatch("source", &executable_path))?;
        contracts.push(contract);
    }
    if contracts.is_empty() {
        return Err(ProjectError::Empty);
    }
    let built = match transport {
        Transport::Rest => crate::serve::openapi::bytes_with_native(&contracts, &[]),
        Transport::Mcp => apizr_ir::surface::mcp::tool_names(&contracts)
            .ok()
            .and_then(|names| {
                apizr_ir::surface::mcp::tools_document(&contracts, &names)
                    .canonical_bytes()
                    .ok()
            })
            .unwrap_or_default(),
    };
    if built != files.interface {
        return Err(ProjectError::Interface(interface_file));
    }
    Ok(())
}

/// The whole `main` of a generated project after [`crate::init`]. Exit codes: 0 after
/// SIGINT/SIGTERM, 1 when the project fails its start-up check or the server cannot start, 2
/// for a bad command line.
pub fn project_main(
    transport: Transport,
    files: ProjectFiles,
    registrations: Vec<Registration>,
) -> ExitCode {
    let args = match ProjectArgs::try_parse() {
        Ok(args) => args,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2));
        }
    };
    let bindings: Vec<&'static PythonBinding> = registrations
        .iter()
        .filter_map(|r| match r {
            Registration::Python(binding) => Some(*binding),
            Registration::Native(_) => None,
        })
        .collect();
    let bundle = args.bundle.clone().or_else(|| {
        std::env::var_os("APIZR_BUNDLE")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    });
    let result = verify(transport, &files, &bindings)
        .and_then(|()| match &bundle {
            Some(dir) => verify_bundle(transport, &files, dir),
            None => Ok(()),
        })
        .map_err(|e| e.to_string())
        .and_then(|()| {
            super::serve::plan(registrations, &args.server.overrides()).map_err(|e| e.to_string())
        })
        .and_then(|plan| {
            serve_plan_blocking(transport, plan, args.server.options()).map_err(|e| e.to_string())
        });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
