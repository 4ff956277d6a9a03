//! Supervision of one local interpreter process: write the request, capture both streams
//! (bounded), enforce the deadline, kill the whole tree, reap.
//!
//! The process is started by the local backend's `Factory::start` (piped stdio, its own
//! process group). At the deadline, and again when it exits, the group is killed with
//! SIGKILL; with the launcher, the interpreter is PID 1 of its own PID namespace, so every
//! descendant — detached, re-grouped or daemonized — dies with it. Output written before the
//! deadline is kept.

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::capture::{self, Captured};

/// How a supervised run ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Finished {
    pub stdout: Captured,
    pub stderr: Captured,
    /// The exit code (`128 + signal` for a signal, as shells and engines report it); `None`
    /// when the run timed out or could not be reaped.
    pub exit_code: Option<i32>,
    /// The signal that ended the process. The launcher reports its PID 1's signal N as exit
    /// `128 + N` (as shells do), so an exit status in 129..=159 reads as that signal: a
    /// `sys.exit(137)` is indistinguishable from SIGKILL here.
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub elapsed: Duration,
}

enum Event {
    Out(Captured),
    Err(Captured),
    Exited(Option<ExitStatus>),
}

/// Supervise `child` (started through the local backend's one implementation of the
/// controls, cold or pre-started): write `input` to its stdin, run it until it exits or
/// `deadline`; keep `keep.0` / `keep.1` bytes of stdout / stderr.
pub fn supervise(
    mut child: Child,
    input: Vec<u8>,
    deadline: Instant,
    keep: (u64, u64),
) -> Finished {
    let started = Instant::now();
    let pgid = i32::try_from(child.id()).ok().map(Pid::from_raw);
    let (tx, rx) = mpsc::channel::<Event>();
    let writer = child.stdin.take().map(|mut stdin| {
        thread::spawn(move || {
            let _ = stdin.write_all(&input);
        })
    });
    if let Some(out) = child.stdout.take() {
        let tx = tx.clone();
        thread::spawn(move || {
            let _ = tx.send(Event::Out(capture::drain(out, keep.0)));
        });
    }
    if let Some(err) = child.stderr.take() {
        let tx = tx.clone();
        thread::spawn(move || {
            let _ = tx.send(Event::Err(capture::drain(err, keep.1)));
        });
    }
    {
        let tx = tx.clone();
        thread::spawn(move || {
            let _ = tx.send(Event::Exited(child.wait().ok()));
        });
    }
    drop(tx);
    let mut finished = Finished::default();
    let (mut out, mut err, mut exit) = (None, None, None);
    // Until the process exited and both streams closed, or the deadline.
    while out.is_none() || err.is_none() || exit.is_none() {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            finished.timed_out = true;
            break;
        };
        match rx.recv_timeout(left) {
            Ok(Event::Out(c)) => out = Some(c),
            Ok(Event::Err(c)) => err = Some(c),
            Ok(Event::Exited(status)) => {
                exit = Some(status);
                // Descendants may still hold the pipes: they go with the group.
                kill_group(pgid);
            }
            Err(RecvTimeoutError::Timeout) => {
                finished.timed_out = true;
                break;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    finished.elapsed = started.elapsed();
    kill_group(pgid);
    // Everything is dead: the readers see EOF and the waiter reaps promptly.
    let until = Instant::now() + Duration::from_secs(5);
    while out.is_none() || err.is_none() || exit.is_none() {
        let Some(left) = until.checked_duration_since(Instant::now()) else {
            break;
        };
        match rx.recv_timeout(left) {
            Ok(Event::Out(c)) => out = Some(c),
            Ok(Event::Err(c)) => err = Some(c),
            Ok(Event::Exited(status)) => exit = Some(status),
            Err(_) => break,
        }
    }
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    finished.stdout = out.unwrap_or_default();
    finished.stderr = err.unwrap_or_default();
    if !finished.timed_out {
        let status = exit.flatten();
        finished.exit_code = status.and_then(code_of);
        finished.signal = status.and_then(signal_of);
    }
    finished
}

/// `code`, or `128 + signal`.
pub fn code_of(status: ExitStatus) -> Option<i32> {
    status.code().or_else(|| status.signal().map(|s| 128 + s))
}

/// The signal that ended `status` (directly, or as the launcher's `128 + N`).
pub fn signal_of(status: ExitStatus) -> Option<i32> {
    status
        .signal()
        .or_else(|| status.code().and_then(signal_of_code))
}

/// The signal N of an exit code `128 + N` (1 ≤ N ≤ 31).
pub fn signal_of_code(code: i32) -> Option<i32> {
    (129..=159).contains(&code).then(|| code - 128)
}

fn kill_group(pgid: Option<Pid>) {
    if let Some(pgid) = pgid {
        let _ = killpg(pgid, Signal::SIGKILL);
    }
}
