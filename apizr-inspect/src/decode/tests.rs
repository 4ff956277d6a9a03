use super::*;

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

/// Every vector was produced by CPython 3.11.7 (`scripts/gen-decode-vectors.py`).
#[test]
fn cpython_decode_vectors() {
    let raw = include_str!("../../tests/data/frontend/decode-vectors.json");
    let vectors: Vec<serde_json::Value> = serde_json::from_str(raw).unwrap();
    assert!(vectors.len() > 80);
    let mut failures = Vec::new();
    for vector in &vectors {
        let bytes = unhex(vector["hex"].as_str().unwrap());
        let got = decode_python(&bytes);
        match (vector.get("text").and_then(|t| t.as_str()), got) {
            (Some(expected), Ok(text)) if text == expected => {}
            (None, Err(_)) => {}
            (expected, got) => failures.push(format!(
                "{:?}: expected {:?} got {:?}",
                String::from_utf8_lossy(&bytes),
                expected,
                got.map_err(|e| e.to_string())
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn cookie_regex() {
    assert_eq!(
        cookie::cookie_value("# -*- coding: latin-1 -*-\n"),
        Some("latin-1")
    );
    assert_eq!(cookie::cookie_value("#coding=utf8"), Some("utf8"));
    assert_eq!(cookie::cookie_value("# coding: \n"), None);
    assert_eq!(cookie::cookie_value("x # coding: latin-1"), None);
    assert_eq!(cookie::cookie_value("# codingcoding: x"), Some("x"));
    assert_eq!(cookie::normal_name("UTF_8"), "utf-8");
    assert_eq!(cookie::normal_name("Latin_1-foo"), "iso-8859-1");
    assert_eq!(cookie::normal_name("latin1"), "latin1");
}

#[test]
fn codec_lookup_like_cpython() {
    let cases = [
        ("utf-8", Some("utf_8")),
        ("UTF8", Some("utf_8")),
        ("iso-8859-1", Some("latin_1")),
        ("latin1", Some("latin_1")),
        ("cp1252", Some("cp1252")),
        ("windows-1252", Some("cp1252")),
        ("euc-jp", Some("euc_jp")),
        ("shift_jis", Some("shift_jis")),
        ("sjis", Some("shift_jis")),
        ("koi8-r", Some("koi8_r")),
        ("latin.1", None),
        ("foo", None),
        ("", None),
    ];
    for (name, module) in cases {
        assert_eq!(lookup(name).map(|c| c.module), module, "{name}");
    }
}

#[test]
fn errors_carry_positions() {
    let err = decode_python(b"x = 1\ny = '\xff'\n").unwrap_err();
    assert_eq!(err.position(), Some(Position { line: 2, column: 6 }));
    let err = decode_python(b"x = 1\r\nab\0").unwrap_err();
    assert_eq!(err.position(), Some(Position { line: 2, column: 3 }));
    assert!(err.to_string().contains("null bytes"), "{err}");
    let err = decode_python(b"# \xff\n").unwrap_err();
    assert_eq!(err.position(), Some(Position { line: 1, column: 3 }));
}

#[test]
fn newline_translation() {
    assert_eq!(translate_newlines("a\r\nb\rc\n"), "a\nb\nc\n");
    assert_eq!(translate_newlines("a\r"), "a");
    assert_eq!(translate_newlines("a\r\r"), "a\n");
}
