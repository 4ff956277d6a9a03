//! Module-scope facts shared by every readiness rule: binding events (for READY-003 and name
//! resolution), attribute/subscript mutation roots, namespace calls and star imports (READY-008),
//! dynamic import calls (READY-014) and imports (READY-015).
//!
//! "Module scope" is what executes at import time in the module namespace: direct statements and
//! statements nested in control flow, plus decorator, default, annotation, base and keyword
//! expressions of `def`/`class` statements. Function, lambda and class bodies are not entered.
//! Comprehension loop variables are not bindings, but walrus targets inside them are.

use std::collections::{HashMap, HashSet};

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, ExprContext, Pattern, Stmt};
use ruff_text_size::{Ranged, TextSize};

use super::imports::{ImportUse, import_from_use, import_use};
use crate::module::ParsedModule;

/// How a module-scope name binding came about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindKind {
    /// `from <module> import <original> [as name]` (`module` is `None` when relative).
    FromImport {
        module: Option<String>,
        original: String,
    },
    /// `import <module> [as name]`; `renamed` is false for `import a.b` binding `a`.
    Import {
        module: String,
        renamed: bool,
    },
    Def,
    Class,
    Other,
}

#[derive(Debug, Clone)]
pub struct BindEvent {
    pub name: String,
    /// Lexical (evaluation) order of the event in module scope.
    pub seq: u32,
    pub line: u32,
    pub kind: BindKind,
    /// Index of the direct module statement when the event is one (not under control flow).
    pub direct_index: Option<usize>,
}

/// Everything the readiness rules need to know about module scope.
#[derive(Debug, Default)]
pub struct ModuleFacts {
    pub events: Vec<BindEvent>,
    /// Binding order of each `def`/`class` statement, keyed by the statement's start offset.
    pub own_seq: HashMap<TextSize, u32>,
    /// Root names of attribute/subscript assignment or deletion targets.
    pub mutated_roots: HashSet<String>,
    /// READY-008 lines (star imports and `globals/locals/vars/exec/eval` calls).
    pub namespace_lines: Vec<u32>,
    /// READY-014 lines at module scope.
    pub dynamic_import_lines: Vec<u32>,
    /// Imports at module scope (READY-015).
    pub imports: Vec<ImportUse>,
}

impl ModuleFacts {
    pub fn bindings<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a BindEvent> + 'a {
        self.events.iter().filter(move |e| e.name == name)
    }

    pub fn is_bound(&self, name: &str) -> bool {
        self.bindings(name).next().is_some()
    }

    /// The single binding of `name`, if it is bound exactly once.
    pub fn unique_binding<'a>(&'a self, name: &'a str) -> Option<&'a BindEvent> {
        let mut it = self.bindings(name);
        let first = it.next()?;
        if it.next().is_some() {
            None
        } else {
            Some(first)
        }
    }
}

const NAMESPACE_CALLS: [&str; 5] = ["globals", "locals", "vars", "exec", "eval"];

/// Names that, when called, are dynamic import calls.
pub fn dynamic_import_aliases(parsed: &ParsedModule) -> HashSet<String> {
    let mut names: HashSet<String> = ["__import__", "import_module"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut finder = AliasFinder { names: &mut names };
    for stmt in parsed.body() {
        finder.visit_stmt(stmt);
    }
    names
}

struct AliasFinder<'n> {
    names: &'n mut HashSet<String>,
}

impl<'a> Visitor<'a> for AliasFinder<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if let Stmt::ImportFrom(node) = stmt {
            let module = node.module.as_ref().map(|m| m.as_str());
            for alias in &node.names {
                let original = alias.name.as_str();
                if module == Some("importlib") && original == "import_module" {
                    let bound = alias.asname.as_ref().unwrap_or(&alias.name);
                    self.names.insert(bound.to_string());
                }
            }
        }
        visitor::walk_stmt(self, stmt);
    }
}

/// Whether a call expression is a dynamic import call.
pub fn is_dynamic_import(call: &ast::ExprCall, aliases: &HashSet<String>) -> bool {
    match call.func.as_ref() {
        Expr::Name(name) => aliases.contains(name.id.as_str()),
        Expr::Attribute(attr) => matches!(attr.attr.as_str(), "import_module" | "__import__"),
        _ => false,
    }
}

pub fn scan_module(parsed: &ParsedModule, aliases: &HashSet<String>) -> ModuleFacts {
    let mut scanner = Scanner {
        parsed,
        aliases,
        facts: ModuleFacts::default(),
        seq: 0,
        direct_index: None,
    };
    for (index, stmt) in parsed.body().iter().enumerate() {
        scanner.direct_index = Some(index);
        scanner.visit_stmt(stmt);
    }
    scanner.facts
}

