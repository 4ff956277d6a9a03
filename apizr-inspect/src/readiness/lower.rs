//! TypeSpec lowering of annotations that classified as precise or "any"
//! (codes ⊆ {READY-007}); used for TypedDict fields. Proven TypedDict names are inlined.

use apizr_ir::{TypeKind, TypeSpec, Value};
use ruff_python_ast::{Expr, Number, Operator, UnaryOp};

use super::inputs::{Context, members};

/// The TypedDict shape bounds (the reference's limits): nodes below the root and edges from
/// the root.
pub const MAX_NODES: usize = 4096;
pub const MAX_DEPTH: usize = 32;

fn spec(kind: TypeKind, items: Vec<TypeSpec>, variadic: bool) -> TypeSpec {
    TypeSpec {
        items,
        kind,
        values: vec![],
        variadic,
        fields: None,
        python: None,
    }
}

fn any() -> TypeSpec {
    TypeSpec::simple(TypeKind::Any)
}

impl Context<'_> {
    pub fn lower(&self, expr: &Expr) -> TypeSpec {
        match expr {
            Expr::NoneLiteral(_) => return TypeSpec::simple(TypeKind::Null),
            // Readiness v2: a forward reference lowers as the expression it spells.
            Expr::StringLiteral(s) if let Some(parsed) = self.forward(s) => {
                return self.inside_forward(|| self.lower(parsed.expr()));
            }
            Expr::BinOp(b) if b.op == Operator::BitOr => {
                return spec(
                    TypeKind::Union,
                    vec![self.lower(&b.left), self.lower(&b.right)],
                    false,
                );
            }
            Expr::Name(name) => {
                if let Some(Some(shape)) = self.candidates.get(name.id.as_str()) {
                    // Inlining is the only amplification: stop copying once the bound is
                    // exceeded (the caller then refuses the shape by its size).
                    let total = self.inlined.get() + shape_size(shape).0 + 1;
                    self.inlined.set(total);
                    if total > MAX_NODES {
                        return any();
                    }
                    return (*shape).clone();
                }
                let alias = self.aliases.get(name.id.as_str()).map(|a| &a.spec);
                if let Some(shape) = self
                    .classes
                    .get(name.id.as_str())
                    .and_then(|c| c.ok())
                    .or(alias)
                {
                    let total = self.inlined.get() + shape_size(shape).0 + 1;
                    self.inlined.set(total);
                    if total > MAX_NODES {
                        return any();
                    }
                    return (*shape).clone();
                }
            }
            _ => {}
        }
        let (base, slice) = match expr {
            Expr::Subscript(s) => (s.value.as_ref(), Some(s.slice.as_ref())),
            other => (other, None),
        };
        let resolved = self.resolve(base).unwrap_or_default();
        let Some(slice) = slice else {
            return match resolved.as_str() {
                "int" => TypeSpec::simple(TypeKind::Int),
                "str" => TypeSpec::simple(TypeKind::Str),
                "float" => TypeSpec::simple(TypeKind::Float),
                "bool" => TypeSpec::simple(TypeKind::Bool),
                "bytes" if self.v2 => TypeSpec::simple(TypeKind::Bytes),
                "bytearray" if self.v2 => TypeSpec::simple(TypeKind::Bytearray),
                "list" | "List" => spec(TypeKind::List, vec![any()], false),
                "dict" | "Dict" => spec(TypeKind::Dict, vec![any()], false),
                "set" | "Set" => spec(TypeKind::Set, vec![any()], false),
                "tuple" | "Tuple" => spec(TypeKind::Tuple, vec![any()], true),
                spelled if self.v2 => {
                    super::temporal::kind(spelled).map_or_else(any, TypeSpec::simple)
                }
                _ => any(),
            };
        };
        let members = members(slice);
        let lowered = |items: &[&Expr]| items.iter().map(|m| self.lower(m)).collect::<Vec<_>>();
        match resolved.as_str() {
            "list" | "List" => spec(TypeKind::List, lowered(&members), false),
            "set" | "Set" => spec(TypeKind::Set, lowered(&members), false),
            "frozenset" if self.v2 => spec(TypeKind::Frozenset, lowered(&members), false),
            "dict" | "Dict" => spec(
                TypeKind::Dict,
                lowered(members.get(1..).unwrap_or(&[])),
                false,
            ),
            "tuple" | "Tuple" => match members.as_slice() {
                [item, Expr::EllipsisLiteral(_)] => spec(TypeKind::Tuple, lowered(&[item]), true),
                all => spec(TypeKind::Tuple, lowered(all), false),
            },
            "Union" => spec(TypeKind::Union, lowered(&members), false),
            "Optional" => {
                let mut items = lowered(&members);
                items.push(TypeSpec::simple(TypeKind::Null));
                spec(TypeKind::Union, items, false)
            }
            "Literal" => TypeSpec {
                values: members.iter().filter_map(|m| literal_value(m)).collect(),
                ..TypeSpec::simple(TypeKind::Literal)
            },
            "Annotated" => members.first().map_or_else(any, |inner| self.lower(inner)),
            _ => any(),
        }
    }
}

