//! Docstrings: CPython 3.11 `ast.get_docstring(node, clean=True)`.
//!
//! A docstring is the first body statement when it is an expression statement holding a plain
//! `str` constant (implicit concatenation included; f-strings and bytes are not docstrings).
//! Cleaning is a port of `inspect.cleandoc`: `expandtabs(8)`, split on `\n`, strip the first line,
//! remove the common indentation of the other non-blank lines (counted in code points), then drop
//! leading and trailing *empty* lines.

use ruff_python_ast::{Expr, Stmt};

/// The cleaned docstring of a function body, if any.
pub fn docstring(body: &[Stmt]) -> Option<String> {
    match body.first()? {
        Stmt::Expr(stmt) => match stmt.value.as_ref() {
            Expr::StringLiteral(literal) => Some(cleandoc(literal.value.to_str())),
            _ => None,
        },
        _ => None,
    }
}

/// Python's `str.isspace` (Rust's `char::is_whitespace` lacks U+001C..U+001F).
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `str.expandtabs(8)`: the column resets after `\n` and `\r`.
fn expand_tabs(text: &str) -> String {
    const TAB: usize = 8;
    let mut out = String::with_capacity(text.len());
    let mut column = 0usize;
    for c in text.chars() {
        match c {
            '\t' => {
                let pad = TAB - column % TAB;
                out.extend(std::iter::repeat_n(' ', pad));
                column += pad;
            }
            '\n' | '\r' => {
                out.push(c);
                column = 0;
            }
            _ => {
                out.push(c);
                column += 1;
            }
        }
    }
    out
}

/// `inspect.cleandoc` (CPython 3.11).
pub fn cleandoc(doc: &str) -> String {
    let expanded = expand_tabs(doc);
    let mut lines: Vec<Vec<char>> = expanded.split('\n').map(|l| l.chars().collect()).collect();
    let mut margin = usize::MAX;
    for line in lines.iter().skip(1) {
        let content = line.iter().skip_while(|c| is_py_space(**c)).count();
        if content > 0 {
            margin = margin.min(line.len() - content);
        }
    }
    if let Some(first) = lines.first_mut() {
        let keep: Vec<char> = first
            .iter()
            .copied()
            .skip_while(|c| is_py_space(*c))
            .collect();
        *first = keep;
    }
    if margin < usize::MAX {
        for line in lines.iter_mut().skip(1) {
            *line = line.get(margin..).map(<[char]>::to_vec).unwrap_or_default();
        }
    }
    while lines.last().is_some_and(Vec::is_empty) {
        lines.pop();
    }
    let first_kept = lines
        .iter()
        .position(|l| !l.is_empty())
        .unwrap_or(lines.len());
    let kept: Vec<String> = lines
        .get(first_kept..)
        .unwrap_or_default()
        .iter()
        .map(|l| l.iter().collect())
        .collect();
    kept.join("\n")
}

#[cfg(test)]
mod tests {
    use super::cleandoc;

    /// Vectors produced by CPython 3.11.7 `inspect.cleandoc`.
    #[test]
    fn cleandoc_vectors() {
        let cases = [
            ("  Doc\n       more\n    ", "Doc\nmore"),
            ("\n\ttab indented\n\t  more\n\n    ", "tab indented\n  more"),
            ("   ", ""),
            ("\n\n  x\n    y\n\n", "x\n  y"),
            (
                "first line\n  second\n    third",
                "first line\nsecond\n  third",
            ),
            ("  lead\n\ttabbed\n  x", "lead\n      tabbed\nx"),
            ("x\r\ny", "x\r\ny"),
            ("x\x0cy\n  z", "x\x0cy\nz"),
            ("a\n\u{1c}b\n c", "a\nb\nc"),
            ("a\n \n  b", "a\n\nb"),
            ("", ""),
        ];
        for (input, expected) in cases {
            assert_eq!(cleandoc(input), expected, "input {input:?}");
        }
    }
}
