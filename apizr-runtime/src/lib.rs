//! apizr-runtime: run planned Python capabilities — on warm workers, in a fresh sandboxed
//! process (policy `apizr.execution/v1`) or in a fresh container (`apizr.execution/v2`) — and
//! serve them over REST and MCP.
//!
//! Who depends on it: the `apizr` CLI, generated REST/MCP projects, and Rust code that calls
//! Python capabilities (the macros). It needs no Python parser: it receives contracts
//! ([`ir::interface::InvocationContract`]) planned by `apizr-inspect` or embedded by a
//! generator, and the exact executable bytes they were planned from.
//!
//! # The call API
//!
//! Every caller builds a [`Call`] the same way and runs it through an [`AnyExecutor`]; every
//! backend answers with one [`Outcome`], which maps once to each wire form (v1/v2 envelope,
//! HTTP, MCP).
//!
//! ```
//! use apizr_inspect::{InspectOptions, interface, on_inspect_stack};
//! use apizr_runtime::ir::{SourceKind, Value, policy::AnyPolicy};
//! use apizr_runtime::{AnyExecutor, Call, Executable, LauncherLocation, RuntimeConfig, Status};
//!
//! // Inspect and plan (apizr-inspect; on a large stack, because the parser recurses).
//! let source = b"def total(prices: list[float], tax: float = 0.2) -> float:\n    return sum(prices) * (1 + tax)\n";
//! let (executable, contracts) = on_inspect_stack(|| {
//!     let (outcome, parsed) =
//!         apizr_inspect::inspect_bytes_parsed(source, SourceKind::Python, "pricing", InspectOptions::default())?;
//!     let contracts = interface::plan_interfaces(&parsed, &outcome.inspection, None)?;
//!     Ok::<_, Box<dyn std::error::Error + Send + Sync>>((outcome.executable, contracts))
//! })
//! .unwrap()
//! .unwrap();
//!
//! // A call: contract + executable + module + JSON arguments (validated here, in Rust).
//! let call = Call::from_json(&contracts[0], Executable::new(executable), "pricing", br#"{"prices": [10, 20]}"#)
//!     .unwrap();
//!
//! // A policy picks the backend: v1 runs a fresh supervised process per call.
//! let policy = AnyPolicy::from_slice(br#"{"limits": {"wall_time_ms": 10000}}"#).unwrap();
//! let config = RuntimeConfig { launcher: LauncherLocation::None, ..RuntimeConfig::default() };
//! let executor = AnyExecutor::for_policy(policy, config, None).unwrap();
//! let outcome = executor.execute(&call);
//! assert_eq!(outcome.status, Status::Success);
//! assert_eq!(outcome.value, Value::Float(36.0));
//! assert_eq!(
//!     outcome.envelope_value().canonical_string().unwrap(),
//!     r#"{"schema_version":"apizr.execution-result/v1","status":"success","value":36.0}"#
//! );
//!
//! // Bad arguments never start a worker: they are refused with the reference's wording.
//! let refused = Call::from_json(&contracts[0], Executable::new(source.to_vec()), "pricing", b"{}");
//! assert_eq!(refused.unwrap_err().to_string(), "Missing required field: prices");
//! ```
//!
//! The same call runs in a fresh container under a v2 policy (needs a Docker engine and a
//! worker image from `apizr image build`):
//!
//! ```no_run
//! # use apizr_runtime::{AnyExecutor, Call, RuntimeConfig};
//! # fn demo(call: &Call) -> Result<(), Box<dyn std::error::Error>> {
//! use apizr_runtime::ir::policy::AnyPolicy;
//! use apizr_runtime::oci::RuntimeImage;
//!
//! let policy = AnyPolicy::from_slice(br#"{"schema_version": "apizr.execution/v2"}"#)?;
//! let image = RuntimeImage::parse(&format!("sha256:{}", "0".repeat(64)), "linux/amd64")?;
//! let executor = AnyExecutor::for_policy(policy, RuntimeConfig::default(), Some(image))?;
//! executor.check()?; // engine reachable, controls present, image as pinned
//! let outcome = executor.execute(call);
//! println!("{}", outcome.envelope_value().canonical_string()?); // apizr.execution-result/v2
//! # Ok(()) }
//! ```
//!
//! and on the warm pool without a policy (`direct`, feature `serve`): see
//! [`pool::executor::DirectExecutor`].
//!
//! # Table of contents
//!
//! * [`call`] — [`Call`], [`Executor`] and [`AnyExecutor`], [`Outcome`]: the call API.
//! * [`status`], [`envelope`] — the fourteen statuses and the v1/v2 result envelopes.
//! * [`validate`] — argument validation against a contract, with the reference's details.
//! * [`local`] — the `local-process` backend (policy v1): supervisor, launcher, Linux
//!   enforcement, host probe. Its modules are also re-exported at the crate root under their
//!   old paths (`apizr_runtime::runtime`, …), hidden from these docs.
//! * `oci` (feature `oci`, default) — the `oci-container` backend (policy v2) over the Docker
//!   Engine API.
//! * `pool` (feature `serve`) — the direct backend: persistent workers that import once.
//! * `serve` (features `serve`, `rest`, `mcp`) — REST and MCP servers over the call API.
//! * `interpreter` (feature `interpreter`) — the agent code interpreter: mellea's five tiers
//!   (`static`, `local_unsafe`, `local`, `docker_unsafe`, `docker`) over the local and oci
//!   backends, with measured enforcement.
//! * [`audit`] — one JSON line per call.
//! * [`owner`] — who owns a leftover (boot, pid namespace, pid, start time) and whether that
//!   process still runs: what start-up sweeps use to never touch a live process's things.
//! * `bind` (cargo feature `macros`) — `#[python]` bindings and `#[endpoint]` functions:
//!   [`python`], [`endpoint`], `CallError`, `init`, `capabilities!`.
//! * Internals shared by the backends (hidden): the worker protocol `apizr.worker/v1`
//!   (`protocol`, also in `PROTOCOL.md`), the embedded Python worker (`worker`), the worker
//!   request (`request`).

