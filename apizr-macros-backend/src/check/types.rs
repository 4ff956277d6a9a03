//! The type mapping between Python annotations (as lowered TypeSpecs) and Rust types.
//!
//! | Python | Rust |
//! | --- | --- |
//! | `int` | `i8`…`i128`, `u8`…`u128`, `isize`, `usize` |
//! | `float` | `f64` (`f32` would lose precision) |
//! | `str` | `String`; arguments also `&str`, `Cow<str>`, `Box<str>` |
//! | `bool` | `bool` |
//! | `None` | `()` |
//! | `list[T]`, `tuple[T, ...]` | `Vec<T>`, `VecDeque<T>`, `[T; N]`; arguments also `&[T]` |
//! | `set[T]`, `frozenset[T]` | `HashSet<T>`, `BTreeSet<T>`, or a sequence |
//! | `tuple[A, B]` | `(A, B)` |
//! | `dict[str, T]` | `HashMap<String, T>`, `BTreeMap<String, T>`, `serde_json::Map` |
//! | `Optional[T]`, `T \| None` | `Option<T>` (an argument may also be a plain `T`) |
//! | other unions, `Literal[...]` of mixed types | a serde enum (any user type) or `serde_json::Value` |
//! | `Literal["a", "b"]` | `String` (or a user enum); `Literal[1, 2]` an integer type |
//! | a TypedDict | a serde struct (any user type), or a JSON map |
//! | `Any`, no annotation | anything serde can encode / decode |
//!
//! `serde_json::Value` matches every annotation. `&T`, `Box<T>`, `Rc<T>`, `Arc<T>` are checked
//! as `T`. The macro sees tokens, not resolved types: names are matched by their last path
//! segment, so a type alias is not seen through (spell the type out), and the fields of a
//! user struct are not compared with a TypedDict's (the arguments are still validated against
//! the contract before Python runs, and results are decoded strictly).
//!
//! An argument must fit *some* value the Python side accepts (a Rust `i64` for `int | None`
//! is fine); a result must accept *every* value Python may return (so `int | None` needs
//! `Option<i64>`).

use apizr_ir::{TypeKind, TypeSpec, Value};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{GenericArgument, PathArguments, Type};

/// Which way values flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Rust → Python: the Rust type must produce values Python accepts.
    Argument,
    /// Python → Rust: the Rust type must accept every value Python may return.
    Result,
}

/// Where and why a Rust type does not fit.
#[derive(Debug, Clone)]
pub struct Mismatch {
    /// The innermost offending Rust type.
    pub span: Span,
    /// Its text, e.g. `String`.
    pub found: String,
    /// What was expected there, e.g. "an integer type (`i64`, `u32`, …)".
    pub expected: String,
}

