//! The modules of the package as the interpreter sees them: a module's global `name` at a
//! point of its top level is the value its last binding statement before that point bound —
//! recalled from the source, not run again ([`Interp::recall`]).
//!
//! The rule, and why it is exact. The interpreter only reads modules in the import-time
//! closure of the module being proved (or of a module it imports with
//! `importlib.import_module`, [`super`]); a function of such a module is only served when every
//! top-level statement of that closure is proved, so every statement ran without raising,
//! and v2 proves no top-level statement that rebinds another module's globals or changes an
//! object in place (the interpreter's own changes are tracked, [`super::Effects`]). A name
//! bound by one or more *direct* top-level statements before the point (no `if`/`try`/loop
//! arm binds it there) is bound to what the last of them bound: a display is rebuilt (one
//! object per statement, so that `A = B = {}` and `C = A` alias as they did), a literal or a
//! concatenation of known strings is known, a `def`/`class` is rebuilt from its statement,
//! a local `from m import x` is `m`'s global; anything else is [`Val::Opaque`]: it exists, and
//! nothing more is assumed. A name bound inside a compound statement is refused (it may be
//! unbound, as under `if TYPE_CHECKING:`). A module with a top-level `+=`, item store or
//! method call statement (`D[k] = v`, `D.update(...)`) may have changed a list or dict in place, also through another
//! name: its list and dict displays are not recalled.

use std::collections::HashMap;
use std::rc::Rc;

use ruff_python_ast::{self as ast, Expr, Number, Operator, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};

use super::heap::{Class, Func, Id, ModId, Obj, Origin, Refused, Run, Val, refuse};
use super::{Interp, MAX_MODULES};

/// Globals recalled inside one another at most (`X = Y` where `Y = Z`, ...).
const MAX_RECALLS: usize = 64;
use crate::ParsedModule;
use crate::package::{ImportTarget, ResolvedImport};
use crate::readiness::stdlib::is_stdlib;
use crate::readiness::v2::package::{local_target, reads_name};

/// A module's parse: the module being proved's own, or one read for the interpreter.
#[derive(Clone)]
pub enum Source<'c> {
    Borrowed(&'c ParsedModule),
    Owned(Rc<ParsedModule>),
}

impl std::ops::Deref for Source<'_> {
    type Target = ParsedModule;
    fn deref(&self) -> &ParsedModule {
        match self {
            Source::Borrowed(p) => p,
            Source::Owned(p) => p,
        }
    }
}

/// One module of the package, parsed for the interpreter.
pub struct Loaded<'c> {
    pub name: String,
    pub parsed: Source<'c>,
    pub imports: Vec<ResolvedImport>,
    /// Its top-level statements from this offset on have not run yet (the module being
    /// proved); the end of the text for a finished module.
    pub limit: TextSize,
    /// Per name: the indices of the direct top-level statements binding it, and the starts
    /// of compound statements binding it in an arm.
    pub bindings: HashMap<String, (Vec<usize>, Vec<TextSize>)>,
    /// Its top level (also in an arm) may change a list or dict in place ([`augments`]).
    pub has_aug: bool,
    /// It has a star import: a name no statement binds may still be bound.
    pub star: bool,
}

/// The top level (with its arms and class bodies) may change a list or dict in place: an
/// augmented assignment, an item or attribute store, or a method call as a statement
/// (`D.update(...)`, `D[k] = v`, [`crate::readiness::v2::dicts`]).
fn augments(body: &[Stmt]) -> bool {
    body.iter().any(|stmt| match stmt {
        Stmt::AugAssign(_) => true,
        // `D[k] = v` ([`crate::readiness::v2::dicts`]), an attribute store.
        Stmt::Assign(a) => a.targets.iter().any(|t| !store_binds_names(t)),
        Stmt::AnnAssign(a) => !store_binds_names(&a.target),
        Stmt::Expr(e) => matches!(e.value.as_ref(), Expr::Call(c) if c.func.is_attribute_expr()),
        Stmt::If(i) => augments(&i.body) || i.elif_else_clauses.iter().any(|c| augments(&c.body)),
        Stmt::Try(t) => {
            augments(&t.body)
                || augments(&t.orelse)
                || augments(&t.finalbody)
                || t.handlers.iter().any(|h| {
                    let ast::ExceptHandler::ExceptHandler(h) = h;
                    augments(&h.body)
                })
        }
        Stmt::For(f) => augments(&f.body) || augments(&f.orelse),
        Stmt::While(w) => augments(&w.body) || augments(&w.orelse),
        Stmt::With(w) => augments(&w.body),
        // A class body runs at import too (`class A: REG["a"] = 1`).
        Stmt::ClassDef(c) => augments(&c.body),
        _ => false,
    })
}

