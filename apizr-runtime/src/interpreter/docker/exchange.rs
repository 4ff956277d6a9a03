//! Talking to a started container: the request on its stdin, its multiplexed stdout/stderr
//! captured (bounded) until the bootstrap's end marker arrives on both streams, then — with
//! the container still running — the workspace archive, and only then stdin closed.
//!
//! The marker carries a nonce sent as a second frame that only the bootstrap's parent process
//! reads (the code runs in a child that closed stdin before any user code ran), and it is
//! written only after every other process of the container was killed: nothing the code did
//! can end the exchange early.

use std::io::{BufReader, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::time::Instant;

use super::super::capture::Captured;
use crate::oci::http::{self, HttpError};

/// The streams of one run and how they ended.
#[derive(Debug, Default)]
pub(crate) struct Streams {
    pub stdout: Captured,
    pub stderr: Captured,
    /// The child's exit status, from the marker (`128 + signal` for a signal).
    pub status: Option<i32>,
    /// The signal that ended the child, from the marker.
    pub signal: Option<i32>,
    /// Whether the workspace held any entry when the code ended (from the marker): the
    /// archive is fetched only then.
    pub files: bool,
    /// Whether the kernel killed a task of the container at its memory limit (the container
    /// cgroup's own counter, from the marker).
    pub oom_killed: bool,
    /// The kernel's count of OOM kills in the container so far (sessions compare counts).
    pub oom_kills: i32,
    /// A session's worker is gone (the marker line's optional last field): the session is over.
    pub ended: bool,
    pub timed_out: bool,
    pub error: Option<String>,
}

/// An attached container's connection.
pub(crate) struct Attached {
    pub reader: BufReader<UnixStream>,
    pub writer: UnixStream,
}

/// Per stream: the rolling tail in which the marker is looked for.
#[derive(Default)]
struct Tail {
    bytes: Vec<u8>,
    done: Option<Ending>,
}

/// What the marker line says: `<marker>:<status>:<signal>:<files>:<oom kills>\n`, and in a
/// session `…:<ended>\n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ending {
    status: i32,
    signal: i32,
    files: bool,
    oom_kills: i32,
    ended: bool,
    /// The whole line's length (stripped from the captured output).
    len: usize,
}

const TAIL_BYTES: usize = 256;

