//! Source spans with CPython line semantics.
//!
//! CPython's `FunctionDef.lineno` is the line of the `def` (or `async`) keyword, while ruff's
//! function range starts at the first decorator, so the keyword is found by scanning backwards
//! from the function name over blanks and backslash continuations. `end_line` is CPython's
//! `end_lineno`: the end of the last body statement, which is where ruff's range ends too.

use apizr_ir::Span;
use ruff_python_ast::{Stmt, StmtFunctionDef};
use ruff_text_size::{Ranged, TextSize};

use crate::module::ParsedModule;

/// Byte offset just before any blanks / line continuations that end at `end`.
fn skip_back_blanks(text: &str, mut end: usize) -> usize {
    let bytes = text.as_bytes();
    loop {
        let before = end;
        while end > 0 && matches!(bytes.get(end - 1), Some(b' ' | b'\t' | b'\x0c')) {
            end -= 1;
        }
        let prefix = text.get(..end).unwrap_or("");
        for continuation in ["\\\r\n", "\\\n", "\\\r"] {
            if prefix.ends_with(continuation) {
                end -= continuation.len();
                break;
            }
        }
        if end == before {
            return end;
        }
    }
}

/// The offset of the `def` (or, for `async def`, the `async`) keyword.
fn keyword_offset(parsed: &ParsedModule, def: &StmtFunctionDef) -> TextSize {
    let text = parsed.text.as_str();
    let name_start = usize::from(def.name.start());
    let mut at = skip_back_blanks(text, name_start).saturating_sub("def".len());
    if def.is_async {
        at = skip_back_blanks(text, at).saturating_sub("async".len());
    }
    u32::try_from(at).map(TextSize::from).unwrap_or(def.start())
}

/// The span of a function definition, labelled with `symbol`.
pub fn function_span(parsed: &ParsedModule, def: &StmtFunctionDef, symbol: &str) -> Span {
    Span {
        module: parsed.module.clone(),
        symbol: symbol.to_string(),
        line: parsed.line(keyword_offset(parsed, def)),
        end_line: parsed.end_line(def),
    }
}

/// The span of a whole statement (used for lambda assignments).
pub fn statement_span(parsed: &ParsedModule, stmt: &Stmt, symbol: &str) -> Span {
    Span {
        module: parsed.module.clone(),
        symbol: symbol.to_string(),
        line: parsed.start_line(stmt),
        end_line: parsed.end_line(stmt),
    }
}
