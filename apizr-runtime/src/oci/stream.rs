//! The attached container: write the request frame to its stdin, read its multiplexed
//! stdout/stderr, all under the call deadline and the output bound.
//!
//! Attach (`POST /containers/{id}/attach?stream=1&stdin=1&stdout=1&stderr=1`, upgraded) happens
//! before start, so no output is lost. The stream carries 8-byte headers (`[kind,0,0,0,len
//! u32 BE]`) per chunk. Stdin is half-closed after the frame; with `StdinOnce` the engine then
//! closes the worker's stdin, exactly like a pipe. Stdout is bounded to `max_output + 9` bytes
//! (the supervisor's rule), stderr is captured up to 64 KiB and otherwise drained.
//!
//! A pooled container is read before its request exists: [`Attached::read_first_line`] reads
//! until stderr holds one whole line (the attestation, written before the worker reads stdin)
//! and keeps everything it read for the exchange, so the call sees exactly the bytes a fresh
//! container would have produced.

use std::io::{BufReader, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::thread;
use std::time::Instant;

use super::engine::Engine;
use super::http::{self, HttpError};
use crate::local::supervisor::STDERR_CAPTURE_BYTES;
use crate::protocol::HEADER_BYTES;

/// What came out of the container before EOF, the limit, or the deadline.
#[derive(Debug, Default)]
pub struct Streamed {
    pub stdout: Vec<u8>,
    /// Stdout reached `max_output + 9` bytes (more than a legal frame).
    pub overflow: bool,
    pub stderr: Vec<u8>,
    pub stderr_truncated: bool,
    pub timed_out: bool,
    /// A transport failure other than the deadline.
    pub error: Option<String>,
    /// The stream ended (the container closed its output).
    pub eof: bool,
}

impl Streamed {
    fn stopped(&self) -> bool {
        self.eof || self.timed_out || self.overflow || self.error.is_some()
    }
}

/// An attached container (started or not).
pub struct Attached {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    /// Output read before the request was sent.
    early: Streamed,
}

/// Attach to `id` (stdin, stdout, stderr, stream).
pub fn attach(engine: &Engine, id: &str, deadline: Instant) -> Result<Attached, HttpError> {
    let path = engine.path(&format!(
        "/containers/{}/attach?stream=1&stdin=1&stdout=1&stderr=1",
        http::encode_query(id)
    ));
    let (reader, writer) = http::upgrade(engine.socket(), "POST", &path, deadline)?;
    Ok(Attached {
        reader,
        writer,
        early: Streamed::default(),
    })
}

impl Attached {
    /// Read until stderr holds a whole first line, the stream stops, or `deadline`; every byte
    /// read stays buffered for [`Attached::exchange`]. The output so far is returned for
    /// inspection (a worker that writes to stdout before its request is suspect).
    pub fn read_first_line(&mut self, deadline: Instant) -> &mut Streamed {
        while !self.early.stderr.contains(&b'\n') && !self.early.stopped() {
            // Nothing legitimate comes before the request but one short line.
            read_chunk(
                &mut self.reader,
                deadline,
                HEADER_BYTES as u64,
                &mut self.early,
            );
        }
        &mut self.early
    }

    /// Send `frame` (from a thread, then half-close) and read until EOF, overflow or deadline.
    pub fn exchange(self, frame: Vec<u8>, max_output: u64, deadline: Instant) -> Streamed {
        self.exchange_until(frame, max_output, deadline, Until::Eof)
            .0
    }

    /// As [`Attached::exchange`], but with [`Until::Frame`] it stops as soon as stdout holds
    /// one whole frame (the declared length after the 8-byte header) and returns the rest of
    /// the stream, to be read to its end later.
    pub fn exchange_until(
        self,
        frame: Vec<u8>,
        max_output: u64,
        deadline: Instant,
        until: Until,
    ) -> (Streamed, Option<Rest>) {
        let Attached {
            mut reader,
            writer,
            early: mut out,
        } = self;
        let mut writer_for_thread = writer;
        let sender = thread::spawn(move || {
            for chunk in frame.chunks(64 * 1024) {
                if writer_for_thread.write_all(chunk).is_err() {
                    break;
                }
            }
            let _ = writer_for_thread.shutdown(Shutdown::Write);
        });
        let bound = max_output.saturating_add(HEADER_BYTES as u64 + 1);
        let mut rest = Rest {
            reader,
            sender,
            bound,
        };
        while !out.stopped() {
            read_chunk(&mut rest.reader, deadline, bound, &mut out);
            if until == Until::Frame && whole_frame(&out.stdout) {
                return (out, Some(rest));
            }
        }
        reader = rest.reader;
        // The writer ends on its own once the connection is dropped by our caller.
        let _ = reader.get_ref().shutdown(Shutdown::Both);
        let _ = rest.sender.join();
        (out, None)
    }
}

/// Where [`Attached::exchange_until`] stops reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// The end of the stream (the container closed its output).
    Eof,
    /// The first whole response frame on stdout.
    Frame,
}

