//! `codecs.lookup` name resolution and strict decoders for the codecs we support.
//!
//! Name resolution follows CPython's `encodings.search_function`: lower-case, collapse runs
//! of non-alphanumerics (except `.`) into `_`, then the alias table, then the module name.
//! Single-byte codecs use CPython's own tables, so e.g. `cp1252` refuses 0x81 and `latin-1`
//! is ISO-8859-1 (the WHATWG labels would silently mean windows-1252).

use super::failure::{DecodeFailure, failure_at};
use super::tables::{ALIASES, CHARMAPS, MODULES};

/// A resolved codec (by CPython module name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Codec {
    pub module: &'static str,
}

/// Resolve an encoding name like `codecs.lookup`; `None` is CPython's `LookupError`.
pub fn lookup(name: &str) -> Option<Codec> {
    let norm = normalize_encoding(&name.to_ascii_lowercase());
    let aliased = alias(&norm).or_else(|| alias(&norm.replace('.', "_")));
    let candidates = [aliased, Some(norm.as_str())];
    candidates
        .into_iter()
        .flatten()
        .filter(|m| !m.is_empty() && !m.contains('.'))
        .find_map(|m| MODULES.iter().find(|known| **known == m))
        .map(|module| Codec { module })
}

fn alias(norm: &str) -> Option<&'static str> {
    ALIASES
        .binary_search_by(|(a, _)| (*a).cmp(norm))
        .ok()
        .and_then(|i| ALIASES.get(i))
        .map(|(_, module)| *module)
}

/// `encodings.normalize_encoding`.
fn normalize_encoding(encoding: &str) -> String {
    let mut out = String::with_capacity(encoding.len());
    let mut punct = false;
    for c in encoding.chars() {
        if c.is_alphanumeric() || c == '.' {
            if punct && !out.is_empty() {
                out.push('_');
            }
            if c.is_ascii() {
                out.push(c);
            }
            punct = false;
        } else {
            punct = true;
        }
    }
    out
}

/// Codecs that are not `bytes -> str` text encodings (`bytes.decode` refuses them).
const NOT_TEXT: [&str; 8] = [
    "base64_codec",
    "bz2_codec",
    "hex_codec",
    "quopri_codec",
    "rot_13",
    "uu_codec",
    "zlib_codec",
    "undefined",
];

impl Codec {
    /// The name shown in messages (`utf-8`, `cp1252`, `euc_jp`, ...).
    pub fn display_name(&self) -> String {
        match self.module {
            "utf_8" | "utf_8_sig" => "utf-8".into(),
            "latin_1" => "latin-1".into(),
            other => other.into(),
        }
    }

    /// Strict decoding of the whole source.
    pub fn decode(&self, bytes: &[u8]) -> Result<String, DecodeFailure> {
        let module = self.module;
        if let Some((_, table)) = CHARMAPS.iter().find(|(name, _)| *name == module) {
            return decode_charmap(bytes, table);
        }
        match module {
            "utf_8" => decode_utf8(bytes),
            "utf_8_sig" => decode_utf8(bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes)),
            "utf_16" | "utf_16_le" | "utf_16_be" | "utf_32" | "utf_32_le" | "utf_32_be" => {
                super::wide::decode(module, bytes)
            }
            _ => match whatwg(module) {
                Some(encoding) => decode_whatwg(encoding, bytes),
                None if NOT_TEXT.contains(&module) => Err(failure_at(
                    bytes,
                    0,
                    format!("'{module}' is not a text encoding"),
                )),
                None => Err(failure_at(
                    bytes,
                    0,
                    format!("the '{module}' codec is not supported; re-save the file as UTF-8"),
                )),
            },
        }
    }
}

/// CJK codecs whose WHATWG (encoding_rs) decoder agrees with CPython on valid input.
/// The WHATWG decoders accept a few vendor extensions CPython's strict codecs refuse.
fn whatwg(module: &str) -> Option<&'static encoding_rs::Encoding> {
    Some(match module {
        "shift_jis" | "cp932" => encoding_rs::SHIFT_JIS,
        "euc_jp" => encoding_rs::EUC_JP,
        "iso2022_jp" => encoding_rs::ISO_2022_JP,
        "gb2312" | "gbk" => encoding_rs::GBK,
        "gb18030" => encoding_rs::GB18030,
        "big5" | "cp950" | "big5hkscs" => encoding_rs::BIG5,
        "euc_kr" | "cp949" => encoding_rs::EUC_KR,
        _ => return None,
    })
}

fn decode_utf8(bytes: &[u8]) -> Result<String, DecodeFailure> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text.to_string()),
        Err(e) => {
            let at = e.valid_up_to();
            let byte = bytes.get(at).copied().unwrap_or(0);
            let reason = match e.error_len() {
                Some(_) => format!("invalid byte 0x{byte:02x}"),
                None => "truncated multi-byte sequence at end of file".into(),
            };
            Err(failure_at(bytes, at, reason))
        }
    }
}

fn decode_charmap(bytes: &[u8], table: &[char; 256]) -> Result<String, DecodeFailure> {
    let mut out = String::with_capacity(bytes.len());
    for (at, byte) in bytes.iter().enumerate() {
        let c = table[usize::from(*byte)];
        if c == '\u{fffe}' {
            return Err(failure_at(
                bytes,
                at,
                format!("byte 0x{byte:02x} is undefined in this codec"),
            ));
        }
        out.push(c);
    }
    Ok(out)
}

fn decode_whatwg(
    encoding: &'static encoding_rs::Encoding,
    bytes: &[u8],
) -> Result<String, DecodeFailure> {
    match encoding.decode_without_bom_handling_and_without_replacement(bytes) {
        Some(text) => Ok(text.into_owned()),
        None => {
            // Locate the first malformed sequence for the message.
            let mut decoder = encoding.new_decoder_without_bom_handling();
            let mut out = String::with_capacity(bytes.len().saturating_mul(3));
            let (result, read) =
                decoder.decode_to_string_without_replacement(bytes, &mut out, true);
            let at = match result {
                encoding_rs::DecoderResult::Malformed(bad, _) => {
                    read.saturating_sub(usize::from(bad))
                }
                _ => read,
            };
            Err(failure_at(
                bytes,
                at,
                format!("invalid {} byte sequence", encoding.name()),
            ))
        }
    }
}
