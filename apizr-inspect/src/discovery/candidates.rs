//! Candidate collection: every `def`/`async def` executing in module scope, and module-scope
//! lambda assignments.
//!
//! Module-level control flow (`if`/`elif`/`else`, `for`/`while` + `else`, `try`/`except`/`except*`/
//! `else`/`finally`, `with`, `async for`/`async with`, `match` cases) is entered; function, lambda
//! and class bodies never are.

use ruff_python_ast::{Expr, Stmt, StmtFunctionDef};

/// One module-scope function definition.
pub struct Candidate<'a> {
    pub def: &'a StmtFunctionDef,
    /// Index of the enclosing direct module statement.
    pub top_index: usize,
    /// True when the definition itself is a direct module statement.
    pub direct: bool,
}

/// `name = lambda ...` or `name: T = lambda ...` in module scope.
pub struct LambdaAssignment<'a> {
    pub name: &'a str,
    pub stmt: &'a Stmt,
}

#[derive(Default)]
pub struct Candidates<'a> {
    pub functions: Vec<Candidate<'a>>,
    pub lambdas: Vec<LambdaAssignment<'a>>,
}

impl<'a> Candidates<'a> {
    pub fn collect(body: &'a [Stmt]) -> Self {
        let mut out = Candidates::default();
        for (index, stmt) in body.iter().enumerate() {
            out.visit(stmt, index, true);
        }
        out
    }

    fn visit_body(&mut self, body: &'a [Stmt], top_index: usize) {
        for stmt in body {
            self.visit(stmt, top_index, false);
        }
    }

    fn visit(&mut self, stmt: &'a Stmt, top_index: usize, direct: bool) {
        match stmt {
            Stmt::FunctionDef(def) => self.functions.push(Candidate {
                def,
                top_index,
                direct,
            }),
            Stmt::Assign(assign) if matches!(assign.value.as_ref(), Expr::Lambda(_)) => {
                for target in &assign.targets {
                    if let Expr::Name(name) = target {
                        self.lambdas.push(LambdaAssignment {
                            name: name.id.as_str(),
                            stmt,
                        });
                    }
                }
            }
            Stmt::AnnAssign(assign) => {
                if let (Expr::Name(name), Some(Expr::Lambda(_))) =
                    (assign.target.as_ref(), assign.value.as_deref())
                {
                    self.lambdas.push(LambdaAssignment {
                        name: name.id.as_str(),
                        stmt,
                    });
                }
            }
            Stmt::If(stmt_if) => {
                self.visit_body(&stmt_if.body, top_index);
                for clause in &stmt_if.elif_else_clauses {
                    self.visit_body(&clause.body, top_index);
                }
            }
            Stmt::For(stmt_for) => {
                self.visit_body(&stmt_for.body, top_index);
                self.visit_body(&stmt_for.orelse, top_index);
            }
            Stmt::While(stmt_while) => {
                self.visit_body(&stmt_while.body, top_index);
                self.visit_body(&stmt_while.orelse, top_index);
            }
            Stmt::With(stmt_with) => self.visit_body(&stmt_with.body, top_index),
            Stmt::Try(stmt_try) => {
                self.visit_body(&stmt_try.body, top_index);
                for handler in &stmt_try.handlers {
                    let ruff_python_ast::ExceptHandler::ExceptHandler(inner) = handler;
                    self.visit_body(&inner.body, top_index);
                }
                self.visit_body(&stmt_try.orelse, top_index);
                self.visit_body(&stmt_try.finalbody, top_index);
            }
            Stmt::Match(stmt_match) => {
                for case in &stmt_match.cases {
                    self.visit_body(&case.body, top_index);
                }
            }
            _ => {}
        }
    }
}
