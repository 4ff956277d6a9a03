//! One persistent interpreter process (a session's): started once in the local sandbox with
//! the bootstrap in session mode, then fed one call after another.
//!
//! A call is one frame on stdin (an end marker nobody else has seen, then the code); its output
//! is everything the streams carry before the marker, and its status follows the marker on
//! stdout. Output is bounded per call as in one-shot runs. At the call's deadline the whole
//! process group — with the launcher, the whole PID namespace — is killed: the session ends
//! (its state cannot be trusted half-way through a call), and the partial output is kept.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::interpreter::bootstrap::{self, SESSION_MARKER_LEN};
use crate::interpreter::capture::Captured;
use crate::interpreter::process::code_of;
use crate::local::process::{Held, WorkerProcess};

/// Bytes held back while looking for the marker line (`<marker>:<status>\n`).
const HOLD_BACK: usize = SESSION_MARKER_LEN + 16;

enum Chunk {
    Out(Vec<u8>),
    Err(Vec<u8>),
    OutEnd,
    ErrEnd,
}

/// A live session process.
pub(crate) struct Persistent {
    child: Child,
    pgid: Option<Pid>,
    stdin: ChildStdin,
    chunks: Receiver<Chunk>,
    held: Option<Held>,
}

/// How one call ended.
#[derive(Debug, Default)]
pub(crate) struct CallOutput {
    pub stdout: Captured,
    pub stderr: Captured,
    /// The call's status; `None` when it timed out or the process died.
    pub status: Option<i32>,
    pub timed_out: bool,
    /// The process ended during the call (its exit code), so the session is over.
    pub died: Option<Option<i32>>,
}

impl Persistent {
    /// Take `process` (started by the local backend's `Factory::start` in the session's
    /// workspace) and send it the set-up request (`frame`); what it holds is released at the
    /// end (or at once when the set-up fails).
    pub fn start(process: WorkerProcess, frame: &[u8]) -> Result<Persistent, String> {
        let fail = |message: String, held: Held| {
            let cleanup = held.release();
            if cleanup.is_empty() {
                message
            } else {
                format!("{message}; {}", cleanup.join("; "))
            }
        };
        let (started, held, _) = process.split();
        let mut child = started.into_child();
        let pgid = i32::try_from(child.id()).ok().map(Pid::from_raw);
        let (tx, chunks) = mpsc::channel();
        let streams = (child.stdout.take(), child.stderr.take(), child.stdin.take());
        let (Some(out), Some(err), Some(mut stdin)) = streams else {
            kill(pgid);
            let _ = child.wait();
            return Err(fail("the session's pipes are missing".into(), held));
        };
        pump(out, tx.clone(), Chunk::Out, Chunk::OutEnd);
        pump(err, tx, Chunk::Err, Chunk::ErrEnd);
        if let Err(e) = stdin.write_all(frame) {
            kill(pgid);
            let _ = child.wait();
            return Err(fail(format!("cannot send the session's set-up: {e}"), held));
        }
        Ok(Persistent {
            child,
            pgid,
            stdin,
            chunks,
            held: Some(held),
        })
    }

    /// The host PID of the session's first process (the launcher, or the interpreter).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The uid the code runs as (a per-call identity on a root host).
    pub fn uid(&self) -> Option<u32> {
        self.held.as_ref().and_then(|h| h.uid())
    }

