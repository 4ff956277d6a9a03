//! The Rust type a Python annotation maps to by default: the reverse of [`super::types`],
//! used in error hints ("declare it as `tax: Option<f64>`") and by anything that writes
//! bindings for a contract. Every suggestion passes [`super::types::check`] (tested).

use apizr_ir::{TypeKind, TypeSpec, Value};

/// The suggested Rust type; `optional` wraps it in `Option` (a parameter with a default).
pub fn rust_type(spec: &TypeSpec, optional: bool) -> String {
    let inner = plain(spec);
    if optional && !inner.starts_with("Option<") {
        format!("Option<{inner}>")
    } else {
        inner
    }
}

fn item(spec: &TypeSpec, i: usize) -> String {
    spec.items
        .get(i)
        .map_or_else(|| "serde_json::Value".to_string(), plain)
}

fn plain(spec: &TypeSpec) -> String {
    match spec.kind {
        TypeKind::Any | TypeKind::Object => "serde_json::Value".into(),
        TypeKind::Int => "i64".into(),
        TypeKind::Float => "f64".into(),
        TypeKind::Str => "String".into(),
        TypeKind::Bool => "bool".into(),
        TypeKind::Null => "()".into(),
        TypeKind::List | TypeKind::Set => format!("Vec<{}>", item(spec, 0)),
        TypeKind::Tuple if spec.variadic => format!("Vec<{}>", item(spec, 0)),
        TypeKind::Tuple => {
            let items: Vec<String> = spec.items.iter().map(plain).collect();
            match items.as_slice() {
                [one] => format!("({one},)"),
                _ => format!("({})", items.join(", ")),
            }
        }
        TypeKind::Dict => format!("std::collections::BTreeMap<String, {}>", item(spec, 0)),
        TypeKind::Union => {
            let rest: Vec<&TypeSpec> = spec
                .items
                .iter()
                .filter(|i| i.kind != TypeKind::Null)
                .collect();
            let nullable = rest.len() < spec.items.len();
            let inner = match rest.as_slice() {
                [one] => plain(one),
                _ => "serde_json::Value".into(),
            };
            if nullable && inner != "serde_json::Value" {
                format!("Option<{inner}>")
            } else {
                inner
            }
        }
        TypeKind::Literal => {
            let all = |f: fn(&Value) -> bool| spec.values.iter().all(f);
            if all(|v| matches!(v, Value::Str(_))) {
                "String".into()
            } else if all(|v| matches!(v, Value::Int(_))) {
                "i64".into()
            } else if all(|v| matches!(v, Value::Bool(_))) {
                "bool".into()
            } else {
                "serde_json::Value".into()
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::types::{Side, check};
    use super::*;

    fn spec(kind: TypeKind, items: Vec<TypeSpec>) -> TypeSpec {
        TypeSpec {
            items,
            ..TypeSpec::simple(kind)
        }
    }

    #[test]
    fn suggestions_pass_the_check() {
        let int = TypeSpec::simple(TypeKind::Int);
        let null = TypeSpec::simple(TypeKind::Null);
        let cases = [
            (int.clone(), "i64"),
            (
                spec(TypeKind::Union, vec![int.clone(), null.clone()]),
                "Option<i64>",
            ),
            (
                spec(
                    TypeKind::Dict,
                    vec![spec(TypeKind::List, vec![int.clone()])],
                ),
                "std::collections::BTreeMap<String, Vec<i64>>",
            ),
            (spec(TypeKind::Tuple, vec![int.clone()]), "(i64,)"),
            (
                spec(
                    TypeKind::Union,
                    vec![int.clone(), TypeSpec::simple(TypeKind::Str)],
                ),
                "serde_json::Value",
            ),
            (
                TypeSpec {
                    values: vec![Value::Str("a".into())],
                    ..TypeSpec::simple(TypeKind::Literal)
                },
                "String",
            ),
        ];
        for (spec, expected) in cases {
            let text = rust_type(&spec, false);
            assert_eq!(text, expected);
            let ty: syn::Type = syn::parse_str(&text).unwrap();
            assert!(check(&ty, &spec, Side::Result).is_ok(), "{text}");
            assert!(check(&ty, &spec, Side::Argument).is_ok(), "{text}");
        }
        assert_eq!(rust_type(&int, true), "Option<i64>");
    }
}
