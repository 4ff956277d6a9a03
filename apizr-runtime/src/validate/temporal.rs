//! `datetime` arguments (readiness v2, `TypeKind::Date`/`Datetime`/`Time`/`Timedelta`): the
//! strict grammar of `apizr_ir::temporal`, checked character by character. The worker
//! (`worker.py` `_temporal`) checks the same grammar and builds the value with the stdlib's
//! constructors, whose ranges (year 1-9999, the month's days, hour < 24, offsets under a day)
//! are the ones checked here, so every string accepted here converts there and every string
//! refused here would not.

use apizr_ir::TypeKind;
use apizr_ir::temporal::{TIMEDELTA_MAX_SECONDS, TIMEDELTA_MIN_SECONDS};

/// Where a string stops matching the grammar (a character offset: the grammar is ASCII, so
/// everything before the offset is one byte per character) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemporalError {
    pub offset: usize,
    pub problem: &'static str,
}

impl std::fmt::Display for TemporalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at character {}", self.problem, self.offset)
    }
}

type Check = Result<usize, TemporalError>;

fn fail<T>(offset: usize, problem: &'static str) -> Result<T, TemporalError> {
    Err(TemporalError { offset, problem })
}

/// Check `text` against the grammar of a `date`, `datetime` or `time` kind.
pub fn check(kind: TypeKind, text: &str) -> Result<(), TemporalError> {
    let s = text.as_bytes();
    let end = match kind {
        TypeKind::Date => date(s, 0)?,
        TypeKind::Time => offset(s, clock(s, 0)?)?,
        _ => {
            let at = date(s, 0)?;
            let at = expect(s, at, b'T', "a `T` between date and time")?;
            offset(s, clock(s, at)?)?
        }
    };
    match end == s.len() {
        true => Ok(()),
        false => fail(end, "an unexpected character"),
    }
}

/// A timedelta's seconds are in range (the value is a finite JSON number).
pub fn seconds_in_range(seconds: f64) -> bool {
    // Both bounds are integers below 2^53, exact as f64.
    (TIMEDELTA_MIN_SECONDS as f64..=TIMEDELTA_MAX_SECONDS as f64).contains(&seconds)
}

fn expect(s: &[u8], at: usize, byte: u8, what: &'static str) -> Check {
    match s.get(at) == Some(&byte) {
        true => Ok(at + 1),
        false => fail(at, what),
    }
}

/// `n` ASCII digits at `at`, as a number.
fn digits(s: &[u8], at: usize, n: usize) -> Result<u32, TemporalError> {
    let mut value = 0;
    for i in at..at + n {
        match s.get(i) {
            Some(c @ b'0'..=b'9') => value = value * 10 + u32::from(c - b'0'),
            _ => return fail(i, "a digit expected"),
        }
    }
    Ok(value)
}

/// `value` is within `range`, else the problem at `at`.
fn within(
    value: u32,
    range: std::ops::RangeInclusive<u32>,
    at: usize,
    problem: &'static str,
) -> Check {
    match range.contains(&value) {
        true => Ok(at),
        false => fail(at, problem),
    }
}

/// `YYYY-MM-DD`, a real day of year 0001-9999.
fn date(s: &[u8], at: usize) -> Check {
    let year = digits(s, at, 4)?;
    within(year, 1..=9999, at, "year 0000 (years are 0001-9999)")?;
    let at = expect(s, at + 4, b'-', "a `-` after the year")?;
    let month = digits(s, at, 2)?;
    within(month, 1..=12, at, "a month outside 01-12")?;
    let at = expect(s, at + 2, b'-', "a `-` after the month")?;
    let day = digits(s, at, 2)?;
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let last = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    within(day, 1..=last, at, "a day the month does not have")?;
    Ok(at + 2)
}

