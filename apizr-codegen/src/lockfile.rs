//! The generated project's `Cargo.lock`, resolved by cargo itself, offline.
//!
//! Rule: a generated project ships a lock file so that `cargo build --locked` builds exactly
//! the versions apizr was built and tested with. Cargo is the only correct resolver (features
//! decide which optional crates are in the lock), so this module runs
//! `cargo update --workspace --offline` on a scratch copy of the project's `Cargo.toml` and
//! `src/main.rs`, seeded with the checkout's own `Cargo.lock`: cargo keeps every version it
//! already locked and drops what the generated crate does not use. The same seed and the same
//! manifest give the same bytes. Nothing goes to the network (`--offline`); without a seed,
//! cargo resolves from what is already in its local registry index cache.
//!
//! Why `update --workspace` and not `metadata`: the lock file covers every platform, and
//! `metadata` downloads the `.crate` of every locked package to read its manifest — including
//! Windows-only crates a Linux build never fetched, so on a fresh machine it fails offline.
//! Resolving needs only the registry index, which the checkout's own build already cached.
//!
//! This is the one place of the crate that starts a process; it writes only into its own
//! temporary directory, removed when done. The output directory is still written once, by
//! [`crate::output::write_tree`].

use std::path::Path;
use std::process::{Command, Stdio};

use crate::model::FileTree;

/// The files cargo needs to resolve the project.
const INPUTS: [&str; 2] = ["Cargo.toml", "src/main.rs"];

/// Why no lock file was produced.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("the project has no {0}")]
    MissingInput(&'static str),
    #[error("scratch directory: {0}")]
    Io(#[from] std::io::Error),
    #[error("cannot run {cargo}: {error}")]
    Spawn {
        cargo: String,
        error: std::io::Error,
    },
    #[error("cargo could not resolve the dependencies offline: {0}")]
    Resolve(String),
}

/// Resolve `tree`'s `Cargo.lock` with `cargo` (a program name or path), starting from `seed`
/// (a `Cargo.lock` whose versions are preferred) when given.
pub fn resolve(tree: &FileTree, cargo: &Path, seed: Option<&[u8]>) -> Result<Vec<u8>, LockError> {
    let scratch = tempfile::Builder::new()
        .prefix("apizr-generate-lock-")
        .tempdir()?;
    for name in INPUTS {
        let bytes = tree.get(name).ok_or(LockError::MissingInput(name))?;
        let path = scratch.path().join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, bytes)?;
    }
    let lock = scratch.path().join("Cargo.lock");
    if let Some(seed) = seed {
        std::fs::write(&lock, seed)?;
    }
    // `update --workspace` re-resolves and writes Cargo.lock without compiling or downloading
    // anything, keeping the seed's versions; the scratch manifest declares its own
    // `[workspace]`, so no enclosing workspace is picked up.
    let output = Command::new(cargo)
        .args(["update", "--workspace", "--offline", "--quiet"])
        .arg("--manifest-path")
        .arg(scratch.path().join("Cargo.toml"))
        .current_dir(scratch.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|error| LockError::Spawn {
            cargo: cargo.display().to_string(),
            error,
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first = stderr
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .unwrap_or("no message");
        return Err(LockError::Resolve(format!("{first} ({})", output.status)));
    }
    Ok(std::fs::read(lock)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_without_a_manifest_is_refused_before_cargo_runs() {
        let tree = FileTree::new();
        let error = resolve(&tree, Path::new("/nonexistent/cargo"), None).unwrap_err();
        assert!(matches!(error, LockError::MissingInput("Cargo.toml")));
    }

    #[test]
    fn a_missing_cargo_is_reported() {
        let mut tree = FileTree::new();
        for name in INPUTS {
            tree.insert(name.into(), Vec::new());
        }
        let error = resolve(&tree, Path::new("/nonexistent/cargo"), None).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("cannot run /nonexistent/cargo"),
            "{error}"
        );
    }
}
