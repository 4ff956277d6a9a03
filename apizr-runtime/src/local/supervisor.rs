//! The supervisor loop for one worker process: write the request, read the bounded response,
//! enforce the deadline, always kill the process group and reap.
//!
//! Threads instead of async: one writer (stdin), one reader of stdout and stderr
//! ([`output`](crate::local::output): stdout bounded to `max_output + 9` bytes, stderr bounded
//! for the report but drained to EOF) and one waiter (`wait()`), all reporting to one channel;
//! the calling thread waits on that channel with the remaining time as timeout. Nothing
//! ticks, so a fast worker costs no tick latency. A call is answered on its response frame;
//! the exit is awaited by its [`Tail`] (the rule is on [`supervise_to_frame`]).

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ChildStdin, ExitStatus};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::envelope::Envelope;
use crate::local::output::{Captured, Event, read_outputs};
use crate::local::spawn::{ProcessSpawner, SpawnSpec};
pub use crate::local::tail::{Ending, TAIL_GRACE, Tail};
use crate::protocol::{self, FrameError, HEADER_BYTES};
use crate::status::Status;

pub use crate::local::output::STDERR_CAPTURE_BYTES;

/// How one supervised process ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Supervised {
    pub envelope: Envelope,
    /// Exit status, when the process was reaped.
    pub exit: Option<ExitStatus>,
    pub stderr: Vec<u8>,
    pub stderr_truncated: bool,
    /// Why the frame was rejected, when it was.
    pub protocol_error: Option<String>,
    pub timed_out: bool,
    /// The envelope is the one the worker's frame claimed (everything else the supervisor
    /// decided from what it saw).
    pub from_worker: bool,
    /// Time from spawn to the response (or the end), for the report.
    pub elapsed: Duration,
}

/// A spawned worker that has not been handed its request yet (cold: for a moment; a
/// pre-started worker: until a call takes it). Its stdout and stderr are read only once the
/// request is written, so nothing it does before can be mistaken for an answer.
#[derive(Debug)]
pub struct Started {
    child: Child,
    stdin: Stdin,
    /// When the process was spawned.
    pub spawned: Instant,
}

#[derive(Debug)]
enum Stdin {
    Ready(Option<ChildStdin>),
    /// A thread is writing the boot frame (the compiled worker); it hands the pipe back.
    Booting(thread::JoinHandle<Option<ChildStdin>>),
}

/// Spawn `spec` and, when given, start writing `boot` (the compiled worker frame) to its
/// stdin on a thread, so the interpreter loads the worker while nobody waits for it.
pub fn start(
    spawner: &dyn ProcessSpawner,
    spec: &SpawnSpec,
    boot: Option<Vec<u8>>,
) -> std::io::Result<Started> {
    let mut child = spawner.spawn(spec)?;
    let spawned = Instant::now();
    let stdin = child.stdin.take();
    let stdin = match (boot, stdin) {
        (Some(frame), Some(mut pipe)) => Stdin::Booting(thread::spawn(move || {
            write_chunks(&mut pipe, &frame).then_some(pipe)
        })),
        (_, pipe) => Stdin::Ready(pipe),
    };
    Ok(Started {
        child,
        stdin,
        spawned,
    })
}

impl Started {
    /// Whether the boot frame has been written (the interpreter read the whole worker) within
    /// `timeout`; false also when the write failed (the process is gone).
    pub fn wait_booted(&mut self, timeout: Duration) -> bool {
        let until = Instant::now() + timeout;
        loop {
            match &self.stdin {
                Stdin::Ready(pipe) => return pipe.is_some(),
                Stdin::Booting(handle) if handle.is_finished() => {
                    let Stdin::Booting(handle) =
                        std::mem::replace(&mut self.stdin, Stdin::Ready(None))
                    else {
                        return false;
                    };
                    self.stdin = Stdin::Ready(handle.join().ok().flatten());
                }
                Stdin::Booting(_) if Instant::now() >= until => return false,
                Stdin::Booting(_) => thread::sleep(Duration::from_millis(2)),
            }
        }
    }

    /// The child with its stdin back, for a program that supervises its own protocol (the
    /// code interpreter's): the boot frame, if any, is written first.
    pub fn into_child(mut self) -> Child {
        let stdin = match std::mem::replace(&mut self.stdin, Stdin::Ready(None)) {
            Stdin::Ready(pipe) => pipe,
            Stdin::Booting(handle) => handle.join().ok().flatten(),
        };
        self.child.stdin = stdin;
        self.child
    }