pub mod audit;
#[cfg(feature = "macros")]
pub mod bind;
pub mod call;
pub mod envelope;
#[cfg(feature = "interpreter")]
pub mod interpreter;
pub mod local;
#[cfg(feature = "oci")]
pub mod oci;
pub mod owner;
#[cfg(feature = "serve")]
pub mod pool;
#[doc(hidden)]
pub mod protocol;
#[doc(hidden)]
pub mod request;
#[cfg(feature = "serve")]
pub mod serve;
pub mod status;
pub mod validate;
#[doc(hidden)]
pub mod worker;

// The local backend's modules under their paths from before the `local/` folder existed.
#[doc(hidden)]
pub use local::{
    cgroup, enforcement, host, launcher, runtime, seccomp, spawn, supervisor, workdir,
};

pub use apizr_ir as ir;
pub use call::{
    AnyExecutor, ArgumentError, BackendKind, Call, Executor, ExecutorError, Outcome, Report,
};
pub use envelope::{Envelope, RESULT_SCHEMA_V1, RESULT_SCHEMA_V2, ResultSchema};
pub use host::HostCapabilities;
pub use local::executor::LocalExecutor;
#[doc(hidden)]
pub use request::{BindingParameter, CallRequest, ExecutionKind};
pub use request::{Executable, PackageFiles};
#[doc(hidden)]
pub use runtime::CallOutcome;
pub use runtime::{CallReport, LauncherLocation, LocalRuntime, RuntimeConfig};
pub use status::Status;

#[cfg(feature = "macros")]
pub use apizr_macros::{endpoint, python};
/// What `#[python]` / `#[endpoint]` expansions name; not a public API.
#[cfg(feature = "macros")]
#[doc(hidden)]
pub use bind::private as __private;
#[cfg(feature = "macros")]
pub use bind::{CallError, init};
