//! Artifacts: the files a run created or changed, found by comparing a snapshot of the
//! workspace taken before the run with one taken after (so files of earlier runs, or files
//! that were there before, are never reported again), and opened without ever following a
//! symbolic link out of the workspace.
//!
//! * The walk uses `lstat` only: a symlink is neither followed nor reported, a directory
//!   reached through one is not entered.
//! * Each reported file is opened with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`
//!   relative to the workspace, so a link swapped in after the walk cannot redirect it, and
//!   must still be the regular file the walk saw (same device and inode).
//! * Caps: at most `artifact_max_count` files and `artifact_max_bytes` bytes in all, taken in
//!   name order; anything beyond sets `artifacts_truncated`.
//! * Each artifact carries its size, a content-sniffed MIME type ([`super::sniff`]) and its
//!   sha256.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags, ResolveFlags, openat2};
use sha2::{Digest as _, Sha256};

use super::result::Artifact;
use super::sniff;

/// At most this many entries are walked per snapshot (a pathological tree is not fully
/// examined; what is beyond is never reported).
pub const MAX_WALK_ENTRIES: usize = 100_000;

/// What identifies one version of a file. Not the change time: lending the workspace to the
/// run's uid (a `chown`) changes it for every file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileState {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
}

/// The regular files under a root, by relative path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    files: BTreeMap<String, FileState>,
}

impl Snapshot {
    /// Walk `root` (which may not exist yet: an empty snapshot).
    pub fn take(root: &Path) -> Snapshot {
        let mut snapshot = Snapshot::default();
        let mut budget = MAX_WALK_ENTRIES;
        walk(root, "", &mut snapshot.files, &mut budget);
        snapshot
    }

    /// Paths in `after` that are not in `self` or whose file changed, in name order.
    pub fn changed<'a>(&self, after: &'a Snapshot) -> Vec<&'a str> {
        after
            .files
            .iter()
            .filter(|(name, state)| self.files.get(*name) != Some(*state))
            .map(|(name, _)| name.as_str())
            .collect()
    }

    pub fn state(&self, name: &str) -> Option<&FileState> {
        self.files.get(name)
    }
}

fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, FileState>, budget: &mut usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut names: Vec<_> = entries.filter_map(Result::ok).collect();
    names.sort_by_key(|e| e.file_name());
    for entry in names {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue; // not UTF-8: cannot be named in the result
        };
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if meta.file_type().is_dir() {
            walk(&entry.path(), &rel, out, budget);
        } else if meta.file_type().is_file() {
            out.insert(rel, state_of(&meta));
        }
    }
}

fn state_of(meta: &std::fs::Metadata) -> FileState {
    FileState {
        dev: meta.dev(),
        ino: meta.ino(),
        size: meta.size(),
        mtime: (meta.mtime(), meta.mtime_nsec()),
    }
}

/// Caps on one run's artifacts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub max_count: u32,
    pub max_bytes: u64,
}

impl Caps {
    /// The policy's caps, or the defaults when the run has no policy (the unsafe tiers).
    pub fn for_policy(policy: Option<&super::policy::CapabilityPolicy>) -> Self {
        policy.map_or(
            Caps {
                max_count: super::policy::DEFAULT_ARTIFACT_MAX_COUNT,
                max_bytes: super::policy::DEFAULT_ARTIFACT_MAX_BYTES,
            },
            |p| Caps {
                max_count: p.artifact_max_count,
                max_bytes: p.artifact_max_bytes,
            },
        )
    }
}

/// Open `name` beneath `root` without following any link; it must be the regular file the
/// snapshot recorded (same device, inode, size and modification time).
pub fn open_beneath(root: &Path, name: &str, expected: Option<&FileState>) -> Option<File> {
    let dir = File::open(root).ok()?;
    let fd = openat2(
        &dir,
        name,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    )
    .ok()?;
    let file = File::from(fd);
    let meta = file.metadata().ok()?;
    if !meta.file_type().is_file() {
        return None;
    }
    if let Some(expected) = expected
        && state_of(&meta) != *expected
    {
        return None;
    }
    Some(file)
}

/// Describe the files `names` under `root` (their host paths stay where they are), within
/// `caps`. Returns the artifacts and whether anything was left out.
pub fn describe(
    root: &Path,
    names: &[&str],
    after: &Snapshot,
    caps: Caps,
) -> (Vec<Artifact>, bool) {
    let mut out = Vec::new();
    let mut total = 0u64;
    let mut truncated = false;
    for name in names {
        if out.len() >= caps.max_count as usize {
            truncated = true;
            break;
        }
        let Some(file) = open_beneath(root, name, after.state(name)) else {
            continue;
        };
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        if total.saturating_add(size) > caps.max_bytes {
            truncated = true;
            continue;
        }
        let Some((sha256, head, read)) = digest(file, size) else {
            continue;
        };
        total = total.saturating_add(read);
        out.push(Artifact {
            path: root.join(name),
            name: (*name).to_string(),
            size_bytes: read,
            content_type: sniff::content_type(&head, name),
            sha256,
        });
    }
    (out, truncated)
}

/// sha256, the first [`sniff::HEAD_BYTES`] bytes and the byte count of at most `limit` bytes.
pub fn digest(mut file: impl Read, limit: u64) -> Option<(String, Vec<u8>, u64)> {
    let mut hasher = Sha256::new();
    let mut head = Vec::new();
    let mut read = 0u64;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        let data = chunk.get(..n).unwrap_or_default();
        if head.len() < sniff::HEAD_BYTES {
            let room = sniff::HEAD_BYTES - head.len();
            head.extend_from_slice(data.get(..room.min(n)).unwrap_or_default());
        }
        hasher.update(data);
        read += n as u64;
        if read > limit {
            // The file grew after the walk: report what the walk saw, never more than the cap.
            return None;
        }
    }
    Some((hex(&hasher.finalize()), head, read))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A fresh private (0700) directory `<root>/<prefix>-<pid>-<n>-<nanos>`.
pub fn private_dir(root: &Path, prefix: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    for _ in 0..16 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = root.join(format!(
            "{prefix}-{}-{}-{nanos:08x}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("could not create a unique directory"))
}

#[cfg(test)]
mod tests;
