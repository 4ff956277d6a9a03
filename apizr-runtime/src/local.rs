//! The `local-process` backend (policy v1): one fresh, supervised process per call.
//!
//! Table of contents:
//! * [`runtime`] — [`LocalRuntime`](runtime::LocalRuntime): plan the controls, prepare a
//!   workdir and cgroup, spawn the launcher, supervise, report.
//! * [`executor`] — [`LocalExecutor`](executor::LocalExecutor): the runtime plus the v1 policy,
//!   behind the call API's [`Executor`](crate::call::Executor) seam.
//! * [`process`] — starting one sandboxed worker (identity, directory, cgroups, launcher):
//!   the one implementation both a cold call and the pre-start pool use; [`program`] says
//!   what it starts (the v1 worker, or the code interpreter's bootstrap).
//! * [`prestart`] — servers' pool of pre-started single-use workers (each serves one call);
//!   [`prepare`] — pre-import: such a worker imports its module before the call.
//! * [`supervisor`], [`spawn`], [`workdir`] — the supervisor loop (one frame each way,
//!   deadline, group kill), the process-spawning seam, the fresh working directory.
//! * [`report`] — the call report (controls, status source, timings, process source).
//! * [`host`], [`enforcement`] — host probing (cached) and the per-control enforcement plan:
//!   each requested control gets a named mechanism or the call is refused before launch.
//! * [`launcher`], [`seccomp`], [`cgroup`] — the Linux mechanisms: namespaces, Landlock and
//!   rlimits in a re-executed launcher, seccomp-bpf programs, per-call cgroups.

pub mod after;
pub(crate) mod answer;
pub mod cgroup;
pub mod config;
pub mod enforcement;
pub mod executor;
pub mod host;
pub mod identity;
pub(crate) mod launch;
pub mod launcher;
pub(crate) mod output;
pub mod owner;
pub(crate) mod ownership;
pub mod prepare;
pub mod prestart;
pub(crate) mod process;
pub(crate) mod program;
pub mod report;
pub mod runtime;
pub mod seccomp;
pub mod spawn;
pub mod supervisor;
pub(crate) mod tail;
pub mod workdir;
