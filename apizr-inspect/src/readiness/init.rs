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
use ruff_python_ast::{CmpOp, Expr, Stmt, UnaryOp};

use crate::facts::{ModuleFacts, Statement, StmtId, View};
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

/// The risky direct module statements.
pub fn risky_statements<'a, 'p>(ctx: &InitContext<'a, 'p>) -> Vec<&'a Statement<'p>> {
    ctx.facts
        .statements()
        .filter(|(id, s)| s.is_direct() && !ctx.exempt.contains(id) && !is_safe(ctx, *id, s.node))
        .map(|(_, s)| s)
        .collect()
}

fn is_safe(ctx: &InitContext, id: StmtId, stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Pass(_) | Stmt::Import(_) | Stmt::ImportFrom(_) => true,
        Stmt::Expr(e) => is_constant(&e.value),
        Stmt::Assign(a) => literal_only(&a.value),
        Stmt::AnnAssign(a) => {
            a.value.as_deref().is_none_or(literal_only) && !contains_call(&a.annotation)
        }
        Stmt::FunctionDef(def) => {
            let decorated_ok = def.decorator_list.is_empty() || ctx.inert.contains(&id);
            let params = &def.parameters;
            let defaults_ok = params
                .iter_non_variadic_params()
                .filter_map(|p| p.default.as_deref())
                .all(|d| literal_only(d) && !contains_call(d));
            let mut annotations = params
                .iter()
                .filter_map(|p| p.annotation())
                .chain(def.returns.as_deref());
            // A decorated def is safe only with the inert tracking decorator, whose literal
            // keyword configuration (a call) is allowed.
            decorated_ok && defaults_ok && !annotations.any(contains_call)
        }
        Stmt::If(node) => {
            node.elif_else_clauses.is_empty()
                && is_main_test(&node.test)
                && ctx.parsed.module != "__main__"
                && !ctx.facts.is_bound("__name__", View::Namespace)
                && !ctx.has_namespace_reasons
                && ctx.facts.mutations().next().is_none()
        }
        _ => false,
    }
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

pub fn contains_call(expr: &Expr) -> bool {
    struct Finder(bool);
    impl<'a> Visitor<'a> for Finder {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if matches!(expr, Expr::Call(_)) {
                self.0 = true;
            } else if !self.0 {
                visitor::walk_expr(self, expr);
            }
        }
    }
    let mut finder = Finder(false);
    finder.visit_expr(expr);
    finder.0
}
