//! Calls that change process-local registries of the interpreter at import, which libraries
//! make to configure themselves: the warnings filter list, the logging tree, codec error
//! handlers registered by a name of their own, and `urllib.parse`'s scheme lists.
//!
//! "Harmless" for readiness v2 means: the statement cannot raise, and changes nothing outside
//! the module's namespace and the single-use worker process (no file, network, subprocess,
//! environment or other process). These calls change interpreter state of that worker only
//! and cannot raise with the arguments accepted here. What would install code to run later
//! where other code reaches it (a log handler other than `NullHandler`, `atexit`, `sys` hooks,
//! a codec search function, an error handler under one of CPython's own names) or could turn
//! a later warning into an exception (the `"error"` action) stays unproved.
//!
//! | call | accepted when | why |
//! | --- | --- | --- |
//! | `warnings.simplefilter(action, category, lineno, append)` | `action` one of `"default"`, `"ignore"`, `"always"`, `"module"`, `"once"`; `category` a builtin exception class or a class v2 proved; `lineno` an int literal >= 0; `append` a bool literal | it asserts the action and lineno and inserts a tuple in `warnings.filters` (comparing classes by identity: no metaclass v2 accepts defines `__eq__`) |
//! | `warnings.filterwarnings(action, message, category, module, lineno, append)` | as above, `category` a builtin `Warning` class (it asserts `issubclass(category, Warning)`), `message`/`module` strings `re.compile` accepts ([`super::regex`]) | it compiles them with `re.I` |
//! | `logging.getLogger(name).addHandler(logging.NullHandler())` | the `getLogger` call proved ([`super::calls`]) | `NullHandler` writes nothing; creating it only registers it in `logging`'s weak handler list (flushed and closed as a no-op at exit) |
//! | `logging.getLogger(name).setLevel(level)` | `level` an int or one of logging's level names | `_checkLevel` accepts them; the manager's cache is cleared |
//! | `logging.NullHandler()` | no arguments | as above |
//! | `codecs.register_error(name, handler)` | `name` a str v2 folds that is not one of CPython's built-in handler names ([`BUILTIN_ERROR_HANDLERS`]), `handler` a lambda or an undecorated function of the module (always callable), both positional | it checks `name` is a str and `handler` callable (`TypeError` otherwise) and stores the pair in the interpreter's error registry; only code asking for that name (`errors="werkzeug.url_quote"`) reaches the handler, while a built-in name would change how the worker itself encodes and decodes |
//! | `S in urllib.parse.L` / `not in`, `urllib.parse.L.append(s)` | `L` one of the scheme lists ([`SCHEME_LISTS`]), `S`/`s` a str | the lists hold only strs (the stdlib's, and what proved code appended: strs only), so the membership test compares strs; appending a scheme changes how `urljoin`/`urlunsplit` treat it in this process only |

use ruff_python_ast::{Expr, ExprCall, Keyword};
use ruff_text_size::Ranged;

use super::env::{Kind, Meaning};
use super::{Prover, Unproved, Why};

type Proof<T> = Result<T, Unproved>;

/// The calls of this module and the scheme lists, for the allowlist of known names. A
/// scheme list is known as a name only (not a list value): binding it elsewhere keeps the
/// qualified name, so only the membership test and `append` below ever touch it.
pub fn is_registry_call(qualified: &str) -> bool {
    matches!(
        qualified,
        "warnings.simplefilter"
            | "warnings.filterwarnings"
            | "logging.NullHandler"
            | "codecs.register_error"
    ) || scheme_list(qualified).is_some()
        || qualified
            .strip_suffix(".append")
            .is_some_and(|list| scheme_list(list).is_some())
}

/// The error handlers CPython registers at start-up (`Python/codecs.c`): code everywhere in the
/// worker (the stdlib included) asks for them by name, so replacing one is not local.
pub const BUILTIN_ERROR_HANDLERS: &[&str] = &[
    "strict",
    "ignore",
    "replace",
    "xmlcharrefreplace",
    "backslashreplace",
    "namereplace",
    "surrogateescape",
    "surrogatepass",
];

