//! Session workspaces a crashed host process left behind.
//!
//! A session's workspace lives in the interpreter's temp root and is removed when the session
//! ends; a host process killed with its sessions open (the launcher ends their processes)
//! leaves the workspaces. Each one carries its owner (`boot / pid namespace / pid / start
//! time`, with `_` for `/`) in its name, so the sweep every session start runs removes a
//! workspace only when that owner is certainly dead — never one a live process (another
//! server, another test) still uses, and never one whose owner cannot be judged.

use std::path::{Path, PathBuf};

use crate::owner::{Liveness, Owner};

/// The name prefix of session workspaces.
pub(super) const PREFIX: &str = "apizr-session";

/// The `private_dir` prefix of a new workspace of this process.
pub(super) fn prefix() -> String {
    match Owner::current() {
        Some(owner) => format!("{PREFIX}-{}", owner.encode().replace('/', "_")),
        None => PREFIX.to_string(),
    }
}

/// The owner a workspace's name records (`PREFIX-OWNER-PID-SEQ-NANOS`).
fn owner_of(name: &str) -> Option<Owner> {
    let rest = name.strip_prefix(PREFIX)?.strip_prefix('-')?;
    let mut parts = rest.rsplitn(4, '-');
    let (_nanos, _seq, _pid) = (parts.next()?, parts.next()?, parts.next()?);
    Owner::decode(&parts.next()?.replace('_', "/"))
}

/// Remove the session workspaces in `temp_root` whose owner is dead. Returns the removed
/// paths and what could not be removed.
pub fn sweep(temp_root: &Path) -> (Vec<PathBuf>, Vec<String>) {
    let (mut removed, mut failed) = (Vec::new(), Vec::new());
    let Ok(entries) = std::fs::read_dir(temp_root) else {
        return (removed, failed);
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let dead = owner_of(&name).is_some_and(|o| o.liveness() == Liveness::Dead);
        if !dead || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        match std::fs::remove_dir_all(&path) {
            Ok(()) => removed.push(path),
            Err(e) => failed.push(format!("{}: {e}", path.display())),
        }
    }
    (removed, failed)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_is_read_back_from_the_name() {
        let me = Owner::current().unwrap();
        let name = format!("{}-12-3-0000abcd", prefix());
        assert_eq!(owner_of(&name).as_ref(), Some(me));
        assert_eq!(owner_of("apizr-session-12-3-0000abcd"), None);
        assert_eq!(owner_of("other-dir"), None);
    }
}
