//! Readiness v2 `datetime` types as JSON (`TypeKind::Date`, `Datetime`, `Time`, `Timedelta`):
//! the one contract the JSON Schema states, the server validates (`apizr-runtime`
//! `validate/temporal.rs`) and the worker converts (`worker.py` `_temporal`).
//!
//! * `datetime.date`: `YYYY-MM-DD` (RFC 3339 full-date), year 0001–9999, a real calendar day.
//! * `datetime.time`: `HH:MM:SS[.f]` with 1–6 fraction digits (microseconds, never rounded),
//!   hour 00–23, minute and second 00–59 (no leap second: Python has none), then nothing (a
//!   **naive** time), `Z` (UTC) or `±HH:MM` (hour 00–23, minute 00–59; an **aware** time with
//!   that fixed offset, `datetime.timezone`).
//! * `datetime.datetime`: a date, `T`, a time as above: naive without an offset, aware with one.
//! * `datetime.timedelta`: a JSON number of seconds (`timedelta(seconds=x)`, fractions rounded
//!   to microseconds half to even by Python) within
//!   [[`TIMEDELTA_MIN_SECONDS`], [`TIMEDELTA_MAX_SECONDS`]] (inside `timedelta.min`/`max`, so
//!   the constructor never overflows).
//!
//! Why a grammar of its own rather than `fromisoformat`: CPython 3.11's `fromisoformat`
//! accepts far more (`20200101`, week dates, `2020-01-01 10`, any number of fraction digits
//! truncated, offsets with seconds) and that set changes between versions; this strict subset
//! is what both sides check character by character, so a 422 from the server and a conversion
//! error in the worker can never disagree. Lower-case `t`/`z` and a space separator, which RFC
//! 3339 allows, are refused on both sides (JSON Schema `format` is annotation-only, so the
//! schema states the grammar as a `pattern` and the calendar rule in its `description`).
//! Inputs only: a return type holding them stays READY-016.

use crate::json::Value;
use crate::readiness::TypeKind;

/// `timedelta.min` in seconds (-999999999 days).
pub const TIMEDELTA_MIN_SECONDS: i64 = -86_399_999_913_600;
/// The last whole second before `timedelta.max` (999999999 days, 23:59:59.999999).
pub const TIMEDELTA_MAX_SECONDS: i64 = 86_399_999_999_999;

const YEAR: &str = "([0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})";
const DATE: &str = "-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])";
const CLOCK: &str = "([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,6})?";
const OFFSET: &str = "(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])?";

/// The JSON Schema of a temporal kind, `None` for every other kind.
pub fn schema(kind: TypeKind) -> Option<Value> {
    let (pattern, description) = match kind {
        TypeKind::Date => (
            format!("^{YEAR}{DATE}$"),
            "datetime.date: YYYY-MM-DD, a real calendar day of year 0001-9999",
        ),
        TypeKind::Time => (
            format!("^{CLOCK}{OFFSET}$"),
            "datetime.time: HH:MM:SS with 1-6 fraction digits optional; naive without an offset, aware (fixed offset) with Z or +HH:MM/-HH:MM",
        ),
        TypeKind::Datetime => (
            format!("^{YEAR}{DATE}T{CLOCK}{OFFSET}$"),
            "datetime.datetime: YYYY-MM-DDTHH:MM:SS with 1-6 fraction digits optional, a real calendar day; naive without an offset, aware (fixed offset) with Z or +HH:MM/-HH:MM",
        ),
        TypeKind::Timedelta => {
            return Some(object(vec![
                (
                    "description",
                    Value::Str(
                        "datetime.timedelta: seconds, fractions rounded to microseconds".into(),
                    ),
                ),
                ("maximum", Value::Int(TIMEDELTA_MAX_SECONDS)),
                ("minimum", Value::Int(TIMEDELTA_MIN_SECONDS)),
                ("type", Value::Str("number".into())),
            ]));
        }
        _ => return None,
    };
    Some(object(vec![
        ("description", Value::Str(description.into())),
        ("pattern", Value::Str(pattern)),
        ("type", Value::Str("string".into())),
    ]))
}

fn object(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}
