//! The one walk. Module scope is visited in evaluation order (a binding's index is its order):
//! a `def`'s decorators, defaults, annotations and return annotation before its name; an
//! assignment's value before its targets; a loop's iterable before its target. Bodies that do
//! not run in module scope are walked completely in their own [`Scope`], recording only calls
//! and imports.

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};
use ruff_text_size::{Ranged, TextRange};

use super::{
    Arm, Binding, BindingKind, Call, Context, Import, ImportNode, Mutation, Scope, Statement,
    StmtId,
};
use crate::module::ParsedModule;

/// The raw output of the walk.
pub(super) struct Recorded<'a> {
    pub statements: Vec<Statement<'a>>,
    pub bindings: Vec<Binding<'a>>,
    pub mutations: Vec<Mutation<'a>>,
    pub calls: Vec<Call<'a>>,
    pub imports: Vec<Import<'a>>,
}

pub(super) fn walk(parsed: &ParsedModule) -> Recorded<'_> {
    let mut walker = Walker {
        parsed,
        out: Recorded {
            statements: Vec::new(),
            bindings: Vec::new(),
            mutations: Vec::new(),
            calls: Vec::new(),
            imports: Vec::new(),
        },
        scope: Scope::Module,
        context: Context::NONE,
        stmt: StmtId(0),
    };
    for (top, stmt) in parsed.body().iter().enumerate() {
        walker.module_stmt(stmt, top, None, Arm::Module);
    }
    walker.out
}

pub(super) struct Walker<'a> {
    pub(super) parsed: &'a ParsedModule,
    pub(super) out: Recorded<'a>,
    pub(super) scope: Scope,
    /// Only meaningful in module scope.
    pub(super) context: Context,
    /// The innermost module-scope statement.
    pub(super) stmt: StmtId,
}

impl<'a> Walker<'a> {
    pub(super) fn bind(
        &mut self,
        name: &'a str,
        kind: BindingKind<'a>,
        line: u32,
        range: TextRange,
    ) {
        self.out.bindings.push(Binding {
            name,
            kind,
            line,
            range,
            stmt: self.stmt,
            context: self.context,
        });
    }

    /// Run `f` with `context` added.
    fn within(&mut self, context: Context, f: impl FnOnce(&mut Self)) {
        let saved = self.context;
        self.context = saved.with(context);
        f(self);
        self.context = saved;
    }

    /// Run `f` in another scope (contexts are not tracked outside module scope).
    fn in_scope(&mut self, scope: Scope, f: impl FnOnce(&mut Self)) {
        let (saved_scope, saved_context) = (self.scope, self.context);
        self.scope = scope;
        self.context = Context::NONE;
        f(self);
        self.scope = saved_scope;
        self.context = saved_context;
    }

    fn import(&mut self, node: ImportNode<'a>, stmt: &Stmt) {
        self.out.imports.push(Import {
            node,
            line: self.parsed.start_line(stmt),
            scope: self.scope,
        });
    }

    // ---- module scope -------------------------------------------------------------------

    fn module_body(&mut self, body: &'a [Stmt], top: usize, parent: StmtId, arm: Arm) {
        for stmt in body {
            self.module_stmt(stmt, top, Some(parent), arm);
        }
    }

