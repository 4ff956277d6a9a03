//! Exact integers in `structuredContent`, past rmcp's serde_json.
//!
//! Why: rmcp holds results as `serde_json::Value`, whose numbers are i64, u64 or f64, so a
//! Python int beyond 64 bits would reach the client as a float (a wrong value, or an output
//! schema violation for `integer`). serde_json's `arbitrary_precision` feature is no way out:
//! it breaks the untagged enums rmcp's messages are made of. So [`to_json`] writes such an
//! integer as a marker string `"apizr-int-<nonce>-<digits>"`, and each transport passes its
//! outgoing text through [`restore`], which turns every marker back into the bare digits.
//!
//! The nonce is 128 random bits drawn once per process: user code runs in other processes
//! and never sees it, so a string a function returns can never be taken for a marker.
//! Markers never span lines (JSON strings hold no raw newline), so transports may restore
//! line by line.

use std::borrow::Cow;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::OnceLock;

use apizr_ir::json::Value;

fn marker_prefix() -> &'static str {
    static PREFIX: OnceLock<String> = OnceLock::new();
    PREFIX.get_or_init(|| {
        // std seeds every RandomState from the OS's random source.
        let a = RandomState::new().hash_one(0u8);
        let b = RandomState::new().hash_one(1u8);
        format!("apizr-int-{a:016x}{b:016x}-")
    })
}

/// An apizr JSON value as a serde_json value, integers beyond 64 bits as markers; None for a
/// non-finite float (which JSON cannot carry).
pub fn to_json(value: &Value) -> Option<serde_json::Value> {
    Some(match value {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Int(i) => serde_json::Value::from(*i),
        Value::BigInt(digits) => match digits.parse::<u64>() {
            Ok(n) => serde_json::Value::from(n),
            Err(_) => serde_json::Value::String(format!("{}{digits}", marker_prefix())),
        },
        Value::Float(f) => serde_json::Value::Number(serde_json::Number::from_f64(*f)?),
        Value::Str(s) => serde_json::Value::String(s.clone()),
        Value::Array(items) => {
            serde_json::Value::Array(items.iter().map(to_json).collect::<Option<_>>()?)
        }
        Value::Object(map) => serde_json::Value::Object(
            map.iter()
                .map(|(k, v)| Some((k.clone(), to_json(v)?)))
                .collect::<Option<_>>()?,
        ),
    })
}

/// `text` with every quoted marker replaced by its digits (borrowed when there is none).
pub fn restore(text: &str) -> Cow<'_, str> {
    let quoted = format!("\"{}", marker_prefix());
    if !text.contains(&quoted) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&quoted) {
        out.push_str(&rest[..at]);
        let after = &rest[at + quoted.len()..];
        let digits_end = after
            .char_indices()
            .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
            .map_or(after.len(), |(i, _)| i);
        let digits = &after[..digits_end];
        if after[digits_end..].starts_with('"') && digits.bytes().any(|b| b.is_ascii_digit()) {
            out.push_str(digits);
            rest = &after[digits_end + 1..];
        } else {
            // Not a marker we wrote: keep it as it is.
            out.push_str(&quoted);
            rest = after;
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use apizr_ir::admission::parse_permissive;

    #[test]
    fn big_integers_survive_serde_json() {
        let value = parse_permissive(
            br#"{"big":-123456789012345678901234567890,"u":18446744073709551615,"xs":[1,2.5,"s",null]}"#,
        )
        .unwrap();
        let json = to_json(&value).unwrap();
        assert_eq!(json["u"], serde_json::json!(18446744073709551615u64));
        let text = serde_json::to_string(&serde_json::json!({"structuredContent": json})).unwrap();
        assert!(text.contains(marker_prefix()));
        assert_eq!(
            restore(&text),
            r#"{"structuredContent":{"big":-123456789012345678901234567890,"u":18446744073709551615,"xs":[1,2.5,"s",null]}}"#
        );
    }

    #[test]
    fn strings_that_only_look_like_markers_stay_strings() {
        let plain = r#"{"a":"apizr-int-0-1"}"#;
        assert!(matches!(restore(plain), Cow::Borrowed(_)));
        let forged = format!("[\"{}12x\",\"{}\"]", marker_prefix(), marker_prefix());
        assert_eq!(restore(&forged), forged);
        assert_eq!(to_json(&Value::Float(f64::NAN)), None);
    }
}
