//! Overload markers: `typing.overload` / `typing_extensions.overload` stubs of a function.
//!
//! A decorator is *marker-shaped* when it is the name `overload`, a name bound by an import of
//! `typing.overload`, or any attribute access ending in `.overload`. A marker-shaped decorator is a
//! real marker only when its root name has exactly one module binding, which is a direct module
//! statement before the function and of the right import kind (`from typing import overload [as o]`
//! for names, `import typing [as t]` for `t.overload`). Otherwise it is *ambiguous*, which makes the
//! whole group unassociable (CAP-004). Observed against the oracle: `from typing_extensions import
//! overload`, a relative `typing`, `import typing.x as t` and deeper attribute chains are ambiguous;
//! `from foo import overload as o` used as `@o` is just an ordinary decorator.

use ruff_python_ast::Expr;
use ruff_text_size::TextSize;

use crate::facts::{Binding, ModuleFacts, View};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// Not an overload marker at all.
    None,
    /// A provable `typing.overload`.
    Marker,
    /// Looks like an overload marker but its binding cannot be proven.
    Ambiguous,
}

fn is_typing_overload_import(binding: &Binding) -> bool {
    binding.kind.is_from_import("typing", "overload")
}

fn is_typing_module_import(binding: &Binding) -> bool {
    binding.kind.is_import_of("typing")
}

/// Classify one decorator expression of a definition starting at `def_start`.
pub fn classify(decorator: &Expr, facts: &ModuleFacts, def_start: TextSize) -> Marker {
    match decorator {
        Expr::Name(name) => {
            let id = name.id.as_str();
            let shaped = id == "overload"
                || facts
                    .bindings_of(id, View::Provenance)
                    .any(|(_, b)| is_typing_overload_import(b));
            if !shaped {
                return Marker::None;
            }
            match facts.unique_earlier_binding(id, def_start) {
                Some(b) if is_typing_overload_import(b) => Marker::Marker,
                _ => Marker::Ambiguous,
            }
        }
        Expr::Attribute(attribute) if attribute.attr.as_str() == "overload" => {
            let Expr::Name(root) = attribute.value.as_ref() else {
                return Marker::Ambiguous;
            };
            match facts.unique_earlier_binding(root.id.as_str(), def_start) {
                Some(b) if is_typing_module_import(b) => Marker::Marker,
                _ => Marker::Ambiguous,
            }
        }
        _ => Marker::None,
    }
}
