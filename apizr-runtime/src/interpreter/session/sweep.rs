//! Session workspaces and one-shot run directories a crashed host process left behind.
//!
//! A session's workspace lives in the interpreter's temp root and is removed when the session
//! ends; a one-shot run's fresh workspace (and a docker run's empty `/bundle` directory) is
//! removed when the run ends, or — when it holds artifacts the caller will read — renamed
//! to the [`KEPT_PREFIX`], which no sweep touches. A host process killed mid-run or with its
//! sessions open (the launcher, or the container's PID 1, ends their processes) leaves the
//! directories. Each one carries its owner (`boot / pid namespace / pid / start time`, with
//! `_` for `/`) in its name, so the sweep — at every session start and at an interpreter's
//! first run — removes one only when that owner is certainly dead: never one a live process
//! (another server, another test) still uses, never one whose owner cannot be judged, and
//! never a kept workspace.

use std::path::{Path, PathBuf};

use crate::owner::{Liveness, Owner};

/// The name prefix of session workspaces.
pub(super) const PREFIX: &str = "apizr-session";
/// The name prefix of a one-shot run's directories while the run lasts.
pub(crate) const RUN_PREFIX: &str = "apizr-run";
/// The name prefix of a run's workspace kept for its artifacts (never swept).
pub(crate) const KEPT_PREFIX: &str = "apizr-kept";

/// The `private_dir` prefix of a new session workspace of this process.
pub(super) fn prefix() -> String {
    owned(PREFIX)
}

/// The `private_dir` prefix of a new one-shot run directory of this process.
pub(crate) fn run_prefix() -> String {
    owned(RUN_PREFIX)
}

fn owned(prefix: &str) -> String {
    match Owner::current() {
        Some(owner) => format!("{prefix}-{}", owner.encode().replace('/', "_")),
        None => prefix.to_string(),
    }
}

/// The name a kept run workspace gets (same directory, [`KEPT_PREFIX`]).
pub(crate) fn kept_path(run_dir: &Path) -> Option<PathBuf> {
    let name = run_dir.file_name()?.to_str()?;
    let rest = name.strip_prefix(RUN_PREFIX)?;
    Some(run_dir.with_file_name(format!("{KEPT_PREFIX}{rest}")))
}

/// The owner a directory's name records (`PREFIX-OWNER-PID-SEQ-NANOS`, a session's or a
/// run's).
fn owner_of(name: &str) -> Option<Owner> {
    let rest = name
        .strip_prefix(PREFIX)
        .or_else(|| name.strip_prefix(RUN_PREFIX))?
        .strip_prefix('-')?;
    let mut parts = rest.rsplitn(4, '-');
    let (_nanos, _seq, _pid) = (parts.next()?, parts.next()?, parts.next()?);
    Owner::decode(&parts.next()?.replace('_', "/"))
}

/// Remove the session workspaces and run directories in `temp_root` whose owner is dead. Returns the removed
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
        let run = format!("{}-12-3-0000abcd", run_prefix());
        assert_eq!(owner_of(&run).as_ref(), Some(me));
        let kept = kept_path(Path::new(&format!("/t/{run}"))).unwrap();
        assert!(kept.to_str().unwrap().starts_with("/t/apizr-kept-"));
        assert_eq!(owner_of(kept.file_name().unwrap().to_str().unwrap()), None);
    }
}
