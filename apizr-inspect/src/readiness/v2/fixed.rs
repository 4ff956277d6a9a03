//! Tests whose value is the same on every worker: workers run CPython 3 on Linux (the sandbox
//! and the images are Linux-only), so `sys.version_info < (3,)`, `sys.platform == "win32"`,
//! `sys.platform.startswith("win")` and `os.name == "nt"` are false wherever a served function
//! runs, `hasattr(os, "fork")` is true and `hasattr(sys, "real_prefix")` false. The arms they guard that never run are skipped by the prover like a `TYPE_CHECKING`
//! body — their names stay unbound, their imports never happen — and the package index files
//! their imports as never run ([`crate::package::ImportTime::TypeChecking`]).
//!
//! The prover reads modules through its environment (`sys` must be bound to the module
//! `sys`); the index reads them by spelling. When the two disagree — the index files an
//! import as never run but the prover proves its arm — the import reaches the package verdict,
//! which refuses a local one ([`super::package`]).

use std::cmp::Ordering;

use ruff_python_ast::{self as ast, BoolOp, CmpOp, Expr, UnaryOp};

/// `sys.platform` on every worker.
pub const PLATFORM: &str = "linux";
/// `os.name` on every worker.
pub const OS_NAME: &str = "posix";

/// Standard-library modules that exist only on Windows: importing one on a worker raises
/// `ModuleNotFoundError` (the stdlib allowlist, shared with v1, lists every platform's).
pub fn windows_only(root: &str) -> bool {
    matches!(
        root,
        "msvcrt" | "winreg" | "winsound" | "_winapi" | "nt" | "_overlapped" | "msilib" | "_msi"
    )
}

/// How a test's names are read.
pub trait Reader {
    /// `expr` is the standard-library module `module` (`sys`, `os`).
    fn is_module(&self, expr: &Expr, module: &str) -> bool;
    /// The fixed value of a name, when it is bound to one.
    fn fixed_name(&self, name: &str) -> Option<bool>;
    /// `expr` is the builtin `name` (`hasattr`).
    fn is_builtin(&self, expr: &Expr, name: &str) -> bool;
}

/// `os` functions every CPython 3 on Linux has (`hasattr(os, "fork")` is true on every worker).
const LINUX_OS_FUNCTIONS: &[&str] = &[
    "fork", "getuid", "geteuid", "getpid", "getppid", "setsid", "killpg", "uname", "symlink",
];

/// `os` functions only Windows builds have.
const WINDOWS_OS_FUNCTIONS: &[&str] = &["startfile", "add_dll_directory"];

/// `sys` attributes no worker has: Windows-only ones, and `real_prefix`, which only the
/// `site.py` of virtualenv < 20 set (workers run with `-S`: no `site` at all).
const ABSENT_SYS_ATTRIBUTES: &[&str] = &["real_prefix", "getwindowsversion", "winver", "dllhandle"];

/// The value of `test` on every worker, when v2 knows it: a comparison of `sys.version_info`
/// that holds or fails on every Python 3, a comparison of `sys.platform` or `os.name` with a
/// literal, `sys.platform.startswith(<literals>)`, `not`, `and`/`or` of these, and names bound
/// to them. `None` for anything else (`sys.version_info >= (3, 9)` depends on the minor).
pub fn fixed(test: &Expr, reader: &dyn Reader) -> Option<bool> {
    match test {
        Expr::Compare(cmp) => compare(cmp, reader),
        Expr::UnaryOp(u) if u.op == UnaryOp::Not => fixed(&u.operand, reader).map(|b| !b),
        Expr::BoolOp(b) => {
            let values: Vec<Option<bool>> = b.values.iter().map(|v| fixed(v, reader)).collect();
            // `a and b` is false as soon as one operand is (and true when all are).
            let (decisive, other) = match b.op {
                BoolOp::And => (false, true),
                BoolOp::Or => (true, false),
            };
            if values.contains(&Some(decisive)) {
                Some(decisive)
            } else if values.iter().all(|v| *v == Some(other)) {
                Some(other)
            } else {
                None
            }
        }
        Expr::Call(call) => platform_prefix(call, reader).or_else(|| module_hasattr(call, reader)),
        Expr::Name(n) => reader.fixed_name(n.id.as_str()),
        _ => None,
    }
}

fn compare(cmp: &ast::ExprCompare, reader: &dyn Reader) -> Option<bool> {
    let ([op], [right]) = (&cmp.ops[..], &cmp.comparators[..]) else {
        return None;
    };
    // `left op right` with the known side on the left (`(3, 4) <= v` is `v >= (3, 4)`).
    let (known, literal, op) = match (known_side(&cmp.left, reader), known_side(right, reader)) {
        (Some(k), None) => (k, right, *op),
        (None, Some(k)) => (k, cmp.left.as_ref(), flip(*op)?),
        _ => return None,
    };
    let ordering = match known {
        Known::Version => {
            let Expr::Tuple(t) = literal else {
                return None;
            };
            let first = int(t.elts.first()?)?;
            if t.elts.iter().any(|e| int(e).is_none()) {
                return None;
            }
            match first.cmp(&3) {
                Ordering::Less => Ordering::Greater,
                Ordering::Greater => Ordering::Less,
                // `(3, x, ...) > (3,)`: a longer tuple with the same prefix is greater.
                Ordering::Equal if t.elts.len() == 1 => Ordering::Greater,
                Ordering::Equal => return None,
            }
        }
        Known::Major => 3u64.cmp(&int(literal)?),
        // Strings: only (in)equality.
        Known::Str(value) => {
            let Expr::StringLiteral(s) = literal else {
                return None;
            };
            return match op {
                CmpOp::Eq => Some(value == s.value.to_str()),
                CmpOp::NotEq => Some(value != s.value.to_str()),
                _ => None,
            };
        }
    };
    Some(match op {
        CmpOp::Lt => ordering == Ordering::Less,
        CmpOp::LtE => ordering != Ordering::Greater,
        CmpOp::Gt => ordering == Ordering::Greater,
        CmpOp::GtE => ordering != Ordering::Less,
        CmpOp::Eq => ordering == Ordering::Equal,
        CmpOp::NotEq => ordering != Ordering::Equal,
        _ => return None,
    })
}

