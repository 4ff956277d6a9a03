//! `sys.version_info` tests whose value is the same on every Python 3 (workers run CPython 3):
//! the arms they guard that never run are skipped by [`Prover::branch`](super::stmt), like a
//! `TYPE_CHECKING` body — their names stay unbound, their imports never happen.

use ruff_python_ast::{self as ast, CmpOp, Expr};

use super::Prover;
use super::env::Meaning;

impl Prover<'_> {
    /// The value of a `sys.version_info` comparison when it is the same on every Python 3
    /// (workers run CPython 3): `sys.version_info < (3,)` / `< (2, 7)` / `>= (4,)` are false,
    /// `sys.version_info[0] == 2` is false and `== 3` true. `None` for any other test
    /// (`>= (3, 9)` depends on the minor version). Only `sys.version_info` read through the
    /// module `sys` counts (a name `version_info` could be bound to anything).
    pub fn version_test(&self, test: &Expr) -> Option<bool> {
        use std::cmp::Ordering;
        let Expr::Compare(cmp) = test else {
            return None;
        };
        let ([op], [right]) = (&cmp.ops[..], &cmp.comparators[..]) else {
            return None;
        };
        // `left op right` with the version on the left (`(3, 4) <= v` is `v >= (3, 4)`).
        let (version, literal, op) = match (self.version_of(&cmp.left), self.version_of(right)) {
            (Some(v), None) => (v, right, *op),
            (None, Some(v)) => (v, cmp.left.as_ref(), flip(*op)?),
            _ => return None,
        };
        let ints = |e: &Expr| match e {
            Expr::NumberLiteral(n) => match &n.value {
                ast::Number::Int(i) => i.as_u64(),
                _ => None,
            },
            _ => None,
        };
        // How the running version compares with the literal, on every Python 3.
        let ordering = match version {
            Version::Tuple => {
                let Expr::Tuple(t) = literal else {
                    return None;
                };
                let first = ints(t.elts.first()?)?;
                if t.elts.iter().any(|e| ints(e).is_none()) {
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
            Version::Major => 3u64.cmp(&ints(literal)?),
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

    /// `sys.version_info` (the whole tuple) or `sys.version_info[0]` (the major version).
    fn version_of(&self, expr: &Expr) -> Option<Version> {
        let is_sys_version = |e: &Expr| {
            matches!(e, Expr::Attribute(a) if a.attr.as_str() == "version_info"
                && self.value(&a.value) == Ok(Meaning::Module("sys".into())))
        };
        match expr {
            _ if is_sys_version(expr) => Some(Version::Tuple),
            Expr::Subscript(s)
                if is_sys_version(&s.value)
                    && matches!(s.slice.as_ref(), Expr::NumberLiteral(n)
                        if matches!(&n.value, ast::Number::Int(i) if i.as_u8() == Some(0))) =>
            {
                Some(Version::Major)
            }
            _ => None,
        }
    }
}

/// What a version test reads: the whole `sys.version_info` or its major version.
#[derive(Clone, Copy)]
enum Version {
    Tuple,
    Major,
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
