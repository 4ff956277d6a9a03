//! Statements of the top level (and of the arms of proved branches).

use ruff_python_ast::{self as ast, CmpOp, Expr, Stmt};
use ruff_text_size::Ranged;

use super::env::{Env, Kind, Mark, Meaning};
use super::{Prover, Unproved, Why, fixed, known, stdlib_names};
use crate::readiness::stdlib::is_stdlib;

type Proof<T> = Result<T, Unproved>;

/// `if __name__ == "__main__":` (v1 decides whether it is safe).
pub fn is_main_guard(stmt: &Stmt) -> bool {
    let Stmt::If(node) = stmt else {
        return false;
    };
    let Expr::Compare(cmp) = node.test.as_ref() else {
        return false;
    };
    matches!(cmp.left.as_ref(), Expr::Name(n) if n.id.as_str() == "__name__")
        && matches!(&cmp.ops[..], [CmpOp::Eq])
        && matches!(&cmp.comparators[..], [Expr::StringLiteral(s)] if s.value.to_str() == "__main__")
}

impl<'p> Prover<'p> {
    /// Prove one statement and bind what it binds. `inert`: a `def` whose decorator v1 already
    /// accepted as the inert tracking decorator.
    pub fn statement(&mut self, stmt: &'p Stmt, inert: bool) -> Proof<()> {
        let fail = |why| Err(Unproved::at(stmt.range(), why));
        match stmt {
            Stmt::Pass(_) => {}
            // `spec.loader.exec_module(m)` of a module copy ([`super::module_copy`]).
            Stmt::Expr(e) if self.exec_module_copy(&e.value) => {}
            Stmt::Expr(e) => match self.dict_update(&e.value) {
                // `D.update(...)` of a dict the module built ([`super::dicts`]).
                Some(proof) => proof?,
                None => {
                    self.value_or_run(&e.value, stmt.range())?;
                }
            },
            Stmt::Import(node) => self.import_statement(node)?,
            Stmt::ImportFrom(node) => {
                if let (0, Some(module)) = (node.level, &node.module) {
                    self.available(module.as_str(), module.range())?;
                    self.stdlib_names(node, module)?;
                }
                self.import_from(node);
            }
            Stmt::Assign(a) => {
                let meaning = self.value_or_run(&a.value, stmt.range())?;
                for target in &a.targets {
                    self.assign(target, &a.value, &meaning)?;
                }
            }
            Stmt::AnnAssign(a) => {
                self.annotation(&a.annotation)?;
                let Expr::Name(_) = a.target.as_ref() else {
                    return Err(Unproved::at(a.target.range(), Why::Target));
                };
                if let Some(value) = &a.value {
                    let meaning = self.value_or_run(value, stmt.range())?;
                    self.assign(&a.target, value, &meaning)?;
                }
            }
            Stmt::AugAssign(a) => {
                let Expr::Name(name) = a.target.as_ref() else {
                    return Err(Unproved::at(a.target.range(), Why::Target));
                };
                let op = ast::ExprBinOp {
                    node_index: Default::default(),
                    range: a.range,
                    left: a.target.clone(),
                    op: a.op,
                    right: a.value.clone(),
                };
                let meaning = self.value(&Expr::BinOp(op))?;
                self.env.bind(name.id.as_str(), meaning);
            }
            Stmt::Delete(d) => {
                for target in &d.targets {
                    let Expr::Name(name) = target else {
                        return Err(Unproved::at(target.range(), Why::Target));
                    };
                    self.value(target)?;
                    self.env.unbind(name.id.as_str());
                }
            }
            Stmt::FunctionDef(def) => self.function(def, inert)?,
            Stmt::ClassDef(class) => {
                let (meaning, members) = self.class_statement(class)?;
                self.env.bind_class(class.name.as_str(), meaning, members);
            }
            Stmt::If(node) => self.branch(node)?,
            Stmt::Try(node) => self.try_(node)?,
            _ => return fail(Why::Statement),
        }
        Ok(())
    }

