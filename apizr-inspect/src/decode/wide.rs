//! Strict UTF-16 and UTF-32 like CPython's codecs: `utf_16`/`utf_32` honour and strip a BOM
//! and otherwise use the native (little-endian) order; lone surrogates and odd trailing
//! bytes are errors.

use super::failure::{DecodeFailure, failure_at};

pub(super) fn decode(module: &str, bytes: &[u8]) -> Result<String, DecodeFailure> {
    match module {
        "utf_16" => match bytes {
            [0xff, 0xfe, rest @ ..] => utf16(rest, false),
            [0xfe, 0xff, rest @ ..] => utf16(rest, true),
            _ => utf16(bytes, false),
        },
        "utf_16_le" => utf16(bytes, false),
        "utf_16_be" => utf16(bytes, true),
        "utf_32" => match bytes {
            [0xff, 0xfe, 0, 0, rest @ ..] => utf32(rest, false),
            [0, 0, 0xfe, 0xff, rest @ ..] => utf32(rest, true),
            _ => utf32(bytes, false),
        },
        "utf_32_le" => utf32(bytes, false),
        _ => utf32(bytes, true),
    }
}

fn utf16(bytes: &[u8], big: bool) -> Result<String, DecodeFailure> {
    let units = bytes.chunks(2).map(|c| match c {
        [a, b] if big => Some(u16::from_be_bytes([*a, *b])),
        [a, b] => Some(u16::from_le_bytes([*a, *b])),
        _ => None,
    });
    let mut out = String::with_capacity(bytes.len() / 2);
    let mut pending: Option<u16> = None;
    for (index, unit) in units.enumerate() {
        let at = index * 2;
        let Some(unit) = unit else {
            return Err(failure_at(bytes, at, "truncated UTF-16 data".into()));
        };
        match (pending.take(), unit) {
            (Some(high), 0xdc00..=0xdfff) => {
                let c = 0x10000 + ((u32::from(high) - 0xd800) << 10) + (u32::from(unit) - 0xdc00);
                out.push(char::from_u32(c).unwrap_or('\u{fffd}'));
            }
            (Some(_), _) => {
                return Err(failure_at(bytes, at, "illegal UTF-16 surrogate".into()));
            }
            (None, 0xd800..=0xdbff) => pending = Some(unit),
            (None, 0xdc00..=0xdfff) => {
                return Err(failure_at(bytes, at, "illegal UTF-16 surrogate".into()));
            }
            (None, other) => out.push(char::from_u32(u32::from(other)).unwrap_or('\u{fffd}')),
        }
    }
    if pending.is_some() {
        return Err(failure_at(
            bytes,
            bytes.len(),
            "unexpected end of UTF-16 data".into(),
        ));
    }
    Ok(out)
}

fn utf32(bytes: &[u8], big: bool) -> Result<String, DecodeFailure> {
    let mut out = String::with_capacity(bytes.len() / 4);
    for (index, chunk) in bytes.chunks(4).enumerate() {
        let at = index * 4;
        let value = match chunk {
            [a, b, c, d] if big => u32::from_be_bytes([*a, *b, *c, *d]),
            [a, b, c, d] => u32::from_le_bytes([*a, *b, *c, *d]),
            _ => return Err(failure_at(bytes, at, "truncated UTF-32 data".into())),
        };
        match char::from_u32(value) {
            Some(c) => out.push(c),
            None => {
                return Err(failure_at(
                    bytes,
                    at,
                    "code point not in range(0x110000)".into(),
                ));
            }
        }
    }
    Ok(out)
}
