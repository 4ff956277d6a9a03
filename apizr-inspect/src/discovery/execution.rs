//! Execution kind: `sync`, `async`, `generator`, `async_generator`.
//!
//! A function is a generator when a `yield`/`yield from` occurs in its own scope. Observed with the
//! oracle: nested `def`s contribute their decorators and defaults (not annotations, not bodies);
//! nested classes their decorators, bases and keywords (not bodies); lambdas their defaults (not
//! bodies); comprehensions and annotated-assignment annotations are scanned. `await` is irrelevant.

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr, Parameters, Stmt, StmtFunctionDef};
use ruff_text_size::{Ranged, TextRange};

use apizr_ir::ExecutionKind;

pub fn execution_kind(def: &StmtFunctionDef) -> ExecutionKind {
    match (def.is_async, first_yield(def).is_some()) {
        (false, false) => ExecutionKind::Sync,
        (true, false) => ExecutionKind::Async,
        (false, true) => ExecutionKind::Generator,
        (true, true) => ExecutionKind::AsyncGenerator,
    }
}

/// The first `yield` / `yield from` in the function's own scope, in source order.
pub fn first_yield(def: &StmtFunctionDef) -> Option<TextRange> {
    let mut finder = YieldFinder { found: None };
    finder.visit_body(&def.body);
    finder.found
}

pub fn is_generator(kind: ExecutionKind) -> bool {
    matches!(
        kind,
        ExecutionKind::Generator | ExecutionKind::AsyncGenerator
    )
}

struct YieldFinder {
    found: Option<TextRange>,
}

impl YieldFinder {
    fn visit_defaults(&mut self, parameters: &Parameters) {
        for parameter in parameters.iter_non_variadic_params() {
            if let Some(default) = &parameter.default {
                self.visit_expr(default);
            }
        }
    }
}

impl<'a> Visitor<'a> for YieldFinder {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if self.found.is_some() {
            return;
        }
        match stmt {
            Stmt::FunctionDef(def) => {
                for decorator in &def.decorator_list {
                    self.visit_expr(&decorator.expression);
                }
                self.visit_defaults(&def.parameters);
            }
            Stmt::ClassDef(class) => {
                for decorator in &class.decorator_list {
                    self.visit_expr(&decorator.expression);
                }
                if let Some(arguments) = &class.arguments {
                    self.visit_arguments(arguments);
                }
            }
            _ => visitor::walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if self.found.is_some() {
            return;
        }
        match expr {
            Expr::Yield(_) | Expr::YieldFrom(_) => self.found = Some(expr.range()),
            Expr::Lambda(lambda) => {
                if let Some(parameters) = &lambda.parameters {
                    self.visit_defaults(parameters);
                }
            }
            _ => visitor::walk_expr(self, expr),
        }
    }
}
