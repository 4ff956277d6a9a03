//! MCP over stdio with the reference's line admission.
//!
//! Why a filter in front of rmcp: the reference reads stdin line by line with the JSON
//! preflight budget; a malformed or over-budget line gets no reply and the session continues,
//! and a line over 64 MiB ends the input stream. rmcp's own reader drops oversized lines and
//! keeps going, so we read stdin ourselves, admit each line, and feed only admitted lines to
//! rmcp through an in-memory pipe. Memory stays bounded by one line.

use apizr_ir::admission::{parse_permissive, preflight};
use apizr_ir::json::Value;
use rmcp::ServiceExt;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

use super::exact::restore;
use super::handler::McpHandler;
use super::rewrite::{is_jsonrpc, rewrite};
use crate::serve::error::ServeError;

/// Largest stdio line (64 MiB); a longer line ends the input stream.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// Pipe capacity between the line filter and rmcp.
const PIPE_BYTES: usize = 1 << 20;

/// Admit one line (without its newline): UTF-8, within the lexical preflight, decodable with
/// Python semantics, a JSON-RPC 2.0 message (or a batch). Returns the text to hand rmcp, with
/// `tools/call` arguments carried exactly ([`rewrite`]); None means "no reply, carry on".
pub fn admit_line(line: &[u8]) -> Option<String> {
    std::str::from_utf8(line).ok()?;
    preflight(line, MAX_LINE_BYTES as u64).ok()?;
    let value = parse_permissive(line).ok()?;
    let ok = match &value {
        Value::Array(items) => !items.is_empty() && items.iter().all(is_jsonrpc),
        other => is_jsonrpc(other),
    };
    if !ok {
        return None;
    }
    rewrite(value)
}

/// What the filter does with the next input line.
#[derive(Debug, PartialEq, Eq)]
enum Next {
    Line(Vec<u8>),
    End,
}

async fn next_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> std::io::Result<Next> {
    let mut buf = Vec::new();
    let limit = MAX_LINE_BYTES as u64 + 1;
    let n = (&mut *reader)
        .take(limit)
        .read_until(b'\n', &mut buf)
        .await?;
    if n == 0 {
        return Ok(Next::End);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    }
    if buf.len() > MAX_LINE_BYTES {
        return Ok(Next::End);
    }
    Ok(Next::Line(buf))
}

/// Copy admitted lines from `input` to `output` until EOF, an I/O error or an oversized line.
pub async fn filter_lines<R, W>(input: R, mut output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::new(input);
    while let Next::Line(line) = next_line(&mut reader).await? {
        let Some(mut admitted) = admit_line(&line) else {
            continue;
        };
        admitted.push('\n');
        output.write_all(admitted.as_bytes()).await?;
        output.flush().await?;
    }
    output.shutdown().await
}

/// Copy rmcp's output lines to `output` with exact integers restored ([`restore`]).
pub async fn restore_lines<R, W>(input: R, mut output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            break;
        }
        match std::str::from_utf8(&line) {
            Ok(text) => output.write_all(restore(text).as_bytes()).await?,
            Err(_) => output.write_all(&line).await?,
        }
        output.flush().await?;
    }
    output.flush().await
}

/// Serve `handler` over stdin/stdout until the client closes stdin.
pub async fn serve_stdio(handler: McpHandler) -> Result<(), ServeError> {
    let (to_rmcp, from_filter) = tokio::io::duplex(PIPE_BYTES);
    let (from_rmcp, to_restore) = tokio::io::duplex(PIPE_BYTES);
    // Non-blocking pipes when the client launched us (so shutdown never waits on a blocked
    // stdin read); the blocking std handles otherwise.
    let (stdin, stdout) = rmcp::transport::io::stdio_pipes();
    let filter = tokio::spawn(filter_lines(stdin, to_rmcp));
    let output = tokio::spawn(restore_lines(to_restore, stdout));
    let (read, _unused_write) = tokio::io::split(from_filter);
    // Admitted lines are at most MAX_LINE_BYTES, so rmcp must accept them all.
    let transport = AsyncRwTransport::<rmcp::RoleServer, _, _>::new(read, from_rmcp)
        .with_max_line_length(MAX_LINE_BYTES + 1);
    let result = match handler.serve(transport).await {
        Ok(running) => {
            let _ = running.waiting().await;
            Ok(())
        }
        // The client closed stdin before initializing: a normal end, not an error.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(ServeError::McpStart(Box::new(e))),
    };
    filter.abort();
    // rmcp's writer is gone with the service: the output copy drains what is left and ends.
    let _ = output.await;
    result
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn admission_vectors() {
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert_eq!(
            admit_line(ping).as_deref(),
            Some(r#"{"id":1,"jsonrpc":"2.0","method":"ping"}"#)
        );
        assert_eq!(admit_line(b"{not json"), None);
        assert_eq!(admit_line(b"{\"jsonrpc\":\"2.0\",\"a\":\"\xff\"}"), None);
        assert_eq!(admit_line(br#"{"hello":1}"#), None);
        let nest = |n: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","x":{}{}}}"#,
                "[".repeat(n),
                "]".repeat(n)
            )
        };
        assert_eq!(admit_line(nest(64).as_bytes()), None);
        assert!(admit_line(nest(63).as_bytes()).is_some());
        assert_eq!(admit_line(br#"{"jsonrpc":"2.0","a":NaN}"#), None);
    }

    #[tokio::test]
    async fn filter_drops_bad_lines_and_keeps_going() {
        let input: &[u8] =
            b"{\"jsonrpc\":\"2.0\"}\r\n{bad\n\n[1]\n{ \"jsonrpc\" : \"2.0\", \"id\": 2}\n";
        let mut out = Vec::new();
        filter_lines(input, &mut out).await.unwrap();
        assert_eq!(
            out,
            b"{\"jsonrpc\":\"2.0\"}\n{\"id\":2,\"jsonrpc\":\"2.0\"}\n"
        );
    }

    #[tokio::test]
    async fn oversized_line_ends_the_stream() {
        let mut input = vec![b' '; MAX_LINE_BYTES + 10];
        input.extend_from_slice(b"\n[1]\n");
        let mut out = Vec::new();
        filter_lines(input.as_slice(), &mut out).await.unwrap();
        assert!(out.is_empty());
    }
}
