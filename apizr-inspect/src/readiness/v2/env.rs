//! What v2 knows about each module-level name at a point of the import: bound for sure (and
//! to what), bound only on some paths, or bound only for type checkers.
//!
//! The environment follows the module's top level in order. A name that is not in it resolves
//! to a builtin (when it is one) or is unbound: using it at import would raise `NameError`.

use std::collections::HashMap;

use ruff_text_size::TextRange;

/// What a name is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Meaning {
    /// A module: `import a` binds `a` to module `a`; `import a.b as c` binds `c` to `a.b`.
    Module(String),
    /// A known standard-library object, by qualified name (`typing.Optional`).
    Qualified(String),
    /// A class proved safe in this module.
    Class(ClassInfo),
    /// A type variable or parameter specification.
    TypeVar,
    /// Something usable as a type (a type alias, a `NewType`, a named tuple type).
    TypeLike,
    /// A runtime value of a known builtin kind.
    Value(Kind),
    /// A function defined in this module.
    Function,
    /// A function of this module that takes no arguments and only returns an expression
    /// (`def _seg_0(): return [...]`), keyed by the range of its `def` ([`super::pure`]):
    /// calling it evaluates that expression with the module's names at the time of the call.
    Pure(TextRange),
    /// A function whose body only stores into non-dunder attributes of its one parameter and
    /// returns it ([`super::decorators`]): as a decorator of a plain function it only marks
    /// it. `Some` (its `def`'s range) in its own module, where the stored values are read at
    /// the decoration; `None` once exported with values proved at the end of its module.
    Marker(Option<TextRange>),
    /// A pure function of another module of the package, proved there ([`super::pure`]):
    /// calling it proves its body in that module's globals at the end of its top level.
    Foreign(super::pure::Foreign),
    /// Bound for sure, to something v2 does not know (an import from outside the stdlib, the
    /// target of a statement v2 did not prove).
    Unknown,
    /// Bound on some paths only (one arm of an `if`, a `try` body without the handler).
    Maybe,
    /// Bound only under `if TYPE_CHECKING:`: never at run time.
    TypeOnly,
}

/// The builtin kind of a value (what operations on it cannot fail).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int,
    Float,
    Str,
    Bytes,
    Bool,
    None,
    Tuple,
    List,
    Dict,
    Set,
    FrozenSet,
    /// A hashable object of no interest (`object()`, a logger, a compiled pattern, a lock).
    Object,
    /// Some other value (a lambda, a dict-like container).
    Other,
}

impl Kind {
    /// `hash()` of a value of this kind cannot fail (tuples are checked when built).
    pub fn hashable(self) -> bool {
        !matches!(self, Kind::List | Kind::Dict | Kind::Set | Kind::Other)
    }
}

/// What v2 records about a class it proved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassInfo {
    pub kind: ClassKind,
    /// An enum with members (cannot be subclassed).
    pub has_members: bool,
    /// It or a base defines `__init_subclass__` (subclassing it runs user code).
    pub init_subclass: bool,
    /// What calling it runs, when v2 proved that harmless ([`super::instances`]).
    pub init: super::instances::Init,
    /// Its MRO as v2 knows it ([`super::mro`]), for classes with several bases.
    pub lineage: super::mro::Lineage,
    /// Its instances have a layout of their own (a builtin, exception or io base, `__slots__`,
    /// a named tuple, enum or TypedDict): two such bases conflict.
    pub layout: bool,
    /// Its instances hold a variable number of items (an `int`, `bytes` or `tuple` base, an
    /// enum): nonempty `__slots__` in a subclass raise ([`super::slots`]).
    pub variable_size: bool,
    /// An exception class without `__slots__` (its own or inherited): the solid base of its
    /// instances, a builtin exception ([`super::exceptions`]), so that several exception
    /// bases combine when CPython can lay them out.
    pub exception_solid: Option<&'static str>,
    /// How many type parameters `C[...]` takes through `typing.Generic`'s
    /// `__class_getitem__`; 0 when v2 does not know that is what runs ([`super::generics`]).
    pub type_params: u8,
    /// `functools.update_wrapper` reads its `__module__`, `__name__`, `__qualname__`,
    /// `__doc__`, `__annotations__` and `__dict__` through `type`'s data descriptors (metaclass
    /// `type` or `ABCMeta`, which binds none of them) and gets what a function accepts: strs,
    /// any `__doc__`, a dict, a mapping proxy — the body binds none of these names
    /// ([`super::class`]), so `functools.wraps(C)` cannot fail.
    pub wrappable: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassKind {
    Plain,
    Exception,
    Enum,
    NamedTuple,
    TypedDict,
    Protocol,
    Dataclass,
}