/// What a Rust type is, as far as its tokens tell.
enum Rust<'a> {
    Int,
    F64,
    F32,
    Str,
    Bool,
    Unit,
    Option(&'a Type),
    Seq(&'a Type),
    Set(&'a Type),
    Map(&'a Type, &'a Type),
    Tuple(Vec<&'a Type>),
    /// `serde_json::Value`: any JSON.
    Json,
    /// `serde_json::Map`: a JSON object.
    JsonMap,
    /// A user type (struct, enum, alias): matched only where the mapping allows one.
    User,
    /// Something that cannot cross a process boundary (`impl Trait`, `fn`, `dyn`, `_`).
    Unsupported,
}

const INTS: [&str; 12] = [
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
];

fn generic_types(args: &PathArguments) -> Vec<&Type> {
    match args {
        PathArguments::AngleBracketed(list) => list
            .args
            .iter()
            .filter_map(|a| match a {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn classify(ty: &Type, side: Side) -> (Rust<'_>, &Type) {
    match ty {
        Type::Paren(p) => classify(&p.elem, side),
        Type::Group(g) => classify(&g.elem, side),
        Type::Reference(r) if side == Side::Argument => match &*r.elem {
            Type::Slice(s) => (Rust::Seq(&s.elem), ty),
            Type::Path(p) if p.qself.is_none() && p.path.is_ident("str") => (Rust::Str, ty),
            other => classify(other, side),
        },
        Type::Array(a) => (Rust::Seq(&a.elem), ty),
        Type::Tuple(t) if t.elems.is_empty() => (Rust::Unit, ty),
        Type::Tuple(t) => (Rust::Tuple(t.elems.iter().collect()), ty),
        Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else {
                return (Rust::User, ty);
            };
            let name = last.ident.to_string();
            let args = generic_types(&last.arguments);
            let first = args.first().copied();
            let kind = match (name.as_str(), first, args.get(1).copied()) {
                (n, None, None) if INTS.contains(&n) => Rust::Int,
                ("f64", None, None) => Rust::F64,
                ("f32", None, None) => Rust::F32,
                ("bool", None, None) => Rust::Bool,
                ("String", None, None) => Rust::Str,
                ("Value", None, None) => Rust::Json,
                ("Map", None, None) => Rust::JsonMap,
                ("Map", Some(_), Some(_)) if is_json_path(&p.path) => Rust::JsonMap,
                ("Box" | "Rc" | "Arc", Some(inner), None) => {
                    if let Type::Path(ip) = inner
                        && ip.path.is_ident("str")
                    {
                        return (
                            if side == Side::Argument {
                                Rust::Str
                            } else {
                                Rust::User
                            },
                            ty,
                        );
                    }
                    return classify(inner, side);
                }
                ("Cow", Some(inner), None) if side == Side::Argument => match inner {
                    Type::Path(ip) if ip.path.is_ident("str") => Rust::Str,
                    Type::Slice(s) => Rust::Seq(&s.elem),
                    other => return classify(other, side),
                },
                ("Option", Some(inner), None) => Rust::Option(inner),
                ("Vec" | "VecDeque" | "LinkedList", Some(inner), None) => Rust::Seq(inner),
                ("HashSet" | "BTreeSet" | "IndexSet", Some(inner), _) => Rust::Set(inner),
                ("HashMap" | "BTreeMap" | "IndexMap", Some(k), Some(v)) => Rust::Map(k, v),
                _ => Rust::User,
            };
            (kind, ty)
        }
        _ => (Rust::Unsupported, ty),
    }
}

fn is_json_path(path: &syn::Path) -> bool {
    path.segments.iter().any(|s| s.ident == "serde_json")
}

/// Check one Rust type against one TypeSpec.
pub fn check(ty: &Type, spec: &TypeSpec, side: Side) -> Result<(), Mismatch> {
    let (rust, shown) = classify(ty, side);
    let fail = |expected: &str| {
        Err(Mismatch {
            span: shown.span(),
            found: type_text(shown),
            expected: expected.to_string(),
        })
    };
    if matches!(rust, Rust::Unsupported) {
        return fail("a concrete serde type (no `impl Trait`, `dyn`, `fn` or `_`)");
    }
    if matches!(rust, Rust::Json) {
        return Ok(());
    }
    let item = |i: usize| {
        spec.items
            .get(i)
            .cloned()
            .unwrap_or_else(|| TypeSpec::simple(TypeKind::Any))
    };
    match spec.kind {
        TypeKind::Any => Ok(()),
        TypeKind::Int => match rust {
            Rust::Int => Ok(()),
            _ => fail("an integer type (`i64`, `u32`, …)"),
        },
        TypeKind::Float => match rust {
            Rust::F64 => Ok(()),
            Rust::F32 => fail("`f64` (Python's `float` is 64-bit)"),
            _ => fail("`f64`"),
        },
        TypeKind::Str => match rust {
            Rust::Str => Ok(()),
            _ if side == Side::Argument => fail("`String` or `&str`"),
            _ => fail("`String`"),
        },
        // Readiness v2 `bytes`/`bytearray`: the wire value is base64 text.
        TypeKind::Bytes | TypeKind::Bytearray => match rust {
            Rust::Str => Ok(()),
            _ => fail("`String` holding base64 text"),
        },
        // Readiness v2 `datetime` classes: RFC 3339 text, or seconds for a timedelta.
        TypeKind::Date | TypeKind::Datetime | TypeKind::Time => match rust {
            Rust::Str => Ok(()),
            _ => fail("`String` holding RFC 3339 text"),
        },
        TypeKind::Timedelta => match rust {
            Rust::F64 => Ok(()),
            _ => fail("`f64` (seconds)"),
        },
        TypeKind::Bool => match rust {
            Rust::Bool => Ok(()),
            _ => fail("`bool`"),
        },
        TypeKind::Null => match rust {
            Rust::Unit => Ok(()),
            _ => fail("`()`"),
        },
        TypeKind::List => match rust {
            Rust::Seq(inner) => check(inner, &item(0), side),
            _ => fail("`Vec<_>`"),
        },
        TypeKind::Set | TypeKind::Frozenset => match rust {
            Rust::Seq(inner) | Rust::Set(inner) => check(inner, &item(0), side),
            _ => fail("`HashSet<_>`, `BTreeSet<_>` or `Vec<_>`"),
        },
        TypeKind::Tuple if spec.variadic => match rust {
            Rust::Seq(inner) => check(inner, &item(0), side),
            _ => fail("`Vec<_>`"),
        },
        TypeKind::Tuple => match rust {
            Rust::Tuple(elems) if elems.len() == spec.items.len() => elems
                .iter()
                .zip(&spec.items)
                .try_for_each(|(t, s)| check(t, s, side)),
            _ => fail(&format!("a tuple of {} elements", spec.items.len())),
        },
        TypeKind::Dict => match rust {
            Rust::JsonMap => Ok(()),
            Rust::Map(key, value) => {
                check(key, &TypeSpec::simple(TypeKind::Str), side)?;
                check(value, &item(0), side)
            }
            _ => fail("`HashMap<String, _>` or `BTreeMap<String, _>`"),
        },
        TypeKind::Object => match rust {
            Rust::User | Rust::JsonMap => Ok(()),
            Rust::Map(key, value) => {
                check(key, &TypeSpec::simple(TypeKind::Str), side)?;
                check(value, &TypeSpec::simple(TypeKind::Any), side)
            }
            _ => fail("a serde struct (the Python side is a TypedDict)"),
        },
        TypeKind::Union => union(rust, shown, spec, side),
        TypeKind::Literal => literal(rust, shown, spec, side),
    }
}

fn members_without_null(spec: &TypeSpec) -> (bool, Vec<TypeSpec>) {
    let nullable = spec.items.iter().any(|i| i.kind == TypeKind::Null);
    let rest = spec
        .items
        .iter()
        .filter(|i| i.kind != TypeKind::Null)
        .cloned()
        .collect();
    (nullable, rest)
}

fn union(rust: Rust<'_>, shown: &Type, spec: &TypeSpec, side: Side) -> Result<(), Mismatch> {
    let (nullable, rest) = members_without_null(spec);
    let rest_spec = match rest.as_slice() {
        [one] => one.clone(),
        _ => TypeSpec {
            items: rest.clone(),
            ..TypeSpec::simple(TypeKind::Union)
        },
    };
    let fail = |expected: String| {
        Err(Mismatch {
            span: shown.span(),
            found: type_text(shown),
            expected,
        })
    };
    match rust {
        Rust::User => Ok(()),
        Rust::Option(inner) if nullable => check(inner, &rest_spec, side),
        Rust::Option(_) => fail("a non-optional type (the Python side is never `None`)".into()),
        Rust::Unit if nullable && side == Side::Argument => Ok(()),
        _ if side == Side::Argument => {
            // An argument only needs to fit one member.
            let fits = rest.iter().any(|member| check(shown, member, side).is_ok());
            if fits {
                Ok(())
            } else if rest.len() == 1 {
                check(shown, &rest[0], side)
            } else {
                fail("a type that fits one member of the union, a serde enum, or `serde_json::Value`".into())
            }
        }
        _ if nullable => fail("`Option<_>` (the Python side may return `None`)".into()),
        _ if rest.len() == 1 => check(shown, &rest[0], side),
        _ => fail("a serde enum or `serde_json::Value` (the Python side is a union)".into()),
    }
}

fn literal_kind(value: &Value) -> TypeKind {
    match value {
        Value::Null => TypeKind::Null,
        Value::Bool(_) => TypeKind::Bool,
        Value::Int(_) | Value::BigInt(_) => TypeKind::Int,
        Value::Float(_) => TypeKind::Float,
        Value::Str(_) => TypeKind::Str,
        Value::Array(_) => TypeKind::List,
        Value::Object(_) => TypeKind::Dict,
    }
}

fn literal(rust: Rust<'_>, shown: &Type, spec: &TypeSpec, side: Side) -> Result<(), Mismatch> {
    if matches!(rust, Rust::User) {
        return Ok(());
    }
    let mut kinds: Vec<TypeKind> = spec.values.iter().map(literal_kind).collect();
    kinds.dedup();
    let as_union = TypeSpec {
        items: kinds.into_iter().map(TypeSpec::simple).collect(),
        ..TypeSpec::simple(TypeKind::Union)
    };
    match as_union.items.as_slice() {
        [one] => check(shown, one, side),
        _ => union(rust, shown, &as_union, side),
    }
}

/// A type as a user writes it: `Vec<String>`, `HashMap<String, i64>`, `&str`.
pub fn type_text(ty: &Type) -> String {
    let raw = quote::quote!(#ty).to_string();
    let mut text = raw
        .replace(" < ", "<")
        .replace("< ", "<")
        .replace(" <", "<")
        .replace(" >", ">")
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" ,", ",")
        .replace("& ", "&")
        .replace("( ", "(")
        .replace(" )", ")")
        .replace(" ;", ";")
        .replace("[ ", "[")
        .replace(" ]", "]");
    if text.starts_with("::") && !raw.starts_with("::") {
        text = text.trim_start_matches("::").to_string();
    }
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn spec(kind: TypeKind, items: Vec<TypeSpec>) -> TypeSpec {
        TypeSpec {
            items,
            ..TypeSpec::simple(kind)
        }
    }

    fn ty(text: &str) -> Type {
        syn::parse_str(text).unwrap()
    }

    fn ok(text: &str, s: &TypeSpec, side: Side) -> bool {
        check(&ty(text), s, side).is_ok()
    }

    #[test]
    fn scalars() {
        let int = TypeSpec::simple(TypeKind::Int);
        assert!(ok("u32", &int, Side::Argument) && ok("i128", &int, Side::Result));
        assert!(!ok("f64", &int, Side::Argument));
        let float = TypeSpec::simple(TypeKind::Float);
        let m = check(&ty("f32"), &float, Side::Argument).unwrap_err();
        assert_eq!(
            (m.found.as_str(), m.expected.as_str()),
            ("f32", "`f64` (Python's `float` is 64-bit)")
        );
        let s = TypeSpec::simple(TypeKind::Str);
        assert!(ok("&str", &s, Side::Argument) && !ok("&str", &s, Side::Result));
        assert!(ok("std::string::String", &s, Side::Result));
        assert!(ok("()", &TypeSpec::simple(TypeKind::Null), Side::Result));
        assert!(ok("serde_json::Value", &int, Side::Result));
        assert!(ok(
            "MyStruct",
            &TypeSpec::simple(TypeKind::Any),
            Side::Result
        ));
        assert!(!ok(
            "impl Serialize",
            &TypeSpec::simple(TypeKind::Any),
            Side::Argument
        ));
    }

    #[test]
    fn containers_point_at_the_inner_type() {
        let list_int = spec(TypeKind::List, vec![TypeSpec::simple(TypeKind::Int)]);
        assert!(ok("Vec<i64>", &list_int, Side::Result) && ok("&[u8]", &list_int, Side::Argument));
        let m = check(&ty("Vec<String>"), &list_int, Side::Argument).unwrap_err();
        assert_eq!(m.found, "String");
        let dict = spec(TypeKind::Dict, vec![TypeSpec::simple(TypeKind::Float)]);
        assert!(ok("HashMap<String, f64>", &dict, Side::Result));
        assert_eq!(
            check(&ty("BTreeMap<i64, f64>"), &dict, Side::Result)
                .unwrap_err()
                .found,
            "i64"
        );
        let pair = spec(
            TypeKind::Tuple,
            vec![
                TypeSpec::simple(TypeKind::Int),
                TypeSpec::simple(TypeKind::Str),
            ],
        );
        assert!(ok("(i64, String)", &pair, Side::Result) && !ok("(i64,)", &pair, Side::Result));
        let set = spec(TypeKind::Set, vec![TypeSpec::simple(TypeKind::Str)]);
        assert!(
            ok("BTreeSet<String>", &set, Side::Result) && ok("Vec<String>", &set, Side::Result)
        );
        assert_eq!(
            type_text(&ty(
                "std :: collections :: HashMap < String , Vec < & str > >"
            )),
            "std::collections::HashMap<String, Vec<&str>>"
        );
    }

    #[test]
    fn unions_and_literals() {
        let opt_int = spec(
            TypeKind::Union,
            vec![
                TypeSpec::simple(TypeKind::Int),
                TypeSpec::simple(TypeKind::Null),
            ],
        );
        assert!(ok("Option<i64>", &opt_int, Side::Result) && ok("i64", &opt_int, Side::Argument));
        let m = check(&ty("i64"), &opt_int, Side::Result).unwrap_err();
        assert_eq!(
            m.expected,
            "`Option<_>` (the Python side may return `None`)"
        );
        assert!(!ok(
            "Option<i64>",
            &TypeSpec::simple(TypeKind::Int),
            Side::Argument
        ));
        let int_or_str = spec(
            TypeKind::Union,
            vec![
                TypeSpec::simple(TypeKind::Int),
                TypeSpec::simple(TypeKind::Str),
            ],
        );
        assert!(ok("i64", &int_or_str, Side::Argument) && !ok("i64", &int_or_str, Side::Result));
        assert!(ok("IntOrStr", &int_or_str, Side::Result));
        let colours = TypeSpec {
            values: vec![Value::Str("red".into()), Value::Str("blue".into())],
            ..TypeSpec::simple(TypeKind::Literal)
        };
        assert!(ok("String", &colours, Side::Result) && ok("Colour", &colours, Side::Result));
        assert!(!ok("i64", &colours, Side::Argument));
    }
}