/// A target that only binds names (no item or attribute store).
fn store_binds_names(target: &Expr) -> bool {
    match target {
        Expr::Name(_) => true,
        Expr::Tuple(t) => t.elts.iter().all(store_binds_names),
        Expr::List(l) => l.elts.iter().all(store_binds_names),
        Expr::Starred(s) => store_binds_names(&s.value),
        _ => false,
    }
}

/// The top level (with its arms) holds a star import.
fn stars(body: &[Stmt]) -> bool {
    body.iter().any(|stmt| match stmt {
        Stmt::ImportFrom(i) => i.names.iter().any(|a| a.name.as_str() == "*"),
        Stmt::If(i) => stars(&i.body) || i.elif_else_clauses.iter().any(|c| stars(&c.body)),
        Stmt::Try(t) => {
            stars(&t.body)
                || stars(&t.orelse)
                || stars(&t.finalbody)
                || t.handlers.iter().any(|h| {
                    let ast::ExceptHandler::ExceptHandler(h) = h;
                    stars(&h.body)
                })
        }
        _ => false,
    })
}

impl<'c> Loaded<'c> {
    fn new(name: String, parsed: Source<'c>, imports: Vec<ResolvedImport>) -> Self {
        let mut bindings: HashMap<String, (Vec<usize>, Vec<TextSize>)> = HashMap::new();
        let has_aug = augments(parsed.body());
        let star = stars(parsed.body());
        for (index, stmt) in parsed.body().iter().enumerate() {
            let mut names = Vec::new();
            crate::readiness::v2::stmt::collect_bound(std::slice::from_ref(stmt), &mut names);
            if let Stmt::Delete(d) = stmt {
                names.extend(
                    d.targets
                        .iter()
                        .filter_map(|t| t.as_name_expr())
                        .map(|n| n.id.as_str()),
                );
            }
            let compound = matches!(
                stmt,
                Stmt::If(_)
                    | Stmt::Try(_)
                    | Stmt::For(_)
                    | Stmt::While(_)
                    | Stmt::With(_)
                    | Stmt::Match(_)
            );
            for name in names {
                let entry = bindings.entry(name.to_string()).or_default();
                if compound {
                    entry.1.push(stmt.start());
                } else {
                    entry.0.push(index);
                }
            }
        }
        let limit = TextSize::try_from(parsed.text.len()).unwrap_or(TextSize::new(u32::MAX));
        Loaded {
            name,
            parsed,
            imports,
            limit,
            bindings,
            has_aug,
            star,
        }
    }
}

impl<'c> Interp<'c> {
    /// The module `dotted` of the package, parsed once per interpretation (the module being
    /// proved is already parsed).
    pub fn load(&mut self, dotted: &str, at: (ModId, TextRange)) -> Run<ModId> {
        if let Some(found) = self.modules.iter().position(|m| m.name == dotted) {
            return Ok(found);
        }
        if self.modules.len() >= MAX_MODULES {
            return refuse(at.0, at.1, Refused::Fuel);
        }
        let package = self.package;
        let loaded = if dotted == package.module {
            let imports = package.imports().to_vec();
            Loaded::new(
                dotted.to_string(),
                Source::Borrowed(package.parsed.0),
                imports,
            )
        } else {
            let index = package.ctx.index;
            let Ok(parsed) = index.parse(dotted) else {
                return refuse(at.0, at.1, Refused::Import);
            };
            let imports = index.imports_in(&parsed);
            Loaded::new(dotted.to_string(), Source::Owned(Rc::new(parsed)), imports)
        };
        self.modules.push(loaded);
        Ok(self.modules.len() - 1)
    }

