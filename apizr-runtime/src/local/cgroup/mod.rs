//! Per-call cgroups: `pids.max` and the memory limit, and whole-tree cleanup.
//!
//! Why cgroups: `RLIMIT_NPROC` counts every process of the real uid on the host and does not
//! apply to root, and `RLIMIT_AS` counts address space only — memory held in a `memfd`, in
//! System V or POSIX shared memory or in a tmpfs is not mapped and escapes it. A cgroup
//! counts exactly the tasks of the call and every page charged to them. We look for a
//! writable hierarchy per controller: cgroup v2 when the current cgroup already delegates the
//! controller to its children, otherwise a v1 hierarchy (what these Debian 12 hosts mount).
//! The probe creates and removes a scratch group, so "available" means "worked here".
//!
//! Group names carry the owner (`apizr-<pid>-<start>-<seq>`, see [`super::owner`]) so that a
//! supervisor starting later can remove what a dead one left ([`sweep`]).

mod call;

use std::fs;
use std::path::{Path, PathBuf};

pub use call::{CallCgroups, Limits};

/// The hierarchy a controller is used in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hierarchy {
    /// `v1` or `v2`.
    pub version: &'static str,
    /// The directory under which per-call groups are created.
    pub base: PathBuf,
}

/// The former name (the `pids` controller was the first one used).
pub type PidsHierarchy = Hierarchy;

/// Prefix of every per-call group name.
pub const GROUP_PREFIX: &str = "apizr-";

/// Find a usable `pids` hierarchy.
pub fn probe_pids() -> Option<Hierarchy> {
    probe("pids")
}

/// Find a usable hierarchy for `controller` (`pids` or `memory`), proving it by creating and
/// removing a scratch group.
pub fn probe(controller: &'static str) -> Option<Hierarchy> {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let own = fs::read_to_string("/proc/self/cgroup").ok()?;
    candidates(&mountinfo, &own, controller)
        .into_iter()
        .find(|h| call::scratch(h, controller).is_ok())
}

/// The hierarchies `controller` could be used in (from mountinfo only; nothing created):
/// where a sweep looks for leftovers.
pub fn hierarchies(controller: &str) -> Vec<Hierarchy> {
    let (Ok(mountinfo), Ok(own)) = (
        fs::read_to_string("/proc/self/mountinfo"),
        fs::read_to_string("/proc/self/cgroup"),
    ) else {
        return Vec::new();
    };
    candidates(&mountinfo, &own, controller)
}

fn candidates(mountinfo: &str, own: &str, controller: &str) -> Vec<Hierarchy> {
    let mut out = Vec::new();
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let mount_point = left.split(' ').nth(4).unwrap_or_default();
        let mut right = right.split(' ');
        let fstype = right.next().unwrap_or_default();
        let options = right.nth(1).unwrap_or_default();
        if fstype == "cgroup2" {
            if let Some(path) = own.lines().find_map(|l| l.strip_prefix("0::")) {
                let base = join(mount_point, path);
                let delegated = fs::read_to_string(base.join("cgroup.subtree_control"))
                    .map(|s| s.split_whitespace().any(|c| c == controller))
                    .unwrap_or(false);
                if delegated {
                    out.push(Hierarchy {
                        version: "v2",
                        base,
                    });
                }
            }
        } else if fstype == "cgroup" && options.split(',').any(|o| o == controller) {
            let path = own.lines().find_map(|l| {
                let mut parts = l.splitn(3, ':');
                let _id = parts.next()?;
                let controllers = parts.next()?;
                let path = parts.next()?;
                controllers
                    .split(',')
                    .any(|c| c == controller)
                    .then_some(path)
            });
            if let Some(path) = path {
                out.push(Hierarchy {
                    version: "v1",
                    base: join(mount_point, path),
                });
            }
        }
    }
    out
}

fn join(mount_point: &str, path: &str) -> PathBuf {
    Path::new(mount_point).join(path.trim_start_matches('/'))
}

/// Remove the groups under `hierarchy` whose owning supervisor is dead, killing any task
/// still in them. Returns what was removed and what could not be (never claimed removed).
pub fn sweep(hierarchy: &Hierarchy) -> (Vec<PathBuf>, Vec<String>) {
    let mut removed = Vec::new();
    let mut failed = Vec::new();
    let Ok(entries) = fs::read_dir(&hierarchy.base) else {
        return (removed, failed);
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(suffix) = name.to_str().and_then(|n| n.strip_prefix(GROUP_PREFIX)) else {
            continue;
        };
        // `<pid>-<start>-<seq>` (older: `<pid>-<seq>`).
        let Some((pid, start)) = super::owner::parse(suffix, 3) else {
            continue;
        };
        if super::owner::alive(pid, start) {
            continue;
        }
        let dir = entry.path();
        match call::remove_group(&dir, hierarchy.version) {
            Ok(()) => removed.push(dir),
            Err(e) => failed.push(format!("cgroup {}: {e}", dir.display())),
        }
    }
    (removed, failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_v1_hierarchies_from_mountinfo() {
        let mountinfo = "30 25 0:26 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n\
                         32 25 0:28 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                         31 25 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
        let own = "8:pids:/user/1\n4:memory:/x\n0::/\n";
        assert_eq!(
            candidates(mountinfo, own, "pids"),
            vec![Hierarchy {
                version: "v1",
                base: PathBuf::from("/sys/fs/cgroup/pids/user/1"),
            }]
        );
        assert_eq!(
            candidates(mountinfo, own, "memory"),
            vec![Hierarchy {
                version: "v1",
                base: PathBuf::from("/sys/fs/cgroup/memory/x"),
            }]
        );
    }
}
