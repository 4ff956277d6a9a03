//! Was the container's worker killed by the memory limit? The kernel's own record, or the
//! engine's `State.OOMKilled`.
//!
//! The engine's flag is not enough: Podman 4.3 on cgroup v1 never sets it (the worker just
//! exits 137), and under gVisor the kernel kills the sandbox itself, which Docker reports as
//! `OOMKilled` only some of the time (about 1 in 10 under load here). By then the container's
//! cgroup is gone, so its `memory.oom_control` cannot be read. The kernel logs every such kill
//! with the memory cgroup it happened in (`oom-kill:…,oom_memcg=/docker/<id>,…` or
//! `…/libpod-<id>`), so after a SIGKILL exit (137) the kernel log (`/dev/kmsg`, readable by
//! root, which a rootful engine's socket requires anyway) is searched for the container's full
//! ID first; the engine's flag is polled only when the log does not say. A user's own
//! `os.kill(os.getpid(), 9)` has no such record. If the log cannot be read or the kernel
//! rate-limited its report (10 in 5 s), the engine's flag decides; without either the call stays
//! `worker_failed`: never a guess.

use std::fs::OpenOptions;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use super::engine::Engine;

/// Exit status of a process killed by SIGKILL, as engines report it.
pub const SIGKILL_EXIT: i64 = 137;
/// How long the container state is polled (reference: 1 s, 50 ms sleeps).
const OOM_POLL: Duration = Duration::from_secs(1);
const OOM_TICK: Duration = Duration::from_millis(50);

/// Poll the container state for up to [`OOM_POLL`]: terminal with `OOMKilled` → true. Exit
/// codes 0 and 137 keep polling (the flag can lag the exit), other terminal codes stop.
pub fn engine_says_oom(engine: &Engine, name: &str) -> bool {
    let until = Instant::now() + OOM_POLL;
    loop {
        let state = engine
            .container_inspect(name, Duration::from_millis(250))
            .ok()
            .flatten()
            .and_then(|doc| doc.get("State").cloned());
        if let Some(state) = state {
            let running = state.get("Running").and_then(Json::as_bool) == Some(true);
            let status = state.get("Status").and_then(Json::as_str).unwrap_or("");
            let terminal = !running && matches!(status, "exited" | "dead");
            if terminal && state.get("OOMKilled").and_then(Json::as_bool) == Some(true) {
                return true;
            }
            let code = state.get("ExitCode").and_then(Json::as_i64);
            if terminal && !matches!(code, Some(0 | SIGKILL_EXIT)) {
                return false;
            }
        }
        if Instant::now() + OOM_TICK > until {
            return false;
        }
        std::thread::sleep(OOM_TICK);
    }
}

/// Whether the kernel log records an OOM kill inside the memory cgroup of `container_id`
/// (the full 64-hex ID).
pub fn kernel_logged_oom(container_id: &str) -> bool {
    if container_id.len() < 32 {
        return false;
    }
    let Ok(mut kmsg) = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open("/dev/kmsg")
    else {
        return false;
    };
    // One record per read, oldest first, until the buffer is drained (EAGAIN).
    let mut record = vec![0u8; 8192];
    loop {
        match kmsg.read(&mut record) {
            Ok(0) => return false,
            Ok(n) => {
                if record
                    .get(..n)
                    .is_some_and(|r| names_oom_kill_of(r, container_id))
                {
                    return true;
                }
            }
            // Overwritten while we read: the next read continues with the oldest record left.
            Err(e) if e.kind() == ErrorKind::BrokenPipe || e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// `oom-kill:` summary line whose memory cgroup path ends in the container's ID.
fn names_oom_kill_of(record: &[u8], container_id: &str) -> bool {
    let text = String::from_utf8_lossy(record);
    let Some((_, summary)) = text.split_once("oom-kill:") else {
        return false;
    };
    summary.split(',').any(|field| {
        field
            .strip_prefix("oom_memcg=")
            .or_else(|| field.strip_prefix("task_memcg="))
            .is_some_and(|path| path.trim_end().ends_with(container_id))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_summary_naming_this_container_counts() {
        let id = "7d5677250ca383c3ec75a39b67fff0691444ec4ba7e5d0a8931d7a1929cfac7e";
        let line = format!(
            "6,1234,99;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=libpod-{id},mems_allowed=0,oom_memcg=/libpod_parent/libpod-{id},task_memcg=/libpod_parent/libpod-{id},task=python3,pid=6847,uid=0\n"
        );
        assert!(names_oom_kill_of(line.as_bytes(), id));
        let docker = format!(
            "6,1,2;oom-kill:constraint=CONSTRAINT_MEMCG,oom_memcg=/docker/{id},task=python3\n"
        );
        assert!(names_oom_kill_of(docker.as_bytes(), id));
        let other = line.replace(id, &"a".repeat(64));
        assert!(!names_oom_kill_of(other.as_bytes(), id));
        let not_oom = format!("6,1,2;some driver mentions /docker/{id}\n");
        assert!(!names_oom_kill_of(not_oom.as_bytes(), id));
        assert!(!kernel_logged_oom("short"));
    }
}
