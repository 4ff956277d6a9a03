//! MIME types from content: magic numbers first; for text, the file name only refines the
//! kind of text (CSV, Markdown, …) and JSON must actually parse. A binary with unknown magic
//! is `None`, whatever its name says (mellea guesses from the extension only, so a PNG named
//! `x.csv` would be `text/csv`).

/// How much of a file the sniffer looks at.
pub const HEAD_BYTES: usize = 8192;

const MAGIC: &[(&[u8], &str)] = &[
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"\x1f\x8b", "application/gzip"),
    (b"BZh", "application/x-bzip2"),
    (b"\xfd7zXZ\x00", "application/x-xz"),
    (b"\x93NUMPY", "application/x-npy"),
    (b"PAR1", "application/vnd.apache.parquet"),
    (b"SQLite format 3\x00", "application/vnd.sqlite3"),
    (b"\x89HDF\r\n\x1a\n", "application/x-hdf5"),
    (b"\x7fELF", "application/x-executable"),
];

/// Zip containers named by their extension (the content is a zip either way).
const ZIP_KINDS: &[(&str, &str)] = &[
    (
        ".xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
    (
        ".docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ),
    (
        ".pptx",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ),
];

const TEXT_KINDS: &[(&str, &str)] = &[
    (".csv", "text/csv"),
    (".tsv", "text/tab-separated-values"),
    (".md", "text/markdown"),
    (".html", "text/html"),
    (".htm", "text/html"),
    (".py", "text/x-python"),
    (".xml", "application/xml"),
    (".yaml", "application/yaml"),
    (".yml", "application/yaml"),
    (".css", "text/css"),
    (".js", "text/javascript"),
];

/// The MIME type of a file whose first bytes are `head` (at most [`HEAD_BYTES`]).
pub fn content_type(head: &[u8], name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    if let Some((_, kind)) = MAGIC.iter().find(|(m, _)| head.starts_with(m)) {
        return Some(kind);
    }
    if head.starts_with(b"PK\x03\x04") {
        let named = ZIP_KINDS.iter().find(|(ext, _)| lower.ends_with(ext));
        return Some(named.map_or("application/zip", |(_, kind)| kind));
    }
    if head.len() >= 12 && head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WEBP") {
        return Some("image/webp");
    }
    let text = as_text(head)?;
    let trimmed = text.trim_start();
    if trimmed.starts_with("<svg") || (trimmed.starts_with("<?xml") && text.contains("<svg")) {
        return Some("image/svg+xml");
    }
    let starts = |p: &str| {
        trimmed
            .get(..p.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(p))
    };
    if starts("<!doctype html") || starts("<html") {
        return Some("text/html");
    }
    if lower.ends_with(".json") && (trimmed.is_empty() || looks_like_json(head)) {
        return Some("application/json");
    }
    if let Some((_, kind)) = TEXT_KINDS.iter().find(|(ext, _)| lower.ends_with(ext)) {
        return Some(kind);
    }
    if looks_like_json(head) && (trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return Some("application/json");
    }
    Some("text/plain")
}

/// `head` as text: UTF-8 (a code point cut at the end of the sample is fine), no NUL.
fn as_text(head: &[u8]) -> Option<&str> {
    if head.contains(&0) {
        return None;
    }
    match std::str::from_utf8(head) {
        Ok(s) => Some(s),
        Err(e) if e.error_len().is_none() && head.len() >= HEAD_BYTES => {
            std::str::from_utf8(head.get(..e.valid_up_to())?).ok()
        }
        Err(_) => None,
    }
}

/// The whole sample parses as JSON, or the sample was cut and its start is JSON-shaped.
fn looks_like_json(head: &[u8]) -> bool {
    if head.len() < HEAD_BYTES {
        return serde_json::from_slice::<serde::de::IgnoredAny>(head).is_ok();
    }
    let text = String::from_utf8_lossy(head);
    let t = text.trim_start();
    t.starts_with('{') || t.starts_with('[')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_wins_over_the_name_and_text_is_refined_by_it() {
        assert_eq!(
            content_type(b"\x89PNG\r\n\x1a\n....", "plot.csv"),
            Some("image/png")
        );
        assert_eq!(content_type(b"a,b\n1,2\n", "data.csv"), Some("text/csv"));
        assert_eq!(
            content_type(b"{\"a\": 1}", "out.json"),
            Some("application/json")
        );
        assert_eq!(content_type(b"not json", "out.json"), Some("text/plain"));
        assert_eq!(content_type(b"[1, 2]", "noext"), Some("application/json"));
        assert_eq!(content_type(b"hello", "notes.xyz"), Some("text/plain"));
        assert_eq!(content_type(b"\x00\x01\x02binary", "blob.xyz"), None);
        assert_eq!(
            content_type(b"<svg xmlns='x'></svg>", "a.txt"),
            Some("image/svg+xml")
        );
        assert_eq!(
            content_type(b"PK\x03\x04rest", "t.XLSX"),
            Some(ZIP_KINDS[0].1)
        );
        assert_eq!(
            content_type(b"PK\x03\x04rest", "t.bin"),
            Some("application/zip")
        );
        assert_eq!(content_type(b"%PDF-1.7", "report"), Some("application/pdf"));
        assert_eq!(content_type(b"", "empty.bin"), Some("text/plain"));
    }
}
