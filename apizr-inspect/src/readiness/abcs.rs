//! Readiness v2: abstract collections as the concrete type the worker builds.
//!
//! A JSON array arrives in the worker as a `list`, a JSON object as a `dict`, and a `set`
//! kind as a `set` (members checked hashable and unique in Rust). A parameter annotated with
//! an abstract collection that the concrete type is an instance of accepts that value exactly
//! as it accepts `list[T]` / `set[T]` / `dict[str, T]`, so the annotation is classified and
//! lowered as that spelling. What the concrete value is not an instance of (`Iterator`), and
//! what the table leaves out (`Reversible`, `Container`, `FrozenSet`), stays READY-013.

use ruff_python_ast::Expr;

use super::inputs::Context;
use crate::facts::{BindingKind, View};

/// (name, concrete spelling) for `typing`.
const TYPING: [(&str, &str); 8] = [
    ("Sequence", "list"),
    ("MutableSequence", "list"),
    ("Iterable", "list"),
    ("Collection", "list"),
    ("AbstractSet", "set"),
    ("MutableSet", "set"),
    ("Mapping", "dict"),
    ("MutableMapping", "dict"),
];

/// (name, concrete spelling) for `collections.abc` (its `Set` is the abstract set).
const COLLECTIONS_ABC: [(&str, &str); 8] = [
    ("Sequence", "list"),
    ("MutableSequence", "list"),
    ("Iterable", "list"),
    ("Collection", "list"),
    ("Set", "set"),
    ("MutableSet", "set"),
    ("Mapping", "dict"),
    ("MutableMapping", "dict"),
];

fn lookup(table: &[(&str, &'static str)], name: &str) -> Option<&'static str> {
    table.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
}

impl Context<'_> {
    /// The concrete spelling (`list`, `set`, `dict`) of an abstract collection spelled through
    /// an import that binds it once, directly and unrenamed: `from typing import N`,
    /// `from collections.abc import N`, `<m>.N` with `import typing [as m]` or
    /// `import collections.abc as m`, or `collections.abc.N` with `import collections.abc`.
    /// Unlike v1's typing names, an unbound spelling is never taken literally (it would be a
    /// `NameError` when the `def` runs).
    pub(super) fn abc_spelling(&self, expr: &Expr) -> Option<&'static str> {
        let facts = self.facts;
        let bound_by = |name: &str, accept: &dyn Fn(&BindingKind) -> bool| {
            !facts.is_mutated(name)
                && facts
                    .unique_binding(name, View::Namespace)
                    .is_some_and(|(_, b)| facts.is_direct(b) && accept(&b.kind))
        };
        let cabc_alias = |k: &BindingKind| {
            matches!(
                k,
                BindingKind::Import {
                    module: "collections.abc",
                    renamed: true
                }
            )
        };
        match expr {
            Expr::Name(name) => {
                let id = name.id.as_str();
                let typing = lookup(&TYPING, id)
                    .filter(|_| bound_by(id, &|k| k.is_from_import("typing", id)));
                typing.or_else(|| {
                    lookup(&COLLECTIONS_ABC, id)
                        .filter(|_| bound_by(id, &|k| k.is_from_import("collections.abc", id)))
                })
            }
            Expr::Attribute(attr) => {
                let n = attr.attr.as_str();
                match attr.value.as_ref() {
                    Expr::Name(root) => {
                        let root = root.id.as_str();
                        let typing = lookup(&TYPING, n)
                            .filter(|_| bound_by(root, &|k| k.is_import_of("typing")));
                        typing.or_else(|| {
                            lookup(&COLLECTIONS_ABC, n).filter(|_| bound_by(root, &cabc_alias))
                        })
                    }
                    Expr::Attribute(inner) if inner.attr.as_str() == "abc" => {
                        let Expr::Name(root) = inner.value.as_ref() else {
                            return None;
                        };
                        let plain = |k: &BindingKind| {
                            matches!(
                                k,
                                BindingKind::Import {
                                    module: "collections.abc",
                                    renamed: false
                                }
                            )
                        };
                        lookup(&COLLECTIONS_ABC, n)
                            .filter(|_| root.id.as_str() == "collections")
                            .filter(|_| bound_by("collections", &plain))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
}
