//! The allowlisted calls at import: pure stdlib constructors whose arguments v2 checks, so
//! that they neither fail nor do anything but build a value.
//!
//! | call | checked |
//! | --- | --- |
//! | `object()`, `set()`, `dict()`, `list()`, `tuple()`, `frozenset()` | no arguments, or one display; `list`/`tuple` also of any list, tuple, str, bytes, set or dict value (iterating them cannot fail), `set`/`frozenset` of a str or bytes value |
//! | `chr(i)` | `i` an int literal below `0x110000` ([`super::pure`]) |
//! | `f()`, `C()` of the module's own pure functions and constructible classes | [`super::pure`] |
//! | `typing.TypeVar(name, *constraints, bound=, covariant=, contravariant=)` | name a literal, never one constraint, not both variances |
//! | `typing.ParamSpec(name)`, `typing.NewType(name, type)` | literal names, a type |
//! | `logging.getLogger()` / `(literal)` / `(__name__)` | only these arguments |
//! | `re.compile(pattern[, flags])` (`flags=` too) | the pattern, a bytes literal or a string folded from module constants ([`super::strings`]), is a regular expression `re` accepts ([`super::regex`]), with flags `re` accepts for it ([`super::pattern`]) |
//! | `threading.Lock/RLock/Event/local()`, `weakref.WeakKeyDictionary/WeakValueDictionary/WeakSet()`, `collections.OrderedDict/deque/Counter()` | no arguments |
//! | `collections.defaultdict(f)` | `f` a builtin type, a function or class of the module, or a lambda (only stored) |
//! | `struct.calcsize(literal)` | a native format (no byte-order prefix but `@`), known format characters with optional counts |
//! | `gettext.NullTranslations()` | no arguments (it reads a file only when given one) |
//! | `types.MappingProxyType(d)` | `d` a dict |
//! | `list`/`tuple`/`set`/`frozenset(E for x in range(a[, b]))` | int literals; `E` proved with `x` an int in that range ([`super::comprehension`]) |
//! | `classmethod(f)`, `staticmethod(f)`, `property(f)` | `f` a lambda or a function of the module |
//! | `property(fget, fset, fdel, doc)` | functions of the module, lambdas or `None`; `doc` a str or `None` |
//! | `type(x)` | one argument, a module, a class v2 proved or a value v2 knows: its class |
//! | `v.to_bytes(length, byteorder)` | `v` a bounded int that fits ([`super::ints`]) |
//! | `D.update(...)` as a top-level statement, `D[k] = v` | `D` a dict the module built ([`super::dicts`]) |
//! | `str.maketrans(d)` | `d` a dict display or comprehension of int or one-character str keys ([`super::dicts`]) |
//! | `contextvars.ContextVar(literal[, default=value])` | |
//! | `collections.namedtuple(literal, fields)` | field names are identifiers, not keywords, no `_` prefix, distinct |
//! | `enum.auto()`, `dataclasses.field(...)` | only in enum / dataclass bodies ([`super::class`]) |
//! | `datetime.timedelta/date/datetime/time(...)`, `hasattr`/`getattr` of plain stdlib modules, `functools.partial(...)` | literal arguments in range ([`super::values`]) |
//! | `warnings.simplefilter/filterwarnings(...)`, `logging.getLogger(...).addHandler(NullHandler())` / `.setLevel(...)`, `logging.NullHandler()`, `codecs.register_error(name, f)`, `urllib.parse.uses_netloc.append(s)` | process-local registries ([`super::registry`]) |

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::Ranged;

use super::env::{Kind, Mark, Meaning};
use super::names::{is_identifier, namedtuple_fields};
use super::{Prover, Unproved, Why};