struct Scanner<'p> {
    parsed: &'p ParsedModule,
    aliases: &'p HashSet<String>,
    facts: ModuleFacts,
    seq: u32,
    direct_index: Option<usize>,
}

impl Scanner<'_> {
    fn bind(&mut self, name: &str, line: u32, kind: BindKind) {
        self.seq += 1;
        self.facts.events.push(BindEvent {
            name: name.to_string(),
            seq: self.seq,
            line,
            kind,
            direct_index: self.direct_index,
        });
    }

    /// Record an assignment/deletion target: names bind, attribute/subscript targets mutate.
    fn target(&mut self, expr: &Expr) {
        match expr {
            Expr::Name(name) => {
                let line = self.parsed.start_line(name);
                self.bind(name.id.as_str(), line, BindKind::Other);
            }
            Expr::Tuple(t) => t.elts.iter().for_each(|e| self.target(e)),
            Expr::List(l) => l.elts.iter().for_each(|e| self.target(e)),
            Expr::Starred(s) => self.target(&s.value),
            Expr::Attribute(a) => {
                self.visit_expr(&a.value);
                self.mutate(&a.value);
            }
            Expr::Subscript(s) => {
                self.visit_expr(&s.value);
                self.visit_expr(&s.slice);
                self.mutate(&s.value);
            }
            other => self.visit_expr(other),
        }
    }

    fn mutate(&mut self, mut expr: &Expr) {
        loop {
            match expr {
                Expr::Name(name) => {
                    self.facts.mutated_roots.insert(name.id.to_string());
                    return;
                }
                Expr::Attribute(a) => expr = &a.value,
                Expr::Subscript(s) => expr = &s.value,
                _ => return,
            }
        }
    }

    fn pattern(&mut self, pattern: &Pattern) {
        let line = self.parsed.start_line(pattern);
        match pattern {
            Pattern::MatchAs(p) => {
                if let Some(inner) = &p.pattern {
                    self.pattern(inner);
                }
                if let Some(name) = &p.name {
                    self.bind(name.as_str(), line, BindKind::Other);
                }
            }
            Pattern::MatchStar(p) => {
                if let Some(name) = &p.name {
                    self.bind(name.as_str(), line, BindKind::Other);
                }
            }
            Pattern::MatchMapping(p) => {
                p.keys.iter().for_each(|k| self.visit_expr(k));
                p.patterns.iter().for_each(|q| self.pattern(q));
                if let Some(rest) = &p.rest {
                    self.bind(rest.as_str(), line, BindKind::Other);
                }
            }
            Pattern::MatchSequence(p) => p.patterns.iter().for_each(|q| self.pattern(q)),
            Pattern::MatchClass(p) => {
                self.visit_expr(&p.cls);
                p.arguments.patterns.iter().for_each(|q| self.pattern(q));
                p.arguments
                    .keywords
                    .iter()
                    .for_each(|k| self.pattern(&k.pattern));
            }
            Pattern::MatchOr(p) => p.patterns.iter().for_each(|q| self.pattern(q)),
            Pattern::MatchValue(p) => self.visit_expr(&p.value),
            Pattern::MatchSingleton(_) => {}
        }
    }

    fn nested_body(&mut self, body: &[Stmt]) {
        let saved = self.direct_index.take();
        body.iter().for_each(|s| self.visit_stmt(s));
        self.direct_index = saved;
    }

    fn function_header(&mut self, def: &ast::StmtFunctionDef) {
        def.decorator_list
            .iter()
            .for_each(|d| self.visit_expr(&d.expression));
        let params = &def.parameters;
        for p in params
            .posonlyargs
            .iter()
            .chain(&params.args)
            .chain(&params.kwonlyargs)
        {
            if let Some(default) = &p.default {
                self.visit_expr(default);
            }
        }
        for p in params.iter_non_variadic_params() {
            if let Some(annotation) = &p.parameter.annotation {
                self.visit_expr(annotation);
            }
        }
        for p in params.vararg.iter().chain(params.kwarg.iter()) {
            if let Some(annotation) = &p.annotation {
                self.visit_expr(annotation);
            }
        }
        if let Some(returns) = &def.returns {
            self.visit_expr(returns);
        }
    }
}

