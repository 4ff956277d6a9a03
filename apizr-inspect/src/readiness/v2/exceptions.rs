//! The builtin exception classes of the workers' CPython 3 (Linux): each one's parent and the
//! instance layout it brings, so that a class with several exception bases is proved exactly
//! when CPython can build it.
//!
//! CPython lays out an instance by the bases' *solid bases* (`solid_base` in
//! `Objects/typeobject.c`: the nearest class up the chain whose instances are larger than its
//! base's, a class of Python code without `__slots__` adding nothing); the bases of a class
//! are compatible only when their solid bases lie on one chain, else `TypeError: multiple
//! bases have instance lay-out conflict`. Most builtin exceptions share `BaseException`'s
//! layout; `OSError` (and its aliases `IOError`, `EnvironmentError`, and its subclasses),
//! `ImportError`, `SyntaxError`, `StopIteration`, `SystemExit`, `NameError`,
//! `AttributeError` and the concrete `Unicode*Error`s have their own. Every solid base is a
//! subclass of `BaseException`, so exception bases fit together when at most one distinct
//! solid base other than `BaseException` is among them ([`compatible`]). The exception
//! groups (several bases of their own) are not in the table.
//!
//! Their MROs are the chains up to `BaseException` ([`ancestors`]), aliases resolved, so the
//! C3 merge ([`super::mro`]) refuses `class E(Exception, ValueError)` and the duplicate base
//! in `class E(OSError, IOError)` as CPython does. The exception groups of CPython 3.11 (the
//! workers') are there too: `ExceptionGroup` has two bases, so its MRO is written out.

/// (name, parent, solid base) of each builtin exception (`BaseException` has no parent).
const TABLE: &[(&str, &str, &str)] = &[
    ("BaseException", "", "BaseException"),
    ("Exception", "BaseException", "BaseException"),
    ("GeneratorExit", "BaseException", "BaseException"),
    ("KeyboardInterrupt", "BaseException", "BaseException"),
    ("SystemExit", "BaseException", "SystemExit"),
    ("ArithmeticError", "Exception", "BaseException"),
    ("AssertionError", "Exception", "BaseException"),
    ("AttributeError", "Exception", "AttributeError"),
    ("BufferError", "Exception", "BaseException"),
    ("EOFError", "Exception", "BaseException"),
    ("ImportError", "Exception", "ImportError"),
    ("LookupError", "Exception", "BaseException"),
    ("MemoryError", "Exception", "BaseException"),
    ("NameError", "Exception", "NameError"),
    ("OSError", "Exception", "OSError"),
    ("ReferenceError", "Exception", "BaseException"),
    ("RuntimeError", "Exception", "BaseException"),
    ("StopAsyncIteration", "Exception", "BaseException"),
    ("StopIteration", "Exception", "StopIteration"),
    ("SyntaxError", "Exception", "SyntaxError"),
    ("SystemError", "Exception", "BaseException"),
    ("TypeError", "Exception", "BaseException"),
    ("ValueError", "Exception", "BaseException"),
    ("Warning", "Exception", "BaseException"),
    ("FloatingPointError", "ArithmeticError", "BaseException"),
    ("OverflowError", "ArithmeticError", "BaseException"),
    ("ZeroDivisionError", "ArithmeticError", "BaseException"),
    ("BytesWarning", "Warning", "BaseException"),
    ("DeprecationWarning", "Warning", "BaseException"),
    ("FutureWarning", "Warning", "BaseException"),
    ("ImportWarning", "Warning", "BaseException"),
    ("PendingDeprecationWarning", "Warning", "BaseException"),
    ("ResourceWarning", "Warning", "BaseException"),
    ("RuntimeWarning", "Warning", "BaseException"),
    ("SyntaxWarning", "Warning", "BaseException"),
    ("UnicodeWarning", "Warning", "BaseException"),
    ("UserWarning", "Warning", "BaseException"),
    ("BlockingIOError", "OSError", "OSError"),
    ("ChildProcessError", "OSError", "OSError"),
    ("ConnectionError", "OSError", "OSError"),
    ("FileExistsError", "OSError", "OSError"),
    ("FileNotFoundError", "OSError", "OSError"),
    ("InterruptedError", "OSError", "OSError"),
    ("IsADirectoryError", "OSError", "OSError"),
    ("NotADirectoryError", "OSError", "OSError"),
    ("PermissionError", "OSError", "OSError"),
    ("ProcessLookupError", "OSError", "OSError"),
    ("TimeoutError", "OSError", "OSError"),
    ("IndentationError", "SyntaxError", "SyntaxError"),
    ("IndexError", "LookupError", "BaseException"),
    ("KeyError", "LookupError", "BaseException"),
    ("ModuleNotFoundError", "ImportError", "ImportError"),
    ("NotImplementedError", "RuntimeError", "BaseException"),
    ("RecursionError", "RuntimeError", "BaseException"),
    ("UnboundLocalError", "NameError", "NameError"),
    ("UnicodeError", "ValueError", "BaseException"),
    ("BrokenPipeError", "ConnectionError", "OSError"),
    ("ConnectionAbortedError", "ConnectionError", "OSError"),
    ("ConnectionRefusedError", "ConnectionError", "OSError"),
    ("ConnectionResetError", "ConnectionError", "OSError"),
    ("TabError", "IndentationError", "SyntaxError"),
    ("UnicodeDecodeError", "UnicodeError", "UnicodeDecodeError"),
    ("UnicodeEncodeError", "UnicodeError", "UnicodeEncodeError"),
    (
        "UnicodeTranslateError",
        "UnicodeError",
        "UnicodeTranslateError",
    ),
    ("EncodingWarning", "Warning", "BaseException"),
    ("BaseExceptionGroup", "BaseException", "BaseExceptionGroup"),
    // Its bases are `BaseExceptionGroup` and `Exception` ([`ancestors`]).
    ("ExceptionGroup", "BaseExceptionGroup", "ExceptionGroup"),
];

