//! Who owns a leftover: names of per-call directories and cgroups carry the creating
//! process's PID *and* its start time, so that a sweep removes only what a dead process left.
//! A PID alone is not enough: PIDs are reused, and other supervisors (other servers, other
//! tests) run on the same host at the same time.

use std::fs;
use std::sync::OnceLock;

/// `<pid>-<start time in clock ticks since boot>` of this process.
pub fn tag() -> &'static str {
    static TAG: OnceLock<String> = OnceLock::new();
    TAG.get_or_init(|| {
        let pid = std::process::id();
        let start = i32::try_from(pid).ok().and_then(start_time).unwrap_or(0);
        format!("{pid}-{start}")
    })
}

/// The start time (field 22 of `/proc/<pid>/stat`) of a live process.
pub fn start_time(pid: i32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may contain spaces and parentheses: fields after it are
    // counted from the last `)`.
    let rest = stat.get(stat.rfind(')')? + 1..)?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether the owner named by `pid` and `start` is still running (`start` absent: names
/// written before start times were recorded, matched by PID only).
pub fn alive(pid: i32, start: Option<u64>) -> bool {
    match (start_time(pid), start) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(now), Some(then)) => now == then,
    }
}

/// Parse the owner out of `<pid>-<start>-<rest…>` (or the older `<pid>-<seq>-<rest>` with
/// fewer than `fields` dash-separated parts after the prefix, where only the PID is known).
pub fn parse(suffix: &str, fields: usize) -> Option<(i32, Option<u64>)> {
    let parts: Vec<&str> = suffix.split('-').collect();
    let pid = parts.first()?.parse::<i32>().ok()?;
    if parts.len() >= fields {
        Some((pid, Some(parts.get(1)?.parse().ok()?)))
    } else {
        Some((pid, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_changed_start_is_not() {
        let (pid, start) = parse(tag(), 2).unwrap();
        assert_eq!(pid, std::process::id() as i32);
        assert!(alive(pid, start));
        assert!(!alive(pid, start.map(|s| s + 1)));
        assert!(!alive(i32::MAX - 1, None));
        assert_eq!(parse("12-34-5-abc", 4), Some((12, Some(34))));
        assert_eq!(parse("12-5-abc", 4), Some((12, None)));
        assert_eq!(parse("x-5", 2), None);
    }
}
