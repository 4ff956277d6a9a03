//! apizr-runtime: governed execution of Python capabilities (backend `local`, policy v1).
//!
//! Table of contents:
//! * [`status`], [`envelope`] — the ten v1 statuses and the result envelope.
//! * [`request`] — [`CallRequest`]: what the planner hands the runtime.
//! * [`protocol`], [`json_decode`] — the framed worker protocol `apizr.worker/v1`
//!   (also documented in `PROTOCOL.md`).
//! * [`worker`] — the embedded stdlib-only Python worker.
//! * [`runtime`] — [`LocalRuntime`]: fresh process per call, deadline, limits, cleanup.
//! * [`supervisor`], [`spawn`], [`workdir`] — the supervisor loop, the process-spawning seam,
//!   the fresh working directory.
//! * [`host`], [`enforcement`] — host probing and per-control enforcement plans/reports.
//! * [`launcher`], [`seccomp`], [`cgroup`] — Linux mechanisms: namespaces, Landlock, rlimits,
//!   seccomp-bpf, cgroup `pids.max`.
//! * [`audit`] — one JSON line per call.
//! * `oci` (cargo feature `oci`, on by default) — the `oci-container` backend (policy v2)
//!   through the Docker Engine API, and offline worker image builds.
//! * `serve`, `pool` (cargo features `serve`/`rest`/`mcp`) — REST and MCP servers over one
//!   serving core, and the direct-mode warm pool of persistent workers.

pub mod audit;
pub mod cgroup;
pub mod enforcement;
pub mod envelope;
pub mod host;
pub mod json_decode;
pub mod launcher;
#[cfg(feature = "oci")]
pub mod oci;
#[cfg(feature = "serve")]
pub mod pool;
pub mod protocol;
pub mod request;
pub mod runtime;
pub mod seccomp;
#[cfg(feature = "serve")]
pub mod serve;
pub mod spawn;
pub mod status;
pub mod supervisor;
pub mod validate;
pub mod workdir;
pub mod worker;

pub use apizr_ir as ir;
pub use envelope::{Envelope, RESULT_SCHEMA_V1};
pub use host::HostCapabilities;
pub use request::{BindingParameter, CallRequest, Executable, ExecutionKind};
pub use runtime::{CallOutcome, CallReport, LauncherLocation, LocalRuntime, RuntimeConfig};
pub use status::Status;