/// A class's attributes whose reads run nothing, with the kind they give ([`Env::member`]).
type Members = std::sync::Arc<[(String, Kind)]>;

/// The names bound at one point of the module's top level.
#[derive(Debug, Clone, Default)]
pub struct Env {
    names: HashMap<String, Meaning>,
    /// The value of names bound to a string v2 folded ([`super::strings`]): kept only while
    /// the name keeps that binding on every path.
    strings: HashMap<String, String>,
    /// What v2 knows beyond the meaning of some names ([`Mark`]); kept only while the name
    /// keeps that binding on every path.
    marks: HashMap<String, Mark>,
    /// The items of names bound to a tuple display of strings v2 folds ([`super::methods`]:
    /// `"|".join(TAGS)`); kept like `strings`. Tuples only: a list can be changed in place
    /// through another name (`L2 = L; L2 += ["("]` is proved and mutates `L`).
    sequences: HashMap<String, Vec<String>>,
    /// The attributes of names bound to a class v2 proved whose reads through the class run
    /// nothing, with the kind of value they give ([`super::class`]): an enum's members whose
    /// values are builtin values or `auto()` (a member value with `__get__` would be a
    /// descriptor, not a member) give the member (`Color.RED`, an object); a plain or
    /// exception class's own non-dunder attributes bound to a builtin value give that value
    /// (`BadRequest.description`, a str). Kept like `strings`.
    /// Shared (`Arc`): every clone of the environment (each branch, class body, nested scope)
    /// copies only the pointer.
    members: HashMap<String, Members>,
    /// Names bound to a tuple display of literals ([`super::constant`]: `__version_info__ =
    /// (3, 6, 0, "final", 0)`); kept like `strings` (a tuple cannot change in place).
    constants: HashMap<String, super::constant::Value>,
    /// The names of the package's submodules when this module is a package's `__init__`:
    /// the first import of `pkg.sub` (from any module, at any time) binds `sub` here over a
    /// builtin or a `def`, so such a name means something unknown and carries no fact.
    submodules: std::sync::Arc<[String]>,
    /// This module's dotted name, when `submodules` is not empty.
    package: std::sync::Arc<str>,
}

/// A fact about the value of a name, beyond its [`Meaning`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A list display whose items are all hashable (`["a", "b"]`): the keys
    /// `dict(zip(name, values))` builds cannot fail to hash (v2 proves no call that could
    /// mutate the list).
    HashableItems,
    /// A bool fixed on every worker ([`super::fixed`]): `WIN = sys.platform.startswith("win")`.
    Fixed(bool),
    /// A `struct.Struct` built from a format v2 checked ([`super::values`]): its `pack`,
    /// `unpack`, `size`, ... exist.
    Struct,
    /// `typing.TYPE_CHECKING`, bound by `from typing import TYPE_CHECKING [as X]` (false at
    /// run time; a module's own `TYPE_CHECKING = True` is not it).
    TypeChecking,
    /// Bound differently on the paths that reach here, each time to a value whose truth test
    /// cannot raise or run the inspected code ([`truth_safe`]): `try: import ssl` / `except
    /// ImportError: ssl = None` makes `if not ssl:` harmless whichever arm ran.
    SafeTruth,
    /// A function object of an undecorated nested `def` ([`super::pure`]): its `__name__`
    /// and `__qualname__` accept a str.
    PlainFunction,
    /// A tuple of ints ([`super::stmt`]'s `is_int_tuple`): `py = sys.version_info`, so that
    /// `py >= (3, 0, 0)` compares ints only.
    IntTuple,
    /// An int in `0..n`: a comprehension's loop variable over a display of such ints
    /// ([`super::ints`]), so that `v.to_bytes(1, "big")` or `b"%c" % v` cannot overflow.
    IntBelow(u64),
    /// A dict this module built (a display, `dict(...)`, `str.maketrans(...)`) and bound to
    /// this name only: `D.update(...)` changes the module's own value ([`super::dicts`]).
    FreshDict,
    /// The spec `importlib.util.find_spec` returned for the module of
    /// [`super::module_copy::COPYABLE`] at this index.
    SpecOf(u8),
    /// A module object `importlib.util.module_from_spec` made from such a spec, not run yet.
    Unexecuted(u8),
    /// A private copy of a standard-library module, run by its spec's loader
    /// ([`super::module_copy`]): its non-dunder attributes may be stored into.
    ModuleCopy,
}

