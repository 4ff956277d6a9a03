//! Readiness v2 forward references: a string annotation (`x: "float | str"`,
//! `"te.Literal['a', 'b']"`) means the expression it spells, resolved with the same rules in
//! the module's environment.
//!
//! Why sound: the worker never evaluates annotations (the TypeSpec carries the JSON form and
//! classes by name), so a string annotation is only a name for a type, exactly as the type
//! checker reads it. Its findings keep the string literal's range (the parsed expression's
//! offsets are relative to the string). A string that does not parse stays READY-013 (a
//! constant), and strings inside a forward reference are not parsed again (one level, so the
//! recursion is bounded by the source, not by nesting of escaped quotes).
//!
//! Names bound only under `if TYPE_CHECKING:` resolve too under v2 (`inputs::resolve_or_why`):
//! they name types for the checker and, for the same reason, never run in the worker.

use ruff_python_ast::{ExprStringLiteral, ModExpression};
use ruff_python_parser::Parsed;
use ruff_text_size::Ranged;

use super::inputs::{Context, TypeFinding};

impl Context<'_> {
    /// The expression a string annotation spells, when v2 reads it as a forward reference
    /// (not inside another one) and it parses.
    pub fn forward(&self, s: &ExprStringLiteral) -> Option<Parsed<ModExpression>> {
        if !self.v2 || self.in_forward.get() {
            return None;
        }
        ruff_python_parser::parse_expression(s.value.to_str()).ok()
    }

    /// `f` over the parsed expression of a forward reference, with strings inside it taken as
    /// constants.
    pub fn inside_forward<T>(&self, f: impl FnOnce() -> T) -> T {
        self.in_forward.set(true);
        let out = f();
        self.in_forward.set(false);
        out
    }

    /// The findings of forward reference `s` (parsed as `parsed`), at the string's range.
    pub fn forward_findings(
        &self,
        s: &ExprStringLiteral,
        parsed: &Parsed<ModExpression>,
        out: &mut Vec<TypeFinding>,
    ) {
        let inner = self.inside_forward(|| self.findings(parsed.expr()));
        out.extend(inner.into_iter().map(|f| TypeFinding {
            range: s.range(),
            ..f
        }));
    }
}
