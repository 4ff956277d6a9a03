//! The fact pass: one walk over a parsed module that records what every rule needs, each fact
//! tagged with where it happened. Discovery, readiness and interface planning query these
//! facts; none of them walks module scope on its own.
//!
//! Why one pass: the reference decides several questions from the same module-scope events,
//! but each question looks at a slightly different part of the module (its overload-marker
//! check counts comprehension variables, its rebinding rule does not; its call scans skip
//! assignment targets that only annotate). Four separate walkers encoded these differences by
//! visiting different nodes, and drifted. Here the walk records everything once with its
//! [`Scope`] and [`Context`], and each rule states which contexts it looks at ([`View`],
//! [`Context::TARGETS`]).
//!
//! What is recorded (by `walk`):
//!
//! * [`Statement`] — every module-scope statement (direct, or nested in module control flow),
//!   in source order, with its CPython line, the direct statement it belongs to and the arm of
//!   the enclosing control flow. Function, lambda and class bodies are not module scope.
//! * [`Binding`] — every name bound in the module namespace, in evaluation order (its index is
//!   its order), with how it was bound.
//! * [`Mutation`] — attribute and subscript stores / deletions in module scope.
//! * [`Call`] and [`Import`] — in every scope of the module, so a rule can ask about module
//!   scope, the body of one module-level function, or a class body that runs at import.
//!
//! Queries live in [`query`]; the call and import classifications the reference uses in
//! [`calls`] and [`imports`].
//!
//! **Adding rules (readiness v2 and later).** A new rule is a query, not a walker:
//!
//! * package-aware imports: [`ModuleFacts::imports_in`] per [`Scope`], each with
//!   [`Import::modules`] → [`imports::ImportedModule::absolute`] (relative imports resolved
//!   against the package) and the statement's line and range;
//! * proving top-level statements safe: [`ModuleFacts::statements`] gives each statement with
//!   its direct statement (`top`), its control-flow parent and [`Arm`] (`if TYPE_CHECKING:`
//!   bodies, `try`/`except ImportError` arms); the calls, bindings and mutations of one
//!   statement are the facts whose `stmt` is it or one of its children; class bodies that run at
//!   import are [`Scope::Class`], so a class is safe when its header and its `Scope::Class`
//!   facts are;
//! * aliases across modules: [`Binding::kind`] tells an import (module, name, level) from an
//!   assignment, and [`Binding::stmt`] leads to the assigned value.

pub mod calls;
pub mod imports;
pub mod query;
mod targets;
mod walk;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

use std::collections::{HashMap, HashSet};

use ruff_python_ast::{ExprCall, Stmt, StmtImport, StmtImportFrom};
use ruff_text_size::TextRange;

use crate::module::ParsedModule;

/// Index of a module-scope statement in [`ModuleFacts::statements`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StmtId(u32);

impl StmtId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Index of a binding in the facts; a smaller index was evaluated earlier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BindingId(u32);

impl BindingId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A module-scope statement.
#[derive(Debug, Clone, Copy)]
pub struct Statement<'a> {
    pub node: &'a Stmt,
    /// CPython's `lineno` (for a decorated `def`/`class`, the keyword's line).
    pub line: u32,
    /// Index of the direct module statement that holds it (itself when direct).
    pub top: usize,
    /// The control-flow statement whose body holds it; `None` for a direct module statement.
    pub parent: Option<StmtId>,
    /// Which part of `parent` holds it.
    pub arm: Arm,
}

impl Statement<'_> {
    /// A direct module statement (not nested in module control flow).
    pub fn is_direct(&self) -> bool {
        self.parent.is_none()
    }
}

/// The part of a control-flow statement that holds a nested statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arm {
    /// A direct module statement.
    Module,
    /// The main body of `if`, `for`, `while`, `with` or `try`.
    Body,
    /// The n-th `elif`/`else` clause of an `if`.
    Clause(usize),
    /// The `else` of `for`, `while` or `try`.
    Else,
    /// The n-th `except` handler of a `try`.
    Handler(usize),
    Finally,
    /// The n-th `case` of a `match`.
    Case(usize),
}