/// `bool()` of a value of this meaning runs no code of the inspected program and cannot
/// raise: a standard-library module (`ModuleType` has no `__bool__`/`__len__`, and no stdlib
/// module replaces its class, which a third-party lazy module may do) or a value of a builtin
/// kind (not an instance of some class, `Kind::Other`/`Kind::Object`).
pub fn truth_safe(meaning: &Meaning) -> bool {
    match meaning {
        Meaning::Module(module) => {
            crate::readiness::stdlib::is_stdlib(module.split('.').next().unwrap_or(module))
        }
        Meaning::Value(kind) => !matches!(kind, Kind::Object | Kind::Other),
        _ => false,
    }
}

impl Env {
    /// The names a submodule import may rebind here (see `submodules`).
    pub fn set_submodules(&mut self, package: &str, names: Vec<String>) {
        self.submodules = names.into();
        self.package = package.into();
    }

    fn submodule(&self, name: &str) -> bool {
        self.submodules.iter().any(|s| s == name)
    }

    pub fn bind(&mut self, name: &str, meaning: Meaning) {
        let meaning = match meaning {
            Meaning::Maybe | Meaning::TypeOnly => meaning,
            // `from . import sub` binds the submodule itself, imported by then.
            Meaning::Module(ref m)
                if m.strip_suffix(name).and_then(|p| p.strip_suffix('.'))
                    == Some(&*self.package) =>
            {
                meaning
            }
            _ if self.submodule(name) => Meaning::Unknown,
            _ => meaning,
        };
        self.names.insert(name.to_string(), meaning);
        self.strings.remove(name);
        self.marks.remove(name);
        self.sequences.remove(name);
        self.members.remove(name);
        self.constants.remove(name);
    }

    /// Bind `name` to a class with these attributes whose reads run nothing (an enum's
    /// members, a plain class's data attributes).
    pub fn bind_class(&mut self, name: &str, meaning: Meaning, members: Vec<(String, Kind)>) {
        self.bind(name, meaning);
        if !members.is_empty() && !self.submodule(name) {
            self.members.insert(name.to_string(), members.into());
        }
    }

    /// `name` is bound here to a class whose attribute `member` exists and is read without
    /// running anything: the kind of value the read gives.
    pub fn member(&self, name: &str, member: &str) -> Option<Kind> {
        if !matches!(self.names.get(name), Some(Meaning::Class(_))) {
            return None;
        }
        let members = self.members.get(name)?;
        members.iter().find(|(m, _)| m == member).map(|(_, k)| *k)
    }

    /// Record the exact value `name` (just bound to a tuple) holds.
    pub fn bind_constant(&mut self, name: &str, value: super::constant::Value) {
        if self.names.get(name) == Some(&Meaning::Value(Kind::Tuple)) {
            self.constants.insert(name.to_string(), value);
        }
    }

    /// The exact value of `name` here, when v2 knows it.
    pub fn constant(&self, name: &str) -> Option<&super::constant::Value> {
        match self.names.get(name) {
            Some(Meaning::Value(Kind::Tuple)) => self.constants.get(name),
            _ => None,
        }
    }

    /// Bind `name` to a tuple of strings v2 knows.
    pub fn bind_sequence(&mut self, name: &str, items: Vec<String>) {
        self.bind(name, Meaning::Value(Kind::Tuple));
        if !self.submodule(name) {
            self.sequences.insert(name.to_string(), items);
        }
    }

