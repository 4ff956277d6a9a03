//! Data-driven parity with the reference's direct REST adapter (157 requests recorded from
//! outerspace-apizr 0.4.6 by `tests/fixtures/execute/validate/probe_rest.py`), plus a
//! deterministic random sweep asserting that validation never panics.

use std::path::PathBuf;

use apizr_ir::admission::{parse_permissive, preflight};
use apizr_ir::interface::ContractParameter;
use apizr_ir::json::python_float_repr;
use apizr_ir::{ObjectField, ParameterKind, TypeKind, TypeSpec, Value};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde_json::Value as Json;

use super::*;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/execute/validate")
        .join(name)
}

fn get<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key).unwrap()
}

fn text(v: &Value) -> &str {
    match v {
        Value::Str(s) => s,
        other => panic!("{other:?}"),
    }
}

fn flag(v: &Value) -> bool {
    v == &Value::Bool(true)
}

fn array(v: &Value) -> &[Value] {
    match v {
        Value::Array(items) => items,
        other => panic!("{other:?}"),
    }
}

fn type_spec(j: &Value) -> TypeSpec {
    let kind: TypeKind = match text(get(j, "kind")) {
        "any" => TypeKind::Any,
        "int" => TypeKind::Int,
        "str" => TypeKind::Str,
        "float" => TypeKind::Float,
        "bool" => TypeKind::Bool,
        "null" => TypeKind::Null,
        "list" => TypeKind::List,
        "dict" => TypeKind::Dict,
        "tuple" => TypeKind::Tuple,
        "set" => TypeKind::Set,
        "union" => TypeKind::Union,
        "literal" => TypeKind::Literal,
        "object" => TypeKind::Object,
        other => panic!("{other}"),
    };
    TypeSpec {
        items: array(get(j, "items")).iter().map(type_spec).collect(),
        kind,
        values: array(get(j, "values")).to_vec(),
        variadic: flag(get(j, "variadic")),
        fields: j.get("fields").map(|f| {
            array(f)
                .iter()
                .map(|f| ObjectField {
                    name: text(get(f, "name")).into(),
                    required: flag(get(f, "required")),
                    type_spec: type_spec(get(f, "type")),
                })
                .collect()
        }),
        python: None,
    }
}

fn parameters(j: &Value) -> Vec<ContractParameter> {
    array(j)
        .iter()
        .map(|p| ContractParameter {
            kind: match text(get(p, "kind")) {
                "positional_only" => ParameterKind::PositionalOnly,
                "keyword_only" => ParameterKind::KeywordOnly,
                _ => ParameterKind::PositionalOrKeyword,
            },
            name: text(get(p, "name")).into(),
            required: flag(get(p, "required")),
            type_spec: type_spec(get(p, "type")),
        })
        .collect()
}

