//! A port of CPython 3.11 `tokenize.detect_encoding` over a byte buffer (PSF licence).
//!
//! Lines are split after `\n` only (`BytesIO.readline`), so a lone `\r` does not end a line
//! here. Line 2 is consulted only when line 1 is blank or a comment (`blank_re`). Each line
//! examined must be valid UTF-8, even when it declares another encoding.

use super::codec::lookup;
use crate::error::{InspectError, Position};

const BOM: &[u8] = b"\xef\xbb\xbf";

/// The encoding name to decode with: `utf-8`, `utf-8-sig` (BOM present), or the normalised
/// cookie value (`iso-8859-1`, `cp1252`, ...). Errors mirror CPython's `SyntaxError`s.
pub fn detect_encoding(bytes: &[u8]) -> Result<String, InspectError> {
    let (first, rest) = split_line(bytes);
    let (first, bom) = match first.strip_prefix(BOM) {
        Some(stripped) => (stripped, true),
        None => (first, false),
    };
    let default = if bom { "utf-8-sig" } else { "utf-8" };
    if first.is_empty() {
        return Ok(default.into());
    }
    if let Some(encoding) = find_cookie(first, 1, bom)? {
        return Ok(encoding);
    }
    if !is_blank(first) {
        return Ok(default.into());
    }
    let (second, _) = split_line(rest);
    if second.is_empty() {
        return Ok(default.into());
    }
    Ok(find_cookie(second, 2, bom)?.unwrap_or_else(|| default.into()))
}

/// `readline()`: up to and including the first `\n`.
fn split_line(bytes: &[u8]) -> (&[u8], &[u8]) {
    match bytes.iter().position(|b| *b == b'\n') {
        Some(i) => bytes.split_at(i + 1),
        None => (bytes, &[]),
    }
}

/// `blank_re = br'^[ \t\f]*(?:[#\r\n]|$)'`.
fn is_blank(line: &[u8]) -> bool {
    let rest: &[u8] = {
        let start = line
            .iter()
            .position(|b| !matches!(b, b' ' | b'\t' | b'\x0c'))
            .unwrap_or(line.len());
        line.get(start..).unwrap_or(&[])
    };
    matches!(rest.first(), None | Some(b'#' | b'\r' | b'\n'))
}

fn find_cookie(line: &[u8], number: u32, bom: bool) -> Result<Option<String>, InspectError> {
    let text = std::str::from_utf8(line).map_err(|e| {
        let valid = line.get(..e.valid_up_to()).unwrap_or(&[]);
        let column = std::str::from_utf8(valid).map_or(1, |s| s.chars().count() + 1);
        let byte = line.get(e.valid_up_to()).copied().unwrap_or(0);
        let position = Position {
            line: number,
            column: u32::try_from(column).unwrap_or(u32::MAX),
        };
        InspectError::Decode {
            message: format!(
                "invalid or missing encoding declaration: line {number} is not valid UTF-8 \
                 (byte 0x{byte:02x} at column {column}); save the file as UTF-8 or declare its \
                 encoding in a coding comment on line 1 or 2 (PEP 263)"
            ),
            position: Some(position),
        }
    })?;
    let Some(raw) = cookie_value(text) else {
        return Ok(None);
    };
    let encoding = normal_name(raw);
    let position = Position {
        line: number,
        column: 1,
    };
    if lookup(&encoding).is_none() {
        return Err(InspectError::Decode {
            message: format!("unknown encoding: {encoding} (coding declaration on line {number})"),
            position: Some(position),
        });
    }
    if bom {
        if encoding != "utf-8" {
            return Err(InspectError::Decode {
                message: format!(
                    "encoding problem: the file starts with a UTF-8 byte order mark but line \
                     {number} declares {raw:?}"
                ),
                position: Some(position),
            });
        }
        return Ok(Some("utf-8-sig".into()));
    }
    Ok(Some(encoding))
}

/// `cookie_re = r'^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)'` (ASCII, `.` excludes `\n`).
pub(super) fn cookie_value(line: &str) -> Option<&str> {
    let body = line.trim_start_matches([' ', '\t', '\x0c']);
    let after_hash = body.strip_prefix('#')?;
    // `.*?` cannot cross a newline; the line holds at most one, at its end.
    let searchable = after_hash.split('\n').next().unwrap_or("");
    let mut from = 0;
    while let Some(found) = searchable.get(from..).and_then(|s| s.find("coding")) {
        let at = from + found + "coding".len();
        let tail = searchable.get(at..).unwrap_or("");
        if let Some(value) = tail.strip_prefix([':', '=']) {
            let value = value.trim_start_matches([' ', '\t']);
            let len = value
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
                .unwrap_or(value.len());
            if len > 0 {
                return value.get(..len);
            }
        }
        from = at;
    }
    None
}

/// `_get_normal_name`: only the first 12 characters decide `utf-8` and `iso-8859-1`.
pub(super) fn normal_name(raw: &str) -> String {
    let enc: String = raw
        .chars()
        .take(12)
        .map(|c| {
            if c == '_' {
                '-'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect();
    if enc == "utf-8" || enc.starts_with("utf-8-") {
        return "utf-8".into();
    }
    let latin = ["latin-1", "iso-8859-1", "iso-latin-1"];
    if latin.contains(&enc.as_str()) || latin.iter().any(|l| enc.starts_with(&format!("{l}-"))) {
        return "iso-8859-1".into();
    }
    raw.to_string()
}