    fn module_stmt(&mut self, stmt: &'a Stmt, top: usize, parent: Option<StmtId>, arm: Arm) {
        let id = StmtId(u32::try_from(self.out.statements.len()).unwrap_or(u32::MAX));
        let line = self.parsed.stmt_line(stmt);
        self.out.statements.push(Statement {
            node: stmt,
            line,
            top,
            parent,
            arm,
        });
        let saved = self.stmt;
        self.stmt = id;
        match stmt {
            Stmt::FunctionDef(def) => {
                self.function_header(def);
                self.bind(def.name.as_str(), BindingKind::Def, line, def.name.range());
                self.in_scope(Scope::Function(id), |w| w.visit_body(&def.body));
            }
            Stmt::ClassDef(class) => {
                self.within(Context::CLASS_HEADER, |w| {
                    for decorator in &class.decorator_list {
                        w.visit_expr(&decorator.expression);
                    }
                    if let Some(arguments) = &class.arguments {
                        w.visit_arguments(arguments);
                    }
                });
                self.bind(
                    class.name.as_str(),
                    BindingKind::Class,
                    line,
                    class.name.range(),
                );
                self.in_scope(Scope::Class(id), |w| w.visit_body(&class.body));
            }
            Stmt::Import(node) => {
                for alias in &node.names {
                    let module = alias.name.as_str();
                    let (bound, renamed) = match &alias.asname {
                        Some(asname) => (asname.as_str(), true),
                        None => (module.split('.').next().unwrap_or(""), false),
                    };
                    let kind = BindingKind::Import { module, renamed };
                    self.bind(bound, kind, line, alias.range());
                }
                self.import(ImportNode::Import(node), stmt);
            }
            Stmt::ImportFrom(node) => {
                for alias in &node.names {
                    if alias.name.as_str() == "*" {
                        continue;
                    }
                    let bound = alias.asname.as_ref().unwrap_or(&alias.name).as_str();
                    let kind = BindingKind::FromImport {
                        module: node.module.as_ref().map(|m| m.as_str()),
                        level: node.level,
                        name: alias.name.as_str(),
                    };
                    self.bind(bound, kind, line, alias.range());
                }
                self.import(ImportNode::From(node), stmt);
            }
            Stmt::Assign(node) => {
                self.visit_expr(&node.value);
                for target in &node.targets {
                    self.target(target, BindingKind::Assignment);
                }
            }
            Stmt::AnnAssign(node) => {
                self.visit_expr(&node.annotation);
                if let Some(value) = &node.value {
                    self.visit_expr(value);
                    self.target(&node.target, BindingKind::Assignment);
                } else {
                    self.within(Context::ANNOTATION_TARGET, |w| {
                        w.target(&node.target, BindingKind::AnnotationOnly);
                    });
                }
            }
            Stmt::AugAssign(node) => {
                self.visit_expr(&node.value);
                self.target(&node.target, BindingKind::AugmentedAssignment);
            }
            Stmt::Delete(node) => {
                for target in &node.targets {
                    self.target(target, BindingKind::Deletion);
                }
            }
            Stmt::For(node) => {
                self.visit_expr(&node.iter);
                self.target(&node.target, BindingKind::LoopTarget);
                self.module_body(&node.body, top, id, Arm::Body);
                self.module_body(&node.orelse, top, id, Arm::Else);
            }
            Stmt::While(node) => {
                self.visit_expr(&node.test);
                self.module_body(&node.body, top, id, Arm::Body);
                self.module_body(&node.orelse, top, id, Arm::Else);
            }
            Stmt::If(node) => {
                self.visit_expr(&node.test);
                self.module_body(&node.body, top, id, Arm::Body);
                for (index, clause) in node.elif_else_clauses.iter().enumerate() {
                    if let Some(test) = &clause.test {
                        self.visit_expr(test);
                    }
                    self.module_body(&clause.body, top, id, Arm::Clause(index));
                }
            }
            Stmt::With(node) => {
                for item in &node.items {
                    self.visit_expr(&item.context_expr);
                    if let Some(vars) = &item.optional_vars {
                        self.target(vars, BindingKind::WithTarget);
                    }
                }
                self.module_body(&node.body, top, id, Arm::Body);
            }
            Stmt::Try(node) => {
                self.module_body(&node.body, top, id, Arm::Body);
                for (index, handler) in node.handlers.iter().enumerate() {
                    let ast::ExceptHandler::ExceptHandler(h) = handler;
                    if let Some(type_) = &h.type_ {
                        self.visit_expr(type_);
                    }
                    if let Some(name) = &h.name {
                        let hline = self.parsed.start_line(h);
                        self.bind(name.as_str(), BindingKind::Handler, hline, name.range());
                    }
                    self.module_body(&h.body, top, id, Arm::Handler(index));
                }
                self.module_body(&node.orelse, top, id, Arm::Else);
                self.module_body(&node.finalbody, top, id, Arm::Finally);
            }
            Stmt::Match(node) => {
                self.visit_expr(&node.subject);
                for (index, case) in node.cases.iter().enumerate() {
                    self.pattern(&case.pattern);
                    if let Some(guard) = &case.guard {
                        self.visit_expr(guard);
                    }
                    self.module_body(&case.body, top, id, Arm::Case(index));
                }
            }
            // Expression statements, `return`, `raise`, `assert`, `global`, `pass`, ...: only
            // their expressions. (`type X = ...` is not Python 3.11 and never parses.)
            other => visitor::walk_stmt(self, other),
        }
        self.stmt = saved;
    }

