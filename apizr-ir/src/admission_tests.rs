use std::collections::BTreeMap;

use super::*;
use proptest::prelude::*;

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn preflight_depth_and_nodes() {
    assert!(preflight(nested(64).as_bytes(), 1 << 20).is_ok());
    assert_eq!(
        preflight(nested(65).as_bytes(), 1 << 20),
        Err(AdmissionError::StructureLimit)
    );
    let many = format!("[{}]", vec!["1"; MAX_NODES - 1].join(","));
    assert!(preflight(many.as_bytes(), 1 << 30).is_ok());
    let too_many = format!("[{}]", vec!["1"; MAX_NODES].join(","));
    assert_eq!(
        preflight(too_many.as_bytes(), 1 << 30).map_err(|e| e.code()),
        Err("json_structure_limit")
    );
    assert_eq!(
        preflight(b"]", 10).map_err(|e| e.code()),
        Err("json_structure_invalid")
    );
    assert_eq!(
        preflight(b"[1]", 2).map_err(|e| e.code()),
        Err("json_byte_limit")
    );
    // Brackets inside strings (and escaped quotes) are ignored.
    assert!(preflight(br#"["]]]\"]]"]"#, 100).is_ok());
}

#[test]
fn permissive_literals_are_decoded_then_refused() {
    for text in ["NaN", "Infinity", "-Infinity", "[1e400]", r#"{"a":-1e999}"#] {
        let value = parse_permissive(text.as_bytes()).unwrap();
        assert_eq!(
            check_budget(&value, DEFAULT_VALUE_BYTES),
            Err(AdmissionError::NonFinite),
            "{text}"
        );
    }
}

#[test]
fn numbers_follow_python_json() {
    let p = |t: &str| parse_permissive(t.as_bytes());
    assert_eq!(p("-0"), Ok(Value::Int(0)));
    assert_eq!(p("2.0"), Ok(Value::Float(2.0)));
    assert_eq!(p("1E2"), Ok(Value::Float(100.0)));
    assert_eq!(
        p("-1180591620717411303424"),
        Ok(Value::BigInt("-1180591620717411303424".into()))
    );
    assert!(p("01").is_err());
    assert!(p("1.").is_err());
    assert!(p("1e").is_err());
    assert!(p("+1").is_err());
    assert!(p(&"9".repeat(4300)).is_ok());
    assert!(p(&"9".repeat(4301)).is_err());
}

#[test]
fn strings_objects_and_errors() {
    let v = parse_permissive(br#" {"a": "\u00e9\ud83d\ude00\n", "a": [true, null]} "#).unwrap();
    assert_eq!(
        v.canonical_string().unwrap(),
        r#"{"a":[true,null]}"#,
        "last duplicate key wins"
    );
    let s = parse_permissive(br#""\u00e9\ud83d\ude00""#).unwrap();
    assert_eq!(s, Value::Str("é😀".into()));
    for bad in [
        &b""[..],
        b"{",
        b"[1,]",
        b"{\"a\" 1}",
        b"\"\x01\"",
        b"\"\\ud800\"",
        b"nul",
        b"{1:2}",
        b"\"\xff\"",
        b"1 2",
    ] {
        assert!(
            matches!(parse_permissive(bad), Err(AdmissionError::Syntax { .. })),
            "{bad:?}"
        );
    }
}

#[test]
fn depth_counts_containers_and_leaves() {
    assert_eq!(depth(&Value::Null), 1);
    assert_eq!(depth(&parse_permissive(b"[]").unwrap()), 1);
    assert_eq!(depth(&parse_permissive(b"{\"a\": [[1]]}").unwrap()), 4);
    assert_eq!(depth(&parse_permissive(nested(64).as_bytes()).unwrap()), 64);
}

#[test]
fn budget_counts_keys_and_depth() {
    let deep = parse_permissive(nested(64).as_bytes()).unwrap();
    assert!(check_budget(&deep, DEFAULT_VALUE_BYTES).is_ok());
    let deeper = Value::Array(vec![deep]);
    assert_eq!(
        check_budget(&deeper, DEFAULT_VALUE_BYTES),
        Err(AdmissionError::StructureLimit)
    );
    let map: BTreeMap<String, Value> = (0..50_000)
        .map(|i| (format!("k{i}"), Value::Null))
        .collect();
    assert_eq!(
        check_budget(&Value::Object(map), DEFAULT_VALUE_BYTES),
        Err(AdmissionError::StructureLimit),
        "1 + 50,000 keys + 50,000 values"
    );
    assert_eq!(
        check_budget(&Value::Str("abc".into()), 4),
        Err(AdmissionError::ByteLimit { limit: 4 })
    );
    assert!(check_budget(&Value::Str("abc".into()), 5).is_ok());
}

proptest! {
    #[test]
    fn admission_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = admit(&bytes, 1 << 20);
    }

    #[test]
    fn admission_never_panics_on_jsonish(text in r#"[\[\]{}",:0-9eE.+\- a-zNI\\u]{0,64}"#) {
        let _ = admit(text.as_bytes(), 1 << 20);
    }
}

#[test]
fn python_json_messages() {
    let message = |doc: &[u8]| parse_permissive(doc).unwrap_err().python_message(doc);
    // Observed on the reference's direct REST adapter (tests/fixtures/execute/validate).
    assert_eq!(message(b""), "Expecting value: line 1 column 1 (char 0)");
    assert_eq!(
        message(br#"{"x": 1,}"#),
        "Expecting property name enclosed in double quotes: line 1 column 9 (char 8)"
    );
    assert_eq!(
        message(&format!("{{\"x\": {}}}", "9".repeat(4301)).into_bytes()),
        "Exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits; use sys.set_int_max_str_digits() to increase the limit"
    );
    // CPython 3.11 `json.loads` messages for these documents.
    assert_eq!(message(b"[1] x"), "Extra data: line 1 column 5 (char 4)");
    assert_eq!(
        message("\n  \"é".as_bytes()),
        "Unterminated string starting at: line 2 column 3 (char 3)"
    );
    assert_eq!(
        message(b"[\"a\\qb\"]"),
        "Invalid \\escape: line 1 column 4 (char 3)"
    );
    assert_eq!(
        message(b"\"a\x01\""),
        "Invalid control character at: line 1 column 3 (char 2)"
    );
    assert_eq!(
        message(b"{\"a\" 1}"),
        "Expecting ':' delimiter: line 1 column 6 (char 5)"
    );
    assert_eq!(
        message(b"[1 2]"),
        "Expecting ',' delimiter: line 1 column 4 (char 3)"
    );
}
