//! The Rust type a Python annotation maps to by default: the reverse of [`super::types`],
//! used in error hints ("declare it as `tax: Option<f64>`") and by the generator of
//! bindings ([`crate::bindings`], what `apizr generate` writes). One mapping for both, so a
//! generated binding is exactly what the checker accepts: every suggestion passes
//! [`super::types::check`] (tested here, and end to end in `bindings`).
//!
//! A TypedDict (`object` with fields) is `serde_json::Value` in a hint; the generator passes
//! [`Structs`] and gets a serde struct of its own instead.

use std::collections::BTreeSet;

use apizr_ir::{TypeKind, TypeSpec, Value};

/// The suggested Rust type; `optional` wraps it in `Option` (a parameter with a default).
pub fn rust_type(spec: &TypeSpec, optional: bool) -> String {
    wrap(plain(spec, &mut None, ""), optional)
}

/// As [`rust_type`], a TypedDict becoming a struct of `structs` named after `hint`
/// (`total_options` → `TotalOptions`).
pub fn rust_type_with(
    spec: &TypeSpec,
    optional: bool,
    structs: &mut Structs,
    hint: &str,
) -> String {
    wrap(plain(spec, &mut Some(structs), hint), optional)
}

fn wrap(inner: String, optional: bool) -> String {
    if optional && !inner.starts_with("Option<") {
        format!("Option<{inner}>")
    } else {
        inner
    }
}

/// The serde structs written for TypedDicts, with unique names.
#[derive(Debug, Default)]
pub struct Structs {
    names: BTreeSet<String>,
    definitions: Vec<String>,
}

impl Structs {
    /// Every definition, in the order they were needed (inner structs first).
    pub fn definitions(&self) -> &[String] {
        &self.definitions
    }

    fn define(&mut self, spec: &TypeSpec, hint: &str) -> String {
        let name = self.unique(hint);
        let mut body = String::new();
        for (i, field) in spec.fields.as_deref().unwrap_or(&[]).iter().enumerate() {
            let ident = rust_ident(&field.name).unwrap_or_else(|| format!("field_{i}"));
            let inner = plain(
                &field.type_spec,
                &mut Some(self),
                &format!("{hint}_{}", field.name),
            );
            let ty = wrap(inner, !field.required);
            if ident.trim_start_matches("r#") != field.name {
                body.push_str(&format!("    #[serde(rename = {:?})]\n", field.name));
            }
            if !field.required {
                body.push_str("    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n");
            }
            body.push_str(&format!("    pub {ident}: {ty},\n"));
        }
        self.definitions.push(format!(
            "#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]\npub struct {name} {{\n{body}}}\n"
        ));
        name
    }

    fn unique(&mut self, hint: &str) -> String {
        let mut base: String = hint
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|part| !part.is_empty())
            .map(|part| {
                let mut chars = part.chars();
                chars.next().map_or_else(String::new, |first| {
                    first.to_ascii_uppercase().to_string() + chars.as_str()
                })
            })
            .collect();
        if !base.starts_with(|c: char| c.is_ascii_alphabetic()) {
            base.insert(0, 'T');
        }
        let mut name = base.clone();
        let mut n = 2;
        while !self.names.insert(name.clone()) {
            name = format!("{base}{n}");
            n += 1;
        }
        name
    }
}

/// Rust's keywords that may be written raw (`r#type`); `self`, `Self`, `super`, `crate` and
/// `_` cannot be identifiers at all.
const KEYWORDS: [&str; 47] = [
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn",
    "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let",
    "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return",
    "static", "struct", "trait", "true", "try", "type", "typeof", "union", "unsafe", "unsized",
    "use", "virtual", "where",
];

/// `name` as a Rust identifier (`r#type` for a keyword); `None` when it cannot be one (not
/// ASCII `[A-Za-z_][A-Za-z0-9_]*`, or `self`, `Self`, `super`, `crate`, `_`).
pub fn rust_ident(name: &str) -> Option<String> {
    let mut chars = name.chars();
    let first = chars.next()?;
    let valid = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid || matches!(name, "self" | "Self" | "super" | "crate" | "_" | "extern") {
        return None;
    }
    Some(if KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    })
}

