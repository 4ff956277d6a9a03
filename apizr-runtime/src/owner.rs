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
        match stat(self.pid) {
            // A zombie (killed, not yet reaped by its parent) holds no resources and never
            // runs again: its leftovers are reclaimable.
            Some((state, t)) if t == self.start_ticks && !matches!(state, 'Z' | 'X') => {
                Liveness::Alive
            }
            // Gone, dead, or the pid now names a younger process.
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

/// Field 22 of `/proc/PID/stat`: the start time in clock ticks since boot.
fn start_ticks(pid: u32) -> Option<u64> {
    stat(pid).map(|(_, start)| start)
}

/// Fields 3 (state) and 22 (start time) of `/proc/PID/stat`, read after the parenthesised
/// command, which may hold spaces.
fn stat(pid: u32) -> Option<(char, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?.chars().next()?;
    // The state was field 3; the start time is field 22.
    let start = fields.nth(18)?.parse().ok()?;
    Some((state, start))
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
        // Killed but not reaped yet (a zombie, as a `kill -9`ed server is until its parent
        // waits): already dead.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while stat(child.id()).is_some_and(|(state, _)| state != 'Z') {
            assert!(std::time::Instant::now() < until, "the child never died");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(stat(child.id()).map(|(state, _)| state), Some('Z'));
        assert_eq!(owner.liveness(), Liveness::Dead);
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