    /// The known items of `name` here (a tuple of known strings).
    pub fn sequence(&self, name: &str) -> Option<&[String]> {
        match self.names.get(name) {
            Some(Meaning::Value(Kind::Tuple)) => self.sequences.get(name).map(Vec::as_slice),
            _ => None,
        }
    }

    /// Record a fact about the value `name` was just bound to.
    pub fn mark(&mut self, name: &str, mark: Mark) {
        if self.submodule(name) {
            return;
        }
        self.marks.insert(name.to_string(), mark);
    }

    /// `name` has this mark here.
    pub fn has_mark(&self, name: &str, mark: Mark) -> bool {
        self.marks.get(name) == Some(&mark)
    }

    /// The exclusive bound of the int `name` holds here ([`Mark::IntBelow`]).
    pub fn int_below(&self, name: &str) -> Option<u64> {
        match self.marks.get(name) {
            Some(Mark::IntBelow(n)) => Some(*n),
            _ => None,
        }
    }

    /// Bind `name` to a string whose value v2 knows.
    pub fn bind_str(&mut self, name: &str, value: String) {
        if self.submodule(name) {
            return self.bind(name, Meaning::Unknown);
        }
        self.names
            .insert(name.to_string(), Meaning::Value(Kind::Str));
        self.strings.insert(name.to_string(), value);
        self.sequences.remove(name);
        self.members.remove(name);
        self.constants.remove(name);
    }

    /// The known string value of `name` here.
    pub fn string(&self, name: &str) -> Option<&str> {
        match self.names.get(name) {
            Some(Meaning::Value(Kind::Str)) => self.strings.get(name).map(String::as_str),
            _ => None,
        }
    }

    pub fn unbind(&mut self, name: &str) {
        self.names.remove(name);
        self.strings.remove(name);
        self.marks.remove(name);
        self.sequences.remove(name);
        self.members.remove(name);
        self.constants.remove(name);
    }

    /// The module binds `name` here (it does not resolve to the builtin of that name).
    pub fn shadows(&self, name: &str) -> bool {
        self.names.contains_key(name) || self.submodule(name)
    }

    /// What `name` means here; `None` when using it would raise `NameError`.
    pub fn lookup(&self, name: &str) -> Option<Meaning> {
        match self.names.get(name) {
            Some(meaning) => Some(meaning.clone()),
            // Unbound here: the builtin, or a submodule another import bound (`NameError`
            // when there is no such builtin and the submodule was not imported yet).
            None if self.submodule(name) => Some(match super::known::builtin(name) {
                Some(_) => Meaning::Unknown,
                None => Meaning::Maybe,
            }),
            None => super::known::builtin(name),
        }
    }

    /// The local functions v2 can call ([`Meaning::Pure`]), by name.
    pub fn pure_functions(&self) -> impl Iterator<Item = (&str, TextRange)> {
        self.names.iter().filter_map(|(n, m)| match m {
            Meaning::Pure(def) => Some((n.as_str(), *def)),
            _ => None,
        })
    }

    /// Every name bound on every path, with its meaning (a module's exports at its end). A
    /// pure function is only a function to other modules (its body is this module's; the
    /// package pass makes the ones it can carry [`Meaning::Foreign`], [`super::pure`]).
    pub fn definite(&self) -> super::package::Exports {
        self.names
            .iter()
            .filter(|(_, m)| !matches!(m, Meaning::Maybe | Meaning::TypeOnly))
            .map(|(n, m)| {
                let meaning = match m {
                    Meaning::Pure(_) => Meaning::Function,
                    m => m.clone(),
                };
                let fixed = match self.marks.get(n) {
                    Some(Mark::Fixed(b)) => Some(*b),
                    _ => None,
                };
                let string = self.string(n).map(str::to_string);
                let strings = self.sequence(n).map(<[String]>::to_vec);
                let export = super::package::Export {
                    meaning,
                    fixed,
                    string,
                    strings,
                };
                (n.clone(), export)
            })
            .collect()
    }

