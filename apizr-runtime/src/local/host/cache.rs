//! A small on-disk cache for host facts that are slow to observe but determined by inputs that
//! are cheap to read: which interpreter a pyenv-style shim runs (executing the bash shim costs
//! 60–150 ms) and what the launcher probe found (a process spawn plus namespace creation).
//!
//! An entry is named by a digest of its key (every input the fact depends on, spelled out as
//! text) and starts with the full key digest, so a collision or a truncated write reads as a
//! miss. Entries live in `$APIZR_CACHE_DIR`, else `$XDG_CACHE_HOME/apizr`, else
//! `~/.cache/apizr` (directory mode 0700); files not owned by the effective user are ignored.
//! Every failure is a miss: the cache can make a call slower, never different. Callers
//! validate what they read (a cached interpreter must still exist), and a launcher that fails
//! its set-up drops the probe entry (see `runtime.rs`).

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use apizr_ir::Digest;

/// The text a cached fact depends on; built field by field.
#[derive(Debug, Default, Clone)]
pub(crate) struct Key(String);

impl Key {
    pub(crate) fn new(kind: &str) -> Key {
        Key(format!("apizr-host-cache/1 {kind}\n"))
    }

    pub(crate) fn push(&mut self, name: &str, value: impl AsRef<[u8]>) {
        self.0.push_str(name);
        self.0.push('=');
        self.0.push_str(
            &String::from_utf8_lossy(value.as_ref())
                .escape_debug()
                .to_string(),
        );
        self.0.push('\n');
    }

    /// Length, mtime (ns), inode and device of `path` (following symlinks), or `-`.
    pub(crate) fn push_file_identity(&mut self, name: &str, path: &Path) {
        let identity = fs::metadata(path).map_or_else(
            |_| "-".to_string(),
            |m| {
                format!(
                    "{} {}.{} {} {}",
                    m.len(),
                    m.mtime(),
                    m.mtime_nsec(),
                    m.ino(),
                    m.dev()
                )
            },
        );
        self.push(name, identity);
    }

    /// The (bounded) content of a small file, or `-` when unreadable.
    pub(crate) fn push_file(&mut self, name: &str, path: &Path) {
        let content = read_small(path).unwrap_or_else(|| b"-".to_vec());
        self.push(name, content);
    }

    fn digest(&self) -> String {
        Digest::sha256(self.0.as_bytes()).value
    }
}

/// At most 64 KiB of a file (key material: what a fact depends on).
pub(crate) fn read_small(path: &Path) -> Option<Vec<u8>> {
    read_bounded(path, 64 * 1024)
}

/// The largest entry stored or loaded: the compiled worker is ~66 KiB and growing, so the
/// 64 KiB read of key material would cut it (`marshal data too short` in every worker started
/// from the cache).
const MAX_ENTRY: usize = 16 * 1024 * 1024;

/// At most `limit` bytes of a file.
fn read_bounded(path: &Path, limit: usize) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    fs::File::open(path)
        .ok()?
        .take(u64::try_from(limit).ok()?)
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

/// The cache directory, if one can be named (nothing is created here).
pub(crate) fn dir() -> Option<PathBuf> {
    let absolute = |v: std::ffi::OsString| {
        let p = PathBuf::from(v);
        p.is_absolute().then_some(p)
    };
    if let Some(p) = std::env::var_os("APIZR_CACHE_DIR").and_then(absolute) {
        return Some(p);
    }
    if let Some(p) = std::env::var_os("XDG_CACHE_HOME").and_then(absolute) {
        return Some(p.join("apizr"));
    }
    std::env::var_os("HOME")
        .and_then(absolute)
        .map(|h| h.join(".cache").join("apizr"))
}

fn entry(kind: &str, key: &Key) -> Option<(PathBuf, String)> {
    let digest = key.digest();
    let name = format!("{kind}-{}", digest.get(..16)?);
    Some((dir()?.join(name), digest))
}

/// The payload stored under `key`, if any.
pub(crate) fn load(kind: &str, key: &Key) -> Option<Vec<u8>> {
    let (path, digest) = entry(kind, key)?;
    load_at(&path, &digest)
}

fn load_at(path: &Path, digest: &str) -> Option<Vec<u8>> {
    let meta = fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.uid() != nix::unistd::Uid::effective().as_raw() {
        return None;
    }
    // One byte past the bound tells an entry that is too large (a miss) from one that fits.
    let bytes = read_bounded(path, MAX_ENTRY + 1).filter(|b| b.len() <= MAX_ENTRY)?;
    let rest = bytes.strip_prefix(digest.as_bytes())?;
    rest.strip_prefix(b"\n").map(<[u8]>::to_vec)
}

/// Store `payload` under `key` (atomically: write a temporary file, then rename).
pub(crate) fn store(kind: &str, key: &Key, payload: &[u8]) {
    if let Some((path, digest)) = entry(kind, key) {
        store_at(&path, &digest, payload);
    }
}

fn store_at(path: &Path, digest: &str, payload: &[u8]) {
    let Some(parent) = path.parent() else {
        return;
    };
    if digest.len() + 1 + payload.len() > MAX_ENTRY {
        return;
    }
    if fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(parent)
        .is_err()
    {
        return;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let written = fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(digest.as_bytes())?;
        f.write_all(b"\n")?;
        f.write_all(payload)
    });
    if written.is_err() || fs::rename(&tmp, path).is_err() {
        let _ = fs::remove_file(&tmp);
    }
}

/// Drop the entry stored under `key`.
pub(crate) fn remove(kind: &str, key: &Key) {
    if let Some((path, _)) = entry(kind, key) {
        let _ = fs::remove_file(path);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{MAX_ENTRY, load_at, store_at};

    /// An entry larger than the 64 KiB read of key material (the compiled worker) loads whole;
    /// one over the bound is neither stored nor loaded (a miss, never a cut payload).
    #[test]
    fn entries_over_64_kib_load_whole_and_oversized_ones_are_misses() {
        let dir = std::env::temp_dir().join(format!("apizr-cache-test-{}", std::process::id()));
        let path = dir.join("worker-entry");
        let payload: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
        store_at(&path, "abc", &payload);
        assert_eq!(load_at(&path, "abc").unwrap(), payload);
        assert_eq!(load_at(&path, "abd"), None);
        store_at(&path, "abc", &vec![0; MAX_ENTRY]);
        assert_eq!(
            load_at(&path, "abc").unwrap(),
            payload,
            "the oversized store was skipped"
        );
        std::fs::write(&path, vec![b'a'; MAX_ENTRY + 1]).unwrap();
        assert_eq!(load_at(&path, "a"), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