    /// The value of a top-level statement's expression; a call of the package's own code
    /// that the rules by kinds do not prove is run by the interpreter ([`super::interp`]).
    fn value_or_run(&self, value: &Expr, statement: ruff_text_size::TextRange) -> Proof<Meaning> {
        match self.value(value) {
            Ok(meaning) => Ok(meaning),
            Err(unproved) => match self.interpret(value, statement) {
                Some(Ok(meaning)) => Ok(meaning),
                Some(Err(refused)) => Err(refused),
                None => Err(unproved),
            },
        }
    }

    /// `import a.b [as c]`: each module one a worker has and imports without effects; binds
    /// the names (also in a class body, [`super::class`]).
    pub fn import_statement(&mut self, node: &ast::StmtImport) -> Proof<()> {
        for alias in &node.names {
            self.available(alias.name.as_str(), alias.range())?;
            self.stdlib_module(alias.name.as_str(), alias.name.range())?;
        }
        self.import(node);
        Ok(())
    }

    /// A module a worker has: not a Windows-only stdlib module ([`fixed::windows_only`]),
    /// unless a handler catches the `ImportError`.
    fn available(&self, module: &str, range: ruff_text_size::TextRange) -> Proof<()> {
        let root = module.split('.').next().unwrap_or(module);
        if fixed::windows_only(root) && !self.import_guarded {
            return Err(Unproved::at(range, Why::Unavailable));
        }
        Ok(())
    }

    /// A standard-library module the workers import without effects ([`stdlib_names`]):
    /// one whose import has effects is never proved; one the workers' CPython 3.11 does not
    /// have raises `ModuleNotFoundError`, harmless only under a handler of `ImportError`.
    fn stdlib_module(&self, module: &str, range: ruff_text_size::TextRange) -> Proof<()> {
        if !is_stdlib(module.split('.').next().unwrap_or(module)) {
            return Ok(());
        }
        self.stdlib_status(stdlib_names::module(module), range, Why::NoModule)
    }

    fn stdlib_status(
        &self,
        status: stdlib_names::ModuleStatus,
        range: ruff_text_size::TextRange,
        missing: Why,
    ) -> Proof<()> {
        match status {
            stdlib_names::ModuleStatus::Known => Ok(()),
            stdlib_names::ModuleStatus::Missing if self.import_guarded => Ok(()),
            stdlib_names::ModuleStatus::Missing => Err(Unproved::at(range, missing)),
            stdlib_names::ModuleStatus::Effects => Err(Unproved::at(range, Why::ImportEffects)),
        }
    }

    /// `from <stdlib module> import name`: the module as [`Self::stdlib_module`], and each
    /// name one the module binds or a submodule of it (`ImportError` otherwise). A name the
    /// package resolves to one of its own modules is the package's business.
    fn stdlib_names(&self, node: &ast::StmtImportFrom, module: &ast::Identifier) -> Proof<()> {
        let local = |alias: &ast::Alias| self.package.and_then(|p| p.meaning(alias.range()));
        if node.names.iter().all(|alias| local(alias).is_some()) {
            return Ok(());
        }
        self.stdlib_module(module.as_str(), module.range())?;
        if !is_stdlib(module.split('.').next().unwrap_or(module)) {
            return Ok(());
        }
        for alias in node.names.iter().filter(|a| a.name.as_str() != "*") {
            if local(alias).is_none() {
                let status = stdlib_names::import_from(module.as_str(), alias.name.as_str());
                self.stdlib_status(status, alias.name.range(), Why::NotBound(module.range()))?;
            }
        }
        Ok(())
    }

    fn import(&mut self, node: &ast::StmtImport) {
        for alias in &node.names {
            let module = alias.name.as_str();
            let mut prefix = String::new();
            for part in module.split('.') {
                if !prefix.is_empty() {
                    prefix.push('.');
                }
                prefix.push_str(part);
                self.imported_modules.insert(prefix.clone());
            }
            match &alias.asname {
                Some(asname) => self
                    .env
                    .bind(asname.as_str(), Meaning::Module(module.to_string())),
                None => {
                    let root = module.split('.').next().unwrap_or(module);
                    self.env.bind(root, Meaning::Module(root.to_string()));
                }
            }
        }
    }