    /// Decorators, defaults (positional-only, positional, keyword-only), annotations (the same
    /// order, then `*args` and `**kwargs`) and the return annotation.
    fn function_header(&mut self, def: &'a ast::StmtFunctionDef) {
        self.within(Context::DEF_DECORATOR, |w| {
            for decorator in &def.decorator_list {
                w.visit_expr(&decorator.expression);
            }
        });
        let params = &def.parameters;
        self.within(Context::DEF_DEFAULT, |w| {
            for p in params.iter_non_variadic_params() {
                if let Some(default) = &p.default {
                    w.visit_expr(default);
                }
            }
        });
        self.within(Context::DEF_ANNOTATION, |w| {
            for p in params.iter_non_variadic_params() {
                if let Some(annotation) = &p.parameter.annotation {
                    w.visit_expr(annotation);
                }
            }
            for p in params.vararg.iter().chain(params.kwarg.iter()) {
                if let Some(annotation) = &p.annotation {
                    w.visit_expr(annotation);
                }
            }
            if let Some(returns) = &def.returns {
                w.visit_expr(returns);
            }
        });
    }

    // ---- other scopes -------------------------------------------------------------------

    /// A statement outside module scope: everything is walked, only imports are recorded
    /// (calls are recorded by `visit_expr`). Scopes change where code stops running at import.
    fn nested_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Import(node) => self.import(ImportNode::Import(node), stmt),
            Stmt::ImportFrom(node) => self.import(ImportNode::From(node), stmt),
            Stmt::FunctionDef(def) if matches!(self.scope, Scope::Class(_)) => {
                // A method: its header runs with the class body, its body does not.
                for decorator in &def.decorator_list {
                    self.visit_expr(&decorator.expression);
                }
                self.visit_parameters(&def.parameters);
                if let Some(returns) = &def.returns {
                    self.visit_expr(returns);
                }
                self.in_scope(Scope::Deferred, |w| w.visit_body(&def.body));
                return;
            }
            _ => {}
        }
        visitor::walk_stmt(self, stmt);
    }
}

impl<'a> Visitor<'a> for Walker<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        // Module-scope statements go through `module_stmt`; this is reached for bodies only.
        self.nested_stmt(stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Call(call) => {
                self.out.calls.push(Call {
                    node: call,
                    scope: self.scope,
                    context: self.context,
                });
                visitor::walk_expr(self, expr);
            }
            Expr::Lambda(lambda) if !matches!(self.scope, Scope::Function(_)) => {
                // Defaults run where the lambda is created; the body runs later.
                let defaults = lambda
                    .parameters
                    .iter()
                    .flat_map(|p| p.iter_non_variadic_params())
                    .filter_map(|p| p.default.as_deref());
                let context = if self.scope == Scope::Module {
                    Context::LAMBDA_DEFAULT
                } else {
                    Context::NONE
                };
                self.within(context, |w| defaults.for_each(|d| w.visit_expr(d)));
                self.in_scope(Scope::Deferred, |w| w.visit_expr(&lambda.body));
            }
            Expr::Named(named) if self.scope == Scope::Module => {
                self.visit_expr(&named.value);
                self.target(&named.target, BindingKind::Walrus);
            }
            Expr::Name(name)
                if self.scope == Scope::Module
                    && matches!(name.ctx, ExprContext::Store | ExprContext::Del) =>
            {
                // Only reachable through generic walks of statements that bind nothing the
                // rules use; targets are handled by `target`.
            }
            _ => visitor::walk_expr(self, expr),
        }
    }

    fn visit_comprehension(&mut self, comprehension: &'a ast::Comprehension) {
        if self.scope == Scope::Module {
            self.within(Context::COMPREHENSION_TARGET, |w| {
                w.target(&comprehension.target, BindingKind::ComprehensionTarget);
            });
            self.visit_expr(&comprehension.iter);
            for condition in &comprehension.ifs {
                self.visit_expr(condition);
            }
        } else {
            visitor::walk_comprehension(self, comprehension);
        }
    }
}
