//! Rendering inspection errors for a person: one line that editors and terminals can jump to
//! (`apizr inspect: path:line:col: message`), then, when we know where the problem is, the
//! offending source line with a caret under the column, the way rustc and ruff show it.
//!
//! This is where apizr deliberately differs from the reference tool, which prints syntax errors
//! without any position.

use std::fmt::Write as _;
use std::path::Path;

use apizr_inspect::{InspectError, Position};

use crate::style::Style;

/// Tabs in a displayed source line are expanded to this many spaces so the caret lines up.
const TAB_WIDTH: usize = 4;

/// What the renderer knows about the command that failed.
pub struct Context<'a> {
    pub command: &'a str,
    pub path: &'a Path,
    /// True when the module name came from the file name rather than `--module-name`.
    pub derived_module_name: bool,
    pub is_notebook: bool,
}

/// The full stderr text for an inspection error (ends with a newline).
pub fn render(error: &InspectError, context: &Context<'_>, style: Style) -> String {
    let path = context.path.display();
    let prefix = style.error(&format!("apizr {}:", context.command));
    let mut out = String::new();
    match error {
        InspectError::Read { message, .. } => {
            let _ = writeln!(out, "{prefix} {path}: {message}");
        }
        InspectError::UnsupportedSuffix { .. }
        | InspectError::Encoding(_)
        | InspectError::Unparse(_) => {
            let _ = writeln!(out, "{prefix} {error}");
        }
        InspectError::ModuleName { .. } => {
            let _ = writeln!(out, "{prefix} {error}");
            if context.derived_module_name {
                let _ = writeln!(
                    out,
                    "{} the file name is not an importable module name; \
                     choose one with `--module-name NAME`",
                    style.bold("hint:")
                );
            }
        }
        InspectError::Syntax {
            message,
            position,
            line_text,
        } => {
            let _ = writeln!(out, "{prefix} {}: {message}", located(context, *position));
            snippet(&mut out, line_text, *position, style);
            notebook_note(&mut out, context, style);
        }
        InspectError::Decode { message, position } => match position {
            Some(position) => {
                let _ = writeln!(out, "{prefix} {}: {message}", located(context, *position));
                if let Some(line_text) = source_line(context.path, position.line) {
                    snippet(&mut out, &line_text, *position, style);
                }
            }
            None => {
                let _ = writeln!(out, "{prefix} {path}: {message}");
            }
        },
        InspectError::NotebookMagics { position } => {
            let location = match position {
                Some(position) => located(context, *position),
                None => path.to_string(),
            };
            let _ = writeln!(out, "{prefix} {location}: {error}");
            notebook_note(&mut out, context, style);
            let _ = writeln!(
                out,
                "{} `--strip-magics` comments those lines out and inspects the rest",
                style.bold("hint:")
            );
        }
        InspectError::DuplicateParameter { position, .. } => {
            let _ = writeln!(out, "{prefix} {}: {error}", located(context, *position));
        }
        InspectError::TooLarge { .. }
        | InspectError::StructureLimit { .. }
        | InspectError::Notebook { .. } => {
            let _ = writeln!(out, "{prefix} {path}: {error}");
        }
    }
    out
}

fn located(context: &Context<'_>, position: Position) -> String {
    format!(
        "{}:{}:{}",
        context.path.display(),
        position.line,
        position.column
    )
}

fn notebook_note(out: &mut String, context: &Context<'_>, style: Style) {
    if context.is_notebook {
        let _ = writeln!(
            out,
            "{} line numbers of a notebook refer to its exported Python text",
            style.bold("note:")
        );
    }
}

/// The source line and a caret line under `position.column` (1-based, in characters).
fn snippet(out: &mut String, line_text: &str, position: Position, style: Style) {
    let number = position.line.to_string();
    let gutter = " ".repeat(number.len());
    let mut shown = String::new();
    let mut caret_offset = 0;
    let column = position.column.saturating_sub(1) as usize;
    for (index, ch) in line_text.trim_end_matches(['\r', '\n']).chars().enumerate() {
        let width = if ch == '\t' { TAB_WIDTH } else { 1 };
        if index < column {
            caret_offset += width;
        }
        if ch == '\t' {
            shown.push_str(&" ".repeat(TAB_WIDTH));
        } else if ch.is_control() {
            shown.push(' ');
        } else {
            shown.push(ch);
        }
    }
    let shown_len = shown.chars().count();
    if column > shown_len {
        caret_offset = caret_offset.max(shown_len);
    }
    let bar = style.dim("|");
    let _ = writeln!(out, "{gutter} {bar}");
    let _ = writeln!(out, "{} {bar} {shown}", style.dim(&number));
    let _ = writeln!(
        out,
        "{gutter} {bar} {}{}",
        " ".repeat(caret_offset),
        style.error("^")
    );
}

/// Line `line` (1-based) of a file, decoded leniently (used for decoding errors, whose text we
/// could not decode in the first place).
fn source_line(path: &Path, line: u32) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let raw = bytes
        .split(|b| *b == b'\n')
        .nth(line.checked_sub(1)? as usize)?;
    Some(String::from_utf8_lossy(raw).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caret_sits_under_the_column_with_tabs_expanded() {
        let mut out = String::new();
        snippet(
            &mut out,
            "\tx = (1,",
            Position {
                line: 12,
                column: 6,
            },
            Style::PLAIN,
        );
        assert_eq!(out, "   |\n12 |     x = (1,\n   |         ^\n");
    }

    #[test]
    fn caret_after_the_end_of_the_line_stays_at_the_end() {
        let mut out = String::new();
        snippet(
            &mut out,
            "def f(",
            Position {
                line: 1,
                column: 40,
            },
            Style::PLAIN,
        );
        assert_eq!(out, "  |\n1 | def f(\n  |       ^\n");
    }
}
