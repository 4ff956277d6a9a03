//! Strict base64 for `bytes`/`bytearray` arguments (readiness v2): RFC 4648 §4, padded, and
//! canonical (the unused bits of the last character are zero). The worker decodes the same
//! text with `binascii.a2b_base64(strict_mode=True)`; accepting only the canonical encoding
//! here means every accepted string decodes to one byte string on both sides, so set members
//! compared here compare the same in Python.

/// Why a string is not canonical padded base64: the character offset and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base64Error {
    pub offset: usize,
    pub problem: &'static str,
}

impl std::fmt::Display for Base64Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at character {}", self.problem, self.offset)
    }
}

fn sextet(c: u8) -> Option<u32> {
    Some(u32::from(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    }))
}

/// Decode `text`, or say where it stops being canonical padded base64.
pub fn decode(text: &str) -> Result<Vec<u8>, Base64Error> {
    let bytes = text.as_bytes();
    let fail = |offset: usize, problem: &'static str| Err(Base64Error { offset, problem });
    if let Some(offset) = bytes.iter().position(|&c| c != b'=' && sextet(c).is_none()) {
        // The first byte of a character: report it in characters, as the client wrote it.
        let offset = text.get(..offset).map_or(offset, |s| s.chars().count());
        return fail(offset, "a character outside the base64 alphabet");
    }
    if !bytes.len().is_multiple_of(4) {
        return fail(bytes.len(), "a length that is not a multiple of 4");
    }
    let padding = bytes.iter().rev().take_while(|&&c| c == b'=').count();
    if padding > 2 {
        return fail(bytes.len() - padding, "more than two padding characters");
    }
    let body = &bytes[..bytes.len() - padding];
    if let Some(offset) = body.iter().position(|&c| c == b'=') {
        return fail(offset, "padding before the end");
    }
    let mut out = Vec::with_capacity(body.len() / 4 * 3 + 2);
    for (index, chunk) in body.chunks(4).enumerate() {
        let mut n = 0u32;
        for &c in chunk {
            n = (n << 6) | sextet(c).unwrap_or(0);
        }
        let start = index * 4;
        match chunk.len() {
            4 => out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8]),
            3 if n & 0x3 == 0 => out.extend_from_slice(&[(n >> 10) as u8, (n >> 2) as u8]),
            2 if n & 0xf == 0 => out.push((n >> 4) as u8),
            len => return fail(start + len - 1, "non-zero unused bits (not canonical)"),
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::decode;
    use crate::protocol::base64;

    #[test]
    fn rfc4648_vectors_round_trip_and_non_canonical_text_is_refused_with_its_offset() {
        for plain in ["", "f", "fo", "foo", "foob", "fooba", "foobar"] {
            let text = base64(plain.as_bytes());
            assert_eq!(decode(&text).unwrap(), plain.as_bytes(), "{text}");
        }
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(decode(&base64(&all)).unwrap(), all);
        for (text, offset, problem) in [
            ("Zg", 2, "a length that is not a multiple of 4"),
            ("Zm9v!A==", 4, "a character outside the base64 alphabet"),
            ("Zm 9", 2, "a character outside the base64 alphabet"),
            ("Zh==", 1, "non-zero unused bits (not canonical)"),
            ("Zm9=", 2, "non-zero unused bits (not canonical)"),
            ("Z===", 1, "more than two padding characters"),
            ("Zg==Zg==", 2, "padding before the end"),
            ("éA==", 0, "a character outside the base64 alphabet"),
            ("QQ=é", 3, "a character outside the base64 alphabet"),
        ] {
            let e = decode(text).unwrap_err();
            assert_eq!((e.offset, e.problem), (offset, problem), "{text}");
        }
    }

    /// Through the validator: the error names where and why; a set of `bytes` compares the
    /// decoded values (a `bytearray` is unhashable, as in Python).
    #[test]
    fn bytes_arguments_are_validated_with_a_precise_error() {
        use crate::validate::PyValue;
        use crate::validate::convert::convert;
        use apizr_ir::{TypeKind, TypeSpec, Value};
        let bytes = TypeSpec::simple(TypeKind::Bytes);
        let text = |s: &str| Value::Str(s.into());
        assert_eq!(
            convert(&bytes, &text("Zm9v")).unwrap(),
            PyValue::Bytes(b"foo".to_vec())
        );
        let e = convert(&bytes, &text("Zh==")).unwrap_err();
        assert_eq!(e.to_string(), "Invalid base64 value");
        let field = e.field_error();
        assert_eq!(field.expected, "base64 string (bytes)");
        assert_eq!(
            field.found,
            "string with non-zero unused bits (not canonical) at character 1"
        );
        let e = convert(&bytes, &Value::Int(3)).unwrap_err();
        assert_eq!(e.field_error().found, "integer");
        let set = TypeSpec {
            items: vec![bytes.clone()],
            ..TypeSpec::simple(TypeKind::Set)
        };
        let twice = Value::Array(vec![text("QQ=="), text("Zm9v"), text("QQ==")]);
        let e = convert(&set, &twice).unwrap_err();
        assert_eq!(
            (e.pointer(), e.field_error().found),
            ("/2".into(), "duplicate of item 0".into())
        );
        let arrays = TypeSpec {
            items: vec![TypeSpec::simple(TypeKind::Bytearray)],
            ..TypeSpec::simple(TypeKind::Set)
        };
        let e = convert(&arrays, &Value::Array(vec![text("QQ==")])).unwrap_err();
        assert_eq!(e.to_string(), "Set members must be hashable");
    }
}
