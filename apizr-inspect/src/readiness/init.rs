//! The initialization heuristic (READY-004): every direct module statement that could fail or
//! change state while the module is imported adds a reason (at the statement's line) to every
//! capability.
//!
//! Safe: `pass`, imports, constant expression statements (docstrings), assignments of
//! literal-only values (annotations without calls), undecorated (or inert-decorated) `def`s with
//! literal defaults and no calls in decorators/defaults/annotations, exempt statements
//! (associated overload stubs, proven TypedDict classes), and one `if __name__ == "__main__":`
//! without `else` when nothing in the module could make that test lie. Everything else is risky.

use std::collections::HashSet;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{CmpOp, Expr, ExprCall, Stmt, UnaryOp};
use ruff_text_size::Ranged;

use super::evidence::{MainGuard, Risk};
use crate::facts::{ModuleFacts, StmtId, View};
use crate::module::ParsedModule;

pub struct InitContext<'a, 'p> {
    pub parsed: &'p ParsedModule,
    pub facts: &'a ModuleFacts<'p>,
    /// Statements that are exempt: associated overload stubs and proven TypedDict classes.
    pub exempt: &'a HashSet<StmtId>,
    /// `def` statements whose single decorator is the inert tracking decorator.
    pub inert: &'a HashSet<StmtId>,
    /// The module has READY-008 reasons.
    pub has_namespace_reasons: bool,
}

/// The risky direct module statements, each with why.
pub fn risky_statements(ctx: &InitContext) -> Vec<(StmtId, Risk)> {
    ctx.facts
        .statements()
        .filter(|(id, s)| s.is_direct() && !ctx.exempt.contains(id))
        .filter_map(|(id, s)| risk(ctx, id, s.node).map(|risk| (id, risk)))
        .collect()
}

/// `None` when the statement is safe; else the first thing that makes it risky.
fn risk(ctx: &InitContext, id: StmtId, stmt: &Stmt) -> Option<Risk> {
    match stmt {
        Stmt::Pass(_) | Stmt::Import(_) | Stmt::ImportFrom(_) => None,
        Stmt::Expr(e) => (!is_constant(&e.value)).then(|| value_risk(&e.value)),
        Stmt::Assign(a) => (!literal_only(&a.value)).then(|| value_risk(&a.value)),
        Stmt::AnnAssign(a) => {
            if let Some(call) = first_call(&a.annotation) {
                return Some(Risk::Call(call.range()));
            }
            a.value
                .as_deref()
                .filter(|v| !literal_only(v))
                .map(value_risk)
        }
        Stmt::FunctionDef(def) => {
            // A decorated def is safe only with the inert tracking decorator, whose literal
            // keyword configuration (a call) is allowed.
            if !def.decorator_list.is_empty() && !ctx.inert.contains(&id) {
                return Some(Risk::Decorated);
            }
            let params = &def.parameters;
            let defaults = params
                .iter_non_variadic_params()
                .filter_map(|p| p.default.as_deref());
            for default in defaults {
                if let Some(call) = first_call(default) {
                    return Some(Risk::Call(call.range()));
                }
                if !literal_only(default) {
                    return Some(Risk::Default(default.range()));
                }
            }
            params
                .iter()
                .filter_map(|p| p.annotation())
                .chain(def.returns.as_deref())
                .find_map(first_call)
                .map(|call| Risk::Call(call.range()))
        }
        Stmt::If(node) if is_main_test(&node.test) => main_guard_risk(ctx, node),
        Stmt::If(_)
        | Stmt::For(_)
        | Stmt::While(_)
        | Stmt::With(_)
        | Stmt::Try(_)
        | Stmt::Match(_) => Some(Risk::ControlFlow),
        Stmt::ClassDef(_) => Some(Risk::Class),
        Stmt::AugAssign(_) | Stmt::Delete(_) => Some(Risk::Modifies),
        Stmt::Raise(_) | Stmt::Assert(_) => Some(Risk::MayFail),
        _ => Some(Risk::Other),
    }
}

/// Why a value that is not literal-only is risky: its first call, else the value itself.
fn value_risk(value: &Expr) -> Risk {
    match first_call(value) {
        Some(call) => Risk::Call(call.range()),
        None => Risk::NotLiteral(value.range()),
    }
}

/// One `if __name__ == "__main__":` block without `else` is safe when the module is not
/// `__main__`, never binds `__name__`, has no READY-008 reasons and stores into no attribute or
/// subscript: then the test is false on import and the block never runs.
fn main_guard_risk(ctx: &InitContext, node: &ruff_python_ast::StmtIf) -> Option<Risk> {
    let why = if !node.elif_else_clauses.is_empty() {
        MainGuard::Else
    } else if ctx.parsed.module == "__main__" {
        MainGuard::ModuleIsMain
    } else if let Some((binding, _)) = ctx.facts.bindings_of("__name__", View::Namespace).next() {
        MainGuard::NameBound(binding)
    } else if ctx.has_namespace_reasons {
        MainGuard::Namespace
    } else if let Some(mutation) = ctx.facts.mutations().next() {
        MainGuard::Mutation(mutation.range)
    } else {
        return None;
    };
    Some(Risk::MainGuard(why))
}

/// `__name__ == "__main__"` exactly.
fn is_main_test(test: &Expr) -> bool {
    let Expr::Compare(cmp) = test else {
        return false;
    };
    matches!(cmp.left.as_ref(), Expr::Name(n) if n.id.as_str() == "__name__")
        && matches!(&cmp.ops[..], [CmpOp::Eq])
        && matches!(&cmp.comparators[..], [Expr::StringLiteral(s)] if s.value.to_str() == "__main__")
}

fn is_constant(expr: &Expr) -> bool {
    matches!(
        expr,
        Expr::StringLiteral(_)
            | Expr::BytesLiteral(_)
            | Expr::NumberLiteral(_)
            | Expr::BooleanLiteral(_)
            | Expr::NoneLiteral(_)
            | Expr::EllipsisLiteral(_)
    )
}

/// Constants, displays of literal-only items (no unpacking), and unary +/- of literal-only.
pub fn literal_only(expr: &Expr) -> bool {
    match expr {
        e if is_constant(e) => true,
        Expr::List(l) => l.elts.iter().all(literal_only),
        Expr::Tuple(t) => t.elts.iter().all(literal_only),
        Expr::Set(s) => s.elts.iter().all(literal_only),
        Expr::Dict(d) => d
            .items
            .iter()
            .all(|item| item.key.as_ref().is_some_and(literal_only) && literal_only(&item.value)),
        Expr::UnaryOp(u) => {
            matches!(u.op, UnaryOp::USub | UnaryOp::UAdd) && literal_only(&u.operand)
        }
        _ => false,
    }
}

/// The first call in `expr`, in source order.
pub fn first_call(expr: &Expr) -> Option<&ExprCall> {
    struct Finder<'a>(Option<&'a ExprCall>);
    impl<'a> Visitor<'a> for Finder<'a> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if self.0.is_some() {
                return;
            }
            if let Expr::Call(call) = expr {
                self.0 = Some(call);
            } else {
                visitor::walk_expr(self, expr);
            }
        }
    }
    let mut finder = Finder(None);
    finder.visit_expr(expr);
    finder.0
}