/// The JSON value of a scalar `Literal[...]` member (signs applied).
pub fn literal_value(expr: &Expr) -> Option<Value> {
    match expr {
        Expr::NoneLiteral(_) => Some(Value::Null),
        Expr::BooleanLiteral(b) => Some(Value::Bool(b.value)),
        Expr::StringLiteral(s) => Some(Value::Str(s.value.to_str().to_string())),
        Expr::NumberLiteral(n) => number_value(&n.value, false),
        Expr::UnaryOp(u) => match (u.op, u.operand.as_ref()) {
            (UnaryOp::USub, Expr::NumberLiteral(n)) => number_value(&n.value, true),
            (UnaryOp::UAdd, Expr::NumberLiteral(n)) => number_value(&n.value, false),
            _ => None,
        },
        _ => None,
    }
}

fn number_value(number: &Number, negate: bool) -> Option<Value> {
    match number {
        Number::Float(f) => Some(Value::Float(if negate { -f } else { *f })),
        Number::Int(i) => match i.as_i64() {
            Some(v) if negate => Some(Value::Int(-v)),
            Some(v) => Some(Value::Int(v)),
            None => {
                let digits = big_decimal(&i.to_string())?;
                Some(if negate && digits != "0" {
                    Value::BigInt(format!("-{digits}"))
                } else {
                    Value::BigInt(digits)
                })
            }
        },
        Number::Complex { .. } => None,
    }
}

/// Decimal digits of a big integer token (`0x…`, `0o…`, `0b…`, underscores allowed).
fn big_decimal(token: &str) -> Option<String> {
    let clean: String = token.chars().filter(|c| *c != '_').collect();
    let lower = clean.to_ascii_lowercase();
    let (radix, body) = match lower.get(..2) {
        Some("0x") => (16, &lower[2..]),
        Some("0o") => (8, &lower[2..]),
        Some("0b") => (2, &lower[2..]),
        _ => (10, lower.as_str()),
    };
    if radix == 10 {
        let trimmed = body.trim_start_matches('0');
        return Some(if trimmed.is_empty() {
            "0".into()
        } else {
            trimmed.into()
        });
    }
    // Schoolbook base conversion into little-endian base-10^9 limbs.
    let mut limbs: Vec<u64> = vec![0];
    for c in body.chars() {
        let mut carry = u64::from(c.to_digit(radix)?);
        for limb in limbs.iter_mut() {
            let v = *limb * u64::from(radix) + carry;
            *limb = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push(carry % 1_000_000_000);
            carry /= 1_000_000_000;
        }
    }
    let mut out = String::new();
    for (i, limb) in limbs.iter().rev().enumerate() {
        if i == 0 {
            out.push_str(&limb.to_string());
        } else {
            out.push_str(&format!("{limb:09}"));
        }
    }
    Some(out)
}

/// Nodes below the root, and the deepest edge count from the root.
pub fn shape_size(spec: &TypeSpec) -> (usize, usize) {
    let children = spec
        .items
        .iter()
        .chain(spec.fields.iter().flatten().map(|f| &f.type_spec));
    let mut nodes = 0;
    let mut depth = 0;
    for child in children {
        let (n, d) = shape_size(child);
        nodes += n + 1;
        depth = depth.max(d + 1);
    }
    (nodes, depth)
}
