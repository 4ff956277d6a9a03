//! The one seam for process creation.
//!
//! The supervisor never calls `Command` itself: it describes the process in a [`SpawnSpec`] and
//! a [`ProcessSpawner`] starts it. The contract every spawner must keep: stdin, stdout and
//! stderr are pipes, and the child leads its own process group (the supervisor kills the group
//! by the child's PID). Tests use the seam to run misbehaving workers (bad frames, early exits)
//! through the real supervisor.

use std::ffi::OsString;
use std::fmt::Debug;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// A fully described child process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnSpec {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// The complete environment (the child inherits nothing else).
    pub env: Vec<(OsString, OsString)>,
    pub cwd: PathBuf,
}

/// Starts processes for the supervisor.
pub trait ProcessSpawner: Send + Sync + Debug {
    /// Start `spec` with piped stdio in a new process group led by the child.
    fn spawn(&self, spec: &SpawnSpec) -> io::Result<Child>;
}

/// The real spawner: `std::process::Command` with `process_group(0)`.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalSpawner;

impl ProcessSpawner for LocalSpawner {
    fn spawn(&self, spec: &SpawnSpec) -> io::Result<Child> {
        Command::new(&spec.program)
            .args(&spec.args)
            .env_clear()
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&spec.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
    }
}
