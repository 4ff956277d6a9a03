//! The attached container: write the request frame to its stdin, read its multiplexed
//! stdout/stderr, all under the call deadline and the output bound.
//!
//! Attach (`POST /containers/{id}/attach?stream=1&stdin=1&stdout=1&stderr=1`, upgraded) happens
//! before start, so no output is lost. The stream carries 8-byte headers (`[kind,0,0,0,len
//! u32 BE]`) per chunk. Stdin is half-closed after the frame; with `StdinOnce` the engine then
//! closes the worker's stdin, exactly like a pipe. Stdout is bounded to `max_output + 9` bytes
//! (the supervisor's rule), stderr is captured up to 64 KiB and otherwise drained.

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
}

/// An attached, not yet started container.
pub struct Attached {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

/// Attach to `id` (stdin, stdout, stderr, stream).
pub fn attach(engine: &Engine, id: &str, deadline: Instant) -> Result<Attached, HttpError> {
    let path = engine.path(&format!(
        "/containers/{}/attach?stream=1&stdin=1&stdout=1&stderr=1",
        http::encode_query(id)
    ));
    let (reader, writer) = http::upgrade(engine.socket(), "POST", &path, deadline)?;
    Ok(Attached { reader, writer })
}

impl Attached {
    /// Send `frame` (from a thread, then half-close) and read until EOF, overflow or deadline.
    pub fn exchange(self, frame: Vec<u8>, max_output: u64, deadline: Instant) -> Streamed {
        let Attached { mut reader, writer } = self;
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
        let mut out = Streamed::default();
        let mut header = [0u8; 8];
        loop {
            if http::set_deadline(reader.get_ref(), deadline).is_err() {
                out.timed_out = true;
                break;
            }
            match read_exact_or_eof(&mut reader, &mut header) {
                Ok(false) => break,
                Ok(true) => {}
                Err(e) => {
                    record(&mut out, e);
                    break;
                }
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
                    break;
                }
                let want = usize::try_from(remaining.min(chunk.len() as u64)).unwrap_or(0);
                let Some(buf) = chunk.get_mut(..want) else {
                    break;
                };
                let n = match reader.read(buf) {
                    Ok(0) => {
                        out.error = Some("stream ended inside a chunk".into());
                        break;
                    }
                    Ok(n) => n,
                    Err(e) => {
                        record(&mut out, http::timeout_as_deadline(e));
                        break;
                    }
                };
                remaining -= n as u64;
                let data = buf.get(..n).unwrap_or_default();
                match kind {
                    1 => {
                        let room = usize::try_from(bound.saturating_sub(out.stdout.len() as u64))
                            .unwrap_or(usize::MAX);
                        out.stdout
                            .extend_from_slice(data.get(..n.min(room)).unwrap_or_default());
                        if out.stdout.len() as u64 >= bound {
                            out.overflow = true;
                        }
                    }
                    _ => {
                        let room = STDERR_CAPTURE_BYTES.saturating_sub(out.stderr.len());
                        let take = n.min(room);
                        out.stderr
                            .extend_from_slice(data.get(..take).unwrap_or_default());
                        out.stderr_truncated |= take < n;
                    }
                }
                if out.overflow {
                    break;
                }
            }
            if out.timed_out || out.overflow || out.error.is_some() {
                break;
            }
        }
        // The writer ends on its own once the connection is dropped by our caller.
        let _ = reader.get_ref().shutdown(Shutdown::Both);
        let _ = sender.join();
        out
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
