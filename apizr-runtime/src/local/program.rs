//! What a sandboxed process runs: the typed "what to start" of [`Factory::start`] and of the
//! pre-start pool's keys.
//!
//! Every program gets the same controls from the one implementation in [`Factory::start`]
//! (identity, working directory and `/tmp`, cgroups, the launcher's namespaces, Landlock,
//! seccomp); only what runs under them differs: the v1 worker (its compiled source sent as
//! the boot frame, the policy's environment), or code under another bootstrap (the code
//! interpreter's `local` tier) with a workspace bound read-write and lent to the per-call uid.
//!
//! [`Factory::start`]: super::process::Factory::start

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What [`Factory::start`](super::process::Factory::start) starts.
#[derive(Debug, Clone)]
pub(crate) enum Program {
    /// The v1 worker, waiting for its request after the compiled worker (its boot frame).
    Worker,
    /// Code under its own bootstrap, in a workspace (the code interpreter's `local` tier).
    #[cfg_attr(
        not(feature = "interpreter"),
        allow(dead_code, reason = "started only by the code interpreter")
    )]
    Code(Arc<dyn CodeProgram>),
}

/// A program other than the v1 worker: its arguments, its workspace and its environment.
/// The controls around it are never its own (they are [`Factory::start`]'s).
///
/// [`Factory::start`]: super::process::Factory::start
pub(crate) trait CodeProgram: Send + Sync + std::fmt::Debug {
    /// The interpreter's arguments (e.g. `-I -S -c <bootstrap>`).
    fn args(&self) -> Vec<String>;
    /// The process's workspace: the caller's, or a fresh private directory made for this one
    /// process (a pre-started process gets its own, created when it is started).
    fn workspace(&self) -> std::io::Result<CodeWorkspace>;
    /// Directories bound read-write besides the workspace (lent to the per-call uid too).
    fn write_roots(&self) -> Vec<PathBuf>;
    /// The environment, given the workspace and the process's scratch directory (`/tmp`).
    fn environment(&self, workspace: &Path, scratch: &Path) -> Vec<(OsString, OsString)>;
}

/// A code program's workspace: its working directory, bound read-write.
#[derive(Debug)]
pub(crate) struct CodeWorkspace {
    pub path: PathBuf,
    /// Made for this process (removed when the process is discarded unused); false: the
    /// caller's, never removed here.
    pub fresh: bool,
}

impl CodeWorkspace {
    /// Remove a fresh workspace (a process discarded before it ran anything).
    pub fn discard(self) -> Result<(), String> {
        if !self.fresh {
            return Ok(());
        }
        match std::fs::remove_dir_all(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("workspace {}: {e}", self.path.display())),
        }
    }
}
