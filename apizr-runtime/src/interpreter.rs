//! The agent code interpreter (feature `interpreter`): run a piece of Python code — not a
//! planned capability — in one of mellea's five tiers, under a [`CapabilityPolicy`] whose
//! restrictions are enforced by this runtime's backends or refused, and answer with one
//! [`ExecutionResult`].
//!
//! ```no_run
//! use apizr_runtime::interpreter::{EnvironmentOptions, Interpreter, InterpreterConfig};
//!
//! let interpreter = Interpreter::new(InterpreterConfig::default());
//! let env = interpreter.environment("local", EnvironmentOptions::default())?;
//! let result = env.execute("print(1 + 1)");
//! assert_eq!(result.stdout.as_deref(), Some("2"));
//! println!("{}", result.to_json()); // apizr.interpreter-result/v1
//! # Ok::<(), apizr_runtime::interpreter::EnvironmentError>(())
//! ```
//!
//! Why it lives in this crate: the `local` tier *is* the local-process backend's sandbox
//! (launcher, enforcement plan, host probe) and the docker tiers *are* the oci backend's
//! engine client and checks; a separate crate would need those internals public. The only
//! thing it needs from elsewhere is a Python parser for the import allowlist, which is
//! `apizr-inspect`'s; the feature brings it in, so generated servers (which never enable the
//! feature) still build without a parser.
//!
//! Table of contents:
//! * [`tier`] — [`Tier`]: the five names, which are unsafe, which apply a policy.
//! * [`policy`] — [`CapabilityPolicy`]: mellea's fields and defaults, plus memory, pids,
//!   passed-through variables, artifact caps and `declared_only`.
//! * [`enforcement`] — measured enforcement: [`TierSupport`] per tier on this host
//!   (`enforced_capabilities()`, `unenforced_capabilities()`, the compatibility matrix), and
//!   the per-run [`EnforcementReport`] (enforced, declared only, refused).
//! * [`result`] — [`ExecutionResult`] and [`Artifact`] (`apizr.interpreter-result/v1`).
//! * [`environment`] — [`Interpreter`] (shared state) and its factory of [`Environment`]s;
//!   the import check and the `static` tier.
//! * [`session`] — [`Session`]: a persistent interpreter (local tiers) under one policy, with
//!   `copy_in` (files and directories) / `copy_out`, `reset`, idle expiry, close, and the
//!   start-up sweep of workspaces a dead host process left.
//! * [`audit`] — one `apizr.audit/v1` record per run ([`Environment::with_audit`]).
//! * Tiers: `local` (the local tiers: spawn path, supervision), `docker` (the docker tiers:
//!   container body, exchange, archive).
//! * Building blocks: [`bootstrap`] (the in-worker bootstrap and import guard), [`capture`]
//!   (bounded output, mellea's truncation), [`artifacts`] + [`sniff`] + [`tar`] (new or
//!   changed files, content types, digests, archives), [`packages`] (isolated environments
//!   keyed by the requirement set).

pub mod artifacts;
pub mod audit;
pub mod bootstrap;
pub mod capture;
mod docker;
pub mod enforcement;
pub mod environment;
mod local;
mod outcome;
pub mod packages;
pub mod policy;
mod process;
pub mod result;
pub mod session;
pub mod sniff;
pub mod tar;
pub mod tier;

pub use docker::DockerConfig;
pub use enforcement::{Capability, EnforcementReport, Support, TierSupport};
pub use environment::{
    Environment, EnvironmentError, EnvironmentOptions, Interpreter, InterpreterConfig, NoPrestart,
};
pub use policy::{CapabilityPolicy, PolicyError};
pub use result::{Artifact, ExecutionResult, RESULT_SCHEMA};
pub use session::{Session, SessionError, SessionOptions};
pub use tier::{Tier, UnknownTier};