/// `HH:MM:SS` and an optional `.` with 1-6 digits.
fn clock(s: &[u8], at: usize) -> Check {
    within(digits(s, at, 2)?, 0..=23, at, "an hour outside 00-23")?;
    let at = expect(s, at + 2, b':', "a `:` after the hour")?;
    within(digits(s, at, 2)?, 0..=59, at, "a minute outside 00-59")?;
    let at = expect(s, at + 2, b':', "a `:` after the minute")?;
    within(digits(s, at, 2)?, 0..=59, at, "a second outside 00-59")?;
    let at = at + 2;
    if s.get(at) != Some(&b'.') {
        return Ok(at);
    }
    let count = s[at + 1..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    match count {
        0 => fail(at + 1, "a `.` without fraction digits"),
        1..=6 => Ok(at + 1 + count),
        _ => fail(at + 7, "more than 6 fraction digits (microseconds)"),
    }
}

/// Nothing (naive), `Z`, or `±HH:MM` with hour 00-23 and minute 00-59.
fn offset(s: &[u8], at: usize) -> Check {
    match s.get(at) {
        Some(b'Z') => Ok(at + 1),
        Some(b'+' | b'-') => {
            let at = at + 1;
            within(
                digits(s, at, 2)?,
                0..=23,
                at,
                "an offset hour outside 00-23",
            )?;
            let at = expect(s, at + 2, b':', "a `:` in the offset")?;
            within(
                digits(s, at, 2)?,
                0..=59,
                at,
                "an offset minute outside 00-59",
            )?;
            Ok(at + 2)
        }
        _ => Ok(at),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_accepts_rfc_3339_strings_and_says_where_others_stop() {
        for (kind, text) in [
            (TypeKind::Date, "2024-02-29"),
            (TypeKind::Date, "0001-01-01"),
            (TypeKind::Date, "2000-02-29"),
            (TypeKind::Datetime, "9999-12-31T23:59:59.999999-23:59"),
            (TypeKind::Datetime, "2024-01-01T00:00:00Z"),
            (TypeKind::Datetime, "2024-01-01T00:00:00.5"),
            (TypeKind::Time, "12:30:00+05:30"),
            (TypeKind::Time, "00:00:00"),
        ] {
            assert_eq!(check(kind, text), Ok(()), "{text}");
        }
        for (kind, text, offset, problem) in [
            (
                TypeKind::Date,
                "0000-01-01",
                0,
                "year 0000 (years are 0001-9999)",
            ),
            (
                TypeKind::Date,
                "2023-02-29",
                8,
                "a day the month does not have",
            ),
            (
                TypeKind::Date,
                "1900-02-29",
                8,
                "a day the month does not have",
            ),
            (TypeKind::Date, "2024-13-01", 5, "a month outside 01-12"),
            (TypeKind::Date, "20240101", 4, "a `-` after the year"),
            (TypeKind::Date, "2024-01-0١", 9, "a digit expected"),
            (TypeKind::Date, "2024-01-01T", 10, "an unexpected character"),
            (
                TypeKind::Datetime,
                "2024-01-01 00:00:00",
                10,
                "a `T` between date and time",
            ),
            (
                TypeKind::Datetime,
                "2024-01-01t00:00:00",
                10,
                "a `T` between date and time",
            ),
            (
                TypeKind::Datetime,
                "2024-01-01T00:00:00z",
                19,
                "an unexpected character",
            ),
            (
                TypeKind::Datetime,
                "2024-01-01T24:00:00",
                11,
                "an hour outside 00-23",
            ),
            (
                TypeKind::Datetime,
                "2024-01-01T00:00:60",
                17,
                "a second outside 00-59",
            ),
            (
                TypeKind::Datetime,
                "2024-01-01T00:00",
                16,
                "a `:` after the minute",
            ),
            (
                TypeKind::Datetime,
                "2024-01-01T00:00:00.",
                20,
                "a `.` without fraction digits",
            ),
            (
                TypeKind::Datetime,
                "2024-01-01T00:00:00.1234567",
                26,
                "more than 6 fraction digits (microseconds)",
            ),
            (
                TypeKind::Datetime,
                "2024-01-01T00:00:00+24:00",
                20,
                "an offset hour outside 00-23",
            ),
            (
                TypeKind::Datetime,
                "2024-01-01T00:00:00+01:60",
                23,
                "an offset minute outside 00-59",
            ),
            (
                TypeKind::Datetime,
                "2024-01-01T00:00:00+0100",
                22,
                "a `:` in the offset",
            ),
            (
                TypeKind::Datetime,
                "2024-01-01T00:00:00+01:00:00",
                25,
                "an unexpected character",
            ),
            (TypeKind::Time, "1:00:00", 1, "a digit expected"),
            (TypeKind::Time, "", 0, "a digit expected"),
        ] {
            let e = check(kind, text).unwrap_err();
            assert_eq!((e.offset, e.problem), (offset, problem), "{text}");
        }
    }

    #[test]
    fn timedelta_seconds_are_bounded_inside_timedelta_min_and_max() {
        assert!(seconds_in_range(86_399_999_999_999.0));
        assert!(seconds_in_range(-86_399_999_913_600.0));
        assert!(!seconds_in_range(86_399_999_999_999.5));
        assert!(!seconds_in_range(-86_399_999_913_600.5));
        assert!(seconds_in_range(-0.5));
    }
}