/// Calls v2 knows how to check (outside class bodies).
pub fn is_allowlisted(qualified: &str) -> bool {
    matches!(
        qualified,
        "builtins.object"
            | "builtins.set"
            | "builtins.dict"
            | "builtins.list"
            | "builtins.tuple"
            | "builtins.frozenset"
            | "builtins.chr"
            | "builtins.classmethod"
            | "builtins.staticmethod"
            | "builtins.property"
            | "builtins.type"
            | "builtins.str.maketrans"
            | "struct.calcsize"
            | "gettext.NullTranslations"
            | "types.MappingProxyType"
            | "typing.TypeVar"
            | "typing.ParamSpec"
            | "typing.NewType"
            | "logging.getLogger"
            | "re.compile"
            | "threading.Lock"
            | "threading.RLock"
            | "threading.Event"
            | "threading.local"
            | "weakref.WeakKeyDictionary"
            | "weakref.WeakValueDictionary"
            | "weakref.WeakSet"
            | "collections.OrderedDict"
            | "collections.deque"
            | "collections.Counter"
            | "collections.defaultdict"
            | "contextvars.ContextVar"
            | "collections.namedtuple"
            | "enum.auto"
            | "dataclasses.field"
    ) || super::registry::is_registry_call(qualified)
}

impl Prover<'_> {
    pub fn call(&self, call: &ExprCall) -> Proof<Meaning> {
        // `"\x00".encode("ascii")` ([`super::methods`]).
        if let Some(meaning) = self.method_call(call) {
            return Ok(meaning);
        }
        // `v.to_bytes(1, "big")` of a bounded int ([`super::ints`]).
        if let Some(meaning) = self.int_method(call) {
            return Ok(meaning);
        }
        // `logging.getLogger(__name__).addHandler(NullHandler())` ([`super::registry`]).
        if let Some(proof) = self.logger_method(call) {
            return proof;
        }
        let callee = self.value(&call.func)?;
        if let Some(local) = self.local_call(call, &callee) {
            return local;
        }
        let Meaning::Qualified(qualified) = callee else {
            return Err(Unproved::at(call.func.range(), Why::NotAllowlisted));
        };
        if let Some(proof) = self.registry_call(&qualified, call) {
            return proof;
        }
        if let Some(proof) = self.value_call(&qualified, call) {
            return proof;
        }
        let args = &call.arguments.args;
        let keywords = &call.arguments.keywords;
        let fail = |why| Err(Unproved::at(call.range(), why));
        if args.iter().any(|a| matches!(a, Expr::Starred(_)))
            || keywords.iter().any(|k| k.arg.is_none())
        {
            return fail(Why::Arguments);
        }
        let keyword = |name: &str| {
            keywords
                .iter()
                .find(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == name))
        };
        let only_keywords = |allowed: &[&str]| {
            keywords.iter().all(|k| {
                k.arg
                    .as_ref()
                    .is_some_and(|a| allowed.contains(&a.as_str()))
            })
        };
        let meaning = match qualified.as_str() {
            "builtins.object" if args.is_empty() && keywords.is_empty() => {
                Meaning::Value(Kind::Object)
            }
            "builtins.set" | "builtins.dict" | "builtins.list" | "builtins.tuple"
            | "builtins.frozenset"
                if keywords.is_empty() && args.len() <= 1 =>
            {
                if let Some(arg) = args.first() {
                    self.collection_argument(&qualified, arg)?;
                }
                Meaning::Value(match qualified.as_str() {
                    "builtins.set" => Kind::Set,
                    "builtins.dict" => Kind::Dict,
                    "builtins.list" => Kind::List,
                    // A tuple of the items of a set, dict, str or bytes: all hashable.
                    "builtins.tuple" if args.first().is_some_and(|a| self.hashable_items(a)) => {
                        Kind::Tuple
                    }
                    "builtins.tuple" => Kind::Other,
                    _ => Kind::FrozenSet,
                })
            }
            "builtins.chr" => self.chr(call)?,
            "typing.TypeVar" => {
                let [Expr::StringLiteral(_), constraints @ ..] = &args[..] else {
                    return fail(Why::Arguments);
                };
                if constraints.len() == 1
                    || !only_keywords(&["bound", "covariant", "contravariant"])
                {
                    return fail(Why::Arguments);
                }
                for constraint in constraints {
                    self.type_expr(constraint)?;
                }
                if let Some(bound) = keyword("bound") {
                    if !constraints.is_empty() {
                        return fail(Why::Arguments);
                    }
                    self.type_expr(&bound.value)?;
                }
                let is_true = |name| {
                    keyword(name)
                        .is_some_and(|k| matches!(&k.value, Expr::BooleanLiteral(b) if b.value))
                };
                let variance_ok =
                    |name| keyword(name).is_none_or(|k| matches!(k.value, Expr::BooleanLiteral(_)));
                if !variance_ok("covariant")
                    || !variance_ok("contravariant")
                    || is_true("covariant") && is_true("contravariant")
                {
                    return fail(Why::Arguments);
                }
                Meaning::TypeVar
            }
            "typing.ParamSpec" => match (&args[..], keywords.is_empty()) {
                ([Expr::StringLiteral(_)], true) => Meaning::TypeVar,
                _ => return fail(Why::Arguments),
            },
            "typing.NewType" => match (&args[..], keywords.is_empty()) {
                ([Expr::StringLiteral(_), base], true) => {
                    self.type_expr(base)?;
                    Meaning::TypeLike
                }
                _ => return fail(Why::Arguments),
            },
            "logging.getLogger" if keywords.is_empty() => match &args[..] {
                [] | [Expr::StringLiteral(_)] => Meaning::Value(Kind::Object),
                [Expr::Name(n)] if n.id.as_str() == "__name__" && self.value(&args[0]).is_ok() => {
                    Meaning::Value(Kind::Object)
                }
                _ => return fail(Why::Arguments),
            },
            "re.compile" if only_keywords(&["flags"]) => {
                let (pattern, flags) = match (&args[..], keyword("flags")) {
                    ([pattern], flags) => (pattern, flags.map(|k| &k.value)),
                    ([pattern, flags], None) => (pattern, Some(flags)),
                    _ => return fail(Why::Arguments),
                };
                self.compile(pattern, flags)?;
                Meaning::Value(Kind::Object)
            }
            "threading.Lock"
            | "threading.RLock"
            | "threading.Event"
            | "threading.local"
            | "weakref.WeakKeyDictionary"
            | "weakref.WeakValueDictionary"
            | "weakref.WeakSet"
            | "collections.OrderedDict"
            | "collections.deque"
            | "collections.Counter"
                if args.is_empty() && keywords.is_empty() =>
            {
                Meaning::Value(Kind::Object)
            }
            "collections.defaultdict" if keywords.is_empty() && args.len() == 1 => {
                match self.value(&args[0])? {
                    Meaning::Qualified(q) if q.starts_with("builtins.") => {}
                    Meaning::Function
                    | Meaning::Pure(_)
                    | Meaning::Foreign(_)
                    | Meaning::Class(_) => {}
                    // A lambda is only stored: it runs when a missing key is read.
                    Meaning::Value(Kind::Other) if matches!(args[0], Expr::Lambda(_)) => {}
                    _ => return fail(Why::Arguments),
                }
                Meaning::Value(Kind::Object)
            }
            "struct.calcsize" if keywords.is_empty() => match &args[..] {
                [Expr::StringLiteral(s)] if is_native_struct_format(s.value.to_str()) => {
                    Meaning::Value(Kind::Int)
                }
                _ => return fail(Why::Arguments),
            },
            "gettext.NullTranslations" if args.is_empty() && keywords.is_empty() => {
                Meaning::Value(Kind::Object)
            }
            // A read-only view of a dict display or dict value.
            "types.MappingProxyType" if keywords.is_empty() => match &args[..] {
                [mapping] if self.value(mapping)? == Meaning::Value(Kind::Dict) => {
                    Meaning::Value(Kind::Other)
                }
                _ => return fail(Why::Arguments),
            },
            // Wrapping a function or lambda: builds a descriptor, runs nothing (a Python
            // function of the stdlib too: `staticmethod(json.dumps)` copies its plain
            // `__name__`/`__doc__`/... attributes).
            // `property(fget, fset[, fdel[, doc]])`, `doc=`: functions, lambdas or `None`,
            // a str or `None` doc (`property.__init__` only stores them, and reads a
            // function's `__doc__` when no doc is given).
            "builtins.property" if args.len() > 1 || !keywords.is_empty() => {
                if args.len() > 4 || !only_keywords(&["fget", "fset", "fdel", "doc"]) {
                    return fail(Why::Arguments);
                }
                let accessors = args.iter().take(3).chain(
                    keywords
                        .iter()
                        .filter(|k| k.arg.as_ref().is_some_and(|a| a.as_str() != "doc"))
                        .map(|k| &k.value),
                );
                for accessor in accessors {
                    let function = matches!(accessor, Expr::Lambda(_) | Expr::Name(_))
                        && matches!(
                            self.value(accessor)?,
                            Meaning::Function | Meaning::Pure(_) | Meaning::Foreign(_)
                        )
                        || matches!(accessor, Expr::Lambda(_) | Expr::NoneLiteral(_));
                    if !function {
                        return Err(Unproved::at(accessor.range(), Why::Arguments));
                    }
                    self.value(accessor)?;
                }
                let doc = args.get(3).or(keyword("doc").map(|k| &k.value));
                if let Some(doc) = doc
                    && !matches!(
                        self.value(doc)?,
                        Meaning::Value(Kind::Str) | Meaning::Value(Kind::None)
                    )
                {
                    return Err(Unproved::at(doc.range(), Why::Arguments));
                }
                Meaning::Value(Kind::Other)
            }
            "builtins.classmethod" | "builtins.staticmethod" | "builtins.property"
                if keywords.is_empty()
                    && args.len() == 1
                    && (matches!(
                        self.value(&args[0])?,
                        Meaning::Function
                            | Meaning::Pure(_)
                            | Meaning::Foreign(_)
                            | Meaning::Value(Kind::Other)
                    ) && matches!(args[0], Expr::Lambda(_) | Expr::Name(_))
                        || self.is_stdlib_function(&args[0])) =>
            {
                Meaning::Value(Kind::Other)
            }
            // `str.maketrans({...})` of int or one-character keys ([`super::dicts`]).
            "builtins.str.maketrans" => self.maketrans_argument(call)?,
            // `type(x)` is `x`'s class: CPython's `type_call` returns `Py_TYPE(x)` for one
            // positional argument and nothing else, which cannot raise (`type(None)` is
            // `NoneType`, werkzeug.debug.repr's `type(_paragraph_re)` is `re.Pattern`). Of a
            // module, a class v2 proved or a value v2 knows, the result is a class whose
            // metaclass is `type`, `ABCMeta` or `EnumType` (a type, for typing's checks).
            "builtins.type" if keywords.is_empty() && args.len() == 1 => {
                match self.value(&args[0])? {
                    Meaning::Module(_) | Meaning::Class(_) | Meaning::Value(_) => Meaning::TypeLike,
                    _ => return fail(Why::Arguments),
                }
            }
            "contextvars.ContextVar" if only_keywords(&["default"]) => {
                let [Expr::StringLiteral(_)] = &args[..] else {
                    return fail(Why::Arguments);
                };
                if let Some(default) = keyword("default") {
                    self.value(&default.value)?;
                }
                Meaning::Value(Kind::Object)
            }
            "collections.namedtuple" if keywords.is_empty() => match &args[..] {
                [Expr::StringLiteral(name), fields]
                    if is_identifier(name.value.to_str()) && namedtuple_fields(fields) =>
                {
                    Meaning::TypeLike
                }
                _ => return fail(Why::Arguments),
            },
            _ => return fail(Why::NotAllowlisted),
        };
        Ok(meaning)
    }

    /// `module.function` of a standard-library function v2 knows ([`super::known`]), read
    /// through the module it is bound to.
    fn is_stdlib_function(&self, expr: &Expr) -> bool {
        let Expr::Attribute(attr) = expr else {
            return false;
        };
        matches!(self.value(&attr.value), Ok(Meaning::Module(module))
            if super::known::stdlib_function(&format!("{module}.{}", attr.attr.as_str())))
    }

    /// The argument of `set()`, `dict()`, `list()`, `tuple()`, `frozenset()`: a display, or
    /// (for `list`/`tuple`, which only iterate) any value of a builtin iterable kind; the
    /// elements of a `set`/`frozenset` must be hashable (a string's characters are).
    fn collection_argument(&self, qualified: &str, arg: &Expr) -> Proof<()> {
        let fail = || Err(Unproved::at(arg.range(), Why::Arguments));
        let display = matches!(
            arg,
            Expr::List(_) | Expr::Tuple(_) | Expr::Set(_) | Expr::Dict(_) | Expr::StringLiteral(_)
        );
        // A generator expression ([`super::comprehension`]): its elements, proved.
        if let Expr::Generator(generator) = arg {
            let element = self.comprehension(&generator.elt, &generator.generators, arg)?;
            let needs_hash = matches!(qualified, "builtins.set" | "builtins.frozenset");
            return match (qualified, element) {
                ("builtins.dict", _) => fail(),
                (_, Meaning::Value(kind)) if needs_hash && !kind.hashable() => fail(),
                (_, Meaning::Unknown) if needs_hash => fail(),
                _ => Ok(()),
            };
        }
        if let Expr::Call(zip) = arg
            && self.value(&zip.func) == Ok(Meaning::Qualified("builtins.zip".into()))
        {
            return self.zip_argument(qualified, zip);
        }
        let items = self.value(arg)?;
        if !display {
            use Kind::*;
            return match (qualified, items) {
                (
                    "builtins.list" | "builtins.tuple",
                    Meaning::Value(List | Tuple | Str | Bytes | Set | Dict),
                ) => Ok(()),
                ("builtins.set" | "builtins.frozenset", Meaning::Value(Str | Bytes)) => Ok(()),
                _ => fail(),
            };
        }
        let elements_hashable = match arg {
            Expr::List(l) => l.elts.iter().all(|e| {
                self.value(e)
                    .is_ok_and(|m| !matches!(m, Meaning::Value(k) if !k.hashable()))
            }),
            Expr::Tuple(_) => items == Meaning::Value(Kind::Tuple),
            _ => true,
        };
        let needs_hash = matches!(qualified, "builtins.set" | "builtins.frozenset");
        if needs_hash && !elements_hashable
            || qualified == "builtins.dict" && !matches!(arg, Expr::Dict(_))
        {
            return fail();
        }
        Ok(())
    }

    /// `list(zip(a, b))`, `tuple(...)`, `dict(zip(keys, values))`: `zip` over values of builtin
    /// iterable kinds yields tuples and cannot fail; `dict` needs exactly two iterables and
    /// keys whose `hash()` cannot fail (a tuple, str, bytes, set or dict value, a list display
    /// of hashable items, or a name bound to one). Not for `set`/`frozenset`.
    fn zip_argument(&self, qualified: &str, zip: &ExprCall) -> Proof<()> {
        use Kind::*;
        let fail = || Err(Unproved::at(zip.range(), Why::Arguments));
        let args = &zip.arguments.args;
        if !zip.arguments.keywords.is_empty()
            || args.is_empty()
            || args.iter().any(|a| matches!(a, Expr::Starred(_)))
        {
            return fail();
        }
        for arg in args.iter() {
            if !matches!(
                self.value(arg)?,
                Meaning::Value(List | Tuple | Str | Bytes | Set | FrozenSet | Dict)
            ) {
                return Err(Unproved::at(arg.range(), Why::Arguments));
            }
        }
        match qualified {
            "builtins.list" | "builtins.tuple" => Ok(()),
            "builtins.dict" if args.len() == 2 => {
                let keys = &args[0];
                let hashable = match (keys, self.value(keys)?) {
                    (_, Meaning::Value(Tuple | Str | Bytes | Set | FrozenSet | Dict)) => true,
                    (Expr::Name(n), _) => self.env.has_mark(n.id.as_str(), Mark::HashableItems),
                    (Expr::List(l), _) => l.elts.iter().all(|e| self.is_hashable_element(e)),
                    _ => false,
                };
                if hashable {
                    Ok(())
                } else {
                    Err(Unproved::at(keys.range(), Why::Unhashable))
                }
            }
            _ => fail(),
        }
    }
}

type Proof<T> = Result<T, Unproved>;

/// A `struct` format `calcsize` accepts in native mode: not empty, an optional `@` and no
/// other byte order ([`super::values::is_struct_format`]).
fn is_native_struct_format(format: &str) -> bool {
    let body = format.strip_prefix('@').unwrap_or(format);
    !body.is_empty()
        && !body.starts_with(['<', '>', '!', '='])
        && super::values::is_struct_format(format)
}