    fn import_from(&mut self, node: &ast::StmtImportFrom) {
        let module = node.module.as_ref().map(|m| m.as_str());
        if node.level == 0
            && module == Some("__future__")
            && node.names.iter().any(|a| a.name.as_str() == "annotations")
        {
            self.future_annotations = true;
        }
        let stdlib =
            node.level == 0 && module.is_some_and(|m| is_stdlib(m.split('.').next().unwrap_or(m)));
        for alias in &node.names {
            let name = alias.name.as_str();
            if name == "*" {
                continue;
            }
            let bound = alias.asname.as_ref().map_or(name, |a| a.as_str());
            let type_checking = stdlib && module == Some("typing") && name == "TYPE_CHECKING";
            let local = self.package.and_then(|p| p.meaning(alias.range()));
            let fixed = local.as_ref().and_then(|l| l.fixed);
            // A string or tuple of strings the proved module folded keeps its value here.
            let folded = local
                .as_ref()
                .map(|l| (l.string.clone(), l.strings.clone()));
            let meaning = match (local, module) {
                (Some(local), _) => local.meaning,
                (None, Some(module)) if stdlib => {
                    let qualified = format!("{module}.{name}");
                    match known::constant(&qualified) {
                        Some(kind) => Meaning::Value(kind),
                        None => Meaning::Qualified(qualified),
                    }
                }
                (None, _) => Meaning::Unknown,
            };
            match folded {
                Some((Some(text), _)) => self.env.bind_str(bound, text),
                Some((None, Some(items))) => self.env.bind_sequence(bound, items),
                _ => self.env.bind(bound, meaning),
            }
            if type_checking {
                self.env.mark(bound, Mark::TypeChecking);
            }
            if let Some(fixed) = fixed {
                self.env.mark(bound, Mark::Fixed(fixed));
            }
        }
    }

    /// Bind an assignment target: a name, or the unpacking of a display of the same length.
    fn assign(&mut self, target: &Expr, value: &Expr, meaning: &Meaning) -> Proof<()> {
        // Stores into a private module copy, or of it into `sys.modules` ([`super::module_copy`]).
        if let Some(proof) = self.module_copy_target(target, value) {
            return proof;
        }
        match target {
            Expr::Name(name) => {
                self.bind_value(name.id.as_str(), value, meaning.clone());
                Ok(())
            }
            Expr::Tuple(ast::ExprTuple { elts: targets, .. })
            | Expr::List(ast::ExprList { elts: targets, .. }) => {
                let values = match value {
                    Expr::Tuple(t) => &t.elts,
                    Expr::List(l) => &l.elts,
                    // `MO, TU, ... = tuple(weekday(x) for x in range(7))`: a proved sequence
                    // of as many items ([`Prover::known_length`]) into plain names, each bound
                    // to an item v2 does not follow.
                    _ if targets.iter().all(|t| matches!(t, Expr::Name(_)))
                        && self.known_length(value) == Some(targets.len()) =>
                    {
                        for target in targets {
                            if let Expr::Name(n) = target {
                                self.env.bind(n.id.as_str(), Meaning::Unknown);
                            }
                        }
                        return Ok(());
                    }
                    _ => return Err(Unproved::at(target.range(), Why::Target)),
                };
                if values.len() != targets.len() {
                    return Err(Unproved::at(target.range(), Why::Target));
                }
                for (target, value) in targets.iter().zip(values) {
                    let meaning = self.value(value)?;
                    self.assign(target, value, &meaning)?;
                }
                Ok(())
            }
            // `Error.__module__ = __name__`: a class of the inspected code renamed for display
            // (`type.__setattr__` of these accepts a str and changes nothing else).
            Expr::Attribute(attr)
                if matches!(attr.attr.as_str(), "__module__" | "__doc__")
                    && matches!(self.value(&attr.value), Ok(Meaning::Class(_)))
                    && *meaning == Meaning::Value(Kind::Str) =>
            {
                Ok(())
            }
            // `_unquote_partial.__name__ = f"_unquote_{name}"`: a function object of an
            // undecorated `def` (a module-level one, or a nested one in a local function's
            // body) renamed; its setters accept any str (`TypeError` otherwise).
            Expr::Attribute(attr)
                if matches!(attr.attr.as_str(), "__name__" | "__qualname__")
                    && *meaning == Meaning::Value(Kind::Str)
                    && match attr.value.as_ref() {
                        Expr::Name(n) => {
                            self.env.has_mark(n.id.as_str(), Mark::PlainFunction)
                                || matches!(self.value(&attr.value), Ok(Meaning::Pure(_)))
                        }
                        _ => false,
                    } =>
            {
                Ok(())
            }
            // `D[k] = v` of a dict the module built ([`super::dicts`]).
            Expr::Subscript(_) if let Some(proof) = self.dict_item_store(target) => proof,
            _ => Err(Unproved::at(target.range(), Why::Target)),
        }
    }