    /// The value of global `name` of module `m` at offset `at` of its top level; `None` when
    /// no statement before it binds the name (a builtin, or `NameError`).
    pub fn global(
        &mut self,
        m: ModId,
        name: &str,
        at: TextSize,
        range: TextRange,
    ) -> Run<Option<Val>> {
        // The first import of submodule `m.name` (from anywhere) binds `name` in package `m`
        // over a builtin or an earlier binding: followed only when the binding read comes
        // after a direct top-level import of that submodule (`from .name import name`).
        let submodule = format!("{}.{name}", self.modules[m].name);
        let shadowed = self.package.ctx.index.contains(&submodule);
        let Some((direct, nested)) = self.modules[m].bindings.get(name) else {
            if self.modules[m].star || shadowed {
                return refuse(m, range, Refused::Name);
            }
            return Ok(None);
        };
        if nested.iter().any(|start| *start < at) {
            return refuse(m, range, Refused::Name);
        }
        let parsed = self.modules[m].parsed.clone();
        let body = parsed.body();
        let index = direct.iter().rev().copied().find(|i| body[*i].start() < at);
        if shadowed && !index.is_some_and(|i| self.imported_before(m, &submodule, &body[i])) {
            return refuse(m, range, Refused::Name);
        }
        let Some(index) = index else {
            return Ok(None);
        };
        self.step(m, range)?;
        // A long chain of names bound to names (`a2 = a1`, ...) is not followed further.
        if self.recalls >= MAX_RECALLS {
            return refuse(m, range, Refused::Recursion);
        }
        self.recalls += 1;
        let value = self.binding(m, &body[index], name, range);
        self.recalls -= 1;
        value.map(Some)
    }

    /// A direct top-level import statement of module `m` loads `submodule` before `stmt`
    /// binds its names (an earlier statement, or `stmt` itself importing from it).
    fn imported_before(&self, m: ModId, submodule: &str, stmt: &Stmt) -> bool {
        let body = self.modules[m].parsed.body();
        self.modules[m].imports.iter().any(|i| {
            let loads = local_target(i).is_some_and(|t| {
                t == submodule
                    || t.strip_prefix(submodule)
                        .is_some_and(|r| r.starts_with('.'))
            });
            let direct = body.iter().any(|s| {
                s.range() == i.statement && matches!(s, Stmt::Import(_) | Stmt::ImportFrom(_))
            });
            let first = i.statement.start() < stmt.start()
                || (i.statement == stmt.range() && i.module == submodule && i.name.is_some());
            loads && direct && first
        })
    }

    /// What the direct top-level statement `stmt` of module `m` bound `name` to.
    fn binding(&mut self, m: ModId, stmt: &Stmt, name: &str, range: TextRange) -> Run<Val> {
        let at = stmt.start();
        match stmt {
            Stmt::Assign(a) => {
                let value = self.statement_value(m, at, &a.value, true)?;
                for target in &a.targets {
                    if let Some(v) = self.unpack(target, &a.value, &value, name) {
                        return Ok(v);
                    }
                }
                Ok(Val::Opaque)
            }
            Stmt::AnnAssign(a) => match &a.value {
                Some(value) => self.statement_value(m, at, value, true),
                None => Ok(Val::Opaque),
            },
            Stmt::FunctionDef(def) => self.function(m, def, None, at, None),
            Stmt::ClassDef(class) => self.class(m, class),
            Stmt::Import(node) => Ok(self.import(m, node, name)),
            Stmt::ImportFrom(node) => self.import_from(m, node, name, range),
            // `del name` unbinds it; an augmented assignment is not followed.
            Stmt::Delete(_) => refuse(m, range, Refused::Name),
            _ => Ok(Val::Opaque),
        }
    }

