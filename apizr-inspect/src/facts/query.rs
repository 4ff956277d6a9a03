//! Queries over [`ModuleFacts`]: the questions the rules ask, each stating which facts count.

use ruff_python_ast::{Stmt, StmtClassDef, StmtFunctionDef};
use ruff_text_size::{Ranged, TextSize};

use super::calls::{disqualifies_inert_decorator, is_namespace_builtin};
use super::{
    Binding, BindingId, Call, Context, Import, ModuleFacts, Mutation, Scope, Statement, StmtId,
    View,
};

impl<'a> ModuleFacts<'a> {
    // ---- statements ---------------------------------------------------------------------

    /// Every module-scope statement, in source order (a parent before its children).
    pub fn statements(&self) -> impl Iterator<Item = (StmtId, &Statement<'a>)> {
        self.statements
            .iter()
            .enumerate()
            .map(|(i, s)| (StmtId(u32::try_from(i).unwrap_or(u32::MAX)), s))
    }

    pub fn statement(&self, id: StmtId) -> &Statement<'a> {
        // Ids are only made by the walk, for this vector.
        &self.statements[id.index()]
    }

    /// Module-scope `def`s (direct or in control flow), in source order.
    pub fn functions(
        &self,
    ) -> impl Iterator<Item = (StmtId, &Statement<'a>, &'a StmtFunctionDef)> + '_ {
        self.statements().filter_map(|(id, s)| match s.node {
            Stmt::FunctionDef(def) => Some((id, s, def)),
            _ => None,
        })
    }

    /// Module-scope `class` statements, in source order.
    pub fn classes(&self) -> impl Iterator<Item = (StmtId, &Statement<'a>, &'a StmtClassDef)> + '_ {
        self.statements().filter_map(|(id, s)| match s.node {
            Stmt::ClassDef(class) => Some((id, s, class)),
            _ => None,
        })
    }

    /// The module-scope `def name` whose CPython line is `line`.
    pub fn function(
        &self,
        name: &str,
        line: u32,
    ) -> Option<(StmtId, &Statement<'a>, &'a StmtFunctionDef)> {
        self.functions_by_name
            .get(name)?
            .iter()
            .map(|id| (*id, self.statement(*id)))
            .find_map(|(id, s)| match s.node {
                Stmt::FunctionDef(def) if s.line == line => Some((id, s, def)),
                _ => None,
            })
    }

    // ---- bindings -----------------------------------------------------------------------

    pub fn binding(&self, id: BindingId) -> &Binding<'a> {
        // Ids are only made in `collect`, for this vector.
        &self.bindings[id.index()]
    }

    /// The bindings of `name` that `view` counts, in evaluation order.
    pub fn bindings_of<'s>(
        &'s self,
        name: &str,
        view: View,
    ) -> impl Iterator<Item = (BindingId, &'s Binding<'a>)> + use<'s, 'a> {
        self.by_name
            .get(name)
            .map(Vec::as_slice)
            .unwrap_or(&[])
            .iter()
            .map(|id| (*id, self.binding(*id)))
            .filter(move |(_, b)| b.counts_in(view))
    }

    pub fn is_bound(&self, name: &str, view: View) -> bool {
        self.bindings_of(name, view).next().is_some()
    }

    /// The binding of `name`, if `view` counts exactly one.
    pub fn unique_binding(&self, name: &str, view: View) -> Option<(BindingId, &Binding<'a>)> {
        let mut all = self.bindings_of(name, view);
        let first = all.next()?;
        all.next().is_none().then_some(first)
    }

    /// The binding a `def`/`class` statement makes of its own name.
    pub fn own_binding(&self, stmt: StmtId) -> Option<BindingId> {
        self.own.get(&stmt).copied()
    }

    /// True when the binding happens in a direct module statement (not under control flow).
    pub fn is_direct(&self, binding: &Binding) -> bool {
        self.statement(binding.stmt).is_direct()
    }

    // ---- mutations ----------------------------------------------------------------------

    /// Attribute/subscript stores and deletions that execute (not annotation-only targets,
    /// not comprehension targets).
    pub fn mutations(&self) -> impl Iterator<Item = &Mutation<'a>> {
        self.mutations
            .iter()
            .filter(|m| !m.context.intersects(Context::TARGETS))
    }

    /// `name` is the root of an executed attribute/subscript store or deletion.
    pub fn is_mutated(&self, name: &str) -> bool {
        self.mutations().any(|m| m.root == Some(name))
    }

    // ---- calls and imports --------------------------------------------------------------

    /// Calls in `scope`. In module scope, calls inside comprehension targets and
    /// annotation-only targets are left out: the reference never looks there.
    pub fn calls_in(&self, scope: Scope) -> impl Iterator<Item = &Call<'a>> {
        let indexes = self.calls_by_scope.get(&scope).map(Vec::as_slice);
        indexes
            .unwrap_or(&[])
            .iter()
            .filter_map(|i| self.calls.get(*i))
            .filter(move |c| !(scope == Scope::Module && c.context.intersects(Context::TARGETS)))
    }

    /// Import statements in `scope`.
    pub fn imports_in(&self, scope: Scope) -> impl Iterator<Item = &Import<'a>> {
        let indexes = self.imports_by_scope.get(&scope).map(Vec::as_slice);
        indexes
            .unwrap_or(&[])
            .iter()
            .filter_map(|i| self.imports.get(*i))
    }

    /// `from m import *` in module scope.
    pub fn star_imports(&self) -> impl Iterator<Item = &Import<'a>> {
        self.imports_in(Scope::Module)
            .filter(|i| i.modules().iter().any(|m| m.star))
    }

    /// READY-008 calls: namespace builtins in module scope.
    pub fn namespace_calls(&self) -> impl Iterator<Item = &Call<'a>> {
        self.calls_in(Scope::Module)
            .filter(|c| is_namespace_builtin(c))
    }

    /// READY-014 calls in `scope`.
    pub fn dynamic_import_calls(&self, scope: Scope) -> impl Iterator<Item = &Call<'a>> {
        self.calls_in(scope).filter(|c| self.is_dynamic_import(c))
    }

    /// The module-wide facts that rule out the inert `experiment` decorator: a star import, a
    /// disqualifying call, or an attribute/subscript store in module scope.
    pub fn disqualifies_inert_decorator(&self) -> bool {
        self.star_imports().next().is_some()
            || self
                .calls_in(Scope::Module)
                .any(|c| disqualifies_inert_decorator(c))
            || self.mutations().next().is_some()
    }

    /// The unique [`View::Provenance`] binding of `name` when it is a direct module statement
    /// whose statement starts before `before` (decorator provenance: overload markers, the
    /// inert decorator).
    pub fn unique_earlier_binding(&self, name: &str, before: TextSize) -> Option<&Binding<'a>> {
        let (_, binding) = self.unique_binding(name, View::Provenance)?;
        let statement = self.statement(binding.stmt);
        (statement.is_direct() && statement.node.start() < before).then_some(binding)
    }
}
