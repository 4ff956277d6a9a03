//! The documented allowlist of readiness v2: the standard-library names whose behaviour at
//! import v2 knows. Everything here is pure (no I/O, no process-wide state that matters) and
//! its failure modes are checked where it is used (arity of generics, arguments of
//! constructors). A name that is not here is not proved.

use super::env::{Kind, Meaning};

/// Builtin names v2 knows (used only when the module has not bound the name by then).
pub fn builtin(name: &str) -> Option<Meaning> {
    let kind = match name {
        "int" | "str" | "float" | "bool" | "bytes" | "complex" | "bytearray" | "list" | "dict"
        | "set" | "frozenset" | "tuple" | "type" | "object" | "range" | "slice" | "memoryview" => {
            return Some(Meaning::Qualified(format!("builtins.{name}")));
        }
        "property" | "staticmethod" | "classmethod" | "chr" | "zip" | "hasattr" | "getattr" => {
            return Some(Meaning::Qualified(format!("builtins.{name}")));
        }
        _ if is_builtin_exception(name) => {
            return Some(Meaning::Qualified(format!("builtins.{name}")));
        }
        "__name__" | "__file__" | "__doc__" | "__qualname__" | "__module__" => Kind::Str,
        // Builtin functions as values (`prompt = input`, `{"callable": callable}`): naming one
        // runs nothing; calling one is not proved (they are not on the call allowlist).
        _ if is_builtin_function(name) => Kind::Object,
        "None" => Kind::None,
        "NotImplemented" | "Ellipsis" => Kind::Object,
        _ => return None,
    };
    Some(Meaning::Value(kind))
}

/// Builtin functions that may be named (not called) at import.
fn is_builtin_function(name: &str) -> bool {
    matches!(
        name,
        "abs"
            | "all"
            | "any"
            | "ascii"
            | "bin"
            | "callable"
            | "divmod"
            | "format"
            | "hash"
            | "hex"
            | "id"
            | "input"
            | "isinstance"
            | "issubclass"
            | "iter"
            | "len"
            | "max"
            | "min"
            | "next"
            | "oct"
            | "ord"
            | "print"
            | "repr"
            | "round"
            | "sorted"
            | "sum"
    )
}

/// The builtin exception classes (subclassing them runs no user code): the table of
/// [`super::exceptions`], aliases included.
pub fn is_builtin_exception(name: &str) -> bool {
    super::exceptions::is_builtin(name)
}

/// How many type arguments a subscriptable type form takes without raising `TypeError`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    Exactly(usize),
    AtLeast(usize),
    /// Builtin generics (`list[...]`) and `Tuple`: no check at run time.
    Any,
    /// `Literal[...]`: at least one literal.
    Literal,
    /// `Callable[[args...] | ..., result]`.
    Callable,
    /// `Annotated[T, metadata...]`.
    Annotated,
    /// `Generic[T, ...]` / `Protocol[T, ...]`: distinct type variables only.
    TypeVars,
}

/// Strip the module of a typing name: `typing.X` and `collections.abc.X` share their rules.
fn typing_name(qualified: &str) -> Option<&str> {
    qualified
        .strip_prefix("typing.")
        .or_else(|| qualified.strip_prefix("collections.abc."))
}

