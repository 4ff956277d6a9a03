//! Module-scope binding scan used to validate decorator provenance (overload markers, the inert
//! `experiment` decorator).
//!
//! Why a dedicated scanner: the reference decides whether `@overload` really is `typing.overload`
//! by counting *every* binding of the root name that executes in module scope. The traversal was
//! pinned down against the oracle (fixtures under `tests/fixtures/inspect/discovery/bind_*`):
//!
//! * counted: assignment / augmented / annotated (even without value) targets, `del`, `for` and
//!   `with` targets, `except ... as`, match captures (`as`, `*rest`, `**rest`, bare names),
//!   walrus targets, comprehension targets, imports (dotted `import a.b` binds `a`), `def`/`class`
//!   names, anything inside module control flow;
//! * for a nested `def`: only its name, decorators and defaults are scanned (not annotations, not
//!   the body); for a `class`: only its name; lambdas are not entered at all;
//! * `global`/`nonlocal` and star imports bind nothing.

use std::collections::HashMap;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, ExprContext, Pattern, Stmt};
use ruff_text_size::{Ranged, TextSize};

/// What bound the name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindingKind {
    /// `import <module> [as <name>]` — `module` is the full dotted name.
    Import { module: String, aliased: bool },
    /// `from <module> import <name> [as ...]` with `level` leading dots.
    ImportFrom {
        module: String,
        level: u32,
        name: String,
    },
    /// Any other binding event.
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub kind: BindingKind,
    /// True for a statement directly in the module body (not inside control flow).
    pub direct: bool,
    /// Start of the binding statement.
    pub offset: TextSize,
}

/// Every module-scope binding, by name.
#[derive(Debug, Default)]
pub struct ModuleBindings {
    names: HashMap<String, Vec<Binding>>,
}

impl ModuleBindings {
    pub fn scan(body: &[Stmt]) -> Self {
        let mut scanner = Scanner {
            out: ModuleBindings::default(),
            depth: 0,
            stmt_start: TextSize::from(0),
        };
        scanner.visit_body(body);
        scanner.out
    }

    /// All bindings of `name` in source order (empty if unbound).
    pub fn of(&self, name: &str) -> &[Binding] {
        self.names.get(name).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The single binding of `name`, if it has exactly one.
    pub fn unique(&self, name: &str) -> Option<&Binding> {
        match self.of(name) {
            [only] => Some(only),
            _ => None,
        }
    }
}

struct Scanner {
    out: ModuleBindings,
    /// Statement nesting depth: 1 = direct module statement.
    depth: usize,
    stmt_start: TextSize,
}

impl Scanner {
    fn bind(&mut self, name: &str, kind: BindingKind) {
        let binding = Binding {
            kind,
            direct: self.depth == 1,
            offset: self.stmt_start,
        };
        self.out
            .names
            .entry(name.to_string())
            .or_default()
            .push(binding);
    }

    fn visit_defaults(&mut self, parameters: &ast::Parameters) {
        let all = parameters
            .posonlyargs
            .iter()
            .chain(&parameters.args)
            .chain(&parameters.kwonlyargs);
        for parameter in all {
            if let Some(default) = &parameter.default {
                self.visit_expr(default);
            }
        }
    }
}

impl<'a> Visitor<'a> for Scanner {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        self.depth += 1;
        let saved = self.stmt_start;
        self.stmt_start = stmt.start();
        match stmt {
            Stmt::FunctionDef(def) => {
                for decorator in &def.decorator_list {
                    self.visit_expr(&decorator.expression);
                }
                self.visit_defaults(&def.parameters);
                self.bind(def.name.as_str(), BindingKind::Other);
            }
            Stmt::ClassDef(class) => self.bind(class.name.as_str(), BindingKind::Other),
            Stmt::Import(import) => {
                for alias in &import.names {
                    let module = alias.name.as_str();
                    let bound = match &alias.asname {
                        Some(asname) => asname.as_str(),
                        None => module.split('.').next().unwrap_or(module),
                    };
                    let kind = BindingKind::Import {
                        module: module.to_string(),
                        aliased: alias.asname.is_some(),
                    };
                    self.bind(bound, kind);
                }
            }
            Stmt::ImportFrom(import) => {
                let module = import.module.as_ref().map(|m| m.as_str()).unwrap_or("");
                for alias in &import.names {
                    let name = alias.name.as_str();
                    if name == "*" {
                        continue;
                    }
                    let bound = alias.asname.as_ref().map(|a| a.as_str()).unwrap_or(name);
                    let kind = BindingKind::ImportFrom {
                        module: module.to_string(),
                        level: import.level,
                        name: name.to_string(),
                    };
                    self.bind(bound, kind);
                }
            }
            Stmt::Global(_) | Stmt::Nonlocal(_) => {}
            _ => visitor::walk_stmt(self, stmt),
        }
        self.stmt_start = saved;
        self.depth -= 1;
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Lambda(_) => return,
            Expr::Name(name) if matches!(name.ctx, ExprContext::Store | ExprContext::Del) => {
                self.bind(name.id.as_str(), BindingKind::Other);
            }
            _ => {}
        }
        visitor::walk_expr(self, expr);
    }

    fn visit_except_handler(&mut self, handler: &'a ast::ExceptHandler) {
        let ast::ExceptHandler::ExceptHandler(inner) = handler;
        if let Some(name) = &inner.name {
            self.bind(name.as_str(), BindingKind::Other);
        }
        visitor::walk_except_handler(self, handler);
    }

    fn visit_pattern(&mut self, pattern: &'a Pattern) {
        let captured = match pattern {
            Pattern::MatchAs(p) => p.name.as_ref(),
            Pattern::MatchStar(p) => p.name.as_ref(),
            Pattern::MatchMapping(p) => p.rest.as_ref(),
            _ => None,
        };
        if let Some(name) = captured {
            self.bind(name.as_str(), BindingKind::Other);
        }
        visitor::walk_pattern(self, pattern);
    }
}
