//! Per-call cgroups for the `pids` limit (and whole-tree cleanup).
//!
//! Why not `RLIMIT_NPROC`: it counts every process of the real uid on the host and does not
//! apply to root at all. A cgroup `pids.max` counts exactly the tasks of the call. We look for
//! a writable `pids` hierarchy: cgroup v2 when the current cgroup already delegates `pids` to
//! its children, otherwise a v1 `pids` hierarchy (what these Debian 12 hosts mount). The probe
//! creates and removes a scratch group, so "available" means "worked here".

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// Which cgroup hierarchy holds the `pids` controller we use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PidsHierarchy {
    /// `v1` or `v2`.
    pub version: &'static str,
    /// The directory under which per-call groups are created.
    pub base: PathBuf,
}

/// One per-call cgroup; [`CallCgroup::destroy`] kills what is left and removes it.
#[derive(Debug)]
pub struct CallCgroup {
    dir: PathBuf,
    version: &'static str,
}

static SEQ: AtomicU64 = AtomicU64::new(0);

/// Find a usable `pids` hierarchy, proving it by creating and removing a scratch group.
pub fn probe_pids() -> Option<PidsHierarchy> {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let own = fs::read_to_string("/proc/self/cgroup").ok()?;
    candidates(&mountinfo, &own)
        .into_iter()
        .find(|h| CallCgroup::create(h, 1).and_then(|g| g.destroy()).is_ok())
}

fn candidates(mountinfo: &str, own: &str) -> Vec<PidsHierarchy> {
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
                    .map(|s| s.split_whitespace().any(|c| c == "pids"))
                    .unwrap_or(false);
                if delegated {
                    out.push(PidsHierarchy {
                        version: "v2",
                        base,
                    });
                }
            }
        } else if fstype == "cgroup" && options.split(',').any(|o| o == "pids") {
            let path = own.lines().find_map(|l| {
                let mut parts = l.splitn(3, ':');
                let _id = parts.next()?;
                let controllers = parts.next()?;
                let path = parts.next()?;
                controllers.split(',').any(|c| c == "pids").then_some(path)
            });
            if let Some(path) = path {
                out.push(PidsHierarchy {
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

impl CallCgroup {
    /// Create a fresh group with `pids.max = max_pids`.
    pub fn create(hierarchy: &PidsHierarchy, max_pids: u64) -> io::Result<CallCgroup> {
        let name = format!(
            "apizr-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let dir = hierarchy.base.join(name);
        fs::create_dir(&dir)?;
        let group = CallCgroup {
            dir,
            version: hierarchy.version,
        };
        if let Err(e) = fs::write(group.dir.join("pids.max"), max_pids.to_string()) {
            let _ = group.destroy();
            return Err(e);
        }
        Ok(group)
    }

    /// The file a process writes its PID into to join.
    pub fn procs_file(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// Whether the group ever refused a fork (`pids.events` `max` counter).
    pub fn limit_hit(&self) -> bool {
        fs::read_to_string(self.dir.join("pids.events"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("max ").map(|n| n.trim() != "0"))
            })
            .unwrap_or(false)
    }

    /// Kill every task still in the group, then remove it (retrying while tasks exit).
    pub fn destroy(self) -> io::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            if self.version == "v2" {
                let _ = fs::write(self.dir.join("cgroup.kill"), "1");
            }
            if let Ok(procs) = fs::read_to_string(self.procs_file()) {
                for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                    let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
                }
            }
            match fs::remove_dir(&self.dir) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(2)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_v1_pids_hierarchy_from_mountinfo() {
        let mountinfo = "30 25 0:26 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n\
                         31 25 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
        let own = "8:pids:/user/1\n4:memory:/x\n0::/\n";
        let found = candidates(mountinfo, own);
        assert_eq!(
            found,
            vec![PidsHierarchy {
                version: "v1",
                base: PathBuf::from("/sys/fs/cgroup/pids/user/1"),
            }]
        );
    }
}
