//! A minimal HTTP/1.1 client over a unix socket, just enough for the Docker Engine API.
//!
//! Why not hyper/bollard: the runtime is synchronous (threads, no async runtime), every call
//! needs a hard deadline, the attach stream must be half-closed after the request frame, and
//! every path must carry the negotiated `/v1.NN` prefix (bollard sends unversioned paths).
//! One request per connection (`Connection: close`), bodies by `Content-Length`, chunked
//! transfer coding, or EOF. Responses are bounded in size.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Largest response body accepted from the engine (image inspect is a few KiB).
pub const MAX_BODY: usize = 16 * 1024 * 1024;
const MAX_HEADER_LINE: usize = 64 * 1024;
const MAX_HEADERS: usize = 100;

/// A transport-level failure: the engine is unreachable or spoke something else than HTTP.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("connect {path}: {source}")]
    Connect { path: PathBuf, source: io::Error },
    #[error("i/o: {0}")]
    Io(#[from] io::Error),
    #[error("deadline passed")]
    Deadline,
    #[error("malformed response: {0}")]
    Malformed(String),
}

/// One response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The object asked about does not exist. Docker says 404; Podman says 404 too, except
    /// while a container is being removed, when it answers 500 with its "no such container"
    /// cause — both mean "gone", and treating the second as an error fails callers that poll
    /// for removal.
    pub fn is_missing(&self) -> bool {
        self.status == 404 || (self.status == 500 && self.message().contains("no such container"))
    }

    /// The engine's `{"message": …}` error text, or the raw body.
    pub fn message(&self) -> String {
        serde_json::from_slice::<serde_json::Value>(&self.body)
            .ok()
            .and_then(|v| v.get("message")?.as_str().map(str::to_string))
            .unwrap_or_else(|| String::from_utf8_lossy(&self.body).trim().to_string())
    }
}

/// A request body.
pub enum Body<'a> {
    None,
    Json(&'a serde_json::Value),
    /// Raw bytes with a content type (tar archives).
    Bytes(&'a [u8], &'static str),
    /// A streamed file of known length.
    File(&'a Path, u64, &'static str),
}

/// Open a connection with read/write timeouts bounded by `deadline`.
pub fn connect(socket: &Path, deadline: Instant) -> Result<UnixStream, HttpError> {
    let stream = UnixStream::connect(socket).map_err(|source| HttpError::Connect {
        path: socket.to_path_buf(),
        source,
    })?;
    set_deadline(&stream, deadline)?;
    Ok(stream)
}

/// Bound every further read and write on `stream` by `deadline`.
pub fn set_deadline(stream: &UnixStream, deadline: Instant) -> Result<(), HttpError> {
    let left = deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
        .ok_or(HttpError::Deadline)?;
    stream.set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
    stream.set_write_timeout(Some(left.max(Duration::from_millis(1))))?;
    Ok(())
}