/// `ExceptionGroup.__mro__` without `object`.
const EXCEPTION_GROUP_MRO: &[&str] = &[
    "ExceptionGroup",
    "BaseExceptionGroup",
    "Exception",
    "BaseException",
];

/// The class a builtin name is bound to: `IOError` and `EnvironmentError` are `OSError`.
pub fn canonical(name: &str) -> &str {
    match name {
        "IOError" | "EnvironmentError" => "OSError",
        other => other,
    }
}

fn entry(name: &str) -> Option<&'static (&'static str, &'static str, &'static str)> {
    let name = canonical(name);
    TABLE.iter().find(|(n, _, _)| *n == name)
}

/// `name` is a builtin exception class of the table (aliases included).
pub fn is_builtin(name: &str) -> bool {
    entry(name).is_some()
}

/// The solid base of a builtin exception's instances.
pub fn solid(name: &str) -> Option<&'static str> {
    entry(name).map(|(_, _, solid)| *solid)
}

/// The MRO of a builtin exception without `object`: itself up to `BaseException`.
pub fn ancestors(name: &str) -> Vec<&'static str> {
    if name == "ExceptionGroup" {
        return EXCEPTION_GROUP_MRO.to_vec();
    }
    let mut out = Vec::new();
    let mut next = entry(name);
    while let Some((name, parent, _)) = next {
        out.push(*name);
        next = entry(parent);
    }
    out
}

/// Bases whose solid bases are these (`None`: not an exception of a known layout) fit
/// together: all are exceptions and at most one solid base differs from `BaseException`'s.
pub fn compatible(solids: &[Option<&'static str>]) -> bool {
    let mut own: Option<&str> = None;
    for solid in solids {
        match solid {
            None => return false,
            Some("BaseException") => {}
            Some(s) if own.is_none_or(|o| o == *s) => own = Some(s),
            Some(_) => return false,
        }
    }
    true
}

/// The solid base of a class with these bases' solid bases, when they are
/// [`compatible`]: the one other than `BaseException`, if any.
pub fn winner(solids: &[Option<&'static str>]) -> Option<&'static str> {
    if !compatible(solids) || solids.is_empty() {
        return None;
    }
    Some(
        solids
            .iter()
            .flatten()
            .copied()
            .find(|s| *s != "BaseException")
            .unwrap_or("BaseException"),
    )
}
