//! Per-call unprivileged ids on a root host.
//!
//! Every concurrent call gets its own uid (and the gid of the same number) from a range, so
//! that one call's working directory (mode 0700, owned by that uid) is unreadable by any other
//! call by plain permissions, even under `filesystem: host`, and no two calls can signal or
//! trace each other. The range is configurable (`RuntimeConfig::ids`, or `APIZR_ID_RANGE` =
//! `FIRST:COUNT`; a count of 1 is one fixed id); the default sits far above the ids of real
//! users and of the usual subordinate-id ranges.
//!
//! A slot is owned by holding an exclusive `flock` on `<lock dir>/uid-<n>`: the kernel
//! releases it when the holder dies, so a crashed supervisor never leaks a slot, and
//! supervisors in different processes (servers, `apizr execute`, tests) coordinate without
//! any other state. The lock directory is root's (`/run/apizr/ids`, else
//! `<tmp>/apizr-ids-0`) and not writable by the call ids.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::PathBuf;

use nix::fcntl::{Flock, FlockArg};

/// A range of ids to allocate from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdRange {
    pub first: u32,
    pub count: u32,
}

impl Default for IdRange {
    fn default() -> Self {
        IdRange {
            first: 1_879_048_192,
            count: 65_536,
        }
    }
}

impl IdRange {
    /// `APIZR_ID_RANGE` (`FIRST:COUNT` or a single id), else the default.
    pub fn from_env() -> Result<IdRange, String> {
        match std::env::var("APIZR_ID_RANGE") {
            Ok(text) if !text.is_empty() => IdRange::parse(&text),
            _ => Ok(IdRange::default()),
        }
    }

    pub fn parse(text: &str) -> Result<IdRange, String> {
        let bad = || format!("APIZR_ID_RANGE: expected FIRST:COUNT or one id, got {text:?}");
        let (first, count) = match text.split_once(':') {
            Some((a, b)) => (a.parse::<u32>(), b.parse::<u32>()),
            None => (text.parse::<u32>(), Ok(1)),
        };
        let (first, count) = (first.map_err(|_| bad())?, count.map_err(|_| bad())?);
        if first == 0 || count == 0 || first.checked_add(count).is_none_or(|end| end == u32::MAX) {
            return Err(bad());
        }
        Ok(IdRange { first, count })
    }
}

/// An id held for one call; released (the lock dropped) with this value.
#[derive(Debug)]
pub struct CallId {
    pub uid: u32,
    _lock: Flock<File>,
}

/// Take a free id from `range`, starting at a random slot.
pub fn allocate(range: IdRange) -> io::Result<CallId> {
    let dir = lock_dir()?;
    let mut seed = [0u8; 4];
    let _ = rustix::rand::getrandom(&mut seed, rustix::rand::GetRandomFlags::empty());
    let start = u32::from_ne_bytes(seed) % range.count;
    for step in 0..range.count {
        let uid = range.first + (start + step) % range.count;
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(dir.join(format!("uid-{uid}")))?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => return Ok(CallId { uid, _lock: lock }),
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => continue,
            Err((_, e)) => return Err(io::Error::from(e)),
        }
    }
    Err(io::Error::other(format!(
        "every id of {}..{} is in use",
        range.first,
        range.first + range.count
    )))
}

/// `/run/apizr/ids` when `/run` is there, else `<tmp>/apizr-ids-<uid>`; created 0755 and
/// refused unless owned by us and not writable by others.
fn lock_dir() -> io::Result<PathBuf> {
    let me = nix::unistd::Uid::effective().as_raw();
    let dir = if fs::metadata("/run").is_ok_and(|m| m.is_dir()) && me == 0 {
        PathBuf::from("/run/apizr/ids")
    } else {
        std::env::temp_dir().join(format!("apizr-ids-{me}"))
    };
    match fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(&dir)
    {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = fs::metadata(&dir)?;
    if meta.uid() != me || meta.mode() & 0o022 != 0 {
        return Err(io::Error::other(format!(
            "id lock directory {} is not ours or is writable by others",
            dir.display()
        )));
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_strictly() {
        assert_eq!(
            IdRange::parse("5000:10"),
            Ok(IdRange {
                first: 5000,
                count: 10
            })
        );
        assert_eq!(
            IdRange::parse("5000"),
            Ok(IdRange {
                first: 5000,
                count: 1
            })
        );
        for bad in ["0:5", "5:0", "x", "5:", "4294967295:2", "-1:3"] {
            assert!(IdRange::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn two_live_calls_never_share_an_id() {
        let range = IdRange {
            first: 1_879_000_000 + std::process::id() % 1000 * 4,
            count: 2,
        };
        let a = allocate(range).unwrap();
        let b = allocate(range).unwrap();
        assert_ne!(a.uid, b.uid);
        assert!(allocate(range).is_err());
        drop(a);
        let c = allocate(range).unwrap();
        assert_ne!(c.uid, b.uid);
    }
}
