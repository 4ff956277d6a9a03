//! Lone surrogates in string literals (`'\ud800'`).
//!
//! CPython strings may hold lone surrogates and `repr` prints them as `\ud800`; Rust strings
//! cannot, and ruff replaces them with U+FFFD. When the source text is known, a plain string
//! part whose value contains U+FFFD is decoded again here, from its source, into code points
//! exactly like CPython's `decode_unicode_with_escapes`. Parts this decoder does not fully
//! handle (raw strings, `\N{...}` names) keep ruff's value.

use ruff_python_ast::{StringFlags, StringLiteral, StringLiteralValue};

/// The value of a string literal as code points, or `None` when no part needs re-decoding.
pub(crate) fn string_units(value: &StringLiteralValue, source: &str) -> Option<Vec<u32>> {
    if !value.iter().any(|part| part.value.contains('\u{fffd}')) {
        return None;
    }
    let mut units = Vec::new();
    for part in value.iter() {
        match decode_part(part, source) {
            Some(decoded) if part.value.contains('\u{fffd}') => units.extend(decoded),
            _ => units.extend(part.value.chars().map(u32::from)),
        }
    }
    Some(units)
}

fn decode_part(part: &StringLiteral, source: &str) -> Option<Vec<u32>> {
    if part.flags.prefix().is_raw() {
        return None;
    }
    let range = part.range;
    let text = source.get(range.start().to_usize()..range.end().to_usize())?;
    let quote_len = part.flags.quote_len().to_usize();
    let prefix_len = part.flags.prefix().text_len().to_usize();
    let body = text.get(prefix_len + quote_len..text.len().checked_sub(quote_len)?)?;
    decode_escapes(body)
}

/// CPython's escape decoding for a non-raw `str` literal body (newlines already translated).
fn decode_escapes(body: &str) -> Option<Vec<u32>> {
    let mut out = Vec::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(u32::from(c));
            continue;
        }
        let Some(escape) = chars.next() else {
            out.push(u32::from('\\'));
            break;
        };
        let simple = match escape {
            '\n' => Some(None),
            '\\' | '\'' | '"' => Some(Some(u32::from(escape))),
            'a' => Some(Some(7)),
            'b' => Some(Some(8)),
            'f' => Some(Some(12)),
            'n' => Some(Some(10)),
            'r' => Some(Some(13)),
            't' => Some(Some(9)),
            'v' => Some(Some(11)),
            _ => None,
        };
        if let Some(unit) = simple {
            out.extend(unit);
            continue;
        }
        match escape {
            '0'..='7' => {
                let mut value = escape.to_digit(8)?;
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(digit) => {
                            value = value * 8 + digit;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(value);
            }
            'x' | 'u' | 'U' => {
                let width = match escape {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut value = 0u32;
                for _ in 0..width {
                    value = value.checked_mul(16)? + chars.next()?.to_digit(16)?;
                }
                if value > 0x10ffff {
                    return None;
                }
                out.push(value);
            }
            // Named escapes need the Unicode name table; leave the part to ruff.
            'N' => return None,
            other => {
                out.push(u32::from('\\'));
                out.push(u32::from(other));
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::decode_escapes;

    #[test]
    fn decodes_like_cpython() {
        assert_eq!(
            decode_escapes(r"a\ud800\x41\101\777\d"),
            Some(vec![0x61, 0xd800, 0x41, 0x41, 0o777, 0x5c, 0x64])
        );
        assert_eq!(decode_escapes("a\\\nb"), Some(vec![0x61, 0x62]));
        assert_eq!(decode_escapes(r"\N{BULLET}"), None);
    }
}