    /// Pre-import: send the booted worker `payload` as its prepare frame and wait at most
    /// `timeout` for its readiness frame ([`prepare`](crate::local::prepare)). Call after
    /// [`Started::wait_booted`] returned true.
    pub fn prepare(
        &mut self,
        payload: &[u8],
        timeout: Duration,
    ) -> Result<(), crate::local::prepare::PrepareFailure> {
        let pgid = i32::try_from(self.child.id()).map(Pid::from_raw).ok();
        let stdin = match &mut self.stdin {
            Stdin::Ready(pipe) => pipe,
            Stdin::Booting(_) => return Err(crate::local::prepare::PrepareFailure::Failed),
        };
        crate::local::prepare::prepare(stdin, &mut self.child.stdout, pgid, payload, timeout)
    }

    /// Whether the process has already exited (a pre-started worker must not have).
    pub fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// End a worker discarded unused. Closing its stdin ends it (no request: the worker
    /// exits, the launcher reaps it and exits), so no process of it outlives this call; one
    /// that does not end within `grace` gets its process group killed.
    pub fn end(mut self, grace: Duration) {
        let pgid = i32::try_from(self.child.id()).map(Pid::from_raw).ok();
        match std::mem::replace(&mut self.stdin, Stdin::Ready(None)) {
            Stdin::Ready(pipe) => drop(pipe),
            Stdin::Booting(handle) => {
                if !handle.is_finished() {
                    // Still reading the worker: nothing to end gently.
                    kill_group(pgid);
                }
                drop(handle.join());
            }
        }
        let until = Instant::now() + grace;
        while matches!(self.child.try_wait(), Ok(None)) {
            if Instant::now() >= until {
                kill_group(pgid);
                let _ = self.child.wait();
                break;
            }
            thread::sleep(Duration::from_millis(2));
        }
        // Descendants the user's code never ran cannot exist, but the group goes regardless.
        kill_group(pgid);
    }
}

/// Run one worker process to completion under `deadline`: spawn it, then [`supervise_started`].
pub fn supervise(
    spawner: &dyn ProcessSpawner,
    spec: &SpawnSpec,
    request_frame: Vec<u8>,
    deadline: Instant,
    max_output: u64,
) -> Supervised {
    match start(spawner, spec, None) {
        Ok(started) => supervise_started(started, request_frame, deadline, max_output),
        Err(e) => spawn_failed(&e, Instant::now()),
    }
}

/// The outcome of a process that could not be spawned.
pub fn spawn_failed(error: &std::io::Error, since: Instant) -> Supervised {
    Supervised {
        envelope: Envelope::status(Status::WorkerFailed),
        exit: None,
        stderr: format!("spawn failed: {error}").into_bytes(),
        stderr_truncated: false,
        protocol_error: None,
        timed_out: false,
        from_worker: false,
        elapsed: since.elapsed(),
    }
}

/// Hand a started worker its request and supervise it to the end under `deadline`: the
/// answer as [`supervise_to_frame`] decides it, after the process is gone (the tail is awaited
/// here; `exit` is the observed one).
pub fn supervise_started(
    started: Started,
    request_frame: Vec<u8>,
    deadline: Instant,
    max_output: u64,
) -> Supervised {
    let (mut supervised, tail) = supervise_to_frame(started, request_frame, deadline, max_output);
    if let Some(tail) = tail {
        supervised.exit = tail.finish(TAIL_GRACE).exit;
    }
    supervised
}