    /// A `def` at module level: decorators, defaults and (evaluated) annotations.
    pub fn function(&mut self, def: &'p ast::StmtFunctionDef, inert: bool) -> Proof<()> {
        if !inert {
            self.def_decorators(&def.decorator_list, None)?;
        }
        self.signature(def)?;
        let meaning = self
            .marker(def)
            .unwrap_or_else(|| self.function_meaning(def));
        self.env.bind(def.name.as_str(), meaning);
        Ok(())
    }

    /// Defaults and annotations of a `def`, evaluated when it runs.
    pub fn signature(&self, def: &ast::StmtFunctionDef) -> Proof<()> {
        let params = &def.parameters;
        for default in params
            .iter_non_variadic_params()
            .filter_map(|p| p.default.as_deref())
        {
            self.value(default)?;
        }
        for annotation in params
            .iter()
            .filter_map(|p| p.annotation())
            .chain(def.returns.as_deref())
        {
            self.annotation(annotation)?;
        }
        Ok(())
    }

    /// `if`: under `TYPE_CHECKING` the body never runs (its names exist for type checkers
    /// only, its imports never happen); otherwise the test must be harmless. Every arm that
    /// may run is proved, and the environments after them are joined. An arm behind a test
    /// that is false on every worker ([`fixed`]) never runs: it is skipped like a
    /// `TYPE_CHECKING` body, and after a test that is true on every worker the later arms
    /// never run either.
    fn branch(&mut self, node: &'p ast::StmtIf) -> Proof<()> {
        let mut base = self.env.clone();
        let mut arms = Vec::new();
        let clauses = std::iter::once((Some(node.test.as_ref()), &node.body[..])).chain(
            node.elif_else_clauses
                .iter()
                .map(|c| (c.test.as_ref(), &c.body[..])),
        );
        let mut exhaustive = false;
        for (index, (test, body)) in clauses.enumerate() {
            self.env = base.clone();
            let Some(test) = test else {
                arms.push(self.arm(body, &base)?);
                exhaustive = true;
                break;
            };
            if index == 0 && self.is_type_checking(test) {
                let mut names = Vec::new();
                collect_bound(body, &mut names);
                for name in names {
                    if base.lookup(name).is_none() {
                        base.bind(name, Meaning::TypeOnly);
                    }
                }
                self.excuse_never_run(body);
                continue;
            }
            self.test(test)?;
            match fixed::fixed(test, self) {
                Some(false) => self.excuse_never_run(body),
                Some(true) => {
                    arms.push(self.arm(body, &base)?);
                    exhaustive = true;
                    break;
                }
                None => arms.push(self.arm(body, &base)?),
            }
        }
        if !exhaustive {
            arms.push(base.clone());
        }
        self.env = Env::join(&base, &arms);
        Ok(())
    }

    /// Prove the statements of one arm from `start`; the environment after it.
    fn arm(&mut self, body: &'p [Stmt], start: &Env) -> Proof<Env> {
        self.env = start.clone();
        for stmt in body {
            self.statement(stmt, false)?;
        }
        Ok(self.env.clone())
    }

