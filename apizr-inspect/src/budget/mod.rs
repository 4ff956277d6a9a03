//! Structure budgets: what the reference refuses because of size or nesting, and what we
//! must refuse *before* parsing so the recursive-descent parser cannot exhaust the stack.
//!
//! * [`prescan`] runs on the text before ruff sees it. It reproduces CPython 3.11's tokenizer
//!   limits exactly (201 nested brackets: "too many nested parentheses"; 100 indentation
//!   levels: "too many levels of indentation"; f-string format specs nested more than two
//!   deep) and bounds the nesting of every expression: any expression whose syntactic
//!   nesting could exceed [`MAX_EXPRESSION_NESTING`] is refused. CPython's AST is then at
//!   least that deep or the statement is invalid, and the reference refuses it too (depth
//!   128, or `MemoryError`/`RecursionError` for thousands of levels).
//! * [`check_structure`] measures the parsed tree like CPython's `ast` walk: at most
//!   100,000 nodes and depth 128 (module at depth 0), else `source_structure_limit`.

mod prescan;
pub mod walk;

pub use prescan::{MAX_BRACKET_DEPTH, MAX_EXPRESSION_NESTING, MAX_INDENT_LEVELS, prescan};

use crate::error::InspectError;
use crate::module::ParsedModule;

/// The reference's node budget (the `Module` node included).
pub const MAX_NODES: usize = 100_000;
/// The reference's depth budget (the `Module` node is at depth 0).
pub const MAX_DEPTH: usize = 128;

/// At most 100,000 CPython AST nodes and depth 128.
pub fn check_structure(module: &ParsedModule) -> Result<(), InspectError> {
    let shape = walk::measure(module.body(), MAX_NODES, MAX_DEPTH);
    if shape.nodes > MAX_NODES {
        return Err(InspectError::StructureLimit {
            message: format!(
                "source_structure_limit: the module has more than {MAX_NODES} AST nodes"
            ),
        });
    }
    if shape.depth > MAX_DEPTH {
        return Err(InspectError::StructureLimit {
            message: format!(
                "source_structure_limit: the module's AST is nested deeper than {MAX_DEPTH} levels"
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
