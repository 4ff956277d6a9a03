//! One call's groups: created with their limits before the launcher starts, joined by the
//! launcher, read for "limit hit" after the call, then emptied and removed.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::{GROUP_PREFIX, Hierarchy};

static SEQ: AtomicU64 = AtomicU64::new(0);

/// The limits of one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// `pids.max` (the launcher's own slot included).
    pub pids: Option<u64>,
    /// Memory (and memory + swap) in bytes.
    pub memory: Option<u64>,
}

#[derive(Debug)]
struct Group {
    dir: PathBuf,
    version: &'static str,
}

/// The call's groups (one per hierarchy used; on v2 one group holds both controllers).
#[derive(Debug, Default)]
pub struct CallCgroups {
    groups: Vec<Group>,
    pids: Option<usize>,
    memory: Option<usize>,
}

impl CallCgroups {
    /// Create the groups `limits` needs in the given hierarchies.
    pub fn create(
        pids: Option<&Hierarchy>,
        memory: Option<&Hierarchy>,
        limits: Limits,
    ) -> io::Result<CallCgroups> {
        let mut call = CallCgroups::default();
        let name = format!(
            "{GROUP_PREFIX}{}-{}",
            crate::local::owner::tag(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let group_in = |call: &mut CallCgroups, h: &Hierarchy| -> io::Result<usize> {
            let dir = h.base.join(&name);
            if let Some(i) = call.groups.iter().position(|g| g.dir == dir) {
                return Ok(i);
            }
            fs::create_dir(&dir)?;
            call.groups.push(Group {
                dir,
                version: h.version,
            });
            Ok(call.groups.len() - 1)
        };
        let result = (|| {
            if let (Some(h), Some(max)) = (pids, limits.pids) {
                let i = group_in(&mut call, h)?;
                call.pids = Some(i);
                write(&call.groups[i].dir, "pids.max", max)?;
            }
            if let (Some(h), Some(bytes)) = (memory, limits.memory) {
                let i = group_in(&mut call, h)?;
                call.memory = Some(i);
                set_memory(&call.groups[i], bytes)?;
            }
            Ok(())
        })();
        match result {
            Ok(()) => Ok(call),
            Err(e) => {
                let _ = call.destroy();
                Err(e)
            }
        }
    }

    /// The `cgroup.procs` files the launcher writes its PID into.
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.groups
            .iter()
            .map(|g| g.dir.join("cgroup.procs"))
            .collect()
    }

    /// Whether the group ever refused a fork (`pids.events` `max` counter).
    pub fn pids_hit(&self) -> bool {
        self.pids
            .and_then(|i| self.groups.get(i))
            .and_then(|g| fs::read_to_string(g.dir.join("pids.events")).ok())
            .is_some_and(|s| counter(&s, "max") > 0)
    }

    /// Whether the memory limit made the kernel kill a task of the call.
    pub fn memory_hit(&self) -> bool {
        let Some(group) = self.memory.and_then(|i| self.groups.get(i)) else {
            return false;
        };
        let file = if group.version == "v2" {
            "memory.events"
        } else {
            "memory.oom_control"
        };
        fs::read_to_string(group.dir.join(file)).is_ok_and(|s| counter(&s, "oom_kill") > 0)
    }

    /// Kill every task still in the groups, then remove them. Errors name each group that
    /// could not be removed.
    pub fn destroy(mut self) -> Result<(), Vec<String>> {
        let mut failed = Vec::new();
        for group in self.groups.drain(..) {
            if let Err(e) = remove_group(&group.dir, group.version) {
                failed.push(format!("cgroup {}: {e}", group.dir.display()));
            }
        }
        if failed.is_empty() {
            Ok(())
        } else {
            Err(failed)
        }
    }
}

fn write(dir: &Path, file: &str, value: u64) -> io::Result<()> {
    fs::write(dir.join(file), value.to_string())
}

/// v2: `memory.max` and no swap. v1: `memory.limit_in_bytes`, then the memory + swap limit
/// to the same value where the kernel accounts swap.
fn set_memory(group: &Group, bytes: u64) -> io::Result<()> {
    if group.version == "v2" {
        write(&group.dir, "memory.max", bytes)?;
        if group.dir.join("memory.swap.max").exists() {
            write(&group.dir, "memory.swap.max", 0)?;
        }
    } else {
        write(&group.dir, "memory.limit_in_bytes", bytes)?;
        if group.dir.join("memory.memsw.limit_in_bytes").exists() {
            write(&group.dir, "memory.memsw.limit_in_bytes", bytes)?;
        }
    }
    Ok(())
}

/// `name N` in a flat key-value file.
fn counter(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| {
            let (key, value) = l.split_once(' ')?;
            (key == name).then(|| value.trim().parse().ok()).flatten()
        })
        .unwrap_or(0)
}

/// Kill every task in `dir`, then remove it (retrying while tasks exit).
pub(super) fn remove_group(dir: &Path, version: &str) -> io::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        if version == "v2" {
            let _ = fs::write(dir.join("cgroup.kill"), "1");
        }
        if let Ok(procs) = fs::read_to_string(dir.join("cgroup.procs")) {
            for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
        match fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) if Instant::now() >= deadline => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
}

/// Create and remove a group with a trivial limit: proves the hierarchy is usable.
pub(super) fn scratch(h: &Hierarchy, controller: &str) -> Result<(), Vec<String>> {
    let limits = match controller {
        "pids" => Limits {
            pids: Some(1),
            memory: None,
        },
        _ => Limits {
            pids: None,
            memory: Some(64 << 20),
        },
    };
    let (pids, memory) = if controller == "pids" {
        (Some(h), None)
    } else {
        (None, Some(h))
    };
    CallCgroups::create(pids, memory, limits)
        .map_err(|e| vec![e.to_string()])?
        .destroy()
}
