//! `str.isprintable()` of CPython 3.11 (Unicode 14.0.0) for one character.
//!
//! `repr` and `_str_literal_helper` escape exactly the non-printable characters, so the table
//! must be CPython's, not Rust's idea of "printable". It is generated from CPython itself.

#[path = "printable_table.rs"]
mod table;

/// `chr(c).isprintable()` in CPython 3.11.
pub(crate) fn is_printable(c: char) -> bool {
    let code = u32::from(c);
    table::NON_PRINTABLE
        .binary_search_by(|&(lo, hi)| {
            if hi < code {
                std::cmp::Ordering::Less
            } else if lo > code {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_err()
}

#[cfg(test)]
mod tests {
    use super::is_printable;

    #[test]
    fn matches_known_cpython_answers() {
        for c in [' ', 'a', '~', 'é', '\u{a1}', '中', '😀'] {
            assert!(is_printable(c), "{c:?}");
        }
        for c in [
            '\0', '\n', '\t', '\u{7f}', '\u{a0}', '\u{ad}', '\u{200b}', '\u{2028}',
        ] {
            assert!(!is_printable(c), "{c:?}");
        }
        assert!(!is_printable('\u{10ffff}'));
    }
}
