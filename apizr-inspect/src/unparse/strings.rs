//! String and bytes literal text exactly as CPython 3.11 writes it.
//!
//! Three CPython routines are ported here because `ast.unparse` leans on all of them:
//! `repr(str)` / `repr(bytes)` (plain constants), the `unicode_escape` codec (used for single
//! characters by `_str_literal_helper`), and `_Unparser._str_literal_helper` itself, which picks
//! a quote style that avoids backslashes (f-strings and their nested expressions).

use super::printable::is_printable;

/// `_ALL_QUOTES` in CPython's order: `'`, `"`, `"""`, `'''`.
pub(crate) const ALL_QUOTES: [&str; 4] = ["'", "\"", "\"\"\"", "'''"];
const MULTI_QUOTES: [&str; 2] = ["\"\"\"", "'''"];

fn push_hex(out: &mut String, prefix: &str, value: u32, width: usize) {
    out.push_str(prefix);
    out.push_str(&format!("{value:0width$x}"));
}

/// Escape a non-printable (or non-ASCII) code point the way `repr` and `unicode_escape` do.
fn push_code_point_escape(out: &mut String, c: char) {
    let code = u32::from(c);
    if code < 0x100 {
        push_hex(out, "\\x", code, 2);
    } else if code < 0x10000 {
        push_hex(out, "\\u", code, 4);
    } else {
        push_hex(out, "\\U", code, 8);
    }
}

/// Which quote `repr(str)` uses: `'` unless the text has `'` and no `"`.
fn repr_quote(has_single: bool, has_double: bool) -> char {
    if has_single && !has_double { '"' } else { '\'' }
}

/// The body of `repr(s)` (without the surrounding quotes) for a given quote character.
fn push_repr_body(out: &mut String, s: &str, quote: char) {
    push_repr_units(out, s.chars().map(u32::from), quote);
}

/// `push_repr_body` over code points, which may include lone surrogates (`\ud800`).
fn push_repr_units(out: &mut String, units: impl Iterator<Item = u32>, quote: char) {
    for unit in units {
        let Some(c) = char::from_u32(unit) else {
            // A lone surrogate: category Cs, never printable.
            push_hex(out, "\\u", unit, 4);
            continue;
        };
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => push_code_point_escape(out, c),
            c if (c as u32) < 0x7f => out.push(c),
            c if is_printable(c) => out.push(c),
            c => push_code_point_escape(out, c),
        }
    }
}

/// CPython `repr(str)`.
pub(crate) fn repr_str(s: &str) -> String {
    let quote = repr_quote(s.contains('\''), s.contains('"'));
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    push_repr_body(&mut out, s, quote);
    out.push(quote);
    out
}

/// CPython `repr(str)` for a string given as code points (lone surrogates allowed).
pub(crate) fn repr_units(units: &[u32]) -> String {
    let quote = repr_quote(
        units.contains(&u32::from('\'')),
        units.contains(&u32::from('"')),
    );
    let mut out = String::with_capacity(units.len() + 2);
    out.push(quote);
    push_repr_units(&mut out, units.iter().copied(), quote);
    out.push(quote);
    out
}

/// CPython `repr(bytes)`.
pub(crate) fn repr_bytes(bytes: &[u8]) -> String {
    let quote = repr_quote(bytes.contains(&b'\''), bytes.contains(&b'"'));
    let mut out = String::with_capacity(bytes.len() + 3);
    out.push('b');
    out.push(quote);
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b if char::from(b) == quote => {
                out.push('\\');
                out.push(char::from(b));
            }
            0x20..=0x7e => out.push(char::from(b)),
            b => push_hex(&mut out, "\\x", u32::from(b), 2),
        }
    }
    out.push(quote);
    out
}

/// `escape_char` inside `_str_literal_helper`: backslashes and non-printables go through the
/// `unicode_escape` codec; `\n` and `\t` only when `escape_special_whitespace` is set.
fn push_helper_escaped(out: &mut String, c: char, escape_special_whitespace: bool) {
    if !escape_special_whitespace && (c == '\n' || c == '\t') {
        out.push(c);
        return;
    }
    if c == '\\' {
        out.push_str("\\\\");
    } else if is_printable(c) {
        out.push(c);
    } else {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => push_code_point_escape(out, c),
        }
    }
}

