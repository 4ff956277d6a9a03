//! The fresh per-call working directory (`apizr-execute-*`, mode 0700) and its private tmp.
//!
//! Removed when dropped, after the supervisor has killed and reaped the process group, so no
//! worker can still be writing into it.

use std::fs::{self, DirBuilder};
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

static SEQ: AtomicU64 = AtomicU64::new(0);

/// A fresh directory that is removed on drop.
#[derive(Debug)]
pub struct WorkDir {
    path: PathBuf,
}

impl WorkDir {
    /// Create `<root>/apizr-execute-<pid>-<seq>-<nanos>` with a `tmp` subdirectory.
    pub fn create(root: &Path) -> io::Result<WorkDir> {
        let mut attempts = 0;
        loop {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let name = format!(
                "apizr-execute-{}-{}-{nanos:08x}",
                std::process::id(),
                SEQ.fetch_add(1, Ordering::Relaxed)
            );
            let path = root.join(name);
            match DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    let dir = WorkDir { path };
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

    /// The private temporary directory (`TMPDIR` under the filesystem sandbox).
    pub fn tmp(&self) -> PathBuf {
        self.path.join("tmp")
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}
