//! PEP 263 decoding of `.py` bytes, exactly as the reference does it on CPython 3.11:
//! `tokenize.detect_encoding` (UTF-8 BOM, a coding cookie on line 1, or on line 2 when line 1
//! is blank or a comment), a strict decode with the named codec, then universal-newline
//! translation (`\r\n` and lone `\r` become `\n`, like `importlib.util.decode_source`), and
//! finally CPython's refusal of NUL characters.
//!
//! Newlines are translated here rather than left to the parser because CPython's tokenizer
//! sees translated text: a `\r\n` inside a triple-quoted string is the value `'\n'`, and a
//! lone `\r` ends a line. Byte-exact source identity is kept by hashing the raw bytes.
//!
//! Codecs: every name CPython's `codecs.lookup` knows is recognised (generated tables in
//! [`tables`]); single-byte codecs are decoded with CPython's own tables, UTF-8/16/32 natively,
//! the common CJK codecs with `encoding_rs`, and the rest are refused with a clear message.

mod codec;
mod cookie;
mod failure;
mod tables;
mod wide;

use crate::error::{InspectError, Position};

pub use codec::{Codec, lookup};
pub use cookie::detect_encoding;

const BOM: &[u8] = b"\xef\xbb\xbf";

/// Decode Python source bytes to the text CPython 3.11 parses.
pub fn decode_python(bytes: &[u8]) -> Result<String, InspectError> {
    let encoding = detect_encoding(bytes)?;
    let codec = lookup(&encoding).ok_or_else(|| InspectError::Decode {
        message: format!("unknown encoding: {encoding}"),
        position: None,
    })?;
    // `utf-8-sig` (a BOM was found) removes the BOM; every other codec sees all bytes.
    let body = if encoding.ends_with("-sig") {
        bytes.strip_prefix(BOM).unwrap_or(bytes)
    } else {
        bytes
    };
    let text = codec.decode(body).map_err(|failure| InspectError::Decode {
        message: format!(
            "{} at line {}, column {}: {}",
            codec.display_name(),
            failure.position.line,
            failure.position.column,
            failure.reason
        ),
        position: Some(failure.position),
    })?;
    let text = translate_newlines(&text);
    if let Some(offset) = text.find('\0') {
        let position = position_in_text(&text, offset);
        return Err(InspectError::Decode {
            message: format!(
                "source code cannot contain null bytes (line {}, column {})",
                position.line, position.column
            ),
            position: Some(position),
        });
    }
    Ok(text)
}

/// Universal newlines as `io.IncrementalNewlineDecoder(None, translate=True).decode(text)`
/// (not final): `\r\n` and `\r` become `\n`; a trailing lone `\r` is held back, i.e. dropped.
pub fn translate_newlines(text: &str) -> String {
    if !text.contains('\r') {
        return text.to_string();
    }
    let body = text.strip_suffix('\r').unwrap_or(text);
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' {
            if chars.peek() == Some(&'\n') {
                chars.next();
            }
            out.push('\n');
        } else {
            out.push(c);
        }
    }
    out
}

/// 1-based line and character column of a byte offset in `\n`-only text.
pub(crate) fn position_in_text(text: &str, offset: usize) -> Position {
    let before = text.get(..offset).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.bytes().filter(|b| *b == b'\n').count() + 1;
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    Position {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        column: u32::try_from(column).unwrap_or(u32::MAX),
    }
}

#[cfg(test)]
mod tests;