/// What a fixed test reads.
#[derive(Clone, Copy)]
enum Known {
    /// `sys.version_info`.
    Version,
    /// `sys.version_info[0]`.
    Major,
    /// `sys.platform`, `os.name`.
    Str(&'static str),
}

fn known_side(expr: &Expr, reader: &dyn Reader) -> Option<Known> {
    let attribute = |e: &Expr, module: &str, name: &str| matches!(e, Expr::Attribute(a) if a.attr.as_str() == name && reader.is_module(&a.value, module));
    match expr {
        _ if attribute(expr, "sys", "version_info") => Some(Known::Version),
        _ if attribute(expr, "sys", "platform") => Some(Known::Str(PLATFORM)),
        _ if attribute(expr, "os", "name") => Some(Known::Str(OS_NAME)),
        Expr::Subscript(s)
            if attribute(&s.value, "sys", "version_info")
                && matches!(s.slice.as_ref(), Expr::NumberLiteral(n)
                    if matches!(&n.value, ast::Number::Int(i) if i.as_u8() == Some(0))) =>
        {
            Some(Known::Major)
        }
        _ => None,
    }
}

/// `sys.platform.startswith("win")` / `.startswith(("win", "cygwin"))`.
fn platform_prefix(call: &ast::ExprCall, reader: &dyn Reader) -> Option<bool> {
    let Expr::Attribute(method) = call.func.as_ref() else {
        return None;
    };
    let is_platform = matches!(method.value.as_ref(), Expr::Attribute(a)
        if a.attr.as_str() == "platform" && reader.is_module(&a.value, "sys"));
    if !is_platform || !call.arguments.keywords.is_empty() {
        return None;
    }
    let prefixes: Vec<&str> = match &call.arguments.args[..] {
        [Expr::StringLiteral(s)] => vec![s.value.to_str()],
        [Expr::Tuple(t)] => t
            .elts
            .iter()
            .map(|e| match e {
                Expr::StringLiteral(s) => Some(s.value.to_str()),
                _ => None,
            })
            .collect::<Option<_>>()?,
        _ => return None,
    };
    match method.attr.as_str() {
        "startswith" => Some(prefixes.iter().any(|p| PLATFORM.starts_with(p))),
        "endswith" => Some(prefixes.iter().any(|p| PLATFORM.ends_with(p))),
        _ => None,
    }
}

/// `hasattr(os, "fork")` (true on every worker), `hasattr(os, "startfile")` or
/// `hasattr(sys, "real_prefix")` (false).
fn module_hasattr(call: &ast::ExprCall, reader: &dyn Reader) -> Option<bool> {
    let ([module, Expr::StringLiteral(name)], true) =
        (&call.arguments.args[..], call.arguments.keywords.is_empty())
    else {
        return None;
    };
    if !reader.is_builtin(&call.func, "hasattr") {
        return None;
    }
    let name = name.value.to_str();
    if reader.is_module(module, "os") {
        if LINUX_OS_FUNCTIONS.contains(&name) {
            return Some(true);
        }
        if WINDOWS_OS_FUNCTIONS.contains(&name) {
            return Some(false);
        }
    }
    if reader.is_module(module, "sys") && ABSENT_SYS_ATTRIBUTES.contains(&name) {
        return Some(false);
    }
    None
}

fn int(expr: &Expr) -> Option<u64> {
    match expr {
        Expr::NumberLiteral(n) => match &n.value {
            ast::Number::Int(i) => i.as_u64(),
            _ => None,
        },
        _ => None,
    }
}

/// `a op b` as `b op' a`.
fn flip(op: CmpOp) -> Option<CmpOp> {
    Some(match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::LtE => CmpOp::GtE,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::GtE => CmpOp::LtE,
        CmpOp::Eq => CmpOp::Eq,
        CmpOp::NotEq => CmpOp::NotEq,
        _ => return None,
    })
}

/// The index's reader: modules by spelling (`sys.platform` is `sys`'s), no names.
pub struct Spelling;

impl Reader for Spelling {
    fn is_module(&self, expr: &Expr, module: &str) -> bool {
        matches!(expr, Expr::Name(n) if n.id.as_str() == module)
    }

    fn fixed_name(&self, _: &str) -> Option<bool> {
        None
    }

    fn is_builtin(&self, expr: &Expr, name: &str) -> bool {
        matches!(expr, Expr::Name(n) if n.id.as_str() == name)
    }
}
