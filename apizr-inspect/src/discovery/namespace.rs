//! Module-wide facts that disqualify the inert `experiment` decorator (contract 2.6): a star
//! import, a namespace/dynamic-import call, or an attribute/subscript store in module scope.
//!
//! The walk was pinned down against the oracle (fixtures `experiment_*`, probes in the report):
//!
//! * scanned: every module statement, including control flow; nested `def`: decorators, parameter
//!   annotations, defaults and the return annotation; `class`: decorators, bases and keywords;
//!   comprehensions; annotated-assignment annotations;
//! * not scanned: function and class bodies, lambda bodies (defaults are), comprehension targets, the target
//!   of an annotated assignment without value;
//! * calls: the names `globals locals vars exec eval __import__`, and any `<expr>.import_module(...)`
//!   (but not `builtins.eval(...)` nor a bare `import_module(...)`).

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};

const NAMESPACE_CALLS: [&str; 6] = ["globals", "locals", "vars", "exec", "eval", "__import__"];

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct NamespaceFacts {
    pub star_import: bool,
    pub namespace_call: bool,
    pub attribute_store: bool,
}

impl NamespaceFacts {
    pub fn scan(body: &[Stmt]) -> Self {
        let mut scanner = Scanner::default();
        scanner.visit_body(body);
        scanner.facts
    }

    /// True when any fact rules the inert decorator out.
    pub fn any(&self) -> bool {
        self.star_import || self.namespace_call || self.attribute_store
    }
}

#[derive(Default)]
struct Scanner {
    facts: NamespaceFacts,
}

impl<'a> Visitor<'a> for Scanner {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(def) => {
                for decorator in &def.decorator_list {
                    self.visit_expr(&decorator.expression);
                }
                self.visit_parameters(&def.parameters);
                if let Some(returns) = &def.returns {
                    self.visit_expr(returns);
                }
            }
            Stmt::ClassDef(class) => {
                for decorator in &class.decorator_list {
                    self.visit_expr(&decorator.expression);
                }
                if let Some(arguments) = &class.arguments {
                    self.visit_arguments(arguments);
                }
            }
            Stmt::ImportFrom(import) => {
                if import.names.iter().any(|alias| alias.name.as_str() == "*") {
                    self.facts.star_import = true;
                }
            }
            Stmt::AnnAssign(assign) if assign.value.is_none() => {
                self.visit_expr(&assign.annotation);
            }
            _ => visitor::walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Lambda(lambda) => {
                let defaults = lambda
                    .parameters
                    .iter()
                    .flat_map(|p| p.iter_non_variadic_params())
                    .filter_map(|p| p.default.as_deref());
                for default in defaults {
                    self.visit_expr(default);
                }
                return;
            }
            Expr::Attribute(ast::ExprAttribute { ctx, .. })
            | Expr::Subscript(ast::ExprSubscript { ctx, .. })
                if matches!(ctx, ExprContext::Store | ExprContext::Del) =>
            {
                self.facts.attribute_store = true;
            }
            Expr::Call(call) => {
                let flagged = match call.func.as_ref() {
                    Expr::Name(name) => NAMESPACE_CALLS.contains(&name.id.as_str()),
                    Expr::Attribute(attribute) => attribute.attr.as_str() == "import_module",
                    _ => false,
                };
                if flagged {
                    self.facts.namespace_call = true;
                }
            }
            _ => {}
        }
        visitor::walk_expr(self, expr);
    }

    fn visit_comprehension(&mut self, comprehension: &'a ast::Comprehension) {
        self.visit_expr(&comprehension.iter);
        for condition in &comprehension.ifs {
            self.visit_expr(condition);
        }
    }
}
