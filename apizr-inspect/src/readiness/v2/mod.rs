//! Readiness v2 (`apizr.readiness/v2`, opt-in with `--readiness v2`): the same rules and
//! findings as v1, plus proofs that more top-level statements are harmless at import.
//!
//! v1 counts every `class`, every call and every control-flow statement at module level as a
//! READY-004 reason. v2 follows the module's top level in order with an environment of what
//! each name is bound to ([`env`]) and proves a statement safe when evaluating it can neither
//! raise nor change anything outside the module's namespace:
//!
//! * [`stmt`] — assignments of safe values, type aliases, `del`/`+=` of known values, `def`s
//!   with allowlisted decorators, imports, `if TYPE_CHECKING:` (its body never runs),
//!   `if` on `sys.version_info` / `sys.platform` / known constants (every arm that may run
//!   proved; [`fixed`]: an arm behind a test false on every worker — CPython 3 on Linux —
//!   never runs),
//!   `try`/`except ImportError` with proved arms;
//! * [`class`] — class statements whose bases, keywords, decorators and body are safe
//!   (dataclasses, NamedTuple, Enum, TypedDict, Protocol, exceptions, plain classes);
//! * [`expr`] — the values and type expressions these evaluate; [`calls`] the allowlisted
//!   constructors (with [`pattern`] and [`regex`] for `re.compile`); [`decorators`]; [`known`] the stdlib
//!   names v2 knows; [`pure`] calls of the module's own pure functions and of classes
//!   whose instantiation [`instances`] proved; [`strings`] the strings whose value
//!   v2 folds (patterns built from module constants, f-strings of them) and [`methods`] the
//!   str methods it folds ([`octets`]: `bytes(<byte literals>).decode()`); [`values`]
//!   stdlib values built from literals (`datetime`, `hasattr`, `functools.partial`);
//!   [`registry`] calls that only change the worker process's warnings filters, logging
//!   tree, codec error handlers and URL scheme lists; [`module_copy`] a private copy of a
//!   standard-library module (`importlib.util.find_spec` … `exec_module`) and stores into it;
//!   [`comprehension`] comprehensions over ranges and literal displays; [`constant`] calls
//!   of local functions on known values; [`ints`] ints of known bounds (`v.to_bytes(1,
//!   "big")`, `b"%03o" % v`); [`dicts`] `D.update(...)` of a dict the module built;
//!   [`interp`] calls of the package's own code run by an interpreter of an exactly modelled
//!   subset of Python.
//!
//! v2 also adds obligations v1 never checked: a name a statement evaluates must be bound by
//! then (an annotation naming a class defined later raises `NameError` at import). A
//! statement v2 cannot prove keeps a READY-004 reason with [`Risk::Unproved`]: the
//! sub-expression and why, which the explanation names with its line and column.
//!
//! Imports: an import inside `if TYPE_CHECKING:` never runs, and one in a `try` whose handler
//! catches `ImportError` cannot stop the import (workers run Python with `-I -S`, so a module
//! outside the stdlib and the inspected code fails to import and the proved handler runs).
//! Neither counts for READY-015 under v2 ([`V2Statements::excused_imports`]).

pub mod calls;
pub mod class;
pub mod comprehension;
pub mod constant;
pub mod decorators;
pub mod dicts;
pub mod displays;
pub mod env;
pub mod exceptions;
pub mod expr;
pub mod fixed;
pub mod generics;
pub mod instances;
pub mod interp;
pub mod ints;
pub mod joins;
pub mod known;
pub mod markers;
pub mod methods;
pub mod module_copy;
pub mod mro;
pub mod names;
pub mod octets;
pub mod package;
pub mod pattern;
pub mod pure;
pub mod regex;
pub mod registry;
pub mod slots;
pub mod stdlib_classes;
pub mod stdlib_names;
pub mod stmt;
pub mod strings;
pub mod values;

use std::collections::{HashMap, HashSet};

use ruff_text_size::TextRange;

use super::evidence::Risk;
use super::init::InitContext;
use crate::facts::StmtId;
use env::{Env, Meaning};

