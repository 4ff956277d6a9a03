//! `.ipynb` to Python text, natively, in exactly the layout nbconvert 7.17's
//! `PythonExporter` produces, so `transformed_digest` matches:
//!
//! * header `#!/usr/bin/env python\n# coding: utf-8\n`;
//! * code cell: `\n# In[<count or space>]:\n\n\n` + the cleaned source + `\n` (count 0 and
//!   null both print a space);
//! * markdown cell: `\n` + every `\n`-separated source line as `# <line>\n`;
//! * raw cell without a mimetype (or `text/x-python`): the source verbatim; others dropped.
//!
//! IPython syntax (magics, shell escapes, help) is refused like the reference refuses the
//! `get_ipython()` calls IPython rewrites it into, with the cell and line; with
//! `strip_magics` it is commented out instead (line numbers stay stable) and reported as a
//! [`Note`].

mod cells;
mod preflight;
mod schema;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::Ranged;

use crate::Note;
use crate::error::{InspectError, Position};
use crate::module::ParsedModule;

pub use cells::{clean_cell, dedent};
pub use preflight::{MAX_JSON_DEPTH, MAX_JSON_NODES, lexical_budget};
use schema::CellKind;

/// The exported Python text and what the user should be told about it.
pub struct Export {
    pub text: String,
    pub notes: Vec<Note>,
    /// Where each code cell (and emitted raw cell) landed in `text`, so a line of the text can
    /// be told as a cell and a line in it.
    pub cells: Vec<CellLines>,
}

/// The lines of the exported text that hold one cell's source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellLines {
    /// 1-based position of the cell in the notebook (markdown cells count too).
    pub number: usize,
    /// The `In[n]` count of a code cell, when it has one.
    pub execution_count: Option<u64>,
    /// First and last line of the cell's source in the exported text (1-based, inclusive).
    pub first_line: u32,
    pub last_line: u32,
}

impl CellLines {
    /// The cell holding exported line `line`, and the line within the cell (1-based).
    pub fn locate(cells: &[CellLines], line: u32) -> Option<(&CellLines, u32)> {
        cells
            .iter()
            .find(|c| (c.first_line..=c.last_line).contains(&line))
            .map(|c| (c, line - c.first_line + 1))
    }
}

const HEADER: &str = "#!/usr/bin/env python\n# coding: utf-8\n";

/// Convert notebook bytes to the exported Python text.
pub fn export(bytes: &[u8], strip_magics: bool) -> Result<Export, InspectError> {
    let notebook = preflight::parse(bytes)?;
    let cells = schema::cells(&notebook)?;
    let mut text = String::from(HEADER);
    let mut notes = Vec::new();
    let mut spans = Vec::new();
    for (index, cell) in cells.iter().enumerate() {
        let number = index + 1;
        match cell.kind {
            CellKind::Code => {
                let count = match cell.execution_count {
                    Some(n) if n > 0 => n.to_string(),
                    _ => " ".into(),
                };
                text.push_str(&format!("\n# In[{count}]:\n\n\n"));
                let first_line = line_count(&text) + 1;
                let cleaned = cells::clean_cell(&cell.source);
                if cells::has_prompts(&cleaned) {
                    return Err(InspectError::Notebook {
                        message: format!(
                            "code cell {number} (line {first_line}) contains interactive prompts \
                             (`>>>` or `In [n]:`); remove them"
                        ),
                    });
                }
                let body = handle_magics(cleaned, number, first_line, strip_magics, &mut notes)?;
                text.push_str(&body);
                text.push('\n');
                spans.push(CellLines {
                    number,
                    execution_count: cell.execution_count.filter(|n| *n > 0),
                    first_line,
                    last_line: line_count(&text).max(first_line),
                });
            }
            CellKind::Markdown => {
                text.push('\n');
                for line in cell.source.split('\n') {
                    text.push_str("# ");
                    text.push_str(line);
                    text.push('\n');
                }
            }
            CellKind::Raw => {
                let mimetype = cell.raw_mimetype.unwrap_or("").to_ascii_lowercase();
                if mimetype.is_empty() || mimetype == "text/x-python" {
                    let first_line = line_count(&text) + 1;
                    text.push_str(&cell.source);
                    spans.push(CellLines {
                        number,
                        execution_count: None,
                        first_line,
                        last_line: line_count(&text).max(first_line),
                    });
                }
            }
        }
    }
    Ok(Export {
        text,
        notes,
        cells: spans,
    })
}