/// The arity of a subscriptable type form, by qualified name.
pub fn type_form(qualified: &str) -> Option<Arity> {
    if matches!(qualified, "re.Pattern" | "re.Match") {
        return Some(Arity::Exactly(1));
    }
    if let Some(name) = qualified.strip_prefix("builtins.") {
        return matches!(
            name,
            "list" | "dict" | "set" | "frozenset" | "tuple" | "type"
        )
        .then_some(Arity::Any);
    }
    let name = typing_name(qualified)?;
    Some(match name {
        "Optional"
        | "List"
        | "Set"
        | "FrozenSet"
        | "Type"
        | "Deque"
        | "Sequence"
        | "MutableSequence"
        | "Iterable"
        | "Iterator"
        | "Collection"
        | "Container"
        | "AbstractSet"
        | "MutableSet"
        | "Awaitable"
        | "AsyncIterable"
        | "AsyncIterator"
        | "Reversible"
        | "KeysView"
        | "ValuesView"
        | "ClassVar"
        | "Final"
        | "Counter"
        | "Pattern"
        | "Match"
        | "IO"
        | "ContextManager"
        | "AsyncContextManager" => Arity::Exactly(1),
        "Dict" | "DefaultDict" | "OrderedDict" | "Mapping" | "MutableMapping" | "ChainMap"
        | "ItemsView" | "AsyncGenerator" => Arity::Exactly(2),
        "Generator" | "Coroutine" => Arity::Exactly(3),
        "Union" => Arity::AtLeast(1),
        "Tuple" => Arity::Any,
        "Callable" => Arity::Callable,
        "Literal" => Arity::Literal,
        "Annotated" => Arity::Annotated,
        "Generic" | "Protocol" => Arity::TypeVars,
        _ => return None,
    })
}

/// A name that stands for a type on its own (no subscript needed).
pub fn is_plain_type(qualified: &str) -> bool {
    if let Some(name) = qualified.strip_prefix("builtins.") {
        return !matches!(
            name,
            "property" | "staticmethod" | "classmethod" | "chr" | "zip" | "hasattr" | "getattr"
        );
    }
    let Some(name) = typing_name(qualified) else {
        // A class of the generated table ([`super::stdlib_classes`]) is a type too.
        return stdlib_class(qualified)
            || super::stdlib_classes::class(qualified).is_some()
            || matches!(
                qualified,
                "re.Pattern"
                    | "re.Match"
                    | "datetime.date"
                    | "datetime.datetime"
                    | "datetime.time"
                    | "datetime.timedelta"
                    | "decimal.Decimal"
                    | "pathlib.Path"
                    | "pathlib.PurePath"
                    | "uuid.UUID"
                    | "enum.Enum"
                    | "types.ModuleType"
                    | "types.FunctionType"
                    | "types.TracebackType"
                    | "types.FrameType"
                    | "types.CodeType"
            );
    };
    type_form(qualified).is_some_and(|a| !matches!(a, Arity::Literal | Arity::Annotated))
        || matches!(
            name,
            "Any"
                | "NoReturn"
                | "Never"
                | "AnyStr"
                | "Text"
                | "Hashable"
                | "Sized"
                | "SupportsInt"
                | "SupportsFloat"
                | "SupportsIndex"
                | "SupportsAbs"
                | "SupportsBytes"
                | "LiteralString"
                | "Self"
                | "TextIO"
                | "BinaryIO"
                | "NamedTuple"
                | "TypedDict"
        )
}

/// A class statement may name this as a base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseKind {
    Object,
    Exception,
    Abc,
    /// `Generic[...]`, which only adds type parameters.
    Generic,
    Protocol,
    NamedTuple,
    TypedDict,
    /// `Enum` and friends; the kind of values its members must have.
    Enum(EnumValues),
    /// `int`, `str`, ... as an enum's data type or a plain base.
    Builtin,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnumValues {
    Any,
    Int,
    Str,
}

pub fn base(qualified: &str) -> Option<BaseKind> {
    Some(match qualified {
        "builtins.object" => BaseKind::Object,
        "builtins.int" | "builtins.str" | "builtins.float" | "builtins.dict" | "builtins.list"
        | "builtins.tuple" | "builtins.set" | "builtins.frozenset" | "builtins.bytes" => {
            BaseKind::Builtin
        }
        "abc.ABC" => BaseKind::Abc,
        q if stdlib_class(q) => BaseKind::Builtin,
        "typing.Generic" => BaseKind::Generic,
        "typing.Protocol" => BaseKind::Protocol,
        "typing.NamedTuple" => BaseKind::NamedTuple,
        "typing.TypedDict" => BaseKind::TypedDict,
        "enum.Enum" => BaseKind::Enum(EnumValues::Any),
        "enum.IntEnum" | "enum.IntFlag" | "enum.Flag" => BaseKind::Enum(EnumValues::Int),
        "enum.StrEnum" => BaseKind::Enum(EnumValues::Str),
        q if q
            .strip_prefix("builtins.")
            .is_some_and(is_builtin_exception) =>
        {
            BaseKind::Exception
        }
        _ => return None,
    })
}

