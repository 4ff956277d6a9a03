//! [`ServeError`]: why a server could not start or stopped, and [`BundleError`]: why a
//! generated project's directory was refused. (A call never fails with an error: it ends with
//! an [`Outcome`](crate::Outcome) or a [`Rejected`](super::Rejected).)

use std::path::PathBuf;

use apizr_ir::CanonicalError;
use apizr_ir::admission::AdmissionError;
use apizr_ir::policy::PolicyError;

use super::decode::ContractError;
use crate::call::ExecutorError;
use crate::oci::ImageRefError;

/// Why a server could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    #[error("bundle: {0}")]
    Bundle(#[from] BundleError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// An artifact of a bundle does not hash to the digest its manifest records.
    #[error("artifact digest mismatch: {0}")]
    Digest(String),
    #[error("policy: {0}")]
    Policy(#[from] PolicyError),
    /// The backend cannot run calls (engine, image, interpreter, refusals, worker pool).
    #[error("{0}")]
    Executor(#[from] ExecutorError),
    #[error(
        "refusing to listen on {host} without a token: set --token/APIZR_TOKEN or pass --insecure"
    )]
    Exposure { host: String },
    #[error("bind {address}: {source}")]
    Bind {
        address: String,
        source: std::io::Error,
    },
    /// The async runtime or the server loop failed.
    #[error("{what}: {source}")]
    Server {
        what: &'static str,
        source: std::io::Error,
    },
    #[cfg(feature = "mcp")]
    #[error(transparent)]
    Tools(#[from] super::mcp::tools::ToolNameCollision),
    #[cfg(feature = "mcp")]
    #[error("mcp stdio: {0}")]
    McpStart(Box<rmcp::service::ServerInitializeError>),
    #[error("this build has no {0} transport (cargo feature missing)")]
    MissingTransport(&'static str),
    /// Two Python functions or native endpoints registered under one name.
    #[error("`{0}` is served twice (capability and endpoint names must be unique)")]
    DuplicateName(String),
}

/// Why a bundle directory was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BundleError {
    #[error("{0}: no apizr-rest.json or apizr-mcp.json")]
    NoManifest(PathBuf),
    #[error("unsafe artifact path {0:?}")]
    UnsafePath(String),
    #[error("{0}: not a regular file")]
    NotAFile(String),
    #[error("{file}: {source}")]
    Json {
        file: String,
        source: AdmissionError,
    },
    #[error("{file}: {message}")]
    Document { file: &'static str, message: String },
    #[error("manifest has no {0}")]
    MissingSection(&'static str),
    #[error("manifest field {0} missing")]
    MissingField(&'static str),
    #[error("{0}: malformed digest")]
    MalformedDigest(String),
    #[error(transparent)]
    Contract(#[from] ContractError),
    #[error("contract {0} does not round-trip")]
    NotRoundTrip(String),
    #[error("cannot encode a contract: {0}")]
    Encode(#[from] CanonicalError),
    #[error("{0} is not a listed artifact")]
    NotListed(&'static str),
    /// A file of the manifest's `package.files` that its `artifacts` do not cover (so it
    /// was never verified), or that is not a `.py` file under `source/`.
    #[error("package file {0:?} is not a listed source/*.py artifact")]
    PackageFile(String),
    #[error("execution/bundle.json: runtime.{0}")]
    RuntimeField(&'static str),
    /// `package.modules` does not bind every served capability to exactly one module.
    #[error("package.modules: {0}")]
    Modules(String),
    /// A bundle of several modules loaded as one source (it is one source per module).
    #[error("the bundle serves {0} modules: load it with ServicePlan::from_bundle_dir")]
    SeveralModules(usize),
    #[error(transparent)]
    Image(#[from] ImageRefError),
}
