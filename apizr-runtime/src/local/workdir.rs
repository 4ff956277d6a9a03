//! The fresh per-call working directory (`apizr-execute-*`, mode 0700) and its private tmp.
//!
//! Under `filesystem: host` it is the worker's working directory, owned by the call's
//! identity. Under `filesystem: sandbox` it stays empty: it is only the host mount point of the
//! call's private root. Removed after the supervisor has killed and reaped the process group,
//! so no worker can still be writing into it; a removal that fails is reported.
//!
//! Names carry the owner (`apizr-execute-<pid>-<start>-<seq>-<nanos>`, see
//! [`super::owner`]), so [`sweep`] removes only what dead supervisors left.

use std::fs::{self, DirBuilder};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Prefix of every working directory name.
pub const PREFIX: &str = "apizr-execute-";

static SEQ: AtomicU64 = AtomicU64::new(0);

/// A fresh directory that is removed on drop (or explicitly, with the error kept).
#[derive(Debug)]
pub struct WorkDir {
    path: PathBuf,
    removed: bool,
}

impl WorkDir {
    /// Create `<root>/apizr-execute-<pid>-<start>-<seq>-<nanos>` with a `tmp` subdirectory.
    pub fn create(root: &Path) -> io::Result<WorkDir> {
        let mut attempts = 0;
        loop {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let name = format!(
                "{PREFIX}{}-{}-{nanos:08x}",
                super::owner::tag(),
                SEQ.fetch_add(1, Ordering::Relaxed)
            );
            let path = root.join(name);
            match DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    let dir = WorkDir {
                        path,
                        removed: false,
                    };
                    DirBuilder::new().mode(0o700).create(dir.tmp())?;
                    return Ok(dir);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 16 => {
                    attempts += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The private temporary directory.
    pub fn tmp(&self) -> PathBuf {
        self.path.join("tmp")
    }

    /// Give the directory (and its `tmp`) to the call's identity.
    pub fn chown(&self, uid: u32, gid: u32) -> io::Result<()> {
        for dir in [self.path.clone(), self.tmp()] {
            nix::unistd::chown(
                &dir,
                Some(nix::unistd::Uid::from_raw(uid)),
                Some(nix::unistd::Gid::from_raw(gid)),
            )
            .map_err(io::Error::from)?;
        }
        Ok(())
    }

    /// Remove the directory now, reporting a failure.
    pub fn remove(mut self) -> io::Result<()> {
        self.removed = true;
        match fs::remove_dir_all(&self.path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if !self.removed {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// Remove working directories under `root` whose owning supervisor is dead. A non-root
/// supervisor considers only directories owned by its own uid (a root one also those it gave
/// to per-call ids). Returns the removed paths and the failures.
pub fn sweep(root: &Path) -> (Vec<PathBuf>, Vec<String>) {
    let mut removed = Vec::new();
    let mut failed = Vec::new();
    let Ok(entries) = fs::read_dir(root) else {
        return (removed, failed);
    };
    let me = nix::unistd::Uid::effective().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(suffix) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        // `<pid>-<start>-<seq>-<nanos>` (older: `<pid>-<seq>-<nanos>`).
        let Some((pid, start)) = super::owner::parse(suffix, 4) else {
            continue;
        };
        let path = entry.path();
        let owned =
            fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir() && (me == 0 || m.uid() == me));
        if !owned || super::owner::alive(pid, start) {
            continue;
        }
        match fs::remove_dir_all(&path) {
            Ok(()) => removed.push(path),
            Err(e) => failed.push(format!("working directory {}: {e}", path.display())),
        }
    }
    (removed, failed)
}

/// The working directories under `root` of one owner (what `apizr doctor` shows): a server's
/// pre-started workers each hold one, as does every call in flight.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DirOwner {
    pub pid: i32,
    /// A dead owner's directories are removed by the next sweep.
    pub alive: bool,
    pub directories: usize,
}

/// Working directories under `root`, by owner.
pub fn census(root: &Path) -> Vec<DirOwner> {
    let mut owners: std::collections::BTreeMap<(i32, Option<u64>), usize> = Default::default();
    for entry in fs::read_dir(root).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let owner = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|suffix| super::owner::parse(suffix, 4));
        if let Some(owner) = owner {
            *owners.entry(owner).or_default() += 1;
        }
    }
    owners
        .into_iter()
        .map(|((pid, start), directories)| DirOwner {
            pid,
            alive: super::owner::alive(pid, start),
            directories,
        })
        .collect()
}
