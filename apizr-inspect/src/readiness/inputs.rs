//! Input classification: the reason codes an annotation implies (007, 012, 013,
//! 017, 019), and the base-spelling resolution rules shared with TypedDict proofs and lowering.

use std::cell::Cell;
use std::collections::HashMap;

use apizr_ir::{ReasonCode, TypeSpec};
use ruff_python_ast::{self as ast, Expr, Number, Operator, UnaryOp};
use ruff_text_size::{Ranged, TextRange};

use super::evidence::{TypeCause, Unresolved};
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

/// Readiness v2: modules whose [`TYPING_NAMES`] are typing's (`typing_extensions` re-exports
/// them with the same meaning for annotations).
const TYPING_MODULES: [&str; 2] = ["typing", "typing_extensions"];

pub fn is_typing_name(name: &str) -> bool {
    TYPING_NAMES.contains(&name)
}

/// What the classifier knows: module facts plus the TypedDict candidates visible from here
/// (`Some(shape)` when usable as a proven shape, `None` when refused or not yet proven).
pub struct Context<'a> {
    pub facts: &'a ModuleFacts<'a>,
    pub candidates: HashMap<String, Option<&'a TypeSpec>>,
    /// Readiness v2 only: the module's Enum/dataclass/NamedTuple classes declared before here
    /// ([`super::classes`]), with their shape or why they are refused.
    pub classes: HashMap<String, Result<&'a TypeSpec, &'a str>>,
    /// Readiness v2 only: the module's type aliases declared before here ([`super::aliases`]).
    pub aliases: HashMap<String, &'a super::aliases::AliasCandidate>,
    /// Nodes copied so far by inlining proven shapes (see [`super::lower`]).
    pub inlined: Cell<usize>,
    /// Readiness v2: abstract collections resolve to the concrete type the worker builds
    /// ([`super::abcs`]) and `bytes`/`bytearray` are types.
    pub v2: bool,
    /// Classifying or lowering the expression of a forward reference ([`super::forward`]).
    pub in_forward: Cell<bool>,
}

impl<'a> Context<'a> {
    pub fn new(
        facts: &'a ModuleFacts<'a>,
        candidates: HashMap<String, Option<&'a TypeSpec>>,
    ) -> Self {
        Context {
            facts,
            candidates,
            classes: HashMap::new(),
            aliases: HashMap::new(),
            inlined: Cell::new(0),
            v2: false,
            in_forward: Cell::new(false),
        }
    }
}