    /// The value a top-level statement's right-hand side evaluated to, once per statement (so
    /// that the names it binds alias as they did).
    fn statement_value(&mut self, m: ModId, at: TextSize, expr: &Expr, top: bool) -> Run<Val> {
        if let Some(v) = self.recalled.get(&(m, at)).cloned() {
            if let Val::Ref(id) = v
                && matches!(self.heap[id].origin, Origin::Global { .. })
            {
                self.note_read(m, at, expr.range())?;
            }
            return Ok(v);
        }
        let value = self.recall(m, expr, at, None)?;
        // The module's own display bound to a name: item stores into it are tracked.
        if top
            && !self.modules[m].has_aug
            && let Val::Ref(id) = value
            && matches!(expr, Expr::Dict(_) | Expr::List(_))
        {
            self.heap[id].origin = Origin::Global { module: m, at };
            self.note_read(m, at, expr.range())?;
        }
        self.recalled.insert((m, at), value.clone());
        Ok(value)
    }

    /// The part of `value` (of display `expr`) that `target` binds to `name`.
    fn unpack(&self, target: &Expr, expr: &Expr, value: &Val, name: &str) -> Option<Val> {
        match target {
            Expr::Name(n) if n.id.as_str() == name => Some(value.clone()),
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                let position = elts
                    .iter()
                    .position(|e| matches!(e, Expr::Name(n) if n.id.as_str() == name))?;
                if elts.iter().any(|e| !matches!(e, Expr::Name(_))) {
                    return Some(Val::Opaque);
                }
                let shape = matches!(expr, Expr::Tuple(_) | Expr::List(_));
                match (shape, value) {
                    (true, Val::Ref(id)) => match &self.heap[*id].obj {
                        Obj::Tuple(items) | Obj::List(items) if items.len() == elts.len() => {
                            items.get(position).cloned()
                        }
                        _ => Some(Val::Opaque),
                    },
                    _ => Some(Val::Opaque),
                }
            }
            _ => None,
        }
    }

    fn import(&mut self, m: ModId, node: &ast::StmtImport, name: &str) -> Val {
        for alias in &node.names {
            let dotted = alias.name.as_str();
            let bound = alias
                .asname
                .as_ref()
                .map_or(dotted.split('.').next().unwrap_or(dotted), |a| a.as_str());
            if bound != name {
                continue;
            }
            let module = match &alias.asname {
                Some(_) => dotted,
                None => dotted.split('.').next().unwrap_or(dotted),
            };
            let local = self.modules[m]
                .imports
                .iter()
                .find(|i| i.range == alias.range())
                .and_then(local_target)
                .is_some();
            if local {
                if let Ok(target) = self.load(module, (m, alias.range())) {
                    return self.alloc(Obj::Module(target), Origin::Existing);
                }
                return Val::Opaque;
            }
            if is_stdlib(module.split('.').next().unwrap_or(module)) {
                return self.alloc(Obj::StdModule(Rc::from(module)), Origin::Existing);
            }
        }
        Val::Opaque
    }

    fn import_from(
        &mut self,
        m: ModId,
        node: &ast::StmtImportFrom,
        name: &str,
        range: TextRange,
    ) -> Run<Val> {
        let Some(alias) = node
            .names
            .iter()
            .find(|a| a.asname.as_ref().map_or(a.name.as_str(), |n| n.as_str()) == name)
        else {
            return Ok(Val::Opaque);
        };
        let import = self.modules[m]
            .imports
            .iter()
            .find(|i| i.range == alias.range())
            .cloned();
        let Some(import) = import else {
            return Ok(Val::Opaque);
        };
        if let Some(target) = local_target(&import) {
            let target = target.to_string();
            let t = self.load(&target, (m, range))?;
            if t == m {
                return refuse(m, range, Refused::Name);
            }
            if !reads_name(&import, &target) {
                return Ok(self.alloc(Obj::Module(t), Origin::Existing));
            }
            let end = self.modules[t].limit;
            return match self.global(t, alias.name.as_str(), end, range)? {
                Some(v) => Ok(v),
                None => Ok(Val::Opaque),
            };
        }
        match (&import.target, import.module.as_str(), alias.name.as_str()) {
            (ImportTarget::External(_), "importlib", "import_module") => Ok(self.alloc(
                Obj::Builtin(super::heap::Builtin::ImportModule),
                Origin::Existing,
            )),
            _ => Ok(Val::Opaque),
        }
    }

    /// A `def` of module `m` (at `at`, in the class `owner`'s body with namespace `ns`), as
    /// its statement bound it: a plain function, or what an allowlisted decorator made of it.
    pub fn function(
        &mut self,
        m: ModId,
        def: &ast::StmtFunctionDef,
        owner: Option<Id>,
        at: TextSize,
        ns: Option<&[(Rc<str>, Val)]>,
    ) -> Run<Val> {
        let mut defaults = Vec::new();
        for param in def.parameters.iter_non_variadic_params() {
            if let Some(default) = &param.default {
                let value = self.recall(m, default, at, ns)?;
                defaults.push((Rc::from(param.name().as_str()), value));
            }
        }
        let func = self.alloc(
            Obj::Function(Func {
                module: m,
                def: def.range,
                owner,
                defaults,
            }),
            Origin::Existing,
        );
        let decorator = match def.decorator_list.as_slice() {
            [] => return Ok(func),
            [d] => d,
            _ => return Ok(self.alloc(Obj::Descriptor, Origin::Existing)),
        };
        let builtin = |n: &str| -> bool {
            matches!(&decorator.expression, Expr::Name(x) if x.id.as_str() == n)
                && !self.modules[m].bindings.contains_key(n)
                && ns.is_none_or(|ns| ns.iter().all(|(k, _)| &**k != n))
        };
        let obj = if owner.is_some() && builtin("staticmethod") {
            Obj::StaticMethod(func)
        } else if owner.is_some() && builtin("classmethod") {
            Obj::ClassMethod(func)
        } else if owner.is_none() {
            return Ok(Val::Opaque);
        } else {
            // A property or another decorator: possibly a descriptor.
            Obj::Descriptor
        };
        Ok(self.alloc(obj, Origin::Existing))
    }

    /// A class statement of module `m`, rebuilt once: a plain class (no decorator, keyword or
    /// `__slots__`) whose bases are `object` or such classes and whose body binds names by
    /// assignments and `def`s only; any other is [`Val::Opaque`].
    pub fn class(&mut self, m: ModId, class: &ast::StmtClassDef) -> Run<Val> {
        let key = (m, class.start());
        if let Some(v) = self.classes.get(&key) {
            return Ok(v.clone());
        }
        let value = self.build_class(m, class)?;
        self.classes.insert(key, value.clone());
        Ok(value)
    }

    fn build_class(&mut self, m: ModId, class: &ast::StmtClassDef) -> Run<Val> {
        let at = class.start();
        // A class the interpreter does not model: any use of it is refused.
        let unmodelled = |this: &mut Self| Ok(this.alloc(Obj::Descriptor, Origin::Existing));
        if !class.decorator_list.is_empty()
            || class
                .arguments
                .as_ref()
                .is_some_and(|a| !a.keywords.is_empty())
        {
            return unmodelled(self);
        }
        let mut bases = Vec::new();
        for base in class.bases() {
            if let Expr::Name(n) = base
                && n.id.as_str() == "object"
                && self.global(m, "object", at, base.range())?.is_none()
            {
                continue;
            }
            match self.recall(m, base, at, None)? {
                Val::Ref(id) if matches!(self.heap[id].obj, Obj::Class(_)) => bases.push(id),
                _ => return unmodelled(self),
            }
        }
        let Some(mut mro) = self.c3(&bases) else {
            return unmodelled(self);
        };
        let id = self.heap.len();
        mro.insert(0, id);
        let name: Rc<str> = Rc::from(class.name.as_str());
        self.alloc(
            Obj::Class(Class {
                name: name.clone(),
                mro: mro.clone(),
                attrs: Vec::new(),
            }),
            Origin::Existing,
        );
        let mut ns: Vec<(Rc<str>, Val)> = Vec::new();
        let bind = |ns: &mut Vec<(Rc<str>, Val)>, key: &str, value: Val| match ns
            .iter_mut()
            .find(|(k, _)| &**k == key)
        {
            Some(slot) => slot.1 = value,
            None => ns.push((Rc::from(key), value)),
        };
        for (index, stmt) in class.body.iter().enumerate() {
            match stmt {
                Stmt::Pass(_) => {}
                Stmt::Expr(e) if index == 0 && e.value.is_string_literal_expr() => {}
                Stmt::Assign(a) if a.targets.iter().all(|t| t.is_name_expr()) => {
                    let value = self.recall(m, &a.value, at, Some(&ns))?;
                    for target in &a.targets {
                        if let Expr::Name(n) = target {
                            bind(&mut ns, &mangle(&name, n.id.as_str()), value.clone());
                        }
                    }
                }
                Stmt::AnnAssign(a) if a.target.is_name_expr() => {
                    if let (Some(value), Expr::Name(n)) = (&a.value, a.target.as_ref()) {
                        let value = self.recall(m, value, at, Some(&ns))?;
                        bind(&mut ns, &mangle(&name, n.id.as_str()), value);
                    }
                }
                Stmt::FunctionDef(def) => {
                    let value = self.function(m, def, Some(id), at, Some(&ns))?;
                    bind(&mut ns, &mangle(&name, def.name.as_str()), value);
                }
                _ => return unmodelled(self),
            }
        }
        if ns.iter().any(|(k, _)| &**k == "__slots__") {
            return unmodelled(self);
        }
        if let Obj::Class(c) = &mut self.heap[id].obj {
            c.attrs = ns;
        }
        Ok(Val::Ref(id))
    }

    /// The C3 linearisation of classes with these bases (`object` left out); `None` when
    /// CPython would refuse the order.
    fn c3(&self, bases: &[Id]) -> Option<Vec<Id>> {
        let mro_of = |id: Id| match &self.heap[id].obj {
            Obj::Class(c) => c.mro.clone(),
            _ => Vec::new(),
        };
        let mut seqs: Vec<Vec<Id>> = bases.iter().map(|b| mro_of(*b)).collect();
        seqs.push(bases.to_vec());
        let mut out = Vec::new();
        loop {
            seqs.retain(|s| !s.is_empty());
            if seqs.is_empty() {
                return Some(out);
            }
            let head = seqs
                .iter()
                .map(|s| s[0])
                .find(|h| seqs.iter().all(|s| !s[1..].contains(h)))?;
            out.push(head);
            for s in &mut seqs {
                if s.first() == Some(&head) {
                    s.remove(0);
                }
            }
        }
    }

    /// An expression of module `m`'s top level (at `at`, in a class body with namespace `ns`)
    /// that ran without raising: its value where it is known, else [`Val::Opaque`].
    pub fn recall(
        &mut self,
        m: ModId,
        expr: &Expr,
        at: TextSize,
        ns: Option<&[(Rc<str>, Val)]>,
    ) -> Run<Val> {
        self.step(m, expr.range())?;
        Ok(match expr {
            Expr::StringLiteral(s) => Val::Str(Rc::from(s.value.to_str())),
            Expr::NumberLiteral(n) => match &n.value {
                Number::Int(i) => i.as_i64().map_or(Val::Opaque, Val::Int),
                _ => Val::Opaque,
            },
            Expr::BooleanLiteral(b) => Val::Bool(b.value),
            Expr::NoneLiteral(_) => Val::None,
            // A private name in a class body is mangled (`__x` reads `_Class__x`).
            Expr::Name(n) if ns.is_some() && n.id.starts_with("__") && !n.id.ends_with("__") => {
                Val::Opaque
            }
            Expr::Name(n) => {
                let key = n.id.as_str();
                if let Some((_, v)) = ns.and_then(|ns| ns.iter().rev().find(|(k, _)| &**k == key)) {
                    return Ok(v.clone());
                }
                self.global(m, key, at, n.range)?.unwrap_or(Val::Opaque)
            }
            Expr::Tuple(t) => {
                let items = t
                    .elts
                    .iter()
                    .map(|e| self.recall(m, e, at, ns))
                    .collect::<Run<Vec<_>>>()?;
                self.alloc(Obj::Tuple(items), Origin::Existing)
            }
            // A module with a top-level `+=` may have changed a list in place through another
            // name: its displays are not recalled.
            Expr::List(_) | Expr::Dict(_) if self.modules[m].has_aug => Val::Opaque,
            Expr::List(l) => {
                let items = l
                    .elts
                    .iter()
                    .map(|e| self.recall(m, e, at, ns))
                    .collect::<Run<Vec<_>>>()?;
                self.alloc(Obj::List(items), Origin::Existing)
            }
            Expr::Dict(d) => {
                let mut items: Vec<(Val, Val)> = Vec::new();
                for item in &d.items {
                    let Some(key) = &item.key else {
                        return Ok(Val::Opaque);
                    };
                    let key = self.recall(m, key, at, ns)?;
                    if !matches!(key, Val::Str(_) | Val::Int(_)) {
                        return Ok(Val::Opaque);
                    }
                    let value = self.recall(m, &item.value, at, ns)?;
                    match items.iter_mut().find(|(k, _)| *k == key) {
                        Some(slot) => slot.1 = value,
                        None => items.push((key, value)),
                    }
                }
                self.alloc(Obj::Dict(items), Origin::Existing)
            }
            Expr::BinOp(b) if b.op == Operator::Add => {
                let left = self.recall(m, &b.left, at, ns)?;
                let right = self.recall(m, &b.right, at, ns)?;
                match (&left, &right) {
                    (Val::Str(a), Val::Str(b)) => Val::Str(Rc::from(format!("{a}{b}"))),
                    (Val::Str(_) | Val::SomeStr(_), Val::Str(_) | Val::SomeStr(_)) => {
                        Val::SomeStr(nonempty(&left) || nonempty(&right))
                    }
                    (Val::Int(a), Val::Int(b)) => a.checked_add(*b).map_or(Val::Opaque, Val::Int),
                    _ => Val::Opaque,
                }
            }
            Expr::Attribute(a) if a.attr.as_str() == "punctuation" => {
                match self.recall(m, &a.value, at, ns)? {
                    Val::Ref(id) if matches!(&self.heap[id].obj, Obj::StdModule(s) if &**s == "string") => {
                        Val::Str(Rc::from(r##"!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~"##))
                    }
                    _ => Val::Opaque,
                }
            }
            // `re.escape(<str>)` is a str, not empty when its argument is not.
            Expr::Call(c)
                if c.arguments.keywords.is_empty()
                    && c.arguments.args.len() == 1
                    && matches!(c.func.as_ref(), Expr::Attribute(a) if a.attr.as_str() == "escape") =>
            {
                let Expr::Attribute(a) = c.func.as_ref() else {
                    return Ok(Val::Opaque);
                };
                let module = self.recall(m, &a.value, at, ns)?;
                let is_re = matches!(module, Val::Ref(id) if matches!(&self.heap[id].obj, Obj::StdModule(s) if &**s == "re"));
                match self.recall(m, &c.arguments.args[0], at, ns)? {
                    arg @ (Val::Str(_) | Val::SomeStr(_)) if is_re => Val::SomeStr(nonempty(&arg)),
                    _ => Val::Opaque,
                }
            }
            _ => Val::Opaque,
        })
    }
}

/// A str value known not to be empty.
pub fn nonempty(v: &Val) -> bool {
    match v {
        Val::Str(s) => !s.is_empty(),
        Val::SomeStr(known) => *known,
        _ => false,
    }
}

/// `name` as written in the body of class `class`: a private name (`__x`, not `__x__`) is
/// stored as `_Class__x` (CPython strips the class name's leading underscores).
pub fn mangle(class: &str, name: &str) -> String {
    let owner = class.trim_start_matches('_');
    if name.starts_with("__") && !name.ends_with("__") && !owner.is_empty() {
        format!("_{owner}{name}")
    } else {
        name.to_string()
    }
}
