//! What each finding points at. Evidence never reaches the hashed readiness report; the
//! explanations ([`crate::explain`]) turn it into a culprit with a span and a fix.
//!
//! Evidence holds ranges and ids into the module's facts, no text: rendering happens only when
//! someone asks for an explanation.

use apizr_ir::DiagnosticKind;
use ruff_text_size::TextRange;

use super::imports::ImportProblem;
use crate::facts::{BindingId, StmtId};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// READY-001: the control-flow statement that holds the definition.
    ControlFlow { parent: StmtId },
    /// READY-002: the decorated definition.
    Decorated { def: StmtId },
    /// READY-003: the later binding of the name.
    Rebinding { binding: BindingId },
    /// READY-004: a top-level statement that may fail or change things at import, and why.
    Statement { stmt: StmtId, risk: Risk },
    /// READY-005/006: the generator (its statement, when found in module scope).
    Generator { def: Option<StmtId> },
    /// READY-007/012/013/016/017/019: the (part of the) annotation at fault, and why. For a
    /// missing annotation, the parameter's or function's name.
    Type { range: TextRange, cause: TypeCause },
    /// READY-008: `from m import *` in module scope.
    StarImport { range: TextRange },
    /// READY-008 (namespace builtin) and READY-014 (dynamic import): the call.
    Call { range: TextRange },
    /// READY-015: the imported module as written (`range` covers the name after the dots, or
    /// the statement for `from . import x`) and the whole import statement.
    Import {
        range: TextRange,
        statement: TextRange,
        level: u32,
        problem: ImportProblem,
    },
    /// READY-020 (v2 in a package): an import of third-party distributions the project
    /// declares.
    Declared {
        statement: TextRange,
        distributions: Vec<String>,
    },
    /// READY-004 (v2 in a package): importing this module first runs a parent package's
    /// `__init__`, whose import v2 does not prove harmless.
    ParentPackage { package: String },
    /// READY-009/010/011/018: a symbol discovery rejected.
    Rejected { kind: DiagnosticKind },
}

/// Why READY-004 counts a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Risk {
    /// It calls something (the first call, in source order).
    Call(TextRange),
    /// An assigned value or expression that is not literal-only (no call in it).
    NotLiteral(TextRange),
    /// A parameter default that is not literal-only.
    Default(TextRange),
    /// A decorator that is not the inert tracking decorator.
    Decorated,
    /// A `class` statement (only proven TypedDict classes are exempt).
    Class,
    /// `if` / `for` / `while` / `with` / `try` / `match` at module level.
    ControlFlow,
    /// Augmented assignment or `del`.
    Modifies,
    /// `raise` or `assert`.
    MayFail,
    /// An `if __name__ == "__main__":` block that cannot be proven inert.
    MainGuard(MainGuard),
    /// Anything else (`return`, `global`, `break`, ...).
    Other,
    /// Readiness v2 could not prove the statement harmless: the part at fault and why.
    Unproved(super::v2::Unproved),
}

/// Why the `__main__` guard is not exempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MainGuard {
    /// It has an `elif`/`else`.
    Else,
    /// The module itself is named `__main__`.
    ModuleIsMain,
    /// `__name__` is bound in module scope.
    NameBound(BindingId),
    /// The module has READY-008 reasons.
    Namespace,
    /// The module stores into an attribute or subscript at module level.
    Mutation(TextRange),
}

/// Why an annotation gives an input/output reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeCause {
    /// READY-007/016: no annotation.
    Missing,
    /// READY-007: `Any`, or a container without item types.
    AnyValue,
    /// READY-013: a constant where a type belongs (`"Foo"` forward references included).
    Constant,
    /// READY-013: the name cannot be resolved statically.
    Unresolved(Unresolved),
    /// READY-013: a name taken literally that is not a JSON type readiness knows.
    UnknownType,
    /// READY-013: a generic readiness does not know (`Sequence[int]`).
    UnknownGeneric,
    /// READY-013: the wrong number of type arguments.
    Arity,
    /// READY-012: `bytes`.
    Bytes,
    /// READY-012: `Callable`.
    Callable,
    /// READY-012: a dict key that is not `str` (the range is the key).
    NonStringKey,
    /// READY-012: a `Literal` member that is not a JSON scalar (the range is the member).
    NonScalarLiteral,
    /// READY-017: `Annotated[...]`.
    Annotated,
    /// READY-019: a TypedDict whose proof failed (the range is its name).
    RefusedTypedDict,
    /// READY-013 (readiness v2): an Enum, dataclass or NamedTuple of the module whose JSON
    /// form is not proved (the range is its name; the reason is in the class's proof).
    RefusedClass,
    /// READY-013 (readiness v2): a set of `datetime` values (the range is the set type);
    /// READY-016: a return type holding them (`readiness::temporal`).
    Temporal,
}

/// Why name resolution gave up on a name (or attribute).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unresolved {
    /// The name is the root of an attribute/subscript store.
    Mutated,
    /// The name is bound more than once in module scope.
    Rebound,
    /// Bound once, but not by a direct, unrenamed `from typing import N` (or
    /// `import typing [as m]` for attributes): a class, an alias, another module's name.
    Bound(BindingId),
    /// `m.N` where `N` is not a typing name readiness knows, or `m` is not `typing`.
    Attribute,
    /// Not a name or attribute at all (a call, a subscript of a subscript, ...).
    Expression,
}
