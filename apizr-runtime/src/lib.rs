//! apizr-runtime: governed execution of Python capabilities (backend `local`, policy v1).
//!
//! Table of contents:
//! * [`status`], [`envelope`] — the ten v1 statuses and the result envelope.
//! * [`request`] — [`CallRequest`]: what the planner hands the runtime.
//! * [`protocol`] — the framed worker protocol `apizr.worker/v1`
//!   (also documented in `PROTOCOL.md`).
//! * [`worker`] — the embedded stdlib-only Python worker.
//! * [`local`] — the `local-process` backend (policy v1): [`LocalRuntime`], fresh process per
//!   call, supervisor, launcher, Linux enforcement, host probe. Its modules are also
//!   re-exported at the crate root under their old paths (`apizr_runtime::runtime`, …).
//! * [`audit`] — one JSON line per call.
//! * [`owner`] — who owns a leftover (boot, pid namespace, pid, start time) and whether that
//!   process still runs: what start-up sweeps use to never touch a live process's things.
//! * `oci` (cargo feature `oci`, on by default) — the `oci-container` backend (policy v2)
//!   through the Docker Engine API, and offline worker image builds.
//! * `serve`, `pool` (cargo features `serve`/`rest`/`mcp`) — REST and MCP servers over one
//!   serving core, and the direct-mode warm pool of persistent workers.

pub mod audit;
pub mod envelope;
pub mod local;
#[cfg(feature = "oci")]
pub mod oci;
pub mod owner;
#[cfg(feature = "serve")]
pub mod pool;
pub mod protocol;
pub mod request;
#[cfg(feature = "serve")]
pub mod serve;
pub mod status;
pub mod validate;
pub mod worker;

// The local backend's modules under their paths from before the `local/` folder existed.
pub use local::{
    cgroup, enforcement, host, launcher, runtime, seccomp, spawn, supervisor, workdir,
};

pub use apizr_ir as ir;
pub use envelope::{Envelope, RESULT_SCHEMA_V1};
pub use host::HostCapabilities;
pub use request::{BindingParameter, CallRequest, Executable, ExecutionKind};
pub use runtime::{CallOutcome, CallReport, LauncherLocation, LocalRuntime, RuntimeConfig};
pub use status::Status;