/// `_Unparser._str_literal_helper`: returns the escaped body and the quote types still possible.
pub(crate) fn str_literal_helper(
    string: &str,
    quote_types: &[&'static str],
    escape_special_whitespace: bool,
) -> (String, Vec<&'static str>) {
    let mut escaped = String::with_capacity(string.len());
    for c in string.chars() {
        push_helper_escaped(&mut escaped, c, escape_special_whitespace);
    }
    let mut possible: Vec<&'static str> = quote_types.to_vec();
    if escaped.contains('\n') {
        possible.retain(|q| MULTI_QUOTES.contains(q));
    }
    possible.retain(|q| !escaped.contains(q));
    if possible.is_empty() {
        // Fall back to repr of the original string, preferring a quote type that contains
        // repr's own quote character (e.g. triple quotes for docstrings).
        let repr = repr_str(string);
        let repr_quote = repr.chars().next().unwrap_or('\'');
        let quote = quote_types
            .iter()
            .copied()
            .find(|q| q.contains(repr_quote))
            .unwrap_or(if repr_quote == '"' { "\"" } else { "'" });
        let body = strip_one_quote_each_side(&repr);
        return (body.to_owned(), vec![quote]);
    }
    if let Some(last) = escaped.chars().last() {
        // Stable sort: quote types that do not start with the final character come first.
        possible.sort_by_key(|q| q.starts_with(last));
        if possible.first().is_some_and(|q| q.starts_with(last)) {
            escaped.pop();
            escaped.push('\\');
            escaped.push(last);
        }
    }
    (escaped, possible)
}

/// `string[1:-1]` for a repr whose first and last characters are ASCII quotes.
fn strip_one_quote_each_side(repr: &str) -> &str {
    repr.get(1..repr.len().saturating_sub(1)).unwrap_or("")
}

/// `repr('"' + value)[2:-1]`: the body of a single-quoted repr, used by the f-string fallback.
pub(crate) fn single_quoted_repr_body(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    push_repr_body(&mut out, value, '\'');
    out
}

/// `_write_str_avoiding_backslashes`: a complete literal with the best quote type.
pub(crate) fn str_avoiding_backslashes(string: &str, quote_types: &[&'static str]) -> String {
    let (body, quotes) = str_literal_helper(string, quote_types, false);
    let quote = quotes.first().copied().unwrap_or("'");
    let mut out = String::with_capacity(body.len() + 2 * quote.len());
    out.push_str(quote);
    out.push_str(&body);
    out.push_str(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repr_matches_cpython_examples() {
        assert_eq!(repr_str("it's"), "\"it's\"");
        assert_eq!(repr_str("'\""), "'\\'\"'");
        assert_eq!(
            repr_str("\u{0}é\n\u{7f}\u{a0}\u{200b}"),
            "'\\x00é\\n\\x7f\\xa0\\u200b'"
        );
        assert_eq!(repr_str("\u{e0001}"), "'\\U000e0001'");
        assert_eq!(repr_units(&[0x61, 0xd800, 0x27]), "\"a\\ud800'\"");
        assert_eq!(repr_bytes(b"x'\x00\xff"), "b\"x'\\x00\\xff\"");
    }

    #[test]
    fn helper_prefers_quotes_that_avoid_escapes() {
        assert_eq!(str_avoiding_backslashes("it's", &ALL_QUOTES), "\"it's\"");
        assert_eq!(str_avoiding_backslashes("'\"", &ALL_QUOTES), "''''\"'''");
        assert_eq!(
            str_avoiding_backslashes("'''\"\"\"", &ALL_QUOTES),
            r#"'\'\'\'"""'"#
        );
        assert_eq!(
            str_avoiding_backslashes("a\nb", &ALL_QUOTES),
            "\"\"\"a\nb\"\"\""
        );
        assert_eq!(str_avoiding_backslashes("a\"", &ALL_QUOTES), "'a\"'");
    }
}
