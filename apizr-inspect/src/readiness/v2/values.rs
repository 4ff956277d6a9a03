//! Standard-library calls that build a value from literals, with the arguments v2 checks so
//! that the call cannot raise:
//!
//! | call | accepted when | what it could raise otherwise |
//! | --- | --- | --- |
//! | `datetime.timedelta(...)` | at most 7 arguments, by position or by their names, each an int literal (or its negation) of at most 1,000,000 | `OverflowError` beyond ±999,999,999 days, `TypeError` on other types |
//! | `datetime.date(y, m, d)` | int literals forming a date of years 1–9999 | `ValueError` |
//! | `datetime.datetime(y, m, d[, H, M, S, us])`, `datetime.time([H, M, S, us])` | int literals in range (by position only) | `ValueError`, `TypeError` |
//! | `hasattr(module, "name")` | a standard-library module without a module `__getattr__` ([`PLAIN_MODULES`]) and a literal name | a module `__getattr__` runs code |
//! | `getattr(module, "name", default)` | the same, and a default v2 proves; the result is a value v2 knows nothing of | |
//! | `struct.Struct(format)` | a format literal `struct` accepts ([`is_struct_format`]); `s.pack`, `s.unpack`, `s.size`, ... of a name bound to it | `struct.error` |
//! | `typing.cast(T, value)` | `value` proved; the result is `value` | it checks nothing |
//! | `re.Scanner(lexicon)` | [`super::pattern`] | `re.error`, `ValueError` |
//! | `codecs.lookup(name)`, `codecs.lookup(name)[i]` | a literal name of a codec every CPython has ([`ALWAYS_CODECS`]); `i` an int literal in -4..=3 (the `CodecInfo` tuple: encode, decode, reader, writer) | `LookupError`, `IndexError` |
//! | `sys.intern(s)` | `s` a str literal; the result is a str | `TypeError` for bytes or a str subclass |
//! | `importlib.metadata.version(name)` | `name` is `__name__` or a folded str, and the module's bundle carries its package directory's `*.dist-info/METADATA` of that distribution, UTF-8 ([`crate::package::dist_info`]) | `PackageNotFoundError`, `UnicodeDecodeError` |
//! | `functools.partial(f, ...)` | `f` a function or class of the module, or a builtin; arguments v2 proves | `TypeError` for a non-callable; it only stores them |

use ruff_python_ast::{Expr, ExprCall, ExprSubscript, Number, UnaryOp};
use ruff_text_size::Ranged;

use super::env::{Kind, Meaning};
use super::{Prover, Unproved, Why};

type Proof<T> = Result<T, Unproved>;

/// Standard-library modules with no module-level `__getattr__` on CPython 3.11/3.12 (`io`
/// has one), so `hasattr` on them only reads their namespace.
pub const PLAIN_MODULES: &[&str] = &[
    "sys",
    "os",
    "socket",
    "ssl",
    "select",
    "signal",
    "time",
    "errno",
    "math",
    "threading",
];

/// Codec names `codecs.lookup` finds on every CPython: the `encodings` package always holds
/// `utf_8`, `ascii` and `latin_1` (the lookup imports that stdlib module and caches it, in
/// the worker process).
pub const ALWAYS_CODECS: &[&str] = &[
    "utf-8",
    "utf8",
    "utf_8",
    "UTF-8",
    "ascii",
    "latin-1",
    "latin1",
    "latin_1",
    "iso-8859-1",
];

/// The calls of this module, for the allowlist of known names.
pub fn is_value_call(qualified: &str) -> bool {
    matches!(
        qualified,
        "datetime.timedelta"
            | "datetime.date"
            | "datetime.datetime"
            | "datetime.time"
            | "builtins.hasattr"
            | "builtins.getattr"
            | "functools.partial"
            | "re.Scanner"
            | "struct.Struct"
            | "typing.cast"
            | "codecs.lookup"
            | "sys.intern"
            | "importlib.metadata.version"
    ) || super::module_copy::is_copy_call(qualified)
}

const TIMEDELTA: &[&str] = &[
    "days",
    "seconds",
    "microseconds",
    "milliseconds",
    "minutes",
    "hours",
    "weeks",
];

/// A format `struct` accepts: an optional byte order (`@`, `=`, `<`, `>`, `!`), then format
/// characters each with an optional count of at most 9 digits (a longer one can make the
/// total size too long: `struct.error`); `n`, `N` and `P` only in native mode (`@` or none);
/// spaces between items are ignored.
pub fn is_struct_format(format: &str) -> bool {
    let (native, body) = match format.chars().next() {
        Some('<' | '>' | '!' | '=') => (false, &format[1..]),
        Some('@') => (true, &format[1..]),
        _ => (true, format),
    };
    let mut digits = 0;
    for c in body.chars() {
        match c {
            '0'..='9' if digits < 9 => digits += 1,
            ' ' if digits == 0 => {}
            'x' | 'c' | 'b' | 'B' | '?' | 'h' | 'H' | 'i' | 'I' | 'l' | 'L' | 'q' | 'Q' | 'e'
            | 'f' | 'd' | 's' | 'p' => digits = 0,
            'n' | 'N' | 'P' if native => digits = 0,
            _ => return false,
        }
    }
    digits == 0
}

