//! The stdout encoding of `apizr execute`: the reference's pydantic `model_dump_json` style.
//! Keys keep their order (envelope field order; nested objects are already sorted), compact
//! separators, raw UTF-8, and pydantic-core floats: exponent form when |x| < 1e-5 or
//! |x| >= 1e16, with an explicit `+` and no zero padding (`1e+16`, `1e-7`, `0.00001`).
//! Not hashed anywhere; tests compare it as parsed JSON, but we match the bytes anyway.

use apizr_ir::Value;
use apizr_ir::json::write_string;

/// `{"schema_version":…,"status":…,"value":…}` on one line (no trailing newline).
pub fn envelope(schema: &str, status: &str, value: &Value) -> String {
    let mut out = String::from("{\"schema_version\":");
    write_string(&mut out, schema);
    out.push_str(",\"status\":");
    write_string(&mut out, status);
    out.push_str(",\"value\":");
    write_value(&mut out, value);
    out.push('}');
    out
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::BigInt(digits) => out.push_str(digits),
        Value::Float(f) => out.push_str(&float(*f)),
        Value::Str(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

/// pydantic-core float text (non-finite values never reach here; they print as `null`).
pub fn float(f: f64) -> String {
    if !f.is_finite() {
        return "null".into();
    }
    let magnitude = f.abs();
    if magnitude != 0.0 && !(1e-5..1e16).contains(&magnitude) {
        // Rust's `{:e}` is the shortest round-trip form: `1.5e-7`, `1e16`.
        let text = format!("{f:e}");
        return match text.split_once('e') {
            Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
            _ => text,
        };
    }
    let text = format!("{f}");
    if text.contains('.') {
        text
    } else {
        format!("{text}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_float_vectors() {
        // Observed on the reference: `apizr execute` of a function returning these floats.
        let cases = [
            (1e16, "1e+16"),
            (1e-7, "1e-7"),
            (0.00001, "0.00001"),
            (0.0001, "0.0001"),
            (1.5e300, "1.5e+300"),
            (123456789.0, "123456789.0"),
            (-0.0, "-0.0"),
            (1e22, "1e+22"),
            (12345678901234567.0, "1.2345678901234568e+16"),
            (1.5e-7, "1.5e-7"),
            (2.5, "2.5"),
            (1e15, "1000000000000000.0"),
            (9999999999999998.0, "9999999999999998.0"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.3333333333333333"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (100.0, "100.0"),
            (1e100, "1e+100"),
        ];
        for (f, text) in cases {
            assert_eq!(float(f), text, "{f:?}");
        }
    }

    #[test]
    fn envelope_line() {
        assert_eq!(
            envelope("apizr.execution-result/v1", "success", &Value::Float(36.0)),
            r#"{"schema_version":"apizr.execution-result/v1","status":"success","value":36.0}"#
        );
    }
}
