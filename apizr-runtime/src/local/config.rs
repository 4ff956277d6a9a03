//! How a local runtime is set up: the interpreter, the launcher, where per-call directories go
//! and the per-call id range (not part of any hashed artifact).

use std::path::PathBuf;

use crate::local::identity::IdRange;

/// Where the launcher comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LauncherLocation {
    /// No launcher: only the reference's controls; every Linux control is refused.
    None,
    /// Re-exec the current executable (its `main` must call `launcher::run_if_requested`).
    CurrentExe,
    /// A launcher binary such as `apizr-launch`.
    Binary(PathBuf),
}

/// How the runtime is set up (not part of any hashed artifact).
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// The interpreter command; resolved once to the real executable. Default: `$APIZR_PYTHON`,
    /// else `python3`.
    pub python: PathBuf,
    pub launcher: LauncherLocation,
    /// Parent of the per-call working directories.
    pub temp_root: PathBuf,
    /// Per-call ids on a root host (`None`: `APIZR_ID_RANGE`, else the default range).
    pub ids: Option<IdRange>,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            python: std::env::var_os("APIZR_PYTHON")
                .filter(|p| !p.is_empty())
                .map_or_else(|| PathBuf::from("python3"), PathBuf::from),
            launcher: LauncherLocation::CurrentExe,
            temp_root: std::env::temp_dir(),
            ids: None,
        }
    }
}