/// Where in the module a fact happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Module scope: what runs in the module namespace at import time.
    Module,
    /// The body of a class defined in module scope (it runs at import, in its own namespace).
    Class(StmtId),
    /// The body of a module-scope function, including everything nested in it.
    Function(StmtId),
    /// Code that neither runs at import nor belongs to a module-level function: method bodies
    /// and lambda bodies outside functions.
    Deferred,
}

/// The part of a module-scope statement an expression sits in. Only tracked in module scope
/// (everywhere else it is [`Context::NONE`]); contexts nest, so this is a set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Context(u8);

impl Context {
    pub const NONE: Context = Context(0);
    /// A decorator of a `def`.
    pub const DEF_DECORATOR: Context = Context(1);
    /// A parameter default of a `def`.
    pub const DEF_DEFAULT: Context = Context(1 << 1);
    /// A parameter or return annotation of a `def`.
    pub const DEF_ANNOTATION: Context = Context(1 << 2);
    /// Decorators, bases and keywords of a `class`.
    pub const CLASS_HEADER: Context = Context(1 << 3);
    /// A parameter default of a `lambda`.
    pub const LAMBDA_DEFAULT: Context = Context(1 << 4);
    /// The target of a comprehension (`for <target> in`).
    pub const COMPREHENSION_TARGET: Context = Context(1 << 5);
    /// The target of an annotated assignment without a value (`x.y: int`).
    pub const ANNOTATION_TARGET: Context = Context(1 << 6);

    /// The targets the reference's call and store scans never look into.
    pub const TARGETS: Context = Context(Self::COMPREHENSION_TARGET.0 | Self::ANNOTATION_TARGET.0);

    pub fn with(self, other: Context) -> Context {
        Context(self.0 | other.0)
    }

    pub fn intersects(self, other: Context) -> bool {
        self.0 & other.0 != 0
    }
}

/// How a name was bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindingKind<'a> {
    /// `import <module> [as name]`; `renamed` is false for `import a.b`, which binds `a`.
    Import {
        module: &'a str,
        renamed: bool,
    },
    /// `from <module> import <name> [as ...]` with `level` leading dots (`module` is `None`
    /// for `from . import x`).
    FromImport {
        module: Option<&'a str>,
        level: u32,
        name: &'a str,
    },
    Def,
    Class,
    /// `x = ...`, `x: T = ...`.
    Assignment,
    /// `x += ...`.
    AugmentedAssignment,
    /// `del x`.
    Deletion,
    /// `for x in ...`.
    LoopTarget,
    /// `with ... as x`.
    WithTarget,
    /// `except ... as x`.
    Handler,
    /// A capture in a `case` pattern.
    MatchCapture,
    /// `(x := ...)`.
    Walrus,
    /// A comprehension variable (it does not outlive the comprehension).
    ComprehensionTarget,
    /// `x: T` without a value (binds nothing at run time).
    AnnotationOnly,
}

impl BindingKind<'_> {
    /// `from <module> import <name>` of an absolute module.
    pub fn is_from_import(&self, wanted_module: &str, wanted_name: &str) -> bool {
        matches!(self, BindingKind::FromImport { module: Some(module), level: 0, name }
            if *module == wanted_module && *name == wanted_name)
    }

    /// `import <module> [as x]` of exactly this module.
    pub fn is_import_of(&self, wanted_module: &str) -> bool {
        matches!(self, BindingKind::Import { module, .. } if *module == wanted_module)
    }
}

/// A name bound in the module namespace.
#[derive(Debug, Clone)]
pub struct Binding<'a> {
    pub name: &'a str,
    pub kind: BindingKind<'a>,
    /// The reference's line for the event: the name's line for targets, the statement's for
    /// imports and definitions, the `except`/pattern line for handlers and captures.
    pub line: u32,
    /// The bound name (the whole alias for imports, the name for definitions).
    pub range: TextRange,
    /// The innermost module-scope statement.
    pub stmt: StmtId,
    pub context: Context,
}

/// Which binding events a rule counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Decorator provenance (overload markers, the inert `experiment` decorator): every event
    /// the reference's provenance scan sees, including comprehension variables and
    /// annotation-only names, but nothing inside annotations, class headers or lambda defaults.
    Provenance,
    /// The module namespace (READY-003 rebinding, annotation name resolution, TypedDict
    /// bindings): every executed binding in module scope, headers included; not comprehension
    /// variables and not annotation-only names.
    Namespace,
}