impl Tail {
    fn push(&mut self, data: &[u8], marker: &[u8]) {
        self.bytes.extend_from_slice(data);
        if self.bytes.len() > TAIL_BYTES {
            let cut = self.bytes.len() - TAIL_BYTES;
            self.bytes.drain(..cut);
        }
        // The marker line at the very end.
        if self.bytes.last() != Some(&b'\n') {
            return;
        }
        let body = &self.bytes[..self.bytes.len() - 1];
        let Some(at) = find(body, marker) else { return };
        let rest = &body[at + marker.len()..];
        let Some(text) = rest
            .strip_prefix(b":")
            .and_then(|r| std::str::from_utf8(r).ok())
        else {
            return;
        };
        let fields: Vec<Option<i32>> = text.split(':').map(|f| f.parse().ok()).collect();
        let (status, signal, files, oom_kills, ended) = match fields[..] {
            [Some(s), Some(g), Some(f), Some(o)] => (s, g, f, o, 0),
            [Some(s), Some(g), Some(f), Some(o), Some(e)] => (s, g, f, o, e),
            _ => return,
        };
        self.done = Some(Ending {
            status,
            signal,
            files: files != 0,
            oom_kills,
            ended: ended != 0,
            len: marker.len() + 1 + text.len() + 1,
        });
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// The marker line for `nonce`, as the bootstrap writes it (before `:<status>\n`).
pub(crate) fn marker(nonce: &str) -> Vec<u8> {
    format!("\n@@apizr-done:{nonce}").into_bytes()
}

impl Attached {
    /// Send `input` (without closing stdin), then read until both markers, EOF or `deadline`.
    pub fn run(
        &mut self,
        input: &[u8],
        nonce: &str,
        deadline: Instant,
        keep: (u64, u64),
    ) -> Streams {
        let mut out = Streams::default();
        if let Err(e) = http::set_deadline(&self.writer, deadline)
            .map_err(|e| e.to_string())
            .and_then(|()| self.writer.write_all(input).map_err(|e| e.to_string()))
        {
            out.error = Some(format!("writing the request: {e}"));
            return out;
        }
        let marker = marker(nonce);
        let (mut tail_out, mut tail_err) = (Tail::default(), Tail::default());
        let mut header = [0u8; 8];
        let mut chunk = vec![0u8; 64 * 1024];
        while tail_out.done.is_none() || tail_err.done.is_none() {
            if http::set_deadline(self.reader.get_ref(), deadline).is_err() {
                out.timed_out = true;
                break;
            }
            match read_full(&mut self.reader, &mut header) {
                Ok(true) => {}
                Ok(false) => {
                    out.error = Some("the container's output ended before the run finished".into());
                    break;
                }
                Err(HttpError::Deadline) => {
                    out.timed_out = true;
                    break;
                }
                Err(e) => {
                    out.error = Some(e.to_string());
                    break;
                }
            }
            let mut left = u64::from(u32::from_be_bytes([
                header[4], header[5], header[6], header[7],
            ]));
            while left > 0 {
                let want = usize::try_from(left.min(chunk.len() as u64)).unwrap_or(chunk.len());
                let buf = chunk.get_mut(..want).unwrap_or_default();
                let n = match self.reader.read(buf) {
                    Ok(0) => {
                        out.error = Some("stream ended inside a chunk".into());
                        break;
                    }
                    Ok(n) => n,
                    Err(e) => {
                        match http::timeout_as_deadline(e) {
                            HttpError::Deadline => out.timed_out = true,
                            other => out.error = Some(other.to_string()),
                        }
                        break;
                    }
                };
                left -= n as u64;
                let data = buf.get(..n).unwrap_or_default();
                if header[0] == 2 {
                    out.stderr.push(data, keep.1);
                    tail_err.push(data, &marker);
                } else {
                    out.stdout.push(data, keep.0);
                    tail_out.push(data, &marker);
                }
            }
            if out.timed_out || out.error.is_some() {
                break;
            }
        }
        if let (Some(a), Some(_)) = (tail_out.done, tail_err.done) {
            out.status = Some(a.status);
            out.signal = (a.signal != 0).then_some(a.signal);
            out.files = a.files;
            out.oom_killed = a.oom_kills > 0;
            out.oom_kills = a.oom_kills;
            out.ended = a.ended;
            let strip = |c: &mut Captured| {
                c.total = c.total.saturating_sub(a.len as u64);
                if c.head.len() as u64 > c.total {
                    c.head.truncate(usize::try_from(c.total).unwrap_or(0));
                }
            };
            strip(&mut out.stdout);
            strip(&mut out.stderr);
        }
        out
    }

    /// Close the container's stdin: its bootstrap exits with the code's status.
    pub fn release(self) {
        let _ = self.writer.shutdown(Shutdown::Write);
        drop(self.reader);
    }
}

fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> Result<bool, HttpError> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(buf.get_mut(filled..).unwrap_or_default()) {
            Ok(0) if filled == 0 => return Ok(false),
            Ok(0) => return Err(HttpError::Malformed("stream ended inside a header".into())),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(http::timeout_as_deadline(e)),
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_is_found_across_chunks_only_at_the_end() {
        let m = marker("abc");
        let mut t = Tail::default();
        t.push(b"user output\n", &m);
        t.push(b"\n@@apizr-do", &m);
        assert_eq!(t.done, None);
        t.push(b"ne:abc:137:9:1:2\n", &m);
        assert_eq!(
            t.done,
            Some(Ending {
                status: 137,
                signal: 9,
                files: true,
                oom_kills: 2,
                ended: false,
                len: m.len() + 11
            })
        );
        let mut session = Tail::default();
        session.push(b"out\n@@apizr-done:abc:3:0:0:0:1\n", &m);
        assert!(session.done.is_some_and(|d| d.ended && d.status == 3));
        let mut forged = Tail::default();
        forged.push(b"\n@@apizr-done:wrong:0:0:0:0\n", &m);
        assert_eq!(forged.done, None);
    }
}