fn item(spec: &TypeSpec, i: usize, structs: &mut Option<&mut Structs>, hint: &str) -> String {
    spec.items.get(i).map_or_else(
        || "serde_json::Value".to_string(),
        |s| plain(s, structs, hint),
    )
}

fn plain(spec: &TypeSpec, structs: &mut Option<&mut Structs>, hint: &str) -> String {
    match spec.kind {
        TypeKind::Object => match structs {
            Some(structs) if spec.fields.is_some() => structs.define(spec, hint),
            _ => "serde_json::Value".into(),
        },
        TypeKind::Any => "serde_json::Value".into(),
        TypeKind::Int => "i64".into(),
        TypeKind::Float => "f64".into(),
        // `bytes`/`bytearray` (readiness v2) travel as their base64 text.
        TypeKind::Str | TypeKind::Bytes | TypeKind::Bytearray => "String".into(),
        // `datetime` classes (readiness v2): RFC 3339 text; a timedelta is seconds.
        TypeKind::Date | TypeKind::Datetime | TypeKind::Time => "String".into(),
        TypeKind::Timedelta => "f64".into(),
        TypeKind::Bool => "bool".into(),
        TypeKind::Null => "()".into(),
        TypeKind::List | TypeKind::Set | TypeKind::Frozenset => {
            format!("Vec<{}>", item(spec, 0, structs, hint))
        }
        TypeKind::Tuple if spec.variadic => format!("Vec<{}>", item(spec, 0, structs, hint)),
        TypeKind::Tuple => {
            let mut items = Vec::new();
            for (i, s) in spec.items.iter().enumerate() {
                items.push(plain(s, structs, &format!("{hint}_{i}")));
            }
            match items.as_slice() {
                [one] => format!("({one},)"),
                _ => format!("({})", items.join(", ")),
            }
        }
        TypeKind::Dict => format!(
            "std::collections::BTreeMap<String, {}>",
            item(spec, 0, structs, hint)
        ),
        TypeKind::Union => {
            let rest: Vec<&TypeSpec> = spec
                .items
                .iter()
                .filter(|i| i.kind != TypeKind::Null)
                .collect();
            let nullable = rest.len() < spec.items.len();
            let inner = match rest.as_slice() {
                [one] => plain(one, structs, hint),
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

    #[test]
    fn typed_dicts_become_structs_with_unique_names() {
        use apizr_ir::readiness::ObjectField;
        let field = |name: &str, required: bool, kind: TypeKind| ObjectField {
            name: name.into(),
            required,
            type_spec: TypeSpec::simple(kind),
        };
        let object = TypeSpec {
            fields: Some(vec![
                field("sku", true, TypeKind::Str),
                field("type", false, TypeKind::Int),
                field("unit-price", true, TypeKind::Float),
            ]),
            ..TypeSpec::simple(TypeKind::Object)
        };
        let list = spec(TypeKind::List, vec![object.clone()]);
        let mut structs = Structs::default();
        let first = rust_type_with(&list, false, &mut structs, "quote_items");
        let second = rust_type_with(&object, true, &mut structs, "quote_items");
        assert_eq!(first, "Vec<QuoteItems>");
        assert_eq!(second, "Option<QuoteItems2>");
        let definition = &structs.definitions()[0];
        for line in [
            "pub sku: String,",
            "#[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub r#type: Option<i64>,",
            "#[serde(rename = \"unit-price\")]\n    pub field_2: f64,",
        ] {
            assert!(definition.contains(line), "{definition}");
        }
        let ty: syn::Type = syn::parse_str(&first).unwrap();
        assert!(check(&ty, &list, Side::Argument).is_ok());
        assert!(check(&ty, &list, Side::Result).is_ok());
        assert_eq!(rust_ident("match").as_deref(), Some("r#match"));
        assert_eq!(rust_ident("self"), None);
        assert_eq!(rust_ident("café"), None);
    }
}
