//! Input classification (contract 3.6): the reason codes an annotation implies (007, 012, 013,
//! 017, 019), and the base-spelling resolution rules shared with TypedDict proofs and lowering.

use std::cell::Cell;
use std::collections::HashMap;

use apizr_ir::{ReasonCode, TypeSpec};
use ruff_python_ast::{self as ast, Expr, Number, Operator, UnaryOp};

use crate::facts::{ModuleFacts, View};

/// The typing names the classifier understands.
pub const TYPING_NAMES: [&str; 13] = [
    "Any",
    "List",
    "Dict",
    "Tuple",
    "Set",
    "Union",
    "Optional",
    "Literal",
    "Annotated",
    "Callable",
    "TypedDict",
    "Required",
    "NotRequired",
];

pub fn is_typing_name(name: &str) -> bool {
    TYPING_NAMES.contains(&name)
}

/// What the classifier knows: module facts plus the TypedDict candidates visible from here
/// (`Some(shape)` when usable as a proven shape, `None` when refused or not yet proven).
pub struct Context<'a> {
    pub facts: &'a ModuleFacts<'a>,
    pub candidates: HashMap<String, Option<&'a TypeSpec>>,
    /// Nodes copied so far by inlining proven shapes (see [`super::lower`]).
    pub inlined: Cell<usize>,
}

impl<'a> Context<'a> {
    pub fn new(
        facts: &'a ModuleFacts<'a>,
        candidates: HashMap<String, Option<&'a TypeSpec>>,
    ) -> Self {
        Context {
            facts,
            candidates,
            inlined: Cell::new(0),
        }
    }
}

impl Context<'_> {
    /// Step 5: the spelling a base expression resolves to, or `None` when unresolvable: a name
    /// never bound in the module is taken literally; a name bound once by a direct
    /// `from typing import N` (N a typing name, not renamed) is N; `<m>.N` is N when `m` is
    /// `typing` unbound or bound once by a direct `import typing [as m]`. A name that is the
    /// root of an attribute/subscript store resolves to nothing.
    pub fn resolve(&self, expr: &Expr) -> Option<String> {
        let facts = self.facts;
        match expr {
            Expr::Name(name) => {
                let id = name.id.as_str();
                if facts.is_mutated(id) {
                    return None;
                }
                if !facts.is_bound(id, View::Namespace) {
                    return Some(id.to_string());
                }
                let (_, binding) = facts.unique_binding(id, View::Namespace)?;
                (binding.kind.is_from_import("typing", id)
                    && is_typing_name(id)
                    && facts.is_direct(binding))
                .then(|| id.to_string())
            }
            Expr::Attribute(attr) => {
                let Expr::Name(root) = attr.value.as_ref() else {
                    return None;
                };
                let (root, n) = (root.id.as_str(), attr.attr.as_str());
                if !is_typing_name(n) || facts.is_mutated(root) {
                    return None;
                }
                if !facts.is_bound(root, View::Namespace) {
                    return (root == "typing").then(|| n.to_string());
                }
                let (_, binding) = facts.unique_binding(root, View::Namespace)?;
                (binding.kind.is_import_of("typing") && facts.is_direct(binding))
                    .then(|| n.to_string())
            }
            _ => None,
        }
    }

    /// The reason codes of one annotation (duplicates allowed; callers de-duplicate).
    pub fn codes(&self, expr: &Expr) -> Vec<ReasonCode> {
        let mut out = Vec::new();
        self.collect(expr, &mut out);
        out
    }

    fn collect(&self, expr: &Expr, out: &mut Vec<ReasonCode>) {
        use ReasonCode::*;
        match expr {
            Expr::NoneLiteral(_) => return,
            Expr::StringLiteral(_)
            | Expr::BytesLiteral(_)
            | Expr::NumberLiteral(_)
            | Expr::BooleanLiteral(_)
            | Expr::EllipsisLiteral(_) => return out.push(R013),
            Expr::BinOp(b) if b.op == Operator::BitOr => {
                self.collect(&b.left, out);
                self.collect(&b.right, out);
                return;
            }
            Expr::Name(name) => {
                if let Some(shape) = self.candidates.get(name.id.as_str()) {
                    if shape.is_none() {
                        out.push(R019);
                    }
                    return;
                }
            }
            _ => {}
        }
        let (base, slice) = match expr {
            Expr::Subscript(s) => (s.value.as_ref(), Some(s.slice.as_ref())),
            other => (other, None),
        };
        let resolved = self.resolve(base);
        let spelled = resolved.as_deref().unwrap_or("");
        if matches!(spelled, "Callable" | "bytes") {
            return out.push(R012);
        }
        let Some(slice) = slice else {
            match spelled {
                "str" | "int" | "float" | "bool" => {}
                "Any" | "list" | "dict" | "tuple" | "set" | "List" | "Dict" | "Tuple" | "Set" => {
                    out.push(R007)
                }
                _ => out.push(R013),
            }
            return;
        };
        let members = members(slice);
        match spelled {
            "Literal" => {
                if !members.iter().all(|m| is_json_scalar(m)) {
                    out.push(R012);
                }
            }
            "Annotated" => match members.first() {
                Some(inner) if members.len() >= 2 => {
                    self.collect(inner, out);
                    out.push(R017);
                }
                _ => out.push(R013),
            },
            "Union" | "Optional" => {
                if members.is_empty() || (spelled == "Optional" && members.len() != 1) {
                    return out.push(R013);
                }
                members.iter().for_each(|m| self.collect(m, out));
            }
            "list" | "List" | "set" | "Set" => {
                if members.len() != 1 {
                    return out.push(R013);
                }
                members.iter().for_each(|m| self.collect(m, out));
            }
            "dict" | "Dict" => {
                let [key, value] = members.as_slice() else {
                    return out.push(R013);
                };
                if self.resolve(key).as_deref() != Some("str") {
                    return out.push(R012);
                }
                self.collect(value, out);
            }
            "tuple" | "Tuple" => match members.as_slice() {
                [item, Expr::EllipsisLiteral(_)] => self.collect(item, out),
                all => all.iter().for_each(|m| self.collect(m, out)),
            },
            _ => out.push(R013),
        }
    }
}

/// Subscript members: the elements of a tuple slice, else the slice itself.
pub fn members(slice: &Expr) -> Vec<&Expr> {
    match slice {
        Expr::Tuple(t) => t.elts.iter().collect(),
        other => vec![other],
    }
}

/// A `Literal[...]` member that is a JSON scalar (None, bool, int, str, finite float, or a
/// signed int/float).
pub fn is_json_scalar(expr: &Expr) -> bool {
    match expr {
        Expr::NoneLiteral(_) | Expr::BooleanLiteral(_) | Expr::StringLiteral(_) => true,
        Expr::NumberLiteral(n) => is_finite_real(n),
        Expr::UnaryOp(u) if matches!(u.op, UnaryOp::USub | UnaryOp::UAdd) => {
            matches!(u.operand.as_ref(), Expr::NumberLiteral(n) if is_finite_real(n))
        }
        _ => false,
    }
}

fn is_finite_real(n: &ast::ExprNumberLiteral) -> bool {
    match &n.value {
        Number::Int(_) => true,
        Number::Float(f) => f.is_finite(),
        Number::Complex { .. } => false,
    }
}