fn write_head(
    stream: &mut UnixStream,
    method: &str,
    path: &str,
    body: &Body<'_>,
    upgrade: bool,
) -> Result<Option<Vec<u8>>, HttpError> {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: docker\r\nUser-Agent: apizr\r\n");
    if upgrade {
        head.push_str("Connection: Upgrade\r\nUpgrade: tcp\r\n");
    } else {
        head.push_str("Connection: close\r\n");
    }
    let inline = match body {
        Body::None => None,
        Body::Json(v) => Some((
            serde_json::to_vec(v).unwrap_or_default(),
            "application/json",
        )),
        Body::Bytes(b, ct) => Some((b.to_vec(), *ct)),
        Body::File(_, len, ct) => {
            head.push_str(&format!("Content-Type: {ct}\r\nContent-Length: {len}\r\n"));
            None
        }
    };
    if let Some((bytes, ct)) = &inline {
        head.push_str(&format!(
            "Content-Type: {ct}\r\nContent-Length: {}\r\n",
            bytes.len()
        ));
    } else if matches!(body, Body::None) && method != "GET" && method != "HEAD" {
        head.push_str("Content-Length: 0\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    Ok(inline.map(|(b, _)| b))
}

fn write_body(
    stream: &mut UnixStream,
    body: &Body<'_>,
    inline: Option<Vec<u8>>,
) -> Result<(), HttpError> {
    if let Some(bytes) = inline {
        stream.write_all(&bytes)?;
    } else if let Body::File(path, len, _) = body {
        let file = std::fs::File::open(path)?;
        let copied = io::copy(&mut file.take(*len), stream)?;
        if copied != *len {
            return Err(HttpError::Malformed(format!(
                "{} shrank while sending",
                path.display()
            )));
        }
    }
    stream.flush()?;
    Ok(())
}

/// Send one request and read the whole response (bounded by [`MAX_BODY`]).
pub fn request(
    socket: &Path,
    method: &str,
    path: &str,
    body: Body<'_>,
    deadline: Instant,
) -> Result<Response, HttpError> {
    send(socket, method, path, body, deadline)?.response(deadline)
}

/// A request that was sent and whose answer has not been read yet (a long poll such as
/// `wait`, opened before the event it waits for).
#[derive(Debug)]
pub struct Sent {
    reader: BufReader<UnixStream>,
    head_only: bool,
}

/// Send one request without reading its answer.
pub fn send(
    socket: &Path,
    method: &str,
    path: &str,
    body: Body<'_>,
    deadline: Instant,
) -> Result<Sent, HttpError> {
    let mut stream = connect(socket, deadline)?;
    let inline = write_head(&mut stream, method, path, &body, false)?;
    write_body(&mut stream, &body, inline)?;
    Ok(Sent {
        reader: BufReader::new(stream),
        head_only: method == "HEAD",
    })
}

impl Sent {
    /// Read the whole response by `deadline`.
    pub fn response(mut self, deadline: Instant) -> Result<Response, HttpError> {
        set_deadline(self.reader.get_ref(), deadline)?;
        let (status, headers) = read_head(&mut self.reader)?;
        let body = if self.head_only || status == 204 || status == 304 {
            Vec::new()
        } else {
            read_body(&mut self.reader, &headers)?
        };
        Ok(Response {
            status,
            headers,
            body,
        })
    }
}

/// Send a request that upgrades the connection (`attach`); on `101`/`200` the returned
/// reader/stream pair is the raw multiplexed stream. Bytes the reader already buffered are
/// kept in the `BufReader`.
pub fn upgrade(
    socket: &Path,
    method: &str,
    path: &str,
    deadline: Instant,
) -> Result<(BufReader<UnixStream>, UnixStream), HttpError> {
    let mut stream = connect(socket, deadline)?;
    write_head(&mut stream, method, path, &Body::None, true)?;
    stream.flush()?;
    let writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let (status, headers) = read_head(&mut reader)?;
    if status != 101 && status != 200 {
        let body = read_body(&mut reader, &headers).unwrap_or_default();
        let resp = Response {
            status,
            headers,
            body,
        };
        return Err(HttpError::Malformed(format!(
            "attach answered {status}: {}",
            resp.message()
        )));
    }
    Ok((reader, writer))
}

/// Send a bodiless request and return the status with the response body as a stream (for
/// archives larger than [`MAX_BODY`]; the caller bounds what it reads). An error status
/// answers with its message.
pub fn request_streaming(
    socket: &Path,
    method: &str,
    path: &str,
    deadline: Instant,
) -> Result<(u16, BodyReader), HttpError> {
    let mut stream = connect(socket, deadline)?;
    write_head(&mut stream, method, path, &Body::None, false)?;
    stream.flush()?;
    let mut reader = BufReader::new(stream);
    let (status, headers) = read_head(&mut reader)?;
    let chunked = header(&headers, "transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let length = header(&headers, "content-length").and_then(|v| v.parse::<u64>().ok());
    let remaining = if chunked {
        0
    } else {
        length.unwrap_or(u64::MAX)
    };
    Ok((
        status,
        BodyReader {
            reader,
            chunked,
            remaining,
            done: false,
        },
    ))
}

/// A response body read as it arrives (chunked or sized).
pub struct BodyReader {
    reader: BufReader<UnixStream>,
    chunked: bool,
    /// Bytes left in the current chunk (chunked) or in the body (sized).
    remaining: u64,
    done: bool,
}

impl Read for BodyReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        if self.chunked && self.remaining == 0 {
            let line = read_line(&mut self.reader).map_err(io::Error::other)?;
            let hex = line.split(';').next().unwrap_or_default().trim();
            let size = u64::from_str_radix(hex, 16)
                .map_err(|_| io::Error::other(format!("chunk size {line:?}")))?;
            if size == 0 {
                self.done = true;
                return Ok(0);
            }
            self.remaining = size;
        }
        let want = usize::try_from(self.remaining.min(buf.len() as u64)).unwrap_or(buf.len());
        let n = self.reader.read(buf.get_mut(..want).unwrap_or_default())?;
        if n == 0 {
            self.done = true;
            return Ok(0);
        }
        self.remaining = self.remaining.saturating_sub(n as u64);
        if self.chunked && self.remaining == 0 {
            read_line(&mut self.reader).map_err(io::Error::other)?;
        } else if !self.chunked && self.remaining == 0 {
            self.done = true;
        }
        Ok(n)
    }
}

fn read_line(reader: &mut impl BufRead) -> Result<String, HttpError> {
    let mut line = Vec::new();
    let n = reader
        .take(MAX_HEADER_LINE as u64)
        .read_until(b'\n', &mut line)
        .map_err(timeout_as_deadline)?;
    if n == 0 {
        return Err(HttpError::Malformed("connection closed".into()));
    }
    if line.last() != Some(&b'\n') {
        return Err(HttpError::Malformed("header line too long".into()));
    }
    while matches!(line.last(), Some(b'\n' | b'\r')) {
        line.pop();
    }
    String::from_utf8(line).map_err(|_| HttpError::Malformed("non-UTF-8 header".into()))
}

fn read_head(reader: &mut impl BufRead) -> Result<(u16, Vec<(String, String)>), HttpError> {
    let status_line = read_line(reader)?;
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    let status = parts.next().and_then(|s| s.parse::<u16>().ok());
    let Some(status) = status.filter(|_| version.starts_with("HTTP/1.")) else {
        return Err(HttpError::Malformed(format!("status line {status_line:?}")));
    };
    let mut headers = Vec::new();
    loop {
        let line = read_line(reader)?;
        if line.is_empty() {
            break;
        }
        if headers.len() >= MAX_HEADERS {
            return Err(HttpError::Malformed("too many headers".into()));
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    Ok((status, headers))
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn read_body(
    reader: &mut impl BufRead,
    headers: &[(String, String)],
) -> Result<Vec<u8>, HttpError> {
    let chunked = header(headers, "transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let mut body = Vec::new();
    if chunked {
        loop {
            let size_line = read_line(reader)?;
            let size_hex = size_line.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size_hex, 16)
                .map_err(|_| HttpError::Malformed(format!("chunk size {size_line:?}")))?;
            if size == 0 {
                // Trailers until the empty line.
                while !read_line(reader)?.is_empty() {}
                break;
            }
            if body.len().saturating_add(size) > MAX_BODY {
                return Err(HttpError::Malformed("response body too large".into()));
            }
            let start = body.len();
            body.resize(start + size, 0);
            reader
                .read_exact(body.get_mut(start..).unwrap_or_default())
                .map_err(timeout_as_deadline)?;
            read_line(reader)?;
        }
    } else if let Some(len) = header(headers, "content-length") {
        let len: usize = len
            .parse()
            .map_err(|_| HttpError::Malformed(format!("content-length {len:?}")))?;
        if len > MAX_BODY {
            return Err(HttpError::Malformed("response body too large".into()));
        }
        body.resize(len, 0);
        reader.read_exact(&mut body).map_err(timeout_as_deadline)?;
    } else {
        reader
            .take(MAX_BODY as u64 + 1)
            .read_to_end(&mut body)
            .map_err(timeout_as_deadline)?;
        if body.len() > MAX_BODY {
            return Err(HttpError::Malformed("response body too large".into()));
        }
    }
    Ok(body)
}

/// Socket timeouts surface as `WouldBlock`/`TimedOut`; report them as the deadline.
pub fn timeout_as_deadline(e: io::Error) -> HttpError {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => HttpError::Deadline,
        _ => HttpError::Io(e),
    }
}

/// Percent-encode a query component.
pub fn encode_query(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn chunked_and_length_bodies() {
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n";
        let mut r = BufReader::new(&raw[..]);
        let (status, headers) = read_head(&mut r).unwrap();
        assert_eq!(status, 200);
        assert_eq!(read_body(&mut r, &headers).unwrap(), b"abcde");
        let raw = b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nxyZZ";
        let mut r = BufReader::new(&raw[..]);
        let (status, headers) = read_head(&mut r).unwrap();
        assert_eq!(status, 404);
        assert_eq!(read_body(&mut r, &headers).unwrap(), b"xy");
        let mut r = BufReader::new(&b"SSH-2.0\r\n\r\n"[..]);
        assert!(read_head(&mut r).is_err());
    }

    /// Docker answers `{"message"}`, Podman `{"cause","message","response"}`: both keep the
    /// message.
    #[test]
    fn engine_error_bodies() {
        let resp = |body: &str| Response {
            status: 404,
            headers: Vec::new(),
            body: body.as_bytes().to_vec(),
        };
        let podman = r#"{"cause":"no such container","message":"no container with name or ID \"x\" found: no such container","response":404}"#;
        assert_eq!(
            resp(podman).message(),
            r#"no container with name or ID "x" found: no such container"#
        );
        assert_eq!(
            resp(r#"{"message":"No such container: x"}"#).message(),
            "No such container: x"
        );
        assert!(resp(podman).is_missing());
        // Podman mid-removal: a 500 whose cause is "no such container" means gone too.
        let removing = Response {
            status: 500,
            ..resp(
                r#"{"cause":"no such container","message":"container 58fe does not exist in database: no such container","response":500}"#,
            )
        };
        assert!(removing.is_missing());
        let other = Response {
            status: 500,
            ..resp(r#"{"message":"disk full"}"#)
        };
        assert!(!other.is_missing());
        assert_eq!(resp("plain text\n").message(), "plain text");
    }

    #[test]
    fn query_encoding() {
        assert_eq!(encode_query("^/a b$"), "%5E%2Fa%20b%24");
        assert_eq!(encode_query("linux/amd64"), "linux%2Famd64");
    }
}
