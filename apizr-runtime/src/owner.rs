//! Who owns a leftover (a container, a directory), and whether that owner is still alive.
//!
//! Sweeps at start-up must reclaim what killed processes left behind without ever touching
//! what a live process is still using: other `apizr execute` calls and servers run at the same
//! time against the same engine and temp dir. A pid alone is not an identity (pids are reused),
//! so the owner is `boot id / pid namespace / pid / start time`:
//!
//! * the start time (`/proc/PID/stat` field 22, clock ticks since boot) tells a reused pid
//!   apart from the original process;
//! * the pid namespace says whether our `/proc` can see that pid at all (another container
//!   sharing the engine socket has its own pids);
//! * the boot id says whether the pid refers to this boot of this kernel.
//!
//! [`Liveness`] is `Dead` only when all three let us look and the process is gone or is a
//! different one; otherwise it is `Alive` or `Unknown`, and the caller falls back to an expiry.

use std::sync::OnceLock;

/// One process, as recorded in a label or a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub boot_id: String,
    pub pid_ns: u64,
    pub pid: u32,
    pub start_ticks: u64,
}

/// What a sweep may conclude about an owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    Alive,
    Dead,
    /// Another boot, another pid namespace, or an unreadable record: not ours to judge.
    Unknown,
}

impl Owner {
    /// This process (computed once).
    pub fn current() -> Option<&'static Owner> {
        static CURRENT: OnceLock<Option<Owner>> = OnceLock::new();
        CURRENT
            .get_or_init(|| {
                let pid = std::process::id();
                Some(Owner {
                    boot_id: boot_id()?,
                    pid_ns: pid_ns()?,
                    pid,
                    start_ticks: start_ticks(pid)?,
                })
            })
            .as_ref()
    }

    /// Another process of this boot and namespace, read now (`None` if it does not exist).
    pub fn of_pid(pid: u32) -> Option<Owner> {
        Some(Owner {
            boot_id: boot_id()?,
            pid_ns: pid_ns()?,
            pid,
            start_ticks: start_ticks(pid)?,
        })
    }

    /// `BOOT/PIDNS/PID/START`, the label value.
    pub fn encode(&self) -> String {
        format!(
            "{}/{}/{}/{}",
            self.boot_id, self.pid_ns, self.pid, self.start_ticks
        )
    }

    pub fn decode(text: &str) -> Option<Owner> {
        let mut parts = text.split('/');
        let owner = Owner {
            boot_id: parts.next()?.to_string(),
            pid_ns: parts.next()?.parse().ok()?,
            pid: parts.next()?.parse().ok()?,
            start_ticks: parts.next()?.parse().ok()?,
        };
        (parts.next().is_none() && !owner.boot_id.is_empty()).then_some(owner)
    }

    /// Whether this owner still runs, as far as this process can tell.
    pub fn liveness(&self) -> Liveness {
        let Some(me) = Owner::current() else {
            return Liveness::Unknown;
        };
        if self.boot_id != me.boot_id || self.pid_ns != me.pid_ns {
            return Liveness::Unknown;
        }
        match start_ticks(self.pid) {
            Some(t) if t == self.start_ticks => Liveness::Alive,
            // Gone, or the pid now names a younger process.
            _ => Liveness::Dead,
        }
    }
}

fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let id = id.trim();
    (!id.is_empty() && !id.contains('/')).then(|| id.to_string())
}

fn pid_ns() -> Option<u64> {
    let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let text = link.to_str()?;
    text.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()
}

/// Field 22 of `/proc/PID/stat` (after the parenthesised command, which may hold spaces).
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    // Fields after the command start at 3 (state); start time is field 22.
    after.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_round_trips() {
        let me = Owner::current().unwrap();
        assert_eq!(Owner::decode(&me.encode()).as_ref(), Some(me));
        assert_eq!(me.liveness(), Liveness::Alive);
        assert!(Owner::decode("a/b/c/d").is_none());
        assert!(Owner::decode("boot/1/2/3/4").is_none());
    }

    #[test]
    fn a_reaped_child_is_dead_and_a_reused_pid_is_not_its_owner() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let owner = Owner::of_pid(child.id()).unwrap();
        assert_eq!(owner.liveness(), Liveness::Alive);
        let younger = Owner {
            start_ticks: owner.start_ticks + 1,
            ..owner.clone()
        };
        assert_eq!(younger.liveness(), Liveness::Dead);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(owner.liveness(), Liveness::Dead);
        let elsewhere = Owner {
            boot_id: "another-boot".into(),
            ..owner.clone()
        };
        assert_eq!(elsewhere.liveness(), Liveness::Unknown);
        let other_ns = Owner {
            pid_ns: owner.pid_ns + 1,
            ..owner
        };
        assert_eq!(other_ns.liveness(), Liveness::Unknown);
    }
}
