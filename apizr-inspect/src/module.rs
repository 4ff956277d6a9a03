//! A parsed Python module: decoded text, logical module name, AST and line index.
//!
//! Everything downstream (discovery, readiness) reads from this one value.

use ruff_python_ast::PythonVersion;
use ruff_python_ast::{ModModule, Stmt};
use ruff_python_parser::{Mode, ParseOptions};
use ruff_source_file::LineIndex;
use ruff_text_size::{Ranged, TextSize};

use crate::error::{InspectError, Position};

pub struct ParsedModule {
    /// The decoded Python text (for notebooks: the exported text).
    pub text: String,
    /// The logical module name (`pkg.sub.mod`).
    pub module: String,
    pub ast: ModModule,
    line_index: LineIndex,
    /// The first expression CPython's `ast.unparse` would refuse (the reference then fails the
    /// whole inspection with exit 2); recorded by [`ParsedModule::declared_text`].
    unparse_error: std::cell::RefCell<Option<crate::unparse::UnparseError>>,
}

impl ParsedModule {
    /// Parse `text` with the CPython 3.11 grammar: newer syntax (PEP 695, 701, ...) is a syntax
    /// error, as it is for the reference tool running on CPython 3.11.
    ///
    /// Like CPython's tokenizer, `\r\n` and lone `\r` are read as `\n` first (a no-op for
    /// text from [`crate::decode`]; notebook exports may contain them), so line numbers and
    /// string values match `ast.parse`. NUL characters are refused as CPython refuses them.
    pub fn parse(text: String, module: String) -> Result<Self, InspectError> {
        let text = if text.contains('\r') {
            crate::decode::translate_newlines(&text)
        } else {
            text
        };
        if let Some(offset) = text.find('\0') {
            let position = crate::decode::position_in_text(&text, offset);
            return Err(InspectError::Decode {
                message: format!(
                    "source code cannot contain null bytes (line {}, column {})",
                    position.line, position.column
                ),
                position: Some(position),
            });
        }
        let options = ParseOptions::from(Mode::Module).with_target_version(PythonVersion::PY311);
        let parsed = ruff_python_parser::parse_unchecked(&text, options);
        let line_index = LineIndex::from_source_text(&text);
        if let Some(error) = parsed.errors().first() {
            return Err(syntax_error(
                &text,
                &line_index,
                error.location.start(),
                error.error.to_string(),
            ));
        }
        if let Some(error) = parsed.unsupported_syntax_errors().first() {
            return Err(syntax_error(
                &text,
                &line_index,
                error.range.start(),
                format!("{error} (not valid on Python 3.11)"),
            ));
        }
        let ast = match parsed.into_syntax() {
            ruff_python_ast::Mod::Module(module) => module,
            ruff_python_ast::Mod::Expression(_) => {
                return Err(InspectError::StructureLimit {
                    message: "parser did not return a module".into(),
                });
            }
        };
        Ok(ParsedModule {
            text,
            module,
            ast,
            line_index,
            unparse_error: std::cell::RefCell::new(None),
        })
    }

    /// CPython 3.11 `ast.unparse` text of an expression of this module. If CPython would raise,
    /// the first such error is kept for [`ParsedModule::take_unparse_error`] and a best-effort
    /// text is returned so that building can finish.
    pub fn declared_text(&self, expr: &ruff_python_ast::Expr) -> String {
        match crate::unparse::try_unparse_with_source(expr, &self.text) {
            Ok(text) => text,
            Err(error) => {
                let text = crate::unparse::unparse_with_source(expr, &self.text);
                self.unparse_error.borrow_mut().get_or_insert(error);
                text
            }
        }
    }

    /// The first unparse refusal recorded by [`ParsedModule::declared_text`], if any.
    pub fn take_unparse_error(&self) -> Option<crate::unparse::UnparseError> {
        self.unparse_error.borrow_mut().take()
    }

    pub fn body(&self) -> &[Stmt] {
        &self.ast.body
    }

    /// 1-based line of a byte offset (the text holds only `\n` line breaks, see [`Self::parse`]).
    pub fn line(&self, offset: TextSize) -> u32 {
        self.line_index.line_index(offset).get() as u32
    }

    /// Offset of the first character of 1-based `line` (the end of the text past the last line).
    pub fn line_start(&self, line: u32) -> TextSize {
        let index = ruff_source_file::OneIndexed::new(line as usize)
            .unwrap_or(ruff_source_file::OneIndexed::MIN);
        self.line_index.line_start(index, &self.text)
    }

    /// 1-based line where a node starts.
    pub fn start_line<T: Ranged>(&self, node: &T) -> u32 {
        self.line(node.start())
    }

    /// 1-based line where a node ends (the line holding its last character): CPython's
    /// `end_lineno`, since no node's range ends with a line break.
    pub fn end_line<T: Ranged>(&self, node: &T) -> u32 {
        let end = node.end();
        if end > TextSize::from(0) && end > node.start() {
            self.line(end - TextSize::from(1))
        } else {
            self.line(end)
        }
    }

    /// CPython's `lineno` of a statement: for a decorated `def`/`class`, the line of the
    /// keyword (ruff's range starts at the first decorator).
    pub fn stmt_line(&self, stmt: &Stmt) -> u32 {
        let last_decorator = match stmt {
            Stmt::FunctionDef(def) => def.decorator_list.last(),
            Stmt::ClassDef(class) => class.decorator_list.last(),
            _ => None,
        };
        let Some(decorator) = last_decorator else {
            return self.start_line(stmt);
        };
        // Skip trivia after the decorator: whitespace, comments, line continuations and the
        // closing parentheses of a parenthesized decorator expression.
        let bytes = self.text.as_bytes();
        let mut offset = usize::from(decorator.end());
        while let Some(&byte) = bytes.get(offset) {
            match byte {
                b' ' | b'\t' | b'\x0c' | b'\r' | b'\n' | b'\\' | b')' => offset += 1,
                b'#' => {
                    while bytes
                        .get(offset)
                        .is_some_and(|b| *b != b'\n' && *b != b'\r')
                    {
                        offset += 1;
                    }
                }
                _ => break,
            }
        }
        let offset = u32::try_from(offset).unwrap_or(u32::MAX);
        self.line(TextSize::from(offset).min(stmt.end()))
    }

    /// Source text of a node.
    pub fn slice<T: Ranged>(&self, node: &T) -> &str {
        &self.text[node.range()]
    }

    pub fn position(&self, offset: TextSize) -> Position {
        position_of(&self.text, &self.line_index, offset)
    }
}

fn position_of(text: &str, index: &LineIndex, offset: TextSize) -> Position {
    let lc = index.line_column(offset, text);
    Position {
        line: lc.line.get() as u32,
        column: lc.column.get() as u32,
    }
}

fn syntax_error(text: &str, index: &LineIndex, offset: TextSize, message: String) -> InspectError {
    let position = position_of(text, index, offset);
    // Lines are split like the line index splits them (`\n`, `\r\n` and lone `\r`).
    let line_text = text
        .split('\n')
        .flat_map(|l| l.strip_suffix('\r').unwrap_or(l).split('\r'))
        .nth(position.line.saturating_sub(1) as usize)
        .unwrap_or("")
        .to_string();
    InspectError::Syntax {
        message,
        position,
        line_text,
    }
}