/// Hand a started worker its request and supervise it until its answer is final.
///
/// **The rule.** A call's status is decided by what happened *before* the worker's complete,
/// well-formed response frame (header plus exactly the declared payload, within
/// `max_output`, nothing after it in the same read, and a frame that decodes as an envelope).
/// Once that frame is read before the deadline, the answer is final: it is returned at once
/// with a [`Tail`], and the process's exit is awaited off the critical path by whoever holds
/// the tail. Everything that happens before the frame decides exactly as before: the deadline
/// (`timeout`), the output bound (`output_limit`), an exit or a malformed or oversized frame
/// (`worker_failed` / `output_limit`), all decided at the end as before (no tail is returned,
/// the process is reaped). The worker writes its frame as its last act and `_exit`s, so after
/// the frame only the exit and the namespace teardown remain; anything abnormal there (no
/// exit within [`TAIL_GRACE`], a non-zero exit, bytes after the frame) can never change the
/// answer: the tail kills the process group and reports it as an anomaly.
pub fn supervise_to_frame(
    started: Started,
    request_frame: Vec<u8>,
    deadline: Instant,
    max_output: u64,
) -> (Supervised, Option<Tail>) {
    let Started {
        mut child, stdin, ..
    } = started;
    let started = Instant::now();
    let pgid = i32::try_from(child.id()).map(Pid::from_raw).ok();
    let (tx, rx) = mpsc::channel::<Event>();
    let writer = thread::spawn(move || {
        let pipe = match stdin {
            Stdin::Ready(pipe) => pipe,
            Stdin::Booting(handle) => handle.join().ok().flatten(),
        };
        if let Some(mut pipe) = pipe {
            write_chunks(&mut pipe, &request_frame);
        }
    });
    {
        let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
        let bound = max_output.saturating_add(HEADER_BYTES as u64 + 1);
        let tx = tx.clone();
        thread::spawn(move || read_outputs(stdout, stderr, bound, max_output, &tx));
    }
    {
        let tx = tx.clone();
        thread::spawn(move || {
            let _ = tx.send(Event::Exited(child.wait().ok()));
        });
    }
    drop(tx);

    let mut stdout: Option<(Vec<u8>, bool)> = None;
    let mut stderr: Option<Captured> = None;
    let mut exit: Option<Option<ExitStatus>> = None;
    let mut timed_out = false;
    while stdout.is_none() || exit.is_none() {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            timed_out = true;
            break;
        };
        match rx.recv_timeout(left) {
            Ok(Event::Frame(bytes, err)) => {
                if let Ok(envelope) = protocol::decode_response(&bytes, max_output) {
                    let supervised = Supervised {
                        envelope,
                        exit: None,
                        stderr: err.bytes,
                        stderr_truncated: err.truncated,
                        protocol_error: None,
                        timed_out: false,
                        from_worker: true,
                        elapsed: started.elapsed(),
                    };
                    let tail = Tail {
                        rx,
                        pgid,
                        writer,
                        frame_len: bytes.len(),
                        exited: exit,
                    };
                    return (supervised, Some(tail));
                }
                // A complete frame that does not decode: decided at the end, as before.
            }
            Ok(Event::Stdout(bytes, overflow)) => {
                stdout = Some((bytes, overflow));
                if overflow {
                    break;
                }
            }
            Ok(Event::Stderr(err)) => stderr = Some(err),
            Ok(Event::Exited(status)) => {
                exit = Some(status);
                // Descendants may still hold the pipes: drop them with the group.
                kill_group(pgid);
            }
            Err(RecvTimeoutError::Timeout) => {
                timed_out = true;
                break;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let elapsed = started.elapsed();
    kill_group(pgid);
    // Reap (the group is dead; this returns promptly) and collect stderr briefly.
    let reap_deadline = Instant::now() + Duration::from_secs(5);
    while exit.is_none() || stderr.is_none() {
        let limit = if exit.is_none() {
            reap_deadline
        } else {
            (Instant::now() + Duration::from_millis(100)).min(reap_deadline)
        };
        let Some(left) = limit.checked_duration_since(Instant::now()) else {
            break;
        };
        match rx.recv_timeout(left) {
            Ok(Event::Exited(status)) => exit = Some(status),
            Ok(Event::Stderr(err)) => stderr = Some(err),
            Ok(Event::Stdout(..) | Event::Frame(..)) => {}
            Err(_) => break,
        }
    }
    let _ = writer.join();
    let exit = exit.flatten();
    let Captured {
        bytes: stderr,
        truncated: stderr_truncated,
    } = stderr.unwrap_or_default();
    let (envelope, protocol_error, from_worker) = classify(timed_out, stdout, exit, max_output);
    let supervised = Supervised {
        envelope,
        exit,
        stderr,
        stderr_truncated,
        protocol_error,
        timed_out,
        from_worker,
        elapsed,
    };
    (supervised, None)
}

fn classify(
    timed_out: bool,
    stdout: Option<(Vec<u8>, bool)>,
    exit: Option<ExitStatus>,
    max_output: u64,
) -> (Envelope, Option<String>, bool) {
    let supervisor = |status, why: Option<String>| (Envelope::status(status), why, false);
    if timed_out {
        return supervisor(Status::Timeout, None);
    }
    let Some((bytes, overflow)) = stdout else {
        return supervisor(Status::WorkerFailed, Some("stdout never closed".into()));
    };
    if overflow {
        return supervisor(
            Status::OutputLimit,
            Some("worker wrote past the output limit".into()),
        );
    }
    match exit {
        Some(status) if status.success() => {}
        other => {
            let what = other.map_or("not reaped".to_string(), describe_exit);
            return supervisor(Status::WorkerFailed, Some(what));
        }
    }
    match protocol::decode_response(&bytes, max_output) {
        Ok(envelope) => (envelope, None, true),
        Err(e @ FrameError::Oversized(_)) => supervisor(Status::OutputLimit, Some(e.to_string())),
        Err(e) => supervisor(Status::WorkerFailed, Some(e.to_string())),
    }
}

/// `exit N` or `signal N`.
pub fn describe_exit(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        _ => "unknown".into(),
    }
}

/// Write all of `bytes` in 64 KiB chunks; false when the pipe closed first.
fn write_chunks(pipe: &mut ChildStdin, bytes: &[u8]) -> bool {
    bytes
        .chunks(64 * 1024)
        .all(|chunk| pipe.write_all(chunk).is_ok())
}

pub(crate) fn kill_group(pgid: Option<Pid>) {
    if let Some(pgid) = pgid {
        let _ = killpg(pgid, Signal::SIGKILL);
    }
}
