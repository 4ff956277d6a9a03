//! Lending a workspace to the run's identity. On a root host the sandbox runs the code as a
//! per-call uid, which must be able to write its workspace: every entry is given to that uid
//! for the run and given back afterwards — to its original owner, and new entries to us — so
//! the caller's directory ends as it was, plus what the run wrote.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, lchown};
use std::path::{Path, PathBuf};

/// At most this many entries are lent (a larger tree refuses the run).
const MAX_ENTRIES: usize = 100_000;

/// A workspace lent to a uid.
#[derive(Debug)]
pub(crate) struct Lent {
    root: PathBuf,
    original: BTreeMap<PathBuf, (u32, u32)>,
}

/// Give `root` and everything under it to `uid:uid`, remembering the owners.
pub(crate) fn lend(root: &Path, uid: u32) -> Result<Lent, String> {
    let mut entries = Vec::new();
    walk(root, &mut entries)?;
    let mut original = BTreeMap::new();
    for (path, owner) in entries {
        lchown(&path, Some(uid), Some(uid))
            .map_err(|e| format!("chown {}: {e}", path.display()))?;
        original.insert(path, owner);
    }
    Ok(Lent {
        root: root.to_path_buf(),
        original,
    })
}

impl Lent {
    /// Every entry back to its owner; new entries to this process's uid and gid.
    pub fn give_back(self) -> Result<(), String> {
        let ours = (
            nix::unistd::geteuid().as_raw(),
            nix::unistd::getegid().as_raw(),
        );
        let mut entries = Vec::new();
        walk(&self.root, &mut entries)?;
        let mut failed = Vec::new();
        for (path, _) in entries {
            let (uid, gid) = self.original.get(&path).copied().unwrap_or(ours);
            if let Err(e) = lchown(&path, Some(uid), Some(gid)) {
                failed.push(format!("{}: {e}", path.display()));
            }
        }
        if failed.is_empty() {
            Ok(())
        } else {
            Err(format!("giving the workspace back: {}", failed.join("; ")))
        }
    }
}

fn walk(path: &Path, out: &mut Vec<(PathBuf, (u32, u32))>) -> Result<(), String> {
    if out.len() >= MAX_ENTRIES {
        return Err(format!("the workspace has more than {MAX_ENTRIES} entries"));
    }
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    out.push((path.to_path_buf(), (meta.uid(), meta.gid())));
    if meta.file_type().is_dir() {
        let entries = std::fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?;
        for entry in entries.filter_map(Result::ok) {
            walk(&entry.path(), out)?;
        }
    }
    Ok(())
}
