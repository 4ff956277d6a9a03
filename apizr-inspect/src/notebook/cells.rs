//! What nbconvert's `ipython2python` filter (IPython's `TransformerManager.transform_cell`)
//! does to a code cell, natively: ensure a trailing newline, drop leading blank lines,
//! `textwrap.dedent`, and find IPython syntax (magics, shell escapes, help) that IPython would
//! rewrite into `get_ipython()` calls. Prompt stripping (`>>>`, `In [1]:`) is not reproduced:
//! such cells are refused with a clear message instead of being guessed at.

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr, Stmt};
use ruff_python_parser::{Mode, ParseOptions};
use ruff_text_size::{Ranged, TextRange, TextSize};

/// Python's `str.splitlines(keepends=True)`.
pub fn splitlines_keepends(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end = match c {
            '\r' => match chars.peek() {
                Some((j, '\n')) => {
                    let j = *j;
                    chars.next();
                    j + 1
                }
                _ => i + 1,
            },
            '\n' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}' | '\u{2028}'
            | '\u{2029}' => i + c.len_utf8(),
            _ => continue,
        };
        lines.push(text.get(start..end).unwrap_or(""));
        start = end;
    }
    if start < text.len() {
        lines.push(text.get(start..).unwrap_or(""));
    }
    lines
}

/// Python's `str.isspace` (Unicode White_Space plus the information separators).
fn py_isspace(line: &str) -> bool {
    !line.is_empty()
        && line
            .chars()
            .all(|c| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c))
}

/// `textwrap.dedent` of CPython 3.11 (lines split at `\n`; whitespace-only lines emptied).
pub fn dedent(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let cleaned: Vec<&str> = lines
        .iter()
        .map(|l| {
            if !l.is_empty() && l.bytes().all(|b| b == b' ' || b == b'\t') {
                ""
            } else {
                l
            }
        })
        .collect();
    let mut margin: Option<&str> = None;
    for line in &cleaned {
        let indent_len = line.len() - line.trim_start_matches([' ', '\t']).len();
        if indent_len == line.len() {
            continue; // no non-blank character: not part of the margin computation
        }
        let indent = line.get(..indent_len).unwrap_or("");
        margin = Some(match margin {
            None => indent,
            Some(m) if indent.starts_with(m) => m,
            Some(m) if m.starts_with(indent) => indent,
            Some(m) => {
                let common = m
                    .bytes()
                    .zip(indent.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                m.get(..common).unwrap_or("")
            }
        });
    }
    let margin = margin.unwrap_or("");
    cleaned
        .iter()
        .map(|l| l.strip_prefix(margin).unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The cleanup half of `transform_cell`: the text nbconvert exports for a code cell that
/// contains no IPython syntax.
pub fn clean_cell(source: &str) -> String {
    let mut cell = source.to_string();
    if !cell.ends_with('\n') {
        cell.push('\n');
    }
    let lines = splitlines_keepends(&cell);
    let first = lines.iter().position(|l| !l.is_empty() && !py_isspace(l));
    let kept: String = match first {
        Some(i) => lines.get(i..).unwrap_or(&[]).concat(),
        None => lines.concat(),
    };
    dedent(&kept)
}

/// Does the cleaned cell start with interactive prompts IPython would strip?
pub fn has_prompts(cell: &str) -> bool {
    let lines: Vec<&str> = cell.split('\n').collect();
    let classic = lines.iter().any(|l| {
        let t = l.trim_start();
        t.starts_with(">>>") && matches!(t.as_bytes().get(3), None | Some(b' ' | b'\t' | b'\r'))
    });
    let ipython = lines.iter().take(2).any(|l| {
        l.strip_prefix("In [")
            .and_then(|rest| rest.split_once("]:"))
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    });
    classic || ipython
}

/// What the IPython-mode lexer sees in a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escapes {
    /// No IPython syntax.
    None,
    /// IPython syntax where ruff's parser can locate it.
    Located,
    /// IPython syntax inside brackets or after an operator: the cell is refused as a whole
    /// (ruff's IPython parser must not see it: some such inputs reach an `unreachable!`).
    Unlocated,
}

/// Scan a cell with ruff's IPython-mode lexer (iterative: safe for any nesting).
pub fn scan_escapes(cell: &str) -> Escapes {
    use ruff_python_ast::token::TokenKind as T;
    let mut lexer = ruff_python_parser::lexer::lex(cell, Mode::Ipython);
    let mut depth: i64 = 0;
    let mut previous: Option<T> = None;
    let mut found = Escapes::None;
    loop {
        let kind = lexer.next_token();
        match kind {
            T::EndOfFile => break,
            T::Lpar | T::Lsqb | T::Lbrace => depth += 1,
            T::Rpar | T::Rsqb | T::Rbrace => depth -= 1,
            T::Question => {
                // A help query inside brackets cannot be placed on one statement.
                let level = if depth == 0 {
                    Escapes::Located
                } else {
                    Escapes::Unlocated
                };
                found = found.max_with(level);
            }
            T::IpyEscapeCommand => {
                let at_statement = matches!(
                    previous,
                    None | Some(
                        T::Newline | T::NonLogicalNewline | T::Indent | T::Dedent | T::Equal
                    )
                );
                let level = if depth == 0 && at_statement {
                    Escapes::Located
                } else {
                    Escapes::Unlocated
                };
                found = found.max_with(level);
            }
            _ => {}
        }
        if !matches!(kind, T::Comment | T::NonLogicalNewline) {
            previous = Some(kind);
        }
    }
    found
}

impl Escapes {
    fn max_with(self, other: Escapes) -> Escapes {
        match (self, other) {
            (Escapes::Unlocated, _) | (_, Escapes::Unlocated) => Escapes::Unlocated,
            (Escapes::Located, _) | (_, Escapes::Located) => Escapes::Located,
            _ => Escapes::None,
        }
    }
}

/// Byte ranges (in `cell`) of the statements that IPython would rewrite: escape commands
/// (`%magic`, `!cmd`, `?x`, `x?`, ...) and statements using them (`x = !cmd`). Only call
/// after [`scan_escapes`] said [`Escapes::Located`] and the cell passed the nesting pre-scan.
pub fn ipython_statements(cell: &str) -> Vec<TextRange> {
    let parse = || {
        let parsed = ruff_python_parser::parse_unchecked(cell, ParseOptions::from(Mode::Ipython));
        let mut finder = Finder {
            found: Vec::new(),
            statement: None,
        };
        if let ruff_python_ast::Mod::Module(module) = parsed.syntax() {
            finder.visit_body(&module.body);
        }
        finder.found
    };
    // Defence in depth against parser bugs on malformed IPython input; `scan_escapes` keeps
    // the known case away from the parser.
    std::panic::catch_unwind(parse).unwrap_or_default()
}

struct Finder {
    found: Vec<TextRange>,
    statement: Option<TextRange>,
}

impl<'a> Visitor<'a> for Finder {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if let Stmt::IpyEscapeCommand(_) = stmt {
            self.found.push(stmt.range());
            return;
        }
        let outer = self.statement.replace(stmt.range());
        visitor::walk_stmt(self, stmt);
        self.statement = outer;
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::IpyEscapeCommand(_) = expr {
            self.found.push(self.statement.unwrap_or(expr.range()));
            return;
        }
        visitor::walk_expr(self, expr);
    }
}

/// 0-based line index of a byte offset in `\n`-split text.
pub fn line_of(text: &str, offset: TextSize) -> usize {
    let end = usize::from(offset).min(text.len());
    text.get(..end).map_or(0, |t| t.matches('\n').count())
}
