//! A strict decoder's refusal and where it happened in the undecoded bytes (shared by every
//! codec, so the codecs do not depend on each other).

use crate::error::Position;

/// Why strict decoding failed, and where (line/column of the source bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeFailure {
    pub position: Position,
    pub reason: String,
}

/// Position of byte offset `at` in the undecoded source: lines end at `\n`, `\r\n` or `\r`;
/// the column counts bytes (the text before it may not be decodable).
pub(super) fn failure_at(bytes: &[u8], at: usize, reason: String) -> DecodeFailure {
    let before = bytes.get(..at).unwrap_or(bytes);
    let mut line = 1u32;
    let mut column = 1u32;
    let mut previous = 0u8;
    // In valid UTF-8 (the usual case) continuation bytes do not start a new column.
    let utf8 = std::str::from_utf8(before).is_ok();
    for b in before {
        match b {
            b'\n' if previous == b'\r' => {}
            b'\n' | b'\r' => {
                line = line.saturating_add(1);
                column = 1;
            }
            _ if utf8 && (0x80..0xc0).contains(b) => {}
            _ => column = column.saturating_add(1),
        }
        previous = *b;
    }
    DecodeFailure {
        position: Position { line, column },
        reason,
    }
}
