//! The stdout summary of `generate`, formatted like Python's `json.dumps(..., sort_keys=True)`
//! with default separators (`", "`, `": "`) and `ensure_ascii=True`, as the reference prints it.

use std::fmt::Write as _;

use crate::model::Transport;

/// A Python `json.dumps` string literal (ASCII only, `\uXXXX` escapes, surrogate pairs).
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
    out
}

/// Which execution block the summary carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryMode {
    Direct,
    /// `apizr.execution/v1`, local-process backend.
    GovernedV1,
    /// `apizr.execution/v2`, oci-container backend.
    GovernedOci,
}

/// `{"execution": {...}, "files": [...], "schema_version": "..."}`.
pub fn summary<'a>(
    transport: Transport,
    mode: SummaryMode,
    files: impl Iterator<Item = &'a String>,
) -> String {
    let execution = match mode {
        SummaryMode::GovernedV1 => {
            r#"{"backend": "local-process", "backend_version": "apizr.local-process/v1", "mode": "governed", "policy_version": "apizr.execution/v1"}"#
        }
        SummaryMode::GovernedOci => {
            r#"{"backend": "oci-container", "backend_version": "apizr.oci-container/v1", "bundle_version": "apizr.execution-bundle/v2", "mode": "governed", "policy_version": "apizr.execution/v2", "provider": "docker-engine"}"#
        }
        SummaryMode::Direct => r#"{"mode": "direct"}"#,
    };
    let files: Vec<String> = files.map(|f| string(f)).collect();
    format!(
        r#"{{"execution": {execution}, "files": [{}], "schema_version": "{}"}}"#,
        files.join(", "),
        transport.schema()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_escapes() {
        assert_eq!(string("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(string("ü"), r#""\u00fc""#);
        assert_eq!(string("😀"), r#""\ud83d\ude00""#);
        assert_eq!(string("\u{1}"), r#""\u0001""#);
    }
}