impl Prover<'_> {
    /// How many items a proved value holds, when v2 knows it without running anything: a
    /// list comprehension, or `tuple(...)`/`list(...)` (the builtins) of a generator or list
    /// comprehension, with one `for` over `range(n)` (the builtin, `n` an int literal) and no
    /// condition — CPython produces one item per `n`, so unpacking it into `n` names cannot
    /// raise `ValueError`.
    pub fn known_length(&self, value: &Expr) -> Option<usize> {
        let comprehension = match value {
            Expr::ListComp(c) => &c.generators,
            Expr::Call(call) => {
                let builtin = |name: &str| {
                    self.value(&call.func) == Ok(Meaning::Qualified(format!("builtins.{name}")))
                };
                match (&call.arguments.args[..], call.arguments.keywords.is_empty()) {
                    ([Expr::Generator(g)], true) if builtin("tuple") || builtin("list") => {
                        &g.generators
                    }
                    ([Expr::ListComp(c)], true) if builtin("tuple") || builtin("list") => {
                        &c.generators
                    }
                    _ => return None,
                }
            }
            _ => return None,
        };
        let [clause] = &comprehension[..] else {
            return None;
        };
        let Expr::Call(range) = &clause.iter else {
            return None;
        };
        if !clause.ifs.is_empty()
            || clause.is_async
            || !range.arguments.keywords.is_empty()
            || self.value(&range.func) != Ok(Meaning::Qualified("builtins.range".into()))
        {
            return None;
        }
        match &range.arguments.args[..] {
            [n] => int_literal(n).and_then(|n| usize::try_from(n).ok()),
            _ => None,
        }
    }

    /// `importlib.metadata.version(name)`: `name` is `__name__` (not rebound: the module's
    /// dotted name, which bundles import it by) or a str v2 folded, and the module is served
    /// with its package's files, which carry the directory's `*.dist-info/METADATA`
    /// ([`crate::package::dist_info`]) that the worker's finder offers before any `sys.path`
    /// entry. Every metadata entry of that name is carried and readable, so `from_name` finds
    /// one and `metadata['Version']` parses its text (a str, or `None` without the header);
    /// it only reads. Anything else may raise `PackageNotFoundError` (or `UnicodeDecodeError`).
    fn distribution_version(&self, name: &Expr) -> Proof<Meaning> {
        let fail = Err(Unproved::at(name.range(), Why::Arguments));
        let text = match name {
            Expr::Name(n) if n.id.as_str() == "__name__" && !self.env.shadows("__name__") => {
                Some(self.module.to_string())
            }
            other => self.str_value(other),
        };
        let (Some(text), Some(package)) = (text, self.package) else {
            return fail;
        };
        if !package.carries_package_files()
            || !crate::package::dist_info::version_found(package.ctx.index.root(), &text)
        {
            return fail;
        }
        Ok(Meaning::Value(Kind::Other))
    }
}

/// An int literal or its negation.
impl Prover<'_> {
    /// `codecs.lookup(name)[i]` ([`Prover::value_call`] proves the call): one of its four
    /// items. `None` when `sub` is not a subscript of a `codecs.lookup` call.
    pub fn codec_item(&self, sub: &ExprSubscript) -> Option<Proof<Meaning>> {
        let Expr::Call(call) = sub.value.as_ref() else {
            return None;
        };
        if self.value(&call.func) != Ok(Meaning::Qualified("codecs.lookup".into())) {
            return None;
        }
        Some(match self.value(&sub.value) {
            Err(unproved) => Err(unproved),
            Ok(_) if int_literal(&sub.slice).is_some_and(|i| (-4..=3).contains(&i)) => {
                Ok(Meaning::Value(Kind::Object))
            }
            Ok(_) => Err(Unproved::at(sub.range(), Why::Expression)),
        })
    }
}