/// A statement v2 could not prove, and the part of it at fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unproved {
    pub range: TextRange,
    pub why: Why,
}

impl Unproved {
    pub fn at(range: TextRange, why: Why) -> Self {
        Unproved { range, why }
    }
}

/// Why v2 could not prove a statement harmless.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// The name is not bound at this point (`NameError`).
    Unbound,
    /// The name is bound on some paths only.
    MaybeUnbound,
    /// The name is only bound under `if TYPE_CHECKING:`.
    TypeCheckingOnly,
    /// An attribute v2 does not know exists.
    Attribute,
    /// A call that is not on the allowlist.
    NotAllowlisted,
    /// An allowlisted call with arguments v2 cannot check.
    Arguments,
    /// A pattern `re.compile` might refuse.
    Regex,
    /// A subscript of something that is not a known generic.
    NotGeneric,
    /// The wrong number of type arguments.
    Arity,
    /// Not a type where typing needs one.
    NotAType,
    /// A `Literal[...]` member that is not a literal.
    NotALiteral,
    /// `Generic[...]`/`Protocol[...]` of something else than distinct type variables.
    NotATypeVar,
    /// A forward reference that does not parse.
    BadForwardRef,
    /// A set element or dict key that may be unhashable.
    Unhashable,
    /// A decorator that is not on the allowlist.
    Decorator,
    /// A base class v2 does not know is safe to subclass.
    Base,
    /// A base class imported from a module of the package that v2 does not prove, or that
    /// is in the same import cycle (its class statement is not known to have run as proved).
    BaseFromUnproved,
    /// A base class whose `__init_subclass__` (its own or inherited) runs when subclassed.
    SubclassHook,
    /// A class keyword (metaclass, `__init_subclass__` arguments) v2 does not know.
    ClassKeyword,
    /// A statement in a class body v2 does not prove.
    ClassBody,
    /// A dataclass or NamedTuple field without a default after one with a default.
    FieldOrder,
    /// A dataclass default that is mutable (`ValueError` at import).
    MutableDefault,
    /// An enum member whose value does not fit the enum, or a name enums reserve.
    EnumMember,
    /// A store into an attribute or subscript, or an unpacking that may not fit.
    Target,
    /// A branch test v2 cannot evaluate without effects.
    Test,
    /// An expression form v2 does not evaluate.
    Expression,
    /// A statement kind v2 never proves (`for`, `while`, `with`, `raise`, ...).
    Statement,
    /// An import of a standard-library module the Linux workers do not have (`msvcrt`),
    /// outside a `try` that catches `ImportError`.
    Unavailable,
    /// A standard-library module (or submodule) the workers' CPython 3.11 does not have
    /// ([`stdlib_names`]), outside a `try` that catches `ImportError`.
    NoModule,
    /// A standard-library module whose import has effects (`this`, `antigravity`, a
    /// `__main__` module): never proved.
    ImportEffects,
    /// `from M import N` of a name the standard-library module `M` (at this range) does not
    /// bind and that is no submodule of it (`ImportError`).
    NotBound(TextRange),
    /// A call of the package's own code the interpreter refused ([`interp`]), and why.
    Interpreted(interp::Refused),
}

/// The v2 verdict on a module's top level.
#[derive(Debug, Default)]
pub struct V2Statements {
    /// The READY-004 reasons that remain, each with why.
    pub risky: Vec<(StmtId, Risk)>,
    /// Import statements (their ranges) that never run or whose failure is handled, and the
    /// spans of bodies that never run (a dynamic import in one is excused too).
    pub excused_imports: HashSet<TextRange>,
    /// The excused imports that may run (a handler catches their `ImportError`): one of a
    /// module of the package runs its top level when it succeeds, so the package still
    /// judges it ([`package::ModulePackage::runs_local`]).
    pub handled_imports: HashSet<TextRange>,
    /// The names bound on every path at the end of the top level, and their meanings.
    pub exports: package::Exports,
}