/// Standard-library classes that are safe to subclass: creating the subclass runs no code
/// of theirs but `type.__new__` (or `abc.ABCMeta.__new__`, which only records abstract
/// methods); none defines `__init_subclass__`. Each brings an instance layout, so a class
/// has at most one of them (or one builtin type) among its bases.
pub fn stdlib_class(qualified: &str) -> bool {
    matches!(
        qualified,
        "io.IOBase"
            | "io.TextIOWrapper"
            | "io.BytesIO"
            | "io.StringIO"
            | "io.RawIOBase"
            | "io.BufferedIOBase"
            | "io.TextIOBase"
            | "logging.Handler"
            | "logging.StreamHandler"
            | "logging.Filter"
            | "logging.Formatter"
            | "logging.LoggerAdapter"
            | "datetime.tzinfo"
            | "codecs.Codec"
            | "codecs.IncrementalEncoder"
            | "codecs.IncrementalDecoder"
            | "codecs.BufferedIncrementalEncoder"
            | "codecs.BufferedIncrementalDecoder"
            | "codecs.StreamReader"
            | "codecs.StreamWriter"
            | "json.JSONEncoder"
            | "json.JSONDecoder"
            | "string.Formatter"
            | "textwrap.TextWrapper"
            | "html.parser.HTMLParser"
            | "http.cookiejar.CookieJar"
            | "queue.Queue"
            | "queue.LifoQueue"
            | "collections.abc.Mapping"
            | "collections.abc.MutableMapping"
            | "collections.abc.Sequence"
            | "collections.abc.MutableSequence"
            | "collections.abc.Set"
            | "collections.abc.MutableSet"
            | "collections.abc.Iterable"
            | "collections.abc.Iterator"
            | "collections.abc.Container"
            | "collections.abc.Sized"
            | "collections.abc.Hashable"
    )
}

/// Standard-library functions that may be referenced (not called) at import: the attribute
/// exists, and binding it runs nothing.
pub fn stdlib_function(qualified: &str) -> bool {
    let Some((module, name)) = qualified.rsplit_once('.') else {
        return false;
    };
    match module {
        "operator" => matches!(
            name,
            "lt" | "le"
                | "eq"
                | "ne"
                | "ge"
                | "gt"
                | "not_"
                | "truth"
                | "contains"
                | "add"
                | "sub"
                | "mul"
                | "truediv"
                | "floordiv"
                | "mod"
                | "neg"
                | "pos"
                | "and_"
                | "or_"
                | "xor"
                | "invert"
                | "is_"
                | "is_not"
                | "getitem"
                | "itemgetter"
                | "attrgetter"
                | "methodcaller"
                | "index"
                | "concat"
        ),
        "time" => matches!(
            name,
            "time" | "monotonic" | "perf_counter" | "sleep" | "gmtime" | "localtime"
        ),
        "re" => matches!(
            name,
            "escape" | "match" | "search" | "sub" | "split" | "fullmatch" | "findall" | "finditer"
        ),
        "json" => matches!(name, "dumps" | "loads" | "dump" | "load"),
        "os.path" => matches!(
            name,
            "join"
                | "exists"
                | "isfile"
                | "isdir"
                | "basename"
                | "dirname"
                | "abspath"
                | "normpath"
        ),
        _ => false,
    }
}