/// Python `repr` of converted values (sets excluded: their order is not stable).
fn py_repr(v: &PyValue) -> String {
    let join = |items: &[PyValue]| items.iter().map(py_repr).collect::<Vec<_>>().join(", ");
    match v {
        PyValue::None => "None".into(),
        PyValue::Bool(b) => if *b { "True" } else { "False" }.into(),
        PyValue::Int(i) => i.canonical_string().unwrap(),
        PyValue::Float(f) => python_float_repr(*f).unwrap(),
        PyValue::Str(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
        PyValue::List(items) => format!("[{}]", join(items)),
        PyValue::Tuple(items) if items.len() == 1 => format!("({},)", join(items)),
        PyValue::Tuple(items) => format!("({})", join(items)),
        PyValue::Set(_) | PyValue::Frozenset(_) => "<set>".into(),
        PyValue::Bytes(_) | PyValue::Bytearray(_) => "<bytes>".into(),
        PyValue::Dict(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("'{k}': {}", py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The call the function sees, as `repr` of the argument(s) the corpus functions print.
fn observed(function: &str, params: &[ContractParameter], call: &ValidatedCall) -> String {
    if function.starts_with("f_pos") || function == "f_gap" {
        // These functions return repr((a, b, c[, d])) with Python defaults for omitted ones.
        let defaults = [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4")];
        let items: Vec<String> = params
            .iter()
            .map(|p| match call.converted.get(&p.name) {
                Some(v) => py_repr(v),
                None => defaults
                    .iter()
                    .find(|(n, _)| *n == p.name)
                    .map(|(_, d)| d.to_string())
                    .unwrap(),
            })
            .collect();
        return format!("({})", items.join(", "));
    }
    match call.converted.values().next() {
        Some(v) => py_repr(v),
        None => "None".into(),
    }
}

#[test]
fn reference_rest_vectors() {
    let manifest =
        parse_permissive(&std::fs::read(fixture("vcorp.apizr-rest.json")).unwrap()).unwrap();
    let cases: Json =
        serde_json::from_slice(&std::fs::read(fixture("rest_cases.json")).unwrap()).unwrap();
    let (mut agree, mut total) = (0, 0);
    let mut differences = Vec::new();
    for case in cases.as_array().unwrap() {
        total += 1;
        let function = case["function"].as_str().unwrap();
        let cap = array(get(&manifest, "capabilities"))
            .iter()
            .find(|c| text(get(c, "name")) == function)
            .unwrap();
        let params = parameters(get(cap, "parameters"));
        let body: Vec<u8> = (0..case["body_hex"].as_str().unwrap().len() / 2)
            .map(|i| {
                u8::from_str_radix(&case["body_hex"].as_str().unwrap()[2 * i..2 * i + 2], 16)
                    .unwrap()
            })
            .collect();
        let body = body.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&body);
        let status = case["status"].as_u64().unwrap();
        let expected = &case["response"];
        let ours: Result<String, String> = match preflight(body, 64 << 20) {
            Err(_) => Err("JSON admission limit or encoding rejected".into()),
            Ok(()) => match parse_permissive(body) {
                Err(e) if e.to_string().contains("invalid UTF-8") => {
                    Err("JSON admission limit or encoding rejected".into())
                }
                Err(e) => Err(e.python_message(body)),
                Ok(payload) => validate_arguments(&params, &payload)
                    .map(|call| observed(function, &params, &call))
                    .map_err(|e| e.to_string()),
            },
        };
        let matches = match (&ours, status) {
            (Ok(repr), 200) => {
                function.starts_with("f_set") || Json::String(repr.clone()) == *expected
            }
            (Err(detail), 422) => expected["detail"] == Json::String(detail.clone()),
            _ => false,
        };
        if matches {
            agree += 1;
        } else {
            differences.push(format!(
                "{function} {:?}: ours {ours:?}, reference {status} {expected}",
                String::from_utf8_lossy(body)
            ));
        }
    }
    // The only documented difference: lone surrogates (`"\ud800"`) are valid Python strings
    // but have no UTF-8 form; we refuse them at decoding.
    assert_eq!(differences.len(), 1, "{differences:#?}");
    assert!(differences[0].contains("ud800"), "{differences:#?}");
    assert_eq!((agree, total), (156, 157));
}

#[test]
fn positional_only_calls_are_reconstructed() {
    let any = TypeSpec::simple(TypeKind::Any);
    let p = |name: &str, kind, required| ContractParameter {
        kind,
        name: name.into(),
        required,
        type_spec: any.clone(),
    };
    let params = [
        p("a", ParameterKind::PositionalOnly, false),
        p("b", ParameterKind::PositionalOnly, false),
        p("c", ParameterKind::PositionalOrKeyword, false),
        p("d", ParameterKind::KeywordOnly, true),
    ];
    let payload = parse_permissive(br#"{"a": 1, "b": [2], "d": null}"#).unwrap();
    let call = validate_arguments(&params, &payload).unwrap();
    assert_eq!(
        call.positional,
        [Value::Int(1), Value::Array(vec![Value::Int(2)])]
    );
    assert_eq!(call.keyword.keys().collect::<Vec<_>>(), ["d"]);
    let payload = parse_permissive(br#"{"d": 1, "c": 2}"#).unwrap();
    let call = validate_arguments(&params, &payload).unwrap();
    assert!(call.positional.is_empty());
    assert_eq!(call.keyword.len(), 2);
    let payload = parse_permissive(br#"{"d": 1, "b": 2}"#).unwrap();
    let gap = validate_arguments(&params, &payload).unwrap_err();
    assert_eq!(gap.reason, Reason::PositionalGap("a".into()));
    assert_eq!(
        (gap.pointer(), gap.found),
        ("/a".to_string(), Found::Missing)
    );
}

/// Readiness v2 variadics, bound in CPython's order: with `*args` given every positional
/// parameter before it goes by position (refused, naming it, when one is missing), the array
/// stays under its name for the worker to spread; keys naming no parameter are `**kwargs`
/// entries of its value type, except its own name; without `**kwargs` they stay refused.
/// `def f(a, /, b=2, *rest: int, c, **kw: str)`.
#[test]
fn variadic_calls_are_bound_in_cpythons_order() {
    let p = |name: &str, kind, required, kind_of| ContractParameter {
        kind,
        name: name.into(),
        required,
        type_spec: TypeSpec::simple(kind_of),
    };
    use ParameterKind::*;
    let params = [
        p("a", PositionalOnly, true, TypeKind::Any),
        p("b", PositionalOrKeyword, false, TypeKind::Any),
        p("rest", VarPositional, false, TypeKind::Int),
        p("c", KeywordOnly, true, TypeKind::Any),
        p("kw", VarKeyword, false, TypeKind::Str),
    ];
    let call =
        |text: &str| validate_arguments(&params, &parse_permissive(text.as_bytes()).unwrap());
    let ok = call(r#"{"a": 1, "b": 2, "rest": [3, 4], "c": 5, "x": "y"}"#).unwrap();
    assert_eq!(ok.positional, [Value::Int(1), Value::Int(2)]);
    assert_eq!(ok.keyword.keys().collect::<Vec<_>>(), ["c", "rest", "x"]);
    // Without `*args`, `b` goes by name as before.
    let ok = call(r#"{"a": 1, "b": 2, "c": 5}"#).unwrap();
    assert_eq!(ok.positional, [Value::Int(1)]);
    assert_eq!(ok.keyword.keys().collect::<Vec<_>>(), ["b", "c"]);
    // `*args` given, `b` (optional, before it) missing: refused at `/b`.
    let gap = call(r#"{"a": 1, "rest": [3], "c": 5}"#).unwrap_err();
    assert_eq!(gap.reason, Reason::VarPositionalGap("b".into()));
    assert_eq!(gap.to_string(), "Supply preceding positional field: b");
    assert_eq!(
        (gap.pointer(), gap.found),
        ("/b".to_string(), Found::Missing)
    );
    // Items and entries have the annotated types.
    let item = call(r#"{"a": 1, "b": 2, "rest": [3, "x"], "c": 5}"#).unwrap_err();
    assert_eq!(
        (item.reason.clone(), item.pointer()),
        (Reason::Mismatch, "/rest/1".into())
    );
    let entry = call(r#"{"a": 1, "c": 5, "x": 1}"#).unwrap_err();
    assert_eq!(
        (entry.reason.clone(), entry.pointer()),
        (Reason::Mismatch, "/x".into())
    );
    // A key named after the positional-only `a` binds `a`, never an entry of `**kw` (CPython's
    // `f(1, a=2)` would put `a` into `kw`; one JSON object cannot say both).
    let ok = call(r#"{"a": 1, "c": 5}"#).unwrap();
    assert_eq!((ok.positional, ok.keyword.len()), (vec![Value::Int(1)], 1));
    // The `**kwargs` parameter's own name is not an entry.
    let own = call(r#"{"a": 1, "c": 5, "kw": "v"}"#).unwrap_err();
    assert_eq!(
        (own.reason.clone(), own.pointer()),
        (Reason::UnexpectedField, "/kw".into())
    );
    assert_eq!(own.found, Found::UndeclaredField);
    // Without `**kwargs` an extra key stays refused, naming the declared fields.
    let closed = &params[..4];
    let payload = parse_permissive(br#"{"a": 1, "c": 5, "x": "y"}"#).unwrap();
    let extra = validate_arguments(closed, &payload).unwrap_err();
    assert_eq!(
        (extra.reason.clone(), extra.pointer()),
        (Reason::UnexpectedField, "/x".into())
    );
    assert_eq!(extra.expected, "one of the declared fields: a, b, rest, c");
}

fn spec(kind: TypeKind, items: Vec<TypeSpec>) -> TypeSpec {
    TypeSpec {
        items,
        kind,
        values: vec![],
        variadic: false,
        fields: None,
        python: None,
    }
}

fn param(name: &str, required: bool, type_spec: TypeSpec) -> ContractParameter {
    ContractParameter {
        kind: ParameterKind::PositionalOrKeyword,
        name: name.into(),
        required,
        type_spec,
    }
}

/// Each refusal names where it happened (a JSON pointer), what the contract expects there and
/// what the request had, while `Display` stays the reference's detail.
#[test]
fn field_errors_name_the_place() {
    let int = || spec(TypeKind::Int, vec![]);
    let point = TypeSpec {
        fields: Some(vec![
            ObjectField {
                name: "x".into(),
                required: true,
                type_spec: int(),
            },
            ObjectField {
                name: "a/b~".into(),
                required: false,
                type_spec: spec(TypeKind::Str, vec![]),
            },
        ]),
        python: None,
        ..spec(TypeKind::Object, vec![])
    };
    let pick = TypeSpec {
        values: vec![Value::Str("a".into()), Value::Int(1)],
        ..spec(TypeKind::Literal, vec![])
    };
    let params = vec![
        param("quantity", true, int()),
        param(
            "rows",
            false,
            spec(TypeKind::List, vec![spec(TypeKind::Dict, vec![int()])]),
        ),
        param(
            "pair",
            false,
            spec(TypeKind::Tuple, vec![int(), spec(TypeKind::Str, vec![])]),
        ),
        param(
            "tags",
            false,
            spec(TypeKind::Set, vec![spec(TypeKind::Any, vec![])]),
        ),
        param("point", false, point),
        param(
            "either",
            false,
            spec(TypeKind::Union, vec![int(), spec(TypeKind::Null, vec![])]),
        ),
        param("mode", false, pick),
        param("blob", false, spec(TypeKind::Any, vec![])),
    ];
    let check = |body: &str, detail: &str, path: &str, expected: &str, found: &str| {
        let payload = parse_permissive(body.as_bytes()).unwrap();
        let e = validate_arguments(&params, &payload).unwrap_err();
        assert_eq!(e.to_string(), detail, "{body}");
        let wire = e.field_error();
        assert_eq!(
            (
                wire.path.as_str(),
                wire.expected.as_str(),
                wire.found.as_str()
            ),
            (path, expected, found),
            "{body}"
        );
    };
    let mismatch = "Value does not match the declared input type";
    check(
        r#"{"quantity": "3"}"#,
        mismatch,
        "/quantity",
        "integer",
        "string",
    );
    check("[1]", "Expected a JSON object", "", "object", "array");
    check(
        r#"{}"#,
        "Missing required field: quantity",
        "/quantity",
        "integer",
        "missing",
    );
    check(
        r#"{"quantity": 1, "zzz": 1}"#,
        "Unexpected request field",
        "/zzz",
        "one of the declared fields: quantity, rows, pair, tags, point, either, mode, blob",
        "undeclared field",
    );
    check(
        r#"{"quantity": 1, "rows": [{"a": 1}, {"b": 2.5}]}"#,
        mismatch,
        "/rows/1/b",
        "integer",
        "number",
    );
    check(
        r#"{"quantity": 1, "pair": [1, 2, 3]}"#,
        "Tuple length mismatch",
        "/pair",
        "array of 2 items (array [integer, string])",
        "array of 3 items",
    );
    check(
        r#"{"quantity": 1, "pair": [1, 2]}"#,
        mismatch,
        "/pair/1",
        "string",
        "integer",
    );
    check(
        r#"{"quantity": 1, "tags": [1, [2]]}"#,
        "Set members must be hashable",
        "/tags/1",
        "hashable value",
        "array",
    );
    check(
        r#"{"quantity": 1, "tags": [1, 2, 1.0]}"#,
        "Set members must be unique",
        "/tags/2",
        "unique item",
        "duplicate of item 0",
    );
    check(
        r#"{"quantity": 1, "point": {}}"#,
        "Missing required object field: x",
        "/point/x",
        "integer",
        "missing",
    );
    check(
        r#"{"quantity": 1, "point": {"x": 1, "y": 2}}"#,
        "Unexpected object field",
        "/point/y",
        "one of the declared fields: x, a/b~",
        "undeclared field",
    );
    check(
        r#"{"quantity": 1, "point": {"x": 1, "a/b~": 3}}"#,
        mismatch,
        "/point/a~1b~0",
        "string",
        "integer",
    );
    check(
        r#"{"quantity": 1, "either": "s"}"#,
        mismatch,
        "/either",
        "integer | null",
        "string",
    );
    check(
        r#"{"quantity": 1, "mode": "c"}"#,
        mismatch,
        "/mode",
        r#"one of "a", 1"#,
        r#"string "c""#,
    );
    check(
        r#"{"quantity": 1, "blob": {"k": [1, NaN]}}"#,
        "Expected a finite JSON value",
        "/blob/k/1",
        "finite number",
        "number NaN",
    );
}

/// Arbitrary JSON-level values, biased towards the edges the rules care about (bool vs int,
/// big ints, -0.0, non-finite floats, short keys that collide with object fields).
fn value_strategy() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-4i64..5).prop_map(Value::Int),
        Just(Value::BigInt("-123456789012345678901234567890".into())),
        prop::sample::select(vec![0.0, -0.0, 1.0, 2.5, 1e300, f64::NAN, f64::INFINITY])
            .prop_map(Value::Float),
        any::<f64>().prop_map(Value::Float),
        prop::sample::select(vec!["", "a", "x"]).prop_map(|s| Value::Str(s.into())),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec!["a", "b", "x"]).prop_map(String::from),
                inner,
                0..4
            )
            .prop_map(Value::Object),
        ]
    })
}

/// Arbitrary lowered type specs: every kind, nested containers, unions, literals, objects.
fn spec_strategy() -> impl Strategy<Value = TypeSpec> {
    use TypeKind::*;
    let leaf =
        prop::sample::select(vec![Any, Int, Str, Float, Bool, Null]).prop_map(TypeSpec::simple);
    leaf.prop_recursive(3, 24, 3, |inner| {
        prop_oneof![
            (prop::sample::select(vec![List, Dict, Set]), inner.clone()).prop_map(
                |(kind, item)| {
                    TypeSpec {
                        items: vec![item],
                        ..TypeSpec::simple(kind)
                    }
                }
            ),
            (
                prop::sample::select(vec![Tuple, Union]),
                prop::collection::vec(inner.clone(), 0..3),
                any::<bool>()
            )
                .prop_map(|(kind, items, variadic)| TypeSpec {
                    items,
                    variadic,
                    ..TypeSpec::simple(kind)
                }),
            prop::collection::vec(value_strategy(), 3).prop_map(|values| TypeSpec {
                values,
                ..TypeSpec::simple(Literal)
            }),
            (inner.clone(), any::<bool>(), inner, any::<bool>()).prop_map(|(a, ra, b, rb)| {
                let field = |name: &str, required, type_spec| ObjectField {
                    name: name.to_string(),
                    required,
                    type_spec,
                };
                TypeSpec {
                    fields: Some(vec![field("a", ra, a), field("b", rb, b)]),
                    python: None,
                    ..TypeSpec::simple(Object)
                }
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// Validation answers (accepts or refuses) every spec/value pair; it never panics.
    #[test]
    fn validation_never_panics(spec in spec_strategy(), value in value_strategy()) {
        let _ = convert::convert(&spec, &value);
    }
}

/// The generators reach both outcomes, so the property exercises acceptance and refusal.
#[test]
fn the_generators_reach_acceptance_and_refusal() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let pair = (spec_strategy(), value_strategy());
    let mut accepted = 0;
    for _ in 0..2000 {
        let (spec, value) = pair.new_tree(&mut runner).unwrap().current();
        if convert::convert(&spec, &value).is_ok() {
            accepted += 1;
        }
    }
    assert!(accepted > 100 && accepted < 1900, "{accepted}");
}