/// The state of the walk over the top level.
pub struct Prover<'p> {
    pub env: Env,
    /// `from __future__ import annotations`: annotations are never evaluated.
    pub future_annotations: bool,
    /// Modules imported so far, with their parent packages (`a`, `a.b` for `import a.b`).
    pub imported_modules: HashSet<String>,
    pub excused_imports: HashSet<TextRange>,
    /// See [`V2Statements::handled_imports`].
    pub handled_imports: HashSet<TextRange>,
    /// The module's own name (a relative import of it is not stdlib).
    pub module: &'p str,
    /// Inside a package directory: what the module's local imports bind.
    pub package: Option<&'p package::ModulePackage<'p>>,
    /// The module's pure functions and constructible classes ([`pure`]).
    pub local: pure::Local<'p>,
    /// Inside the body of a `try` whose handler catches `ImportError`.
    pub import_guarded: bool,
    /// The values each marker function of the module stores, by its `def`'s range
    /// ([`markers`]).
    pub markers: markers::Markers<'p>,
}

impl<'p> Prover<'p> {
    /// A prover for a nested scope (a comprehension, a class body) that reads the module's
    /// names; `local` says what the scope may call of the module's own code.
    pub fn nested(&self, local: pure::Local<'p>) -> Prover<'p> {
        Prover {
            env: self.env.clone(),
            future_annotations: self.future_annotations,
            imported_modules: self.imported_modules.clone(),
            excused_imports: Default::default(),
            handled_imports: Default::default(),
            module: self.module,
            package: self.package,
            local,
            import_guarded: self.import_guarded,
            markers: self.markers.clone(),
        }
    }
}

/// Prove the direct statements of the module; `v1` are the statements v1 counts.
pub fn prove<'p>(
    ctx: &'p InitContext,
    v1: &[(StmtId, Risk)],
    package: Option<&'p package::ModulePackage<'p>>,
) -> V2Statements {
    let v1: HashMap<StmtId, Risk> = v1.iter().copied().collect();
    let mut prover = Prover {
        env: Env::default(),
        future_annotations: false,
        imported_modules: HashSet::new(),
        excused_imports: HashSet::new(),
        handled_imports: HashSet::new(),
        module: &ctx.parsed.module,
        package,
        local: pure::Local::default(),
        import_guarded: false,
        markers: Default::default(),
    };
    // A package's submodule names ([`Env`]'s `submodules`).
    if let Some(p) = package
        && p.ctx.index.is_package(p.module)
    {
        let prefix = format!("{}.", p.module);
        let names = p
            .ctx
            .index
            .modules()
            .filter_map(|m| m.strip_prefix(&prefix));
        let names = names.filter(|n| !n.contains('.')).map(str::to_string);
        prover.env.set_submodules(p.module, names.collect());
    }
    let mut risky = Vec::new();
    for (id, statement) in ctx.facts.statements().filter(|(_, s)| s.is_direct()) {
        let node = statement.node;
        let verdict = match v1.get(&id) {
            // The `__main__` guard: v1's verdict either way, its body never runs on import.
            Some(Risk::MainGuard(why)) => Err(Risk::MainGuard(*why)),
            None if stmt::is_main_guard(node) => Ok(()),
            // Exempt statements (proven TypedDicts, overload stubs) are v1's business.
            None if ctx.exempt.contains(&id) => {
                prover.bind_unknown(node);
                if let ruff_python_ast::Stmt::ClassDef(c) = node {
                    prover
                        .env
                        .bind(c.name.as_str(), Meaning::Class(class::typed_dict_info()));
                }
                Ok(())
            }
            _ => {
                let inert = ctx.inert.contains(&id);
                prover.statement(node, inert).map_err(Risk::Unproved)
            }
        };
        if let Err(risk) = verdict {
            prover.bind_unknown(node);
            risky.push((id, risk));
        }
    }
    let mut exports = prover.env.definite();
    prover.settle_markers(&mut exports);
    // Inside a package, importers may call its pure functions ([`pure::Foreign`]).
    pure::lend_functions(&prover, &mut exports);
    // An importer calls these classes after this module has run: with its final globals.
    instances::settle_exports(&mut exports, prover.env.shadows("super"));
    V2Statements {
        risky,
        excused_imports: prover.excused_imports,
        handled_imports: prover.handled_imports,
        exports,
    }
}
