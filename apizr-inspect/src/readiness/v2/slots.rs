//! `__slots__` in a class body: `type()` checks it when the class statement runs, and raises
//! at import when it does not fit.
//!
//! * the value is a string or a tuple/list display of strings (anything else may not be an
//!   iterable of strings: `TypeError`), each an identifier (`TypeError: __slots__ must be
//!   identifiers`), bound by one plain assignment;
//! * no slot name is bound elsewhere in the class body — a method, a property, a class
//!   variable, a field default (`ValueError: 'x' in __slots__ conflicts with class variable`);
//! * no slot name starts with `__`: `__dict__` and `__weakref__` are refused when a base
//!   already brings them (`TypeError`) and private names are mangled before the check;
//! * nonempty slots only when no base is variable-sized — `int`, `bytes`, `tuple` (so a named
//!   tuple), an enum, or a class with such a base ([`ClassInfo::variable_size`]):
//!   `TypeError: nonempty __slots__ not supported for subtype of 'int'`.

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;

use super::env::{ClassInfo, ClassKind, Meaning};
use super::{Prover, Unproved, Why};

type Proof<T> = Result<T, Unproved>;

impl Prover<'_> {
    /// Check the class's `__slots__`; whether it has some.
    pub fn slots(&self, class: &ast::StmtClassDef, kind: ClassKind) -> Proof<bool> {
        let mut bound = Vec::new();
        super::stmt::collect_bound(&class.body, &mut bound);
        if !bound.contains(&"__slots__") {
            return Ok(false);
        }
        let assignments: Vec<&Stmt> = class
            .body
            .iter()
            .filter(|stmt| {
                let mut names = Vec::new();
                super::stmt::collect_bound(std::slice::from_ref(*stmt), &mut names);
                names.contains(&"__slots__")
            })
            .collect();
        let [Stmt::Assign(assign)] = assignments.as_slice() else {
            let at = assignments.last().map_or(class.name.range(), |s| s.range());
            return Err(Unproved::at(at, Why::ClassBody));
        };
        let fail = || Err(Unproved::at(assign.value.range(), Why::ClassBody));
        let items: Vec<&Expr> = match assign.value.as_ref() {
            Expr::StringLiteral(_) => vec![assign.value.as_ref()],
            Expr::Tuple(t) => t.elts.iter().collect(),
            Expr::List(l) => l.elts.iter().collect(),
            _ => return fail(),
        };
        for item in &items {
            let Expr::StringLiteral(s) = item else {
                return fail();
            };
            let name = s.value.to_str();
            if !is_identifier(name) || name.starts_with("__") || bound.contains(&name) {
                return fail();
            }
        }
        if !items.is_empty() && self.variable_size(class, kind) {
            return fail();
        }
        Ok(true)
    }

    /// Instances of the class hold a variable number of items (`int`, `bytes`, `tuple`
    /// bases; enums counted too).
    pub fn variable_size(&self, class: &ast::StmtClassDef, kind: ClassKind) -> bool {
        if matches!(kind, ClassKind::NamedTuple | ClassKind::Enum) {
            return true;
        }
        class.arguments.as_ref().is_some_and(|arguments| {
            arguments.args.iter().any(|base| match self.value(base) {
                Ok(Meaning::Qualified(q)) => {
                    matches!(
                        q.as_str(),
                        "builtins.int" | "builtins.bytes" | "builtins.tuple" | "typing.NamedTuple"
                    ) || q.starts_with("enum.")
                        || super::stdlib_classes::class(&q).is_some_and(|c| c.variable)
                }
                Ok(Meaning::Class(ClassInfo { variable_size, .. })) => variable_size,
                // A typing alias of a variable-sized origin (`typing.Tuple[int, int]`).
                Ok(Meaning::TypeLike) => match base {
                    ast::Expr::Subscript(sub) => matches!(
                        self.value(&sub.value),
                        Ok(Meaning::Qualified(q)) if super::stdlib_classes::alias_origin(&q)
                            .is_some_and(|c| c.variable)
                    ),
                    _ => false,
                },
                _ => false,
            })
        })
    }
}

/// An ASCII Python identifier (a non-ASCII one is valid Python but not checked here).
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