fn int_literal(expr: &Expr) -> Option<i64> {
    match expr {
        Expr::NumberLiteral(n) => match &n.value {
            Number::Int(i) => i.as_i64(),
            _ => None,
        },
        Expr::UnaryOp(u) if u.op == UnaryOp::USub => int_literal(&u.operand).map(|v| -v),
        _ => None,
    }
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `y, m, d, H, M, S, us` (dates) or `H, M, S, us` (times) all in range.
fn in_range(values: &[i64], date: bool) -> bool {
    let mut limits: Vec<(i64, i64)> = Vec::new();
    if date {
        let (year, month) = (values.first().copied(), values.get(1).copied());
        let days = match (year, month) {
            (Some(y), Some(m)) if (1..=12).contains(&m) => days_in_month(y, m),
            _ => 0,
        };
        limits.extend([(1, 9999), (1, 12), (1, days)]);
    }
    limits.extend([(0, 23), (0, 59), (0, 59), (0, 999_999)]);
    values.len() <= limits.len()
        && values
            .iter()
            .zip(&limits)
            .all(|(v, (lo, hi))| (*lo..=*hi).contains(v))
}

impl Prover<'_> {
    /// The calls of the table above by qualified name; `None` for other names.
    pub fn value_call(&self, qualified: &str, call: &ExprCall) -> Option<Proof<Meaning>> {
        let args = &call.arguments.args;
        let keywords = &call.arguments.keywords;
        let fail = Err(Unproved::at(call.range(), Why::Arguments));
        if super::module_copy::is_copy_call(qualified) {
            return self.copy_call(qualified, call);
        }
        let literals = || args.iter().map(int_literal).collect::<Option<Vec<i64>>>();
        Some(match qualified {
            "datetime.timedelta" => {
                let mut given: Vec<&str> = TIMEDELTA.iter().copied().take(args.len()).collect();
                let mut values: Vec<&Expr> = args.iter().collect();
                for keyword in keywords {
                    match keyword.arg.as_ref().map(|a| a.as_str()) {
                        Some(name) if TIMEDELTA.contains(&name) && !given.contains(&name) => {
                            given.push(name);
                            values.push(&keyword.value);
                        }
                        _ => return Some(fail),
                    }
                }
                let small = |e: &&Expr| int_literal(e).is_some_and(|v| v.abs() <= 1_000_000);
                if args.len() <= TIMEDELTA.len() && values.iter().all(small) {
                    Ok(Meaning::Value(Kind::Object))
                } else {
                    fail
                }
            }
            "datetime.date" | "datetime.datetime" | "datetime.time" => {
                let date = qualified != "datetime.time";
                let ok = keywords.is_empty()
                    && literals().is_some_and(|v| {
                        in_range(&v, date)
                            && (!date || v.len() >= 3)
                            && (qualified != "datetime.date" || v.len() == 3)
                    });
                if ok {
                    Ok(Meaning::Value(Kind::Object))
                } else {
                    fail
                }
            }
            "builtins.hasattr" | "builtins.getattr" => {
                let getattr = qualified == "builtins.getattr";
                let (module, default) = match &args[..] {
                    [module, Expr::StringLiteral(_)] if !getattr => (module, None),
                    [module, Expr::StringLiteral(_), default] if getattr => (module, Some(default)),
                    _ => return Some(fail),
                };
                let plain = matches!(self.value(module), Ok(Meaning::Module(m))
                    if PLAIN_MODULES.contains(&m.as_str()));
                if !keywords.is_empty() || !plain {
                    return Some(fail);
                }
                match default {
                    Some(default) => self.value(default).map(|_| Meaning::Value(Kind::Other)),
                    None => Ok(Meaning::Value(Kind::Bool)),
                }
            }
            "re.Scanner" => self.scanner(call),
            // A `CodecInfo`, a tuple of functions and classes.
            "codecs.lookup" => match (&args[..], keywords.is_empty()) {
                ([Expr::StringLiteral(s)], true) if ALWAYS_CODECS.contains(&s.value.to_str()) => {
                    Ok(Meaning::Value(Kind::Object))
                }
                _ => fail,
            },
            // A struct format `struct` accepts: building the `Struct` only parses it.
            "struct.Struct" => match (&args[..], keywords.is_empty()) {
                ([Expr::StringLiteral(s)], true) if is_struct_format(s.value.to_str()) => {
                    Ok(Meaning::Value(Kind::Object))
                }
                _ => fail,
            },
            // `sys.intern` of a str literal (an exact `str`: a subclass or bytes raise
            // `TypeError`) returns an equal str and only touches the interpreter's table.
            "sys.intern" => match (&args[..], keywords.is_empty()) {
                ([Expr::StringLiteral(_)], true) => Ok(Meaning::Value(Kind::Str)),
                _ => fail,
            },
            // The version of a distribution whose metadata the worker serves
            // ([`Prover::distribution_version`]).
            "importlib.metadata.version" => match (&args[..], keywords.is_empty()) {
                ([name], true) => self.distribution_version(name),
                _ => fail,
            },
            // `typing.cast(T, value)` returns `value` and checks nothing.
            "typing.cast" => match (&args[..], keywords.is_empty()) {
                ([_, value], true) => self.value(value),
                _ => fail,
            },
            "functools.partial" => {
                let Some((function, rest)) = args.split_first() else {
                    return Some(fail);
                };
                let callable = match self.value(function) {
                    Ok(
                        Meaning::Function
                        | Meaning::Pure(_)
                        | Meaning::Foreign(_)
                        | Meaning::Class(_),
                    ) => true,
                    Ok(Meaning::Qualified(q)) => q.starts_with("builtins."),
                    _ => false,
                };
                if !callable || rest.iter().any(|a| matches!(a, Expr::Starred(_))) {
                    return Some(Err(Unproved::at(function.range(), Why::Arguments)));
                }
                for value in rest.iter().chain(keywords.iter().map(|k| &k.value)) {
                    if let Err(unproved) = self.value(value) {
                        return Some(Err(unproved));
                    }
                }
                if keywords.iter().any(|k| k.arg.is_none()) {
                    return Some(fail);
                }
                Ok(Meaning::Value(Kind::Object))
            }
            _ => return None,
        })
    }
}