/// `urllib.parse`'s lists of scheme names (lists of str in every CPython 3).
pub const SCHEME_LISTS: &[&str] = &[
    "uses_relative",
    "uses_netloc",
    "uses_params",
    "non_hierarchical",
    "uses_query",
    "uses_fragment",
];

/// `qualified` names one of [`SCHEME_LISTS`].
fn scheme_list(qualified: &str) -> Option<&str> {
    qualified
        .strip_prefix("urllib.parse.")
        .filter(|name| SCHEME_LISTS.contains(name))
}

/// Actions that only silence or show warnings (`"error"` would make a later warning raise).
const ACTIONS: &[&str] = &["default", "ignore", "always", "module", "once"];

/// The level names `logging._checkLevel` accepts.
const LEVELS: &[&str] = &[
    "CRITICAL", "FATAL", "ERROR", "WARN", "WARNING", "INFO", "DEBUG", "NOTSET",
];

/// The builtin `Warning` classes (`filterwarnings` requires one).
fn is_builtin_warning(qualified: &str) -> bool {
    qualified
        .strip_prefix("builtins.")
        .is_some_and(|name| name.ends_with("Warning") && super::known::is_builtin_exception(name))
}

impl Prover<'_> {
    /// `logging.getLogger(...).addHandler(...)` / `.setLevel(...)`; `None` for other calls.
    pub fn logger_method(&self, call: &ExprCall) -> Option<Proof<Meaning>> {
        let Expr::Attribute(method) = call.func.as_ref() else {
            return None;
        };
        let Expr::Call(logger) = method.value.as_ref() else {
            return None;
        };
        if !matches!(method.attr.as_str(), "addHandler" | "setLevel")
            || self.value(&logger.func) != Ok(Meaning::Qualified("logging.getLogger".into()))
        {
            return None;
        }
        if let Err(unproved) = self.call(logger) {
            return Some(Err(unproved));
        }
        let fail = Some(Err(Unproved::at(call.range(), Why::Arguments)));
        let ([arg], true) = (&call.arguments.args[..], call.arguments.keywords.is_empty()) else {
            return fail;
        };
        let ok = match method.attr.as_str() {
            "addHandler" => matches!(arg, Expr::Call(handler)
                if handler.arguments.is_empty()
                    && self.value(&handler.func)
                        == Ok(Meaning::Qualified("logging.NullHandler".into()))),
            _ => match arg {
                Expr::StringLiteral(s) => LEVELS.contains(&s.value.to_str()),
                other => self.value(other) == Ok(Meaning::Value(Kind::Int)),
            },
        };
        if ok {
            Some(Ok(Meaning::Value(Kind::None)))
        } else {
            fail
        }
    }

    /// `S in urllib.parse.uses_netloc` (or `not in`): `S` a str and the right side one of the
    /// scheme lists; `None` when the right side is not one.
    pub fn scheme_membership(&self, left: &Meaning, right: &Meaning) -> Option<bool> {
        let Meaning::Qualified(list) = right else {
            return None;
        };
        scheme_list(list)?;
        Some(*left == Meaning::Value(Kind::Str))
    }

    /// The registry calls by qualified name; `None` for other names.
    pub fn registry_call(&self, qualified: &str, call: &ExprCall) -> Option<Proof<Meaning>> {
        let positional = |count: usize| {
            call.arguments.keywords.is_empty()
                && call.arguments.args.len() == count
                && !call.arguments.args.iter().any(|a| a.is_starred_expr())
        };
        if qualified == "codecs.register_error" {
            return Some(self.register_error(call, positional(2)));
        }
        if qualified
            .strip_suffix(".append")
            .is_some_and(|list| scheme_list(list).is_some())
        {
            return Some(match &call.arguments.args[..] {
                [scheme] if positional(1) => match self.value(scheme) {
                    Ok(Meaning::Value(Kind::Str)) => Ok(Meaning::Value(Kind::None)),
                    Ok(_) => Err(Unproved::at(scheme.range(), Why::Arguments)),
                    Err(unproved) => Err(unproved),
                },
                _ => Err(Unproved::at(call.range(), Why::Arguments)),
            });
        }
        let filter = match qualified {
            "logging.NullHandler" => {
                return Some(if call.arguments.is_empty() {
                    Ok(Meaning::Value(Kind::Object))
                } else {
                    Err(Unproved::at(call.range(), Why::Arguments))
                });
            }
            "warnings.simplefilter" => false,
            "warnings.filterwarnings" => true,
            _ => return None,
        };
        let names: &[&str] = if filter {
            &[
                "action", "message", "category", "module", "lineno", "append",
            ]
        } else {
            &["action", "category", "lineno", "append"]
        };
        Some(self.warning_filter(call, names, filter))
    }

    /// `codecs.register_error(name, handler)` ([`BUILTIN_ERROR_HANDLERS`]): `positional` says
    /// the call has exactly two positional arguments (the C function takes no keywords).
    fn register_error(&self, call: &ExprCall, positional: bool) -> Proof<Meaning> {
        let ([name, handler], true) = (&call.arguments.args[..], positional) else {
            return Err(Unproved::at(call.range(), Why::Arguments));
        };
        // The name: a str whose value v2 knows, not one the interpreter itself relies on.
        self.value(name)?;
        let own_name = self
            .str_value(name)
            .is_some_and(|n| !BUILTIN_ERROR_HANDLERS.contains(&n.as_str()));
        if !own_name {
            return Err(Unproved::at(name.range(), Why::Arguments));
        }
        // The handler: a function object for sure (a lambda, or an undecorated `def`, which
        // v2 records as a local function it could call; a decorator may return anything).
        let callable = matches!(
            (handler, self.value(handler)?),
            (Expr::Lambda(_), _) | (Expr::Name(_), Meaning::Pure(_))
        );
        if !callable {
            return Err(Unproved::at(handler.range(), Why::Arguments));
        }
        Ok(Meaning::Value(Kind::None))
    }

    /// The arguments of `simplefilter` / `filterwarnings` (`names` in their order).
    fn warning_filter(&self, call: &ExprCall, names: &[&str], filter: bool) -> Proof<Meaning> {
        let fail = |at: &dyn Ranged| Err(Unproved::at(at.range(), Why::Arguments));
        let args = &call.arguments.args;
        if args.len() > names.len() {
            return fail(call);
        }
        let mut given: Vec<(&str, &Expr)> = names.iter().copied().zip(args.iter()).collect();
        for Keyword { arg, value, .. } in &call.arguments.keywords {
            match arg.as_ref().map(|a| a.as_str()) {
                Some(name) if names.contains(&name) && !given.iter().any(|(n, _)| *n == name) => {
                    given.push((name, value));
                }
                _ => return fail(call),
            }
        }
        if !given.iter().any(|(n, _)| *n == "action") {
            return fail(call);
        }
        for (name, value) in given {
            let ok = match name {
                "action" => self
                    .str_value(value)
                    .is_some_and(|a| ACTIONS.contains(&a.as_str())),
                "category" => match self.value(value)? {
                    Meaning::Qualified(q) if filter => is_builtin_warning(&q),
                    Meaning::Qualified(q) => q
                        .strip_prefix("builtins.")
                        .is_some_and(super::known::is_builtin_exception),
                    Meaning::Class(_) => !filter,
                    _ => false,
                },
                "message" | "module" => self
                    .str_value(value)
                    .is_some_and(|p| super::regex::is_valid(&p, false)),
                // An int literal is never negative (`-1` is a unary minus).
                "lineno" => matches!(value, Expr::NumberLiteral(n)
                    if matches!(n.value, ruff_python_ast::Number::Int(_))),
                _ => matches!(value, Expr::BooleanLiteral(_)),
            };
            if !ok {
                return fail(value);
            }
        }
        Ok(Meaning::Value(Kind::None))
    }
}