impl Context<'_> {
    /// Step 5: the spelling a base expression resolves to, or `None` when unresolvable (see
    /// [`Context::resolve_or_why`]).
    pub fn resolve(&self, expr: &Expr) -> Option<String> {
        self.resolve_or_why(expr).ok()
    }

    /// A name never bound in the module is taken literally; a name bound once by a direct
    /// `from typing import N` (N a typing name, not renamed) is N; `<m>.N` is N when `m` is
    /// `typing` unbound or bound once by a direct `import typing [as m]`. A name that is the
    /// root of an attribute/subscript store resolves to nothing.
    pub fn resolve_or_why(&self, expr: &Expr) -> Result<String, Unresolved> {
        let facts = self.facts;
        if self.v2
            && let Some(concrete) = self.abc_spelling(expr)
        {
            return Ok(concrete.into());
        }
        if self.v2
            && let Some(temporal) = self.temporal_spelling(expr)
        {
            return Ok(temporal.into());
        }
        match expr {
            Expr::Name(name) => {
                let id = name.id.as_str();
                if facts.is_mutated(id) {
                    return Err(Unresolved::Mutated);
                }
                if !facts.is_bound(id, View::Namespace) {
                    return Ok(id.to_string());
                }
                let (binding_id, binding) = facts
                    .unique_binding(id, View::Namespace)
                    .ok_or(Unresolved::Rebound)?;
                let proven = is_typing_name(id)
                    && match self.v2 {
                        true => {
                            TYPING_MODULES
                                .iter()
                                .any(|m| binding.kind.is_from_import(m, id))
                                && self.names_a_type(binding)
                        }
                        false => {
                            binding.kind.is_from_import("typing", id) && facts.is_direct(binding)
                        }
                    };
                proven
                    .then(|| id.to_string())
                    .ok_or(Unresolved::Bound(binding_id))
            }
            Expr::Attribute(attr) => {
                let Expr::Name(root) = attr.value.as_ref() else {
                    return Err(Unresolved::Attribute);
                };
                let (root, n) = (root.id.as_str(), attr.attr.as_str());
                if !is_typing_name(n) {
                    return Err(Unresolved::Attribute);
                }
                if facts.is_mutated(root) {
                    return Err(Unresolved::Mutated);
                }
                if !facts.is_bound(root, View::Namespace) {
                    return (root == "typing")
                        .then(|| n.to_string())
                        .ok_or(Unresolved::Attribute);
                }
                let (binding_id, binding) = facts
                    .unique_binding(root, View::Namespace)
                    .ok_or(Unresolved::Rebound)?;
                let proven = match self.v2 {
                    true => {
                        TYPING_MODULES.iter().any(|m| binding.kind.is_import_of(m))
                            && self.names_a_type(binding)
                    }
                    false => binding.kind.is_import_of("typing") && facts.is_direct(binding),
                };
                proven
                    .then(|| n.to_string())
                    .ok_or(Unresolved::Bound(binding_id))
            }
            _ => Err(Unresolved::Expression),
        }
    }

    /// Readiness v2: an import binding that annotations may use to name a type — direct, or
    /// directly under `if TYPE_CHECKING:` (annotations are never evaluated by the worker, so
    /// an import that only the type checker runs names the same type).
    pub(super) fn names_a_type(&self, binding: &crate::facts::Binding) -> bool {
        let statement = self.facts.statement(binding.stmt);
        statement.is_direct() || super::aliases::in_type_checking(self.facts, statement)
    }

    /// The reason codes of one annotation (duplicates allowed; callers de-duplicate).
    pub fn codes(&self, expr: &Expr) -> Vec<ReasonCode> {
        self.findings(expr).into_iter().map(|f| f.code).collect()
    }

    /// The reason codes of one annotation with the sub-expression and cause of each.
    pub fn findings(&self, expr: &Expr) -> Vec<TypeFinding> {
        let mut out = Vec::new();
        self.collect(expr, &mut out);
        out
    }

    fn collect(&self, expr: &Expr, out: &mut Vec<TypeFinding>) {
        use ReasonCode::*;
        match expr {
            Expr::NoneLiteral(_) => return,
            Expr::StringLiteral(s) if let Some(parsed) = self.forward(s) => {
                return self.forward_findings(s, &parsed, out);
            }
            Expr::StringLiteral(_)
            | Expr::BytesLiteral(_)
            | Expr::NumberLiteral(_)
            | Expr::BooleanLiteral(_)
            | Expr::EllipsisLiteral(_) => return out.push(found(R013, expr, TypeCause::Constant)),
            Expr::BinOp(b) if b.op == Operator::BitOr => {
                self.collect(&b.left, out);
                self.collect(&b.right, out);
                return;
            }
            Expr::Name(name) => {
                if let Some(shape) = self.candidates.get(name.id.as_str()) {
                    if shape.is_none() {
                        out.push(found(R019, expr, TypeCause::RefusedTypedDict));
                    }
                    return;
                }
                if let Some(shape) = self.classes.get(name.id.as_str()) {
                    if shape.is_err() {
                        out.push(found(R013, expr, TypeCause::RefusedClass));
                    }
                    return;
                }
                if let Some(alias) = self.aliases.get(name.id.as_str()) {
                    return out.extend(alias.findings.iter().copied());
                }
            }
            _ => {}
        }
        let (base, slice) = match expr {
            Expr::Subscript(s) => (s.value.as_ref(), Some(s.slice.as_ref())),
            other => (other, None),
        };
        let resolved = self.resolve_or_why(base);
        let spelled = resolved.as_deref().unwrap_or("");
        let unknown = |generic: TypeCause| match &resolved {
            Err(why) => TypeCause::Unresolved(*why),
            Ok(_) => generic,
        };
        match spelled {
            "Callable" => return out.push(found(R012, expr, TypeCause::Callable)),
            // Readiness v2: `bytes`/`bytearray` are base64 JSON strings the worker decodes.
            "bytes" | "bytearray" if self.v2 && slice.is_none() => return,
            "bytes" => return out.push(found(R012, expr, TypeCause::Bytes)),
            // Readiness v2: `datetime` classes (`super::temporal`).
            spelled if slice.is_none() && super::temporal::kind(spelled).is_some() => return,
            _ => {}
        }
        let Some(slice) = slice else {
            match spelled {
                "str" | "int" | "float" | "bool" => {}
                "Any" | "list" | "dict" | "tuple" | "set" | "List" | "Dict" | "Tuple" | "Set" => {
                    out.push(found(R007, expr, TypeCause::AnyValue))
                }
                _ => out.push(found(R013, expr, unknown(TypeCause::UnknownType))),
            }
            return;
        };
        let members = members(slice);
        match spelled {
            "Literal" => {
                if let Some(member) = members.iter().find(|m| !is_json_scalar(m)) {
                    out.push(found(R012, member, TypeCause::NonScalarLiteral));
                }
            }
            "Annotated" => match members.first() {
                Some(inner) if members.len() >= 2 => {
                    self.collect(inner, out);
                    out.push(TypeFinding {
                        code: R017,
                        range: expr.range(),
                        cause: TypeCause::Annotated,
                    });
                }
                _ => out.push(found(R013, expr, TypeCause::Arity)),
            },
            "Union" | "Optional" => {
                if members.is_empty() || (spelled == "Optional" && members.len() != 1) {
                    return out.push(found(R013, expr, TypeCause::Arity));
                }
                members.iter().for_each(|m| self.collect(m, out));
            }
            // Readiness v2: `frozenset[T]` is a set the worker freezes (`TypeKind::Frozenset`).
            "list" | "List" | "set" | "Set" | "frozenset" if spelled != "frozenset" || self.v2 => {
                if members.len() != 1 {
                    return out.push(found(R013, expr, TypeCause::Arity));
                }
                members.iter().for_each(|m| self.collect(m, out));
                // Readiness v2: set members compare as Python does, which for `datetime`
                // values is not their JSON text (`super::temporal`).
                if self.v2
                    && matches!(spelled, "set" | "Set" | "frozenset")
                    && super::temporal::holds_temporal(&self.lower(members[0]))
                {
                    out.push(found(R013, expr, TypeCause::Temporal));
                }
            }
            "dict" | "Dict" => {
                let [key, value] = members.as_slice() else {
                    return out.push(found(R013, expr, TypeCause::Arity));
                };
                if self.resolve(key).as_deref() != Some("str") {
                    return out.push(found(R012, key, TypeCause::NonStringKey));
                }
                self.collect(value, out);
            }
            "tuple" | "Tuple" => match members.as_slice() {
                [item, Expr::EllipsisLiteral(_)] => self.collect(item, out),
                all => all.iter().for_each(|m| self.collect(m, out)),
            },
            _ => out.push(found(R013, expr, unknown(TypeCause::UnknownGeneric))),
        }
    }
}

fn found(code: ReasonCode, at: &Expr, cause: TypeCause) -> TypeFinding {
    TypeFinding {
        code,
        range: at.range(),
        cause,
    }
}

/// One code an annotation implies, with the sub-expression at fault and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeFinding {
    pub code: ReasonCode,
    pub range: TextRange,
    pub cause: TypeCause,
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