    /// Run `code` until its end marker or `deadline`; keep `keep` bytes per stream.
    pub fn call(&mut self, code: &str, deadline: Instant, keep: (u64, u64)) -> CallOutput {
        let marker = fresh_marker();
        let mut out = Stream::new(&marker, keep.0);
        let mut err = Stream::new(&marker, keep.1);
        let mut result = CallOutput::default();
        if self
            .stdin
            .write_all(&bootstrap::session_call(&marker, code))
            .is_err()
        {
            result.died = Some(self.end());
            return result;
        }
        while !(out.done() && err.done()) {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                result.timed_out = true;
                break;
            };
            match self.chunks.recv_timeout(left) {
                Ok(Chunk::Out(data)) => out.feed(&data),
                Ok(Chunk::Err(data)) => err.feed(&data),
                Ok(Chunk::OutEnd) => out.ended = true,
                Ok(Chunk::ErrEnd) => err.ended = true,
                Err(RecvTimeoutError::Timeout) => {
                    result.timed_out = true;
                    break;
                }
                Err(RecvTimeoutError::Disconnected) => {
                    out.ended = true;
                    err.ended = true;
                }
            }
        }
        if result.timed_out || out.status.is_none() || err.status.is_none() {
            // Timed out, or the process ended mid-call: the session is over.
            let code = self.end();
            if !result.timed_out {
                result.died = Some(code);
            }
        } else {
            result.status = out.status;
        }
        result.stdout = out.finish();
        result.stderr = err.finish();
        result
    }

    /// Whether the session's memory cgroup recorded an OOM kill.
    pub fn oom_killed(&self) -> bool {
        self.held.as_ref().is_some_and(Held::oom_killed)
    }

    /// Kill the whole tree, reap it, release what it held. Returns the exit code (when it
    /// could be reaped) and what could not be cleaned up.
    pub fn close(mut self) -> Vec<String> {
        self.end();
        self.held.take().map(Held::release).unwrap_or_default()
    }

    fn end(&mut self) -> Option<i32> {
        kill(self.pgid);
        let status = self.child.wait().ok().and_then(code_of);
        // The readers see EOF once every holder of the pipes is dead.
        let until = Instant::now() + Duration::from_secs(2);
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            match self.chunks.recv_timeout(left) {
                Ok(_) => {}
                Err(_) => break,
            }
        }
        status
    }
}

impl Drop for Persistent {
    fn drop(&mut self) {
        if let Some(held) = self.held.take() {
            kill(self.pgid);
            let _ = self.child.wait();
            let _ = held.release();
        }
    }
}

/// One stream of one call: the kept output and, once seen, the status after the marker.
struct Stream {
    marker: Vec<u8>,
    keep: u64,
    captured: Captured,
    pending: Vec<u8>,
    status: Option<i32>,
    ended: bool,
}

impl Stream {
    fn new(marker: &str, keep: u64) -> Stream {
        Stream {
            marker: marker.as_bytes().to_vec(),
            keep,
            captured: Captured::default(),
            pending: Vec::new(),
            status: None,
            ended: false,
        }
    }

    fn done(&self) -> bool {
        self.status.is_some() || self.ended
    }

    fn feed(&mut self, data: &[u8]) {
        if self.status.is_some() {
            return;
        }
        self.pending.extend_from_slice(data);
        if let Some(at) = find(&self.pending, &self.marker) {
            let rest = self
                .pending
                .get(at + self.marker.len()..)
                .unwrap_or_default();
            let Some(end) = rest.iter().position(|&b| b == b'\n') else {
                return;
            };
            let status = rest
                .get(..end)
                .and_then(|line| line.strip_prefix(b":"))
                .and_then(|n| std::str::from_utf8(n).ok())
                .and_then(|n| n.parse::<i32>().ok());
            let head: Vec<u8> = self.pending.drain(..at).collect();
            self.captured.push(&head, self.keep);
            self.pending.clear();
            self.status = Some(status.unwrap_or(1));
            return;
        }
        let commit = self.pending.len().saturating_sub(HOLD_BACK);
        let head: Vec<u8> = self.pending.drain(..commit).collect();
        self.captured.push(&head, self.keep);
    }

    fn finish(mut self) -> Captured {
        let rest = std::mem::take(&mut self.pending);
        self.captured.push(&rest, self.keep);
        self.captured
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn pump<R: Read + Send + 'static>(
    mut reader: R,
    tx: mpsc::Sender<Chunk>,
    wrap: fn(Vec<u8>) -> Chunk,
    end: Chunk,
) {
    thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if tx
                        .send(wrap(buf.get(..n).unwrap_or_default().to_vec()))
                        .is_err()
                    {
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = tx.send(end);
    });
}

/// A marker the code has not seen before its call (32 hex digits from the OS's generator).
fn fresh_marker() -> String {
    let mut bytes = [0u8; SESSION_MARKER_LEN / 2];
    if rustix::rand::getrandom(&mut bytes, rustix::rand::GetRandomFlags::empty()).is_err() {
        // Unique enough without the generator: time and a counter.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        bytes.copy_from_slice(&nanos.to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn kill(pgid: Option<Pid>) {
    if let Some(pgid) = pgid {
        let _ = killpg(pgid, Signal::SIGKILL);
    }
}