    /// A branch test: a known constant, a comparison of known values, `str.startswith`.
    pub fn test(&self, test: &Expr) -> Proof<()> {
        let fail = || Err(Unproved::at(test.range(), Why::Test));
        match test {
            Expr::Compare(cmp) => {
                let mut left = (cmp.left.as_ref(), self.value(&cmp.left)?);
                for (op, right) in cmp.ops.iter().zip(&cmp.comparators) {
                    let right = (right, self.value(right)?);
                    let ok = match op {
                        CmpOp::Is | CmpOp::IsNot => true,
                        // `==` runs `__eq__`: not of an instance of some class or of a value
                        // v2 knows nothing of.
                        CmpOp::Eq | CmpOp::NotEq => [&left.1, &right.1]
                            .iter()
                            .all(|m| !matches!(m, Meaning::Value(Kind::Other) | Meaning::Unknown)),
                        // Numbers with numbers, int tuples with int tuples (a tuple holding
                        // a str, or a tuple with a number, raises `TypeError`).
                        CmpOp::Lt | CmpOp::LtE | CmpOp::Gt | CmpOp::GtE => {
                            let order = |(e, m): (&Expr, &Meaning)| match m {
                                Meaning::Value(Kind::Int | Kind::Float) => Some(false),
                                Meaning::Value(Kind::Tuple) if self.is_int_tuple(e) => Some(true),
                                _ => None,
                            };
                            order((left.0, &left.1))
                                .is_some_and(|l| order((right.0, &right.1)) == Some(l))
                        }
                        // A str in one of `urllib.parse`'s scheme lists ([`super::registry`]).
                        CmpOp::In | CmpOp::NotIn => {
                            self.scheme_membership(&left.1, &right.1).unwrap_or(false)
                        }
                    };
                    if !ok {
                        return fail();
                    }
                    left = right;
                }
                Ok(())
            }
            Expr::BoolOp(b) => b.values.iter().try_for_each(|v| self.test(v)),
            Expr::UnaryOp(u) if u.op == ast::UnaryOp::Not => self.test(&u.operand),
            Expr::Call(call) if is_str_prefix_test(self, call) => Ok(()),
            // A name bound on each path to a value whose truth test is safe ([`Mark::SafeTruth`]).
            Expr::Name(n) if self.env.has_mark(n.id.as_str(), Mark::SafeTruth) => Ok(()),
            // The truth of a builtin or stdlib value; an instance of some class may run its
            // `__bool__`/`__len__`.
            _ => match self.value(test)? {
                Meaning::Value(kind) if kind != Kind::Other => Ok(()),
                _ => fail(),
            },
        }
    }

