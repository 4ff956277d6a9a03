//! Readiness v2 type aliases: `Name = <type>`, `Name: TypeAlias = <type>` and `type Name =
//! <type>`, bound once at module level or inside `if TYPE_CHECKING:`, stand for their value.
//!
//! Why sound: the alias's value is classified and lowered exactly as if it were written where
//! the alias is used, with what was declared before the alias (so aliases cannot form a
//! cycle); its findings (with their ranges in the alias statement) become the parameter's.
//! The worker never evaluates annotations (classes travel by their own name in the TypeSpec),
//! so an alias that exists only for type checkers is as good as one bound at run time; whether
//! the annotation itself may name it at import is the v2 prover's obligation, not this one.
//! An alias bound more than once, or modified, is not one (v1's READY-013 stays).

use apizr_ir::TypeSpec;
use ruff_python_ast::{Expr, ExprName, Stmt};

use super::classes::is_stdlib;
use super::inputs::{Context, TypeFinding};
use crate::facts::{Arm, ModuleFacts, Statement, View};

/// A type alias with its classification and lowering.
#[derive(Debug, Clone)]
pub struct AliasCandidate {
    pub name: String,
    pub line: u32,
    pub findings: Vec<TypeFinding>,
    pub spec: TypeSpec,
}

/// The alias a statement binds (its name and value), if it is one.
pub fn alias<'a>(
    facts: &ModuleFacts<'a>,
    statement: &Statement<'a>,
) -> Option<(&'a str, &'a Expr)> {
    let (target, value) = match statement.node {
        Stmt::Assign(a) => match a.targets.as_slice() {
            [Expr::Name(n)] => (n, a.value.as_ref()),
            _ => return None,
        },
        Stmt::AnnAssign(a) => match (a.target.as_ref(), a.value.as_deref()) {
            (Expr::Name(n), Some(v)) if is_type_alias(facts, &a.annotation) => {
                // Declared an alias: a string value is a forward reference (`forward.rs`).
                if matches!(v, Expr::StringLiteral(_)) {
                    return once(facts, statement, n, v);
                }
                (n, v)
            }
            _ => return None,
        },
        Stmt::TypeAlias(t) if t.type_params.is_none() => match t.name.as_ref() {
            Expr::Name(n) => (n, t.value.as_ref()),
            _ => return None,
        },
        _ => return None,
    };
    if !is_type_expression(value) {
        return None;
    }
    once(facts, statement, target, value)
}

/// The alias `target = value` when it is placed where v2 reads aliases and bound once.
fn once<'a>(
    facts: &ModuleFacts<'a>,
    statement: &Statement<'a>,
    target: &'a ExprName,
    value: &'a Expr,
) -> Option<(&'a str, &'a Expr)> {
    let name = target.id.as_str();
    let placed = statement.is_direct() || in_type_checking(facts, statement);
    let once = facts.bindings_of(name, View::Namespace).count() == 1 && !facts.is_mutated(name);
    (placed && once).then_some((name, value))
}

/// `TypeAlias` of `typing` or `typing_extensions`: `m.TypeAlias` of a direct `import m`, or a
/// name every binding of which imports `TypeAlias` (humanize binds it once from each module
/// under `if TYPE_CHECKING:` by Python version). Annotations are never evaluated by the
/// worker, so where the import runs does not matter; one that is not `TypeAlias` does.
fn is_type_alias(facts: &ModuleFacts, annotation: &Expr) -> bool {
    let modules = ["typing", "typing_extensions"];
    if modules
        .iter()
        .any(|m| is_stdlib(facts, annotation, m, &["TypeAlias"]).is_some())
    {
        return true;
    }
    let Expr::Name(n) = annotation else {
        return false;
    };
    let name = n.id.as_str();
    let mut bindings = facts.bindings_of(name, View::Namespace).peekable();
    bindings.peek().is_some()
        && !facts.is_mutated(name)
        && bindings.all(|(_, b)| {
            modules
                .iter()
                .any(|m| b.kind.is_from_import(m, "TypeAlias"))
        })
}

/// Only values that look like types: names, attributes, subscripts and `X | Y` (a string or
/// number assignment is a constant, not an alias, and keeps v1's reason).
fn is_type_expression(value: &Expr) -> bool {
    match value {
        Expr::Name(_) | Expr::Attribute(_) | Expr::Subscript(_) | Expr::NoneLiteral(_) => true,
        Expr::BinOp(b) => is_type_expression(&b.left) && is_type_expression(&b.right),
        _ => false,
    }
}

/// Directly in the body of a direct `if TYPE_CHECKING:` (typing's, imported once).
pub fn in_type_checking(facts: &ModuleFacts, statement: &Statement) -> bool {
    let Some(parent) = statement.parent else {
        return false;
    };
    let parent = facts.statement(parent);
    statement.arm == Arm::Body
        && parent.is_direct()
        && matches!(parent.node, Stmt::If(test)
            if is_stdlib(facts, &test.test, "typing", &["TYPE_CHECKING"]).is_some())
}

/// Classify and lower the alias's value with what was declared before it.
pub fn lowered(ctx: &Context, (name, value): (&str, &Expr), line: u32) -> AliasCandidate {
    AliasCandidate {
        name: name.to_string(),
        line,
        findings: ctx.findings(value),
        spec: ctx.lower(value),
    }
}