/// Module-level constants of the stdlib that are values of a known kind.
pub fn constant(qualified: &str) -> Option<Kind> {
    Some(match qualified {
        "typing.TYPE_CHECKING" => Kind::Bool,
        "sys.version_info" => Kind::Tuple,
        "sys.platform" | "sys.byteorder" | "os.name" | "os.sep" | "os.linesep" | "os.pathsep"
        | "os.path.sep" | "os.path.pathsep" | "os.curdir" | "os.pardir" | "os.extsep" => Kind::Str,
        "sys.maxsize" | "sys.hexversion" | "sys.maxunicode" => Kind::Int,
        // `None` on every worker (POSIX has no alternative separator).
        "os.altsep" | "os.path.altsep" => Kind::None,
        // Set at start-up on every CPython (with `-I -S` too).
        "sys.prefix" | "sys.exec_prefix" | "sys.base_prefix" | "sys.base_exec_prefix" => Kind::Str,
        "logging.CRITICAL" | "logging.FATAL" | "logging.ERROR" | "logging.WARNING"
        | "logging.WARN" | "logging.INFO" | "logging.DEBUG" | "logging.NOTSET" => Kind::Int,
        q if q.strip_prefix("errno.").is_some_and(is_linux_errno) => Kind::Int,
        "socket.AF_INET"
        | "socket.AF_INET6"
        | "socket.AF_UNIX"
        | "socket.AF_UNSPEC"
        | "socket.SOCK_STREAM"
        | "socket.SOCK_DGRAM"
        | "socket.SOL_SOCKET"
        | "socket.SO_REUSEADDR"
        | "socket.SO_KEEPALIVE"
        | "socket.IPPROTO_TCP"
        | "socket.TCP_NODELAY" => Kind::Int,
        "socket.has_ipv6" => Kind::Bool,
        q if super::strings::stdlib_string(q).is_some() => Kind::Str,
        "re.I" | "re.IGNORECASE" | "re.M" | "re.MULTILINE" | "re.S" | "re.DOTALL" | "re.X"
        | "re.VERBOSE" | "re.A" | "re.ASCII" | "re.U" | "re.UNICODE" => Kind::Int,
        // A function object: hashable, and calling it is not proved (not on the allowlist).
        q if stdlib_function(q) => Kind::Object,
        _ => return None,
    })
}

/// `errno` names every Linux CPython defines (the kernel's, present in glibc and musl).
fn is_linux_errno(name: &str) -> bool {
    matches!(
        name,
        "EPERM"
            | "ENOENT"
            | "ESRCH"
            | "EINTR"
            | "EIO"
            | "EBADF"
            | "ECHILD"
            | "EAGAIN"
            | "EWOULDBLOCK"
            | "ENOMEM"
            | "EACCES"
            | "EEXIST"
            | "ENOTDIR"
            | "EISDIR"
            | "EINVAL"
            | "EMFILE"
            | "ENOSPC"
            | "EPIPE"
            | "ENOSYS"
            | "ENOTEMPTY"
            | "ENOTSOCK"
            | "EADDRINUSE"
            | "EADDRNOTAVAIL"
            | "ENETUNREACH"
            | "ECONNABORTED"
            | "ECONNRESET"
            | "ENOTCONN"
            | "ESHUTDOWN"
            | "ETIMEDOUT"
            | "ECONNREFUSED"
            | "EHOSTUNREACH"
            | "EALREADY"
            | "EINPROGRESS"
            | "EISCONN"
            | "EPROTOTYPE"
    )
}

/// Every stdlib name v2 knows, for attribute access on an imported module (`typing.Optional`).
pub fn is_known(qualified: &str) -> bool {
    type_form(qualified).is_some()
        || is_plain_type(qualified)
        || base(qualified).is_some()
        || constant(qualified).is_some()
        || super::calls::is_allowlisted(qualified)
        || super::values::is_value_call(qualified)
        || super::decorators::is_decorator(qualified)
        || qualified == "abc.ABCMeta"
        // Only called as a decorator factory ([`super::decorators`]).
        || qualified == "functools.wraps"
        || super::stdlib_classes::class(qualified).is_some()
}