/// Lines as CPython counts them in the exported text (`\n`, `\r\n`, lone `\r`).
fn line_count(text: &str) -> u32 {
    let bytes = text.as_bytes();
    let count = bytes
        .iter()
        .enumerate()
        .filter(|(i, b)| **b == b'\n' || (**b == b'\r' && bytes.get(i + 1) != Some(&b'\n')))
        .count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

fn handle_magics(
    cell: String,
    number: usize,
    first_line: u32,
    strip: bool,
    notes: &mut Vec<Note>,
) -> Result<String, InspectError> {
    let lines: Vec<&str> = cell.split('\n').collect();
    let mut stripped: Vec<usize> = Vec::new();
    if cell.starts_with("%%") {
        stripped.extend((0..lines.len()).filter(|i| lines.get(*i).is_some_and(|l| !l.is_empty())));
    } else {
        match cells::scan_escapes(&cell) {
            cells::Escapes::None => {}
            cells::Escapes::Unlocated => {
                return Err(InspectError::NotebookMagics {
                    position: Some(Position {
                        line: first_line,
                        column: 1,
                    }),
                });
            }
            cells::Escapes::Located => {
                crate::budget::prescan(&cell)?;
                let ranges = cells::ipython_statements(&cell);
                if ranges.is_empty() {
                    // The lexer saw IPython syntax the parser did not place: refuse whole.
                    return Err(InspectError::NotebookMagics {
                        position: Some(Position {
                            line: first_line,
                            column: 1,
                        }),
                    });
                }
                for range in ranges {
                    let first = cells::line_of(&cell, range.start());
                    let end = range.end().checked_sub(1.into()).unwrap_or(range.end());
                    let last = cells::line_of(&cell, end);
                    stripped.extend(first..=last.max(first));
                }
            }
        }
        stripped.sort_unstable();
        stripped.dedup();
    }
    let Some(first) = stripped.first() else {
        return Ok(cell);
    };
    let position = |line: usize| Position {
        line: first_line.saturating_add(u32::try_from(line).unwrap_or(u32::MAX)),
        column: 1,
    };
    if !strip {
        return Err(InspectError::NotebookMagics {
            position: Some(position(*first)),
        });
    }
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_string()).collect();
    for &index in &stripped {
        let Some(line) = out.get_mut(index) else {
            continue;
        };
        let body = line.trim_start_matches([' ', '\t']);
        let indent = line.get(..line.len() - body.len()).unwrap_or("");
        let replacement = if indent.is_empty() || cell.starts_with("%%") {
            format!("# {line}")
        } else {
            format!("{indent}pass  # {body}")
        };
        notes.push(Note {
            position: Some(position(index)),
            message: format!(
                "code cell {number}: IPython syntax commented out: {}",
                body.trim_end()
            ),
        });
        *line = replacement;
    }
    Ok(out.join("\n"))
}

/// The first call to a bare `get_ipython` name anywhere in the module.
pub fn find_get_ipython_call(parsed: &ParsedModule) -> Option<Position> {
    let mut finder = GetIpython { found: None };
    finder.visit_body(parsed.body());
    finder.found.map(|offset| parsed.position(offset))
}

struct GetIpython {
    found: Option<ruff_text_size::TextSize>,
}

impl<'a> Visitor<'a> for GetIpython {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if self.found.is_some() {
            return;
        }
        if let Expr::Call(ExprCall { func, .. }) = expr
            && matches!(func.as_ref(), Expr::Name(name) if name.id.as_str() == "get_ipython")
        {
            self.found = Some(expr.start());
            return;
        }
        visitor::walk_expr(self, expr);
    }
}

#[cfg(test)]
mod tests;