    /// Names bound here but not in `before`, or bound to something else.
    pub fn changed_since<'e>(&'e self, before: &'e Env) -> impl Iterator<Item = &'e str> + 'e {
        self.names
            .iter()
            .filter(move |(n, m)| {
                before.names.get(*n) != Some(m)
                    || before.strings.get(*n) != self.strings.get(*n)
                    || before.marks.get(*n) != self.marks.get(*n)
                    || before.sequences.get(*n) != self.sequences.get(*n)
                    || before.members.get(*n) != self.members.get(*n)
                    || before.constants.get(*n) != self.constants.get(*n)
            })
            .map(|(n, _)| n.as_str())
    }

    /// Merge the environments after the arms of a branch, one of which ran: a name bound the
    /// same way in every arm keeps its meaning, bound differently it is `Unknown`, bound in
    /// some arms only it is `Maybe`.
    pub fn join(before: &Env, arms: &[Env]) -> Env {
        let mut out = before.clone();
        let mut names: Vec<&str> = arms.iter().flat_map(|a| a.changed_since(before)).collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            // An arm that leaves a builtin's name unbound leaves the builtin visible.
            let builtin = super::known::builtin(name);
            let meanings: Vec<Option<Meaning>> = arms
                .iter()
                .map(|a| a.names.get(name).cloned().or_else(|| builtin.clone()))
                .collect();
            let missing = |m: &Option<Meaning>| {
                matches!(m, None | Some(Meaning::Maybe) | Some(Meaning::TypeOnly))
            };
            let meaning = match meanings.split_first() {
                _ if meanings.iter().any(missing) => Meaning::Maybe,
                Some((first, rest)) if rest.iter().all(|m| m == first) => {
                    first.clone().unwrap_or(Meaning::Unknown)
                }
                _ => Meaning::Unknown,
            };
            out.names.insert(name.to_string(), meaning);
            let strings: Vec<Option<&String>> = arms.iter().map(|a| a.strings.get(name)).collect();
            match strings.split_first() {
                Some((Some(first), rest)) if rest.iter().all(|s| *s == Some(*first)) => {
                    out.strings.insert(name.to_string(), (*first).clone());
                }
                _ => {
                    out.strings.remove(name);
                }
            }
            let sequences: Vec<Option<&Vec<String>>> =
                arms.iter().map(|a| a.sequences.get(name)).collect();
            match sequences.split_first() {
                Some((Some(first), rest)) if rest.iter().all(|s| *s == Some(*first)) => {
                    out.sequences.insert(name.to_string(), (*first).clone());
                }
                _ => {
                    out.sequences.remove(name);
                }
            }
            let members: Vec<Option<&Members>> = arms.iter().map(|a| a.members.get(name)).collect();
            match members.split_first() {
                Some((Some(first), rest)) if rest.iter().all(|m| *m == Some(*first)) => {
                    out.members.insert(name.to_string(), (*first).clone());
                }
                _ => {
                    out.members.remove(name);
                }
            }
            let constants: Vec<_> = arms.iter().map(|a| a.constants.get(name)).collect();
            match constants.split_first() {
                Some((Some(first), rest)) if rest.iter().all(|c| *c == Some(*first)) => {
                    out.constants.insert(name.to_string(), (*first).clone());
                }
                _ => {
                    out.constants.remove(name);
                }
            }
            let marks: Vec<Option<&Mark>> = arms.iter().map(|a| a.marks.get(name)).collect();
            match marks.split_first() {
                Some((Some(first), rest)) if rest.iter().all(|m| *m == Some(*first)) => {
                    out.marks.insert(name.to_string(), **first);
                }
                _ => {
                    out.marks.remove(name);
                }
            }
            // Bound on every path, differently, each time to a value whose truth is safe.
            let safe_truth = |a: &Env| {
                a.names.get(name).is_some_and(truth_safe)
                    || a.marks.get(name) == Some(&Mark::SafeTruth)
            };
            if out.names.get(name) == Some(&Meaning::Unknown) && arms.iter().all(safe_truth) {
                out.marks.insert(name.to_string(), Mark::SafeTruth);
            }
        }
        out
    }
}