    /// A tuple of ints: a display of int literals, `sys.version_info` (read through the module
    /// `sys`), a slice of it, or a name bound to one ([`Mark::IntTuple`]).
    pub fn is_int_tuple(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Name(n) => self.env.has_mark(n.id.as_str(), Mark::IntTuple),
            Expr::Tuple(t) => t.elts.iter().all(|e| match e {
                Expr::NumberLiteral(n) => matches!(n.value, ast::Number::Int(_)),
                Expr::UnaryOp(u) => {
                    matches!(u.operand.as_ref(), Expr::NumberLiteral(n) if matches!(n.value, ast::Number::Int(_)))
                }
                _ => false,
            }),
            Expr::Attribute(a) => {
                a.attr.as_str() == "version_info"
                    && self.value(&a.value) == Ok(Meaning::Module("sys".into()))
            }
            Expr::Subscript(s) => {
                matches!(s.slice.as_ref(), Expr::Slice(_)) && self.is_int_tuple(&s.value)
            }
            _ => false,
        }
    }

    /// typing's `TYPE_CHECKING`: a name bound by `from typing import TYPE_CHECKING`, or
    /// `typing.TYPE_CHECKING` read through the module `typing` (a module's own
    /// `TYPE_CHECKING = True`, or another module's attribute, is an ordinary value).
    fn is_type_checking(&self, test: &Expr) -> bool {
        match test {
            Expr::Name(n) => self.env.has_mark(n.id.as_str(), Mark::TypeChecking),
            Expr::Attribute(a) => {
                a.attr.as_str() == "TYPE_CHECKING"
                    && self.value(&a.value) == Ok(Meaning::Module("typing".into()))
            }
            _ => false,
        }
    }

    /// `try`: every arm proved. When a handler catches `ImportError`, the imports of the body
    /// are optional (their failure is handled).
    fn try_(&mut self, node: &'p ast::StmtTry) -> Proof<()> {
        let before = self.env.clone();
        // The body's imports may fail when a handler catches `ImportError` (checked below).
        let guarded = node.handlers.iter().any(|handler| {
            let ast::ExceptHandler::ExceptHandler(h) = handler;
            h.type_
                .as_ref()
                .is_none_or(|t| self.catches_import_error(t).unwrap_or(false))
        });
        let outer = self.import_guarded;
        self.import_guarded = outer || guarded;
        let body = self.arm(&node.body, &before);
        self.import_guarded = outer;
        let body = body?;
        let body = self.arm(&node.orelse, &body)?;
        // A handler may run after any part of the body: what the body binds may be missing.
        let partial = Env::join(&before, &[before.clone(), body.clone()]);
        let mut arms = vec![body];
        let mut catches_import_error = false;
        for handler in &node.handlers {
            let ast::ExceptHandler::ExceptHandler(h) = handler;
            self.env = partial.clone();
            catches_import_error |= match &h.type_ {
                None => true,
                Some(type_) => self.catches_import_error(type_)?,
            };
            let mut start = partial.clone();
            if let Some(name) = &h.name {
                start.bind(name.as_str(), Meaning::Unknown);
            }
            let mut end = self.arm(&h.body, &start)?;
            if let Some(name) = &h.name {
                end.unbind(name.as_str());
            }
            arms.push(end);
        }
        self.env = Env::join(&before, &arms);
        let after = self.env.clone();
        self.arm(&node.finalbody, &after)?;
        if catches_import_error {
            // Excused, but they may run: recorded as handled unless they never run anyway.
            let before = self.excused_imports.clone();
            self.excuse_imports(&node.body);
            let handled: Vec<_> = self.excused_imports.difference(&before).copied().collect();
            self.handled_imports.extend(handled);
        }
        Ok(())
    }

    /// The handler's type names exceptions (checked) and one of them catches `ImportError`.
    fn catches_import_error(&self, type_: &Expr) -> Proof<bool> {
        let types: Vec<&Expr> = match type_ {
            Expr::Tuple(t) => t.elts.iter().collect(),
            other => vec![other],
        };
        let mut catches = false;
        for t in types {
            match self.value(t)? {
                Meaning::Qualified(q) if known::base(&q) == Some(known::BaseKind::Exception) => {
                    catches |= matches!(
                        q.as_str(),
                        "builtins.ImportError"
                            | "builtins.ModuleNotFoundError"
                            | "builtins.Exception"
                            | "builtins.BaseException"
                    );
                }
                Meaning::Class(info) if info.kind == super::env::ClassKind::Exception => {}
                _ => return Err(Unproved::at(t.range(), Why::Test)),
            }
        }
        Ok(catches)
    }

    /// A body that never runs on a worker (`if TYPE_CHECKING:`, an arm behind a test false on
    /// every worker): its imports, and its span, so that a dynamic import in it (`__import__`
    /// under `if os.name == "nt":`) is not a READY-014 reason either
    /// ([`super::V2Statements::excused_imports`]).
    fn excuse_never_run(&mut self, body: &[Stmt]) {
        self.excuse_imports(body);
        if let (Some(first), Some(last)) = (body.first(), body.last()) {
            self.excused_imports
                .insert(ruff_text_size::TextRange::new(first.start(), last.end()));
        }
    }

    fn excuse_imports(&mut self, body: &[Stmt]) {
        for stmt in body {
            match stmt {
                Stmt::Import(_) | Stmt::ImportFrom(_) => {
                    self.excused_imports.insert(stmt.range());
                }
                Stmt::If(node) => {
                    self.excuse_imports(&node.body);
                    for clause in &node.elif_else_clauses {
                        self.excuse_imports(&clause.body);
                    }
                }
                // Every part of a nested `try` runs inside this body (or never runs): an
                // `ImportError` its handlers or `finally` raise reaches the outer handler.
                Stmt::Try(node) => {
                    self.excuse_imports(&node.body);
                    for handler in &node.handlers {
                        let ast::ExceptHandler::ExceptHandler(h) = handler;
                        self.excuse_imports(&h.body);
                    }
                    self.excuse_imports(&node.orelse);
                    self.excuse_imports(&node.finalbody);
                }
                _ => {}
            }
        }
    }

    /// After a statement that was not proved: what it binds is bound to something unknown.
    pub fn bind_unknown(&mut self, stmt: &Stmt) {
        let mut names = Vec::new();
        collect_bound(std::slice::from_ref(stmt), &mut names);
        for name in names {
            if self.env.lookup(name).is_none() || !matches!(stmt, Stmt::If(_) | Stmt::Try(_)) {
                self.env.bind(name, Meaning::Unknown);
            }
        }
    }
}

