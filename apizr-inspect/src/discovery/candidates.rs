//! Candidate collection: every `def`/`async def` executing in module scope, and module-scope
//! lambda assignments, from the module-scope statements of the fact pass (direct statements and
//! those nested in module control flow; never function, lambda or class bodies).

use ruff_python_ast::{Expr, Stmt, StmtFunctionDef};

use crate::facts::ModuleFacts;

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
    pub fn collect(facts: &ModuleFacts<'a>) -> Self {
        let mut out = Candidates::default();
        for (_, statement) in facts.statements() {
            match statement.node {
                Stmt::FunctionDef(def) => out.functions.push(Candidate {
                    def,
                    top_index: statement.top,
                    direct: statement.is_direct(),
                }),
                Stmt::Assign(assign) if matches!(assign.value.as_ref(), Expr::Lambda(_)) => {
                    for target in &assign.targets {
                        if let Expr::Name(name) = target {
                            out.lambdas.push(LambdaAssignment {
                                name: name.id.as_str(),
                                stmt: statement.node,
                            });
                        }
                    }
                }
                Stmt::AnnAssign(assign) => {
                    if let (Expr::Name(name), Some(Expr::Lambda(_))) =
                        (assign.target.as_ref(), assign.value.as_deref())
                    {
                        out.lambdas.push(LambdaAssignment {
                            name: name.id.as_str(),
                            stmt: statement.node,
                        });
                    }
                }
                _ => {}
            }
        }
        out
    }
}
