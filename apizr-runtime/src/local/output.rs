//! Reading a worker's stdout and stderr on one thread (`poll`), so the supervisor learns the
//! moment the response frame is complete, together with everything written to stderr before
//! it.
//!
//! Stdout is read up to `bound` bytes (`max_output + header + 1`: one byte more than the
//! largest allowed frame, so an overflow is seen without reading the rest). Stderr is kept up
//! to [`STDERR_CAPTURE_BYTES`] and drained to EOF.
//!
//! The frame is *complete* when exactly `header + declared` bytes have been read, the declared
//! length is within `max_output`, and nothing followed in the same read. Bytes arriving
//! together with the frame are not "after" it (their order cannot be told), so such output
//! is left to the end-of-stream decision, exactly as before. The worker flushes stderr before
//! it writes its frame, so once the frame is read every stderr byte the call wrote is already
//! in the pipe: a non-blocking drain then captures it for the report.

use std::io::Read;
use std::process::{ChildStderr, ChildStdout, ExitStatus};
use std::sync::mpsc::Sender;

use rustix::event::{PollFd, PollFlags, Timespec, poll};

use crate::protocol::HEADER_BYTES;

/// Captured stderr is kept up to this many bytes (the rest is read and dropped).
pub const STDERR_CAPTURE_BYTES: usize = 64 * 1024;
/// At the frame, stderr already in the pipe is drained up to this many bytes (a descendant
/// flooding it cannot hold the answer back; the rest is read by the tail).
const FRAME_DRAIN_BYTES: usize = 1024 * 1024;

/// What the supervisor hears about one worker.
pub(crate) enum Event {
    /// The response frame is complete (see the module comment), with the stderr captured so
    /// far. Sent at most once; stdout is still read afterwards.
    Frame(Vec<u8>, Captured),
    /// Stdout ended (EOF) or overflowed (`true`): everything read.
    Stdout(Vec<u8>, bool),
    /// Stderr reached EOF.
    Stderr(Captured),
    Exited(Option<ExitStatus>),
}

/// Bounded stderr: the kept bytes and whether more was written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Captured {
    pub bytes: Vec<u8>,
    pub truncated: bool,
}

impl Captured {
    fn keep(&mut self, chunk: &[u8]) {
        let room = STDERR_CAPTURE_BYTES.saturating_sub(self.bytes.len());
        let take = chunk.len().min(room);
        self.bytes
            .extend_from_slice(chunk.get(..take).unwrap_or_default());
        self.truncated |= take < chunk.len();
    }
}

/// Whether `buf` is exactly one frame whose declared length is within `max_output`.
fn complete_frame(buf: &[u8], max_output: u64) -> bool {
    let Some((header, rest)) = buf.split_first_chunk::<HEADER_BYTES>() else {
        return false;
    };
    let declared = u64::from_be_bytes(*header);
    declared <= max_output && rest.len() as u64 == declared
}

/// Read both streams until both end, reporting on `tx` (see [`Event`]).
pub(crate) fn read_outputs(
    mut stdout: Option<ChildStdout>,
    mut stderr: Option<ChildStderr>,
    bound: u64,
    max_output: u64,
    tx: &Sender<Event>,
) {
    let mut out = Vec::new();
    let mut err = Captured::default();
    let mut frame_sent = false;
    let mut chunk = vec![0u8; 64 * 1024];
    while stdout.is_some() || stderr.is_some() {
        let (out_ready, err_ready) = {
            let mut fds = Vec::with_capacity(2);
            if let Some(pipe) = &stdout {
                fds.push(PollFd::new(pipe, PollFlags::IN));
            }
            if let Some(pipe) = &stderr {
                fds.push(PollFd::new(pipe, PollFlags::IN));
            }
            match poll(&mut fds, None) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => break,
            }
            let ready: Vec<bool> = fds.iter().map(|f| !f.revents().is_empty()).collect();
            let out_ready = stdout.is_some() && ready.first().copied().unwrap_or(false);
            let err_index = usize::from(stdout.is_some());
            let err_ready = stderr.is_some() && ready.get(err_index).copied().unwrap_or(false);
            (out_ready, err_ready)
        };
        if out_ready && let Some(pipe) = &mut stdout {
            let room = usize::try_from(bound.saturating_sub(out.len() as u64))
                .unwrap_or(usize::MAX)
                .min(chunk.len());
            match pipe.read(chunk.get_mut(..room).unwrap_or_default()) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(Event::Stdout(std::mem::take(&mut out), false));
                    stdout = None;
                }
                Ok(n) => {
                    out.extend_from_slice(chunk.get(..n).unwrap_or_default());
                    if out.len() as u64 >= bound {
                        let _ = tx.send(Event::Stdout(std::mem::take(&mut out), true));
                        stdout = None;
                    } else if !frame_sent && complete_frame(&out, max_output) {
                        frame_sent = true;
                        drain_now(&mut stderr, &mut err, &mut chunk, tx);
                        let _ = tx.send(Event::Frame(out.clone(), err.clone()));
                    }
                }
            }
        }
        if err_ready && let Some(pipe) = &mut stderr {
            match pipe.read(&mut chunk) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(Event::Stderr(std::mem::take(&mut err)));
                    stderr = None;
                }
                Ok(n) => err.keep(chunk.get(..n).unwrap_or_default()),
            }
        }
    }
}

/// Read what stderr holds right now, without waiting (see [`FRAME_DRAIN_BYTES`]).
fn drain_now(
    stderr: &mut Option<ChildStderr>,
    err: &mut Captured,
    chunk: &mut [u8],
    tx: &Sender<Event>,
) {
    let zero = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let mut drained = 0;
    while drained < FRAME_DRAIN_BYTES {
        let Some(pipe) = stderr else {
            return;
        };
        let readable = {
            let mut fds = [PollFd::new(&*pipe, PollFlags::IN)];
            matches!(poll(&mut fds, Some(&zero)), Ok(n) if n > 0)
        };
        if !readable {
            return;
        }
        match pipe.read(chunk) {
            Ok(0) | Err(_) => {
                let _ = tx.send(Event::Stderr(err.clone()));
                *stderr = None;
            }
            Ok(n) => {
                drained += n;
                err.keep(chunk.get(..n).unwrap_or_default());
            }
        }
    }
}
