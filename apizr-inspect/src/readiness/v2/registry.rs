//! Calls that change process-local registries of the interpreter at import, which libraries
//! make to configure themselves: the warnings filter list and the logging tree.
//!
//! "Harmless" for readiness v2 means: the statement cannot raise, and changes nothing outside
//! the module's namespace and the single-use worker process (no file, network, subprocess,
//! environment or other process). These calls change interpreter state of that worker only
//! and cannot raise with the arguments accepted here. What would install code to run later
//! (a handler other than `NullHandler`, `atexit`, `sys` hooks, `codecs.register_error`) or
//! could turn a later warning into an exception (the `"error"` action) stays unproved.
//!
//! | call | accepted when | why |
//! | --- | --- | --- |
//! | `warnings.simplefilter(action, category, lineno, append)` | `action` one of `"default"`, `"ignore"`, `"always"`, `"module"`, `"once"`; `category` a builtin exception class or a class v2 proved; `lineno` an int literal >= 0; `append` a bool literal | it asserts the action and lineno and inserts a tuple in `warnings.filters` (comparing classes by identity: no metaclass v2 accepts defines `__eq__`) |
//! | `warnings.filterwarnings(action, message, category, module, lineno, append)` | as above, `category` a builtin `Warning` class (it asserts `issubclass(category, Warning)`), `message`/`module` strings `re.compile` accepts ([`super::regex`]) | it compiles them with `re.I` |
//! | `logging.getLogger(name).addHandler(logging.NullHandler())` | the `getLogger` call proved ([`super::calls`]) | `NullHandler` writes nothing; creating it only registers it in `logging`'s weak handler list (flushed and closed as a no-op at exit) |
//! | `logging.getLogger(name).setLevel(level)` | `level` an int or one of logging's level names | `_checkLevel` accepts them; the manager's cache is cleared |
//! | `logging.NullHandler()` | no arguments | as above |

use ruff_python_ast::{Expr, ExprCall, Keyword};
use ruff_text_size::Ranged;

use super::env::{Kind, Meaning};
use super::{Prover, Unproved, Why};

type Proof<T> = Result<T, Unproved>;

/// The calls of this module, for the allowlist of known names.
pub fn is_registry_call(qualified: &str) -> bool {
    matches!(
        qualified,
        "warnings.simplefilter" | "warnings.filterwarnings" | "logging.NullHandler"
    )
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

    /// The registry calls by qualified name; `None` for other names.
    pub fn registry_call(&self, qualified: &str, call: &ExprCall) -> Option<Proof<Meaning>> {
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