/// The names a list of statements binds in the namespace it runs in (not inside functions or
/// classes).
pub fn collect_bound<'a>(body: &'a [Stmt], out: &mut Vec<&'a str>) {
    fn target<'a>(expr: &'a Expr, out: &mut Vec<&'a str>) {
        match expr {
            Expr::Name(n) => out.push(n.id.as_str()),
            Expr::Tuple(t) => t.elts.iter().for_each(|e| target(e, out)),
            Expr::List(l) => l.elts.iter().for_each(|e| target(e, out)),
            Expr::Starred(s) => target(&s.value, out),
            _ => {}
        }
    }
    for stmt in body {
        match stmt {
            Stmt::Assign(a) => a.targets.iter().for_each(|t| target(t, out)),
            Stmt::AnnAssign(a) if a.value.is_some() => target(&a.target, out),
            Stmt::AugAssign(a) => target(&a.target, out),
            Stmt::FunctionDef(d) => out.push(d.name.as_str()),
            Stmt::ClassDef(c) => out.push(c.name.as_str()),
            Stmt::Import(i) => out.extend(i.names.iter().map(|a| match &a.asname {
                Some(asname) => asname.as_str(),
                None => a.name.as_str().split('.').next().unwrap_or(""),
            })),
            Stmt::ImportFrom(i) => out.extend(
                i.names
                    .iter()
                    .filter(|a| a.name.as_str() != "*")
                    .map(|a| a.asname.as_ref().map_or(a.name.as_str(), |n| n.as_str())),
            ),
            Stmt::For(f) => {
                target(&f.target, out);
                collect_bound(&f.body, out);
                collect_bound(&f.orelse, out);
            }
            Stmt::While(w) => {
                collect_bound(&w.body, out);
                collect_bound(&w.orelse, out);
            }
            Stmt::With(w) => {
                w.items
                    .iter()
                    .filter_map(|i| i.optional_vars.as_deref())
                    .for_each(|t| target(t, out));
                collect_bound(&w.body, out);
            }
            Stmt::If(i) => {
                collect_bound(&i.body, out);
                i.elif_else_clauses
                    .iter()
                    .for_each(|c| collect_bound(&c.body, out));
            }
            Stmt::Try(t) => {
                collect_bound(&t.body, out);
                for handler in &t.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = handler;
                    collect_bound(&h.body, out);
                }
                collect_bound(&t.orelse, out);
                collect_bound(&t.finalbody, out);
            }
            Stmt::Match(m) => m.cases.iter().for_each(|c| collect_bound(&c.body, out)),
            _ => {}
        }
    }
}

/// `<str>.startswith("...")` / `.endswith(...)` on a known string (`sys.platform`).
pub fn is_str_prefix_test(prover: &Prover, call: &ast::ExprCall) -> bool {
    let Expr::Attribute(attr) = call.func.as_ref() else {
        return false;
    };
    let literal_arg = match (
        call.arguments.args.as_ref(),
        call.arguments.keywords.is_empty(),
    ) {
        ([Expr::StringLiteral(_)], true) => true,
        ([Expr::Tuple(t)], true) => t.elts.iter().all(|e| matches!(e, Expr::StringLiteral(_))),
        _ => false,
    };
    matches!(attr.attr.as_str(), "startswith" | "endswith")
        && literal_arg
        && prover.value(&attr.value) == Ok(Meaning::Value(Kind::Str))
}

/// The prover reads a test through its environment: `sys` must be bound to the module `sys`,
/// and a name bound to a fixed test (`WIN = sys.platform.startswith("win")`) keeps its value.
impl fixed::Reader for Prover<'_> {
    fn is_module(&self, expr: &Expr, module: &str) -> bool {
        self.value(expr) == Ok(Meaning::Module(module.to_string()))
    }

    fn fixed_name(&self, name: &str) -> Option<bool> {
        [true, false]
            .into_iter()
            .find(|b| self.env.has_mark(name, Mark::Fixed(*b)))
    }

    fn is_builtin(&self, expr: &Expr, name: &str) -> bool {
        self.value(expr) == Ok(Meaning::Qualified(format!("builtins.{name}")))
    }
}