impl Binding<'_> {
    pub fn counts_in(&self, view: View) -> bool {
        match view {
            View::Provenance => !self.context.intersects(Context(
                Context::DEF_ANNOTATION.0 | Context::CLASS_HEADER.0 | Context::LAMBDA_DEFAULT.0,
            )),
            View::Namespace => !matches!(
                self.kind,
                BindingKind::ComprehensionTarget | BindingKind::AnnotationOnly
            ),
        }
    }
}

/// An attribute or subscript store or deletion in module scope.
#[derive(Debug, Clone)]
pub struct Mutation<'a> {
    /// The name at the root of the target (`a` in `a.b[0].c = 1`), if the root is a name.
    pub root: Option<&'a str>,
    pub range: TextRange,
    pub stmt: StmtId,
    pub context: Context,
}

/// A call expression anywhere in the module.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub node: &'a ExprCall,
    pub scope: Scope,
    pub context: Context,
}

/// An `import` or `from ... import` statement anywhere in the module.
#[derive(Debug, Clone, Copy)]
pub struct Import<'a> {
    pub node: ImportNode<'a>,
    /// The statement's line.
    pub line: u32,
    pub scope: Scope,
}

#[derive(Debug, Clone, Copy)]
pub enum ImportNode<'a> {
    Import(&'a StmtImport),
    From(&'a StmtImportFrom),
}

/// Everything the rules know about one module.
#[derive(Debug)]
pub struct ModuleFacts<'a> {
    statements: Vec<Statement<'a>>,
    bindings: Vec<Binding<'a>>,
    by_name: HashMap<&'a str, Vec<BindingId>>,
    /// The binding a `def`/`class` statement makes of its own name.
    own: HashMap<StmtId, BindingId>,
    mutations: Vec<Mutation<'a>>,
    calls: Vec<Call<'a>>,
    imports: Vec<Import<'a>>,
    /// Indexes into `calls` and `imports` by scope (rules ask per function body).
    calls_by_scope: HashMap<Scope, Vec<usize>>,
    imports_by_scope: HashMap<Scope, Vec<usize>>,
    /// Module-scope `def` statements by name.
    functions_by_name: HashMap<&'a str, Vec<StmtId>>,
    /// Names that, when called, are dynamic import calls ([`calls::dynamic_import_names`]).
    dynamic_import_names: HashSet<&'a str>,
}

impl<'a> ModuleFacts<'a> {
    /// Walk `parsed` once.
    pub fn collect(parsed: &'a ParsedModule) -> Self {
        let recorded = walk::walk(parsed);
        let mut by_name: HashMap<&'a str, Vec<BindingId>> = HashMap::new();
        let mut own = HashMap::new();
        for (index, binding) in recorded.bindings.iter().enumerate() {
            let id = BindingId(u32::try_from(index).unwrap_or(u32::MAX));
            by_name.entry(binding.name).or_default().push(id);
            if matches!(binding.kind, BindingKind::Def | BindingKind::Class) {
                own.insert(binding.stmt, id);
            }
        }
        let dynamic_import_names = calls::dynamic_import_names(&recorded.imports);
        let mut calls_by_scope: HashMap<Scope, Vec<usize>> = HashMap::new();
        for (index, call) in recorded.calls.iter().enumerate() {
            calls_by_scope.entry(call.scope).or_default().push(index);
        }
        let mut imports_by_scope: HashMap<Scope, Vec<usize>> = HashMap::new();
        for (index, import) in recorded.imports.iter().enumerate() {
            imports_by_scope
                .entry(import.scope)
                .or_default()
                .push(index);
        }
        let mut functions_by_name: HashMap<&'a str, Vec<StmtId>> = HashMap::new();
        for (index, statement) in recorded.statements.iter().enumerate() {
            if let Stmt::FunctionDef(def) = statement.node {
                let id = StmtId(u32::try_from(index).unwrap_or(u32::MAX));
                functions_by_name
                    .entry(def.name.as_str())
                    .or_default()
                    .push(id);
            }
        }
        ModuleFacts {
            statements: recorded.statements,
            bindings: recorded.bindings,
            by_name,
            own,
            mutations: recorded.mutations,
            calls: recorded.calls,
            imports: recorded.imports,
            calls_by_scope,
            imports_by_scope,
            functions_by_name,
            dynamic_import_names,
        }
    }
}