/// Whether `stdout` starts with a whole frame: a header and at least the length it declares.
pub fn whole_frame(stdout: &[u8]) -> bool {
    stdout
        .split_first_chunk::<HEADER_BYTES>()
        .is_some_and(|(header, body)| u64::from_be_bytes(*header) <= body.len() as u64)
}

/// The part of an exchange not read yet (after the first whole frame).
pub struct Rest {
    reader: BufReader<UnixStream>,
    sender: thread::JoinHandle<()>,
    bound: u64,
}

impl Rest {
    /// Read the rest of the stream into `out` (to its end, the output bound, or `deadline`).
    pub fn read_to_end(mut self, out: &mut Streamed, deadline: Instant) {
        while !out.stopped() {
            read_chunk(&mut self.reader, deadline, self.bound, out);
        }
        let _ = self.reader.get_ref().shutdown(Shutdown::Both);
        let _ = self.sender.join();
    }
}

/// Read one multiplexed chunk into `out` (stdout bounded by `bound` bytes, stderr by the
/// capture size); sets `eof`, `timed_out`, `overflow` or `error` when the stream stops.
fn read_chunk(
    reader: &mut BufReader<UnixStream>,
    deadline: Instant,
    bound: u64,
    out: &mut Streamed,
) {
    if http::set_deadline(reader.get_ref(), deadline).is_err() {
        out.timed_out = true;
        return;
    }
    let mut header = [0u8; 8];
    match read_exact_or_eof(reader, &mut header) {
        Ok(false) => {
            out.eof = true;
            return;
        }
        Ok(true) => {}
        Err(e) => return record(out, e),
    }
    let kind = header[0];
    let len = u64::from(u32::from_be_bytes([
        header[4], header[5], header[6], header[7],
    ]));
    let mut remaining = len;
    let mut chunk = [0u8; 8192];
    while remaining > 0 {
        if http::set_deadline(reader.get_ref(), deadline).is_err() {
            out.timed_out = true;
            return;
        }
        let want = usize::try_from(remaining.min(chunk.len() as u64)).unwrap_or(0);
        let Some(buf) = chunk.get_mut(..want) else {
            return;
        };
        let n = match reader.read(buf) {
            Ok(0) => {
                out.error = Some("stream ended inside a chunk".into());
                return;
            }
            Ok(n) => n,
            Err(e) => return record(out, http::timeout_as_deadline(e)),
        };
        remaining -= n as u64;
        let data = buf.get(..n).unwrap_or_default();
        if kind == 1 {
            let room = usize::try_from(bound.saturating_sub(out.stdout.len() as u64))
                .unwrap_or(usize::MAX);
            out.stdout
                .extend_from_slice(data.get(..n.min(room)).unwrap_or_default());
            if out.stdout.len() as u64 >= bound {
                out.overflow = true;
                return;
            }
        } else {
            let room = STDERR_CAPTURE_BYTES.saturating_sub(out.stderr.len());
            let take = n.min(room);
            out.stderr
                .extend_from_slice(data.get(..take).unwrap_or_default());
            out.stderr_truncated |= take < n;
        }
    }
}

fn record(out: &mut Streamed, e: HttpError) {
    match e {
        HttpError::Deadline => out.timed_out = true,
        other => out.error = Some(other.to_string()),
    }
}

/// Fill `buf`; `Ok(false)` on a clean EOF before the first byte.
fn read_exact_or_eof(reader: &mut impl Read, buf: &mut [u8]) -> Result<bool, HttpError> {
    let mut filled = 0;
    while filled < buf.len() {
        let Some(rest) = buf.get_mut(filled..) else {
            break;
        };
        match reader.read(rest) {
            Ok(0) if filled == 0 => return Ok(false),
            Ok(0) => return Err(HttpError::Malformed("stream ended inside a header".into())),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(http::timeout_as_deadline(e)),
        }
    }
    Ok(true)
}