impl<'a> Visitor<'a> for Scanner<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        let line = super::stmt_line(self.parsed, stmt);
        match stmt {
            Stmt::FunctionDef(def) => {
                self.function_header(def);
                self.bind(def.name.as_str(), line, BindKind::Def);
                self.facts.own_seq.insert(def.start(), self.seq);
            }
            Stmt::ClassDef(class) => {
                class
                    .decorator_list
                    .iter()
                    .for_each(|d| self.visit_expr(&d.expression));
                if let Some(arguments) = &class.arguments {
                    self.visit_arguments(arguments);
                }
                self.bind(class.name.as_str(), line, BindKind::Class);
                self.facts.own_seq.insert(class.start(), self.seq);
            }
            Stmt::Import(node) => {
                for alias in &node.names {
                    let module = alias.name.to_string();
                    let (bound, renamed) = match &alias.asname {
                        Some(asname) => (asname.to_string(), true),
                        None => (module.split('.').next().unwrap_or("").to_string(), false),
                    };
                    self.bind(&bound, line, BindKind::Import { module, renamed });
                }
                self.facts.imports.extend(import_use(node, line));
            }
            Stmt::ImportFrom(node) => {
                let module = if node.level == 0 {
                    node.module.as_ref().map(|m| m.to_string())
                } else {
                    None
                };
                for alias in &node.names {
                    if alias.name.as_str() == "*" {
                        self.facts.namespace_lines.push(line);
                        continue;
                    }
                    let bound = alias.asname.as_ref().unwrap_or(&alias.name).to_string();
                    let kind = BindKind::FromImport {
                        module: module.clone(),
                        original: alias.name.to_string(),
                    };
                    self.bind(&bound, line, kind);
                }
                self.facts.imports.push(import_from_use(node, line));
            }
            Stmt::Assign(node) => {
                self.visit_expr(&node.value);
                node.targets.iter().for_each(|t| self.target(t));
            }
            Stmt::AnnAssign(node) => {
                self.visit_expr(&node.annotation);
                if let Some(value) = &node.value {
                    self.visit_expr(value);
                    self.target(&node.target);
                } else if !matches!(node.target.as_ref(), Expr::Name(_)) {
                    self.visit_expr(&node.target);
                }
            }
            Stmt::AugAssign(node) => {
                self.visit_expr(&node.value);
                self.target(&node.target);
            }
            Stmt::Delete(node) => node.targets.iter().for_each(|t| self.target(t)),
            Stmt::For(node) => {
                self.visit_expr(&node.iter);
                self.target(&node.target);
                self.nested_body(&node.body);
                self.nested_body(&node.orelse);
            }
            Stmt::With(node) => {
                for item in &node.items {
                    self.visit_expr(&item.context_expr);
                    if let Some(vars) = &item.optional_vars {
                        self.target(vars);
                    }
                }
                self.nested_body(&node.body);
            }
            Stmt::Try(node) => {
                self.nested_body(&node.body);
                for handler in &node.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = handler;
                    if let Some(type_) = &h.type_ {
                        self.visit_expr(type_);
                    }
                    if let Some(name) = &h.name {
                        let hline = self.parsed.start_line(h);
                        self.bind(name.as_str(), hline, BindKind::Other);
                    }
                    self.nested_body(&h.body);
                }
                self.nested_body(&node.orelse);
                self.nested_body(&node.finalbody);
            }
            Stmt::Match(node) => {
                self.visit_expr(&node.subject);
                for case in &node.cases {
                    self.pattern(&case.pattern);
                    if let Some(guard) = &case.guard {
                        self.visit_expr(guard);
                    }
                    self.nested_body(&case.body);
                }
            }
            Stmt::If(node) => {
                self.visit_expr(&node.test);
                self.nested_body(&node.body);
                for clause in &node.elif_else_clauses {
                    if let Some(test) = &clause.test {
                        self.visit_expr(test);
                    }
                    self.nested_body(&clause.body);
                }
            }
            Stmt::While(node) => {
                self.visit_expr(&node.test);
                self.nested_body(&node.body);
                self.nested_body(&node.orelse);
            }
            other => visitor::walk_stmt(self, other),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Lambda(lambda) => {
                if let Some(params) = &lambda.parameters {
                    for p in params
                        .posonlyargs
                        .iter()
                        .chain(&params.args)
                        .chain(&params.kwonlyargs)
                    {
                        if let Some(default) = &p.default {
                            self.visit_expr(default);
                        }
                    }
                }
            }
            Expr::Named(named) => {
                self.visit_expr(&named.value);
                self.target(&named.target);
            }
            Expr::Call(call) => {
                let line = self.parsed.start_line(call);
                if let Expr::Name(name) = call.func.as_ref()
                    && NAMESPACE_CALLS.contains(&name.id.as_str())
                {
                    self.facts.namespace_lines.push(line);
                }
                if is_dynamic_import(call, self.aliases) {
                    self.facts.dynamic_import_lines.push(line);
                }
                visitor::walk_expr(self, expr);
            }
            Expr::Name(name) if name.ctx == ExprContext::Store => {}
            _ => visitor::walk_expr(self, expr),
        }
    }
}
