//! The interpreter's values and objects ([`super`] states the model and why it is exact).

use std::rc::Rc;

use ruff_text_size::TextRange;

/// A loaded module of the package ([`super::modules`]); 0 is the module being proved.
pub type ModId = usize;
/// An object of the heap.
pub type Id = usize;

/// A value: an immediate (exact), or a reference to a heap object.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    None,
    Bool(bool),
    Int(i64),
    Str(Rc<str>),
    /// A `str` whose text is not known (`re.escape(...)` of a constant); `true` when it is
    /// known not to be empty.
    SomeStr(bool),
    Ref(Id),
    /// An object that exists (its statement ran) but that the interpreter knows nothing of:
    /// it may be stored, passed and returned; any other use is refused.
    Opaque,
}

/// The builtin exceptions the modelled operations raise, exactly where CPython raises them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exc {
    Value,
    Key,
    Type,
    Attribute,
}

impl Exc {
    /// The builtin exception class `name` catches this one (`except LookupError:`).
    pub fn caught_by(self, name: &str) -> bool {
        let own = match self {
            Exc::Value => "ValueError",
            Exc::Key => "KeyError",
            Exc::Type => "TypeError",
            Exc::Attribute => "AttributeError",
        };
        name == own
            || matches!(name, "Exception" | "BaseException")
            || (name == "LookupError" && self == Exc::Key)
    }
}

/// Why the interpreter refused a call: it could not follow CPython exactly there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// More steps than the fuel allows (a long or endless loop).
    Fuel,
    /// Calls nested deeper than the limit (a recursion).
    Recursion,
    /// A statement or expression form the interpreter does not model.
    Form,
    /// A value the interpreter does not know (an object it cannot look into).
    Unknown,
    /// A name not bound here (`NameError`), or bound on some paths only.
    Name,
    /// A call of something outside the modelled builtins and methods.
    Call,
    /// Arguments that do not fit the parameters, or a call form not modelled.
    Arguments,
    /// A class attribute that may be a descriptor (a property, an unknown object) where it
    /// would run, or a class the interpreter does not model (a metaclass, `__slots__`, a
    /// base outside the package, a decorator).
    Descriptor,
    /// A hook that would run: `__setattr__`, `__getattr__`, `__getattribute__`, `__new__`,
    /// `__del__`, `__eq__`, `__hash__`, `__bool__`, `__len__`.
    Hook,
    /// A change to an object that existed before the call (other than an item store into a
    /// module's dict display), or to a value another top-level call also uses.
    Mutation,
    /// An exception no handler of the interpreted code catches: the import would fail.
    Raises,
    /// `importlib.import_module` of a module that is not a proved module of the package, or
    /// that may meet a half-initialised module.
    Import,
}

impl Refused {
    pub fn text(self) -> &'static str {
        match self {
            Refused::Fuel => "a call of the package's code that runs too many steps to follow",
            Refused::Recursion => "a call of the package's code that recurses too deep to follow",
            Refused::Form => {
                "a call of the package's code that runs a statement or expression the interpreter does not model"
            }
            Refused::Unknown => {
                "a call of the package's code that uses a value the interpreter does not know"
            }
            Refused::Name => {
                "a call of the package's code that reads a name not bound (on every path) there"
            }
            Refused::Call => {
                "a call of the package's code that calls something outside the modelled builtins"
            }
            Refused::Arguments => {
                "a call of the package's code whose arguments do not fit (or are not modelled)"
            }
            Refused::Descriptor => {
                "a call of the package's code that meets a descriptor (a property), a metaclass or a class it does not model"
            }
            Refused::Hook => {
                "a call of the package's code that would run a hook (`__setattr__`, `__getattr__`, `__eq__`, ...)"
            }
            Refused::Mutation => {
                "a call of the package's code that changes an object that existed before it"
            }
            Refused::Raises => "a call of the package's code that raises at import",
            Refused::Import => {
                "a call of the package's code that imports a module not proved (or in an import cycle)"
            }
        }
    }
}

/// The interpreter refused: where (a range of module `module`) and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub module: ModId,
    pub range: TextRange,
    pub why: Refused,
}

/// How evaluation stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Refuse(Refusal),
    /// A modelled exception, raised where CPython raises it (a handler may catch it).
    Raise(Exc, ModId, TextRange),
}

pub type Run<T> = Result<T, Stop>;

/// A refusal at `range` of module `module`.
pub fn refuse<T>(module: ModId, range: TextRange, why: Refused) -> Run<T> {
    Err(Stop::Refuse(Refusal { module, range, why }))
}

/// A class of the package, as its statement built it.
#[derive(Debug, Clone)]
pub struct Class {
    pub name: Rc<str>,
    /// Its MRO (itself first), `object` left out.
    pub mro: Vec<Id>,
    /// Its namespace, in order.
    pub attrs: Vec<(Rc<str>, Val)>,
}

/// A `def` of the package: where its body is, and what its statement bound.
#[derive(Debug, Clone)]
pub struct Func {
    pub module: ModId,
    /// The range of the `def` statement.
    pub def: TextRange,
    /// The class whose body holds the `def` (name mangling, zero-argument `super()`).
    pub owner: Option<Id>,
    /// The defaults of its parameters, by name (evaluated when the `def` ran).
    pub defaults: Vec<(Rc<str>, Val)>,
}

/// A builtin the interpreter models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    ImportModule,
}

/// A heap object.
#[derive(Debug, Clone)]
pub enum Obj {
    List(Vec<Val>),
    Tuple(Vec<Val>),
    /// Keys are `Str` or `Int` values, each once, in insertion order.
    Dict(Vec<(Val, Val)>),
    Instance {
        class: Id,
        attrs: Vec<(Rc<str>, Val)>,
    },
    Class(Class),
    Function(Func),
    /// A function object the interpreter never calls (a lambda, a nested `def`).
    Closure,
    /// A function (or closure) bound to an object.
    Bound {
        func: Id,
        this: Val,
    },
    /// A method of a list, dict or str bound to its receiver.
    Method {
        this: Val,
        name: &'static str,
    },
    StaticMethod(Val),
    ClassMethod(Val),
    /// A property, or another object with `__get__`: never read through.
    Descriptor,
    /// A module of the package.
    Module(ModId),
    /// A standard-library module, by name.
    StdModule(Rc<str>),
    Builtin(Builtin),
    /// `super(C, obj)`: attribute lookup in `type(obj)`'s MRO after `C`.
    Super {
        after: Id,
        this: Val,
    },
}

/// Where a heap object comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Created by the call being proved: it may change freely.
    Fresh,
    /// It existed before the call (a class, a function, a default, a class attribute).
    Existing,
    /// The dict or list display of the top-level statement at `at` of module `module`.
    Global {
        module: ModId,
        at: ruff_text_size::TextSize,
    },
}

#[derive(Debug)]
pub struct Entry {
    pub obj: Obj,
    pub origin: Origin,
    /// How many times it was changed (a loop over it must not see it change).
    pub version: u32,
}
