#![allow(clippy::unwrap_used)]

use super::*;

fn strict(text: &str) -> Result<Value, ParseError> {
    parse(text.as_bytes(), Dialect::Strict)
}

fn python(text: &str) -> Result<Value, ParseError> {
    parse(text.as_bytes(), Dialect::Python)
}

#[test]
fn canonical_documents_round_trip_in_both_dialects() {
    let text = "{\"a\":[1,-2,3.5,1e-05,1e+16,-0.0,null,true,false],\"big\":1180591620717411303424,\"s\":\"\\\"\\\\\\n\\u0001é😀\"}\n";
    for dialect in [Dialect::Strict, Dialect::Python] {
        let v = parse(text.as_bytes(), dialect).unwrap();
        assert_eq!(v.canonical_bytes().unwrap(), text.as_bytes());
    }
}

#[test]
fn strict_refuses_what_python_encoders_never_write() {
    for bad in [
        "NaN",
        "Infinity",
        "-Infinity",
        "{\"a\":1,\"a\":2}",
        "1e400",
        "[-1e999]",
    ] {
        assert!(strict(bad).is_err(), "{bad:?} must be refused");
        assert!(python(bad).is_ok(), "{bad:?} is Python JSON");
    }
    assert_eq!(
        python("{\"a\":1,\"a\":2}").unwrap(),
        python("{\"a\":2}").unwrap()
    );
    assert_eq!(python("1e400").unwrap(), Value::Float(f64::INFINITY));
}

#[test]
fn both_refuse_broken_documents() {
    for bad in [
        "[1,]",
        "01",
        "1.",
        "1e",
        "-",
        "\"\\ud800\"",
        "\"\\ud800\\u0041\"",
        "\"\\udc00\"",
        "\"\\u+041\"",
        "\"a\nb\"",
        "\"abc",
        "[1] x",
        "",
        "{\"a\" 1}",
        "nul",
    ] {
        assert!(strict(bad).is_err(), "{bad:?}");
        assert!(python(bad).is_err(), "{bad:?}");
    }
    assert!(parse(b"\"\xff\"", Dialect::Strict).is_err());
}

#[test]
fn depth_and_digit_limits_differ_by_dialect() {
    let nest = |n: usize| "[".repeat(n) + &"]".repeat(n);
    assert!(strict(&nest(129)).is_ok());
    assert!(matches!(
        strict(&nest(130)),
        Err(ParseError::TooDeep { limit: 128, .. })
    ));
    assert!(python(&nest(513)).is_ok());
    assert!(matches!(
        python(&nest(514)),
        Err(ParseError::TooDeep { limit: 512, .. })
    ));
    let long = "9".repeat(MAX_INT_DIGITS + 1);
    assert_eq!(
        python(&format!("-{long}")),
        Err(ParseError::IntDigits {
            digits: MAX_INT_DIGITS + 1
        })
    );
    assert_eq!(strict(&long).unwrap(), Value::BigInt(long.clone()));
    assert_eq!(
        python(&"9".repeat(MAX_INT_DIGITS)).unwrap(),
        Value::BigInt("9".repeat(MAX_INT_DIGITS))
    );
}

#[test]
fn escapes_and_numbers() {
    assert_eq!(
        strict("\"\\ud83d\\ude00\\/\"").unwrap(),
        Value::Str("😀/".into())
    );
    assert_eq!(strict("-0").unwrap(), Value::Int(0));
    assert_eq!(
        strict("-9223372036854775809").unwrap(),
        Value::BigInt("-9223372036854775809".into())
    );
    assert_eq!(strict("1E2").unwrap(), Value::Float(100.0));
}

proptest::proptest! {
    #[test]
    fn never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..256)) {
        let _ = parse(&bytes, Dialect::Strict);
        let _ = parse(&bytes, Dialect::Python);
    }
}
