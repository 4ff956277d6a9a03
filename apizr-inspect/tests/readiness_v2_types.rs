//! Readiness v2 input types (`tests/data/input_types/*.py`): Enum classes (by value),
//! dataclasses and NamedTuples of the module become exact JSON Schemas under v2 and keep
//! READY-013 under v1; classes whose JSON form cannot be proved keep READY-013 under v2 too,
//! naming the parameter and why. The snapshot records, per fixture and policy, each function's
//! state and reasons, and under v2 its request and return schemas (canonical JSON).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;

use apizr_inspect::interface::contracts_in_package;
use apizr_inspect::package::PackageIndex;
use apizr_inspect::project::{ProjectOptions, inspect_dir};
use apizr_inspect::{InspectOptions, inspect_bytes_in_index};
use apizr_ir::interface::type_schema;
use apizr_ir::{ReadinessPolicy, ReadinessState, SourceKind};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/input_types");

fn summary(file: &str, policy: ReadinessPolicy) -> String {
    summary_in(&format!("{DIR}/{file}"), "shapes", policy, None)
}

/// The summary of module `module` (file `path`), inspected as `serve DIR`/`generate DIR` do
/// when `index` is the package directory's.
fn summary_in(
    path: &str,
    module: &str,
    policy: ReadinessPolicy,
    index: Option<&PackageIndex>,
) -> String {
    let bytes = std::fs::read(path).unwrap();
    let options = InspectOptions {
        explain: true,
        readiness: policy,
        ..InspectOptions::default()
    };
    let (outcome, parsed) = apizr_inspect::on_inspect_stack(|| {
        inspect_bytes_in_index(&bytes, SourceKind::Python, module, options, None, index)
    })
    .unwrap()
    .unwrap();
    let mut out = String::new();
    let report = &outcome.inspection.readiness;
    for a in &report.assessments {
        let reasons: Vec<String> = [
            &a.dimensions.inputs,
            &a.dimensions.outputs,
            &a.dimensions.execution,
        ]
        .iter()
        .flat_map(|d| &d.reasons)
        .map(|r| format!("{}({})", r.code, r.parameter.as_deref().unwrap_or("-")))
        .collect();
        writeln!(
            out,
            "{} {:?} {}",
            a.source.symbol,
            a.state,
            reasons.join(" ")
        )
        .unwrap();
        // Conditional ones too: a module of a package is conditional on its local imports
        // when assessed alone (`serve DIR --allow-conditional` serves it).
        let conditional = index.is_some() && a.state == ReadinessState::Conditional;
        if a.can_generate_interface || conditional {
            let contract = contracts_in_package(&parsed, &outcome.inspection, &[a], index).unwrap();
            let contract = &contract[0];
            writeln!(
                out,
                "  request {}",
                contract.request_schema().canonical_string().unwrap()
            )
            .unwrap();
            let returns = type_schema(&contract.returns).canonical_string().unwrap();
            writeln!(out, "  returns {returns}").unwrap();
        }
    }
    if let Some(explanation) = &outcome.explanation {
        let module = explanation.module_reasons.iter();
        for reason in module.chain(explanation.capabilities.iter().flat_map(|c| &c.reasons)) {
            if !matches!(reason.code, "APIZR-READY-013" | "APIZR-READY-004") {
                continue;
            }
            for culprit in &reason.culprits {
                let note = culprit.note.as_deref().unwrap_or("");
                writeln!(
                    out,
                    "  {} {}:{} {note}",
                    reason.code, culprit.span.line, culprit.span.column
                )
                .unwrap();
            }
            writeln!(out, "  fix: {}", reason.fix).unwrap();
        }
    }
    out
}

#[test]
fn classes_are_exact_json_types_under_v2_and_stay_refused_under_v1() {
    let v1 = summary("shapes.py", ReadinessPolicy::V1);
    let v2 = summary("shapes.py", ReadinessPolicy::V2);
    // v1 is untouched: the class parameters keep READY-013, no contract is built.
    assert!(v1.contains("APIZR-READY-013(shape)"), "{v1}");
    assert!(v1.contains("APIZR-READY-013(color)"), "{v1}");
    // v2: every function is ready, with exact schemas.
    assert!(!v2.contains("READY-013"), "{v2}");
    let color = r#"{"anyOf":[{"const":"red","type":"string"},{"const":"green","type":"string"},{"const":42,"type":"integer"}]}"#;
    assert!(v2.contains(&format!(r#""color":{color}"#)), "{v2}");
    let point = r#"{"additionalProperties":false,"properties":{"label":{"anyOf":[{"type":"string"},{"type":"null"}]},"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x"],"type":"object"}"#;
    assert!(v2.contains(&format!("returns {point}")), "{v2}");
    let pair = r#"{"additionalProperties":false,"properties":{"left":{"type":"string"},"right":{"type":"number"}},"required":["left"],"type":"object"}"#;
    assert!(v2.contains(&format!(r#""pair":{pair}"#)), "{v2}");
    // Aliases, one bound only under `if TYPE_CHECKING:`, stand for their value.
    let outline = r#"request {"additionalProperties":false,"properties":{"corners":{"items":"#;
    assert!(v2.contains(outline), "{v2}");
    assert!(
        v2.contains(r#""score":{"anyOf":[{"type":"integer"},{"type":"number"}]}"#),
        "{v2}"
    );
    insta::assert_snapshot!("input_types_shapes", format!("--- v1\n{v1}--- v2\n{v2}"));
}

#[test]
fn unprovable_classes_keep_ready_013_naming_the_parameter_and_why() {
    let v2 = summary("refused.py", ReadinessPolicy::V2);
    for (param, why) in [
        // `auto()` in a `(str, Enum)` mixin: its value is not fixed by the stdlib rule.
        (
            "a",
            "enum member `A`: this `auto()` value is not fixed statically",
        ),
        (
            "d",
            "dataclass base classes other than a dataclass of the module are unsupported",
        ),
        // Inherited fields that would make class creation raise, or a frozen mismatch.
        ("l", "field `w` has no default but follows a field with one"),
        ("t", "base class `Ice`: both must be `frozen` alike"),
        ("h", "field `secret`: `field(init=...)` is unsupported"),
        ("o", "field `payload` does not have a precise JSON type"),
        // An alias bound twice is not an alias (v1's reason stays).
        ("t", "`Twice` is bound 2 times"),
    ] {
        assert!(
            v2.contains(&format!("APIZR-READY-013({param})")),
            "{param}: {v2}"
        );
        assert!(v2.contains(why), "{why}: {v2}");
    }
    // An alias of a non-JSON type gives the parameter the alias value's reason.
    assert!(v2.contains("APIZR-READY-013(b)"), "{v2}");
    insta::assert_snapshot!("input_types_refused", v2);
}

/// `Sequence[T]`, `Iterable[T]`, `Collection[T]` and `MutableSequence[T]` (typing or
/// collections.abc, every import spelling) are arrays of T under v2: the worker passes a
/// `list`, which is each of them; abstract sets are sets, `Mapping[str, T]` objects. v1 keeps
/// READY-013; `Reversible` and `Iterator` (not in the rule; a list is not an Iterator) keep it
/// under v2, and a mapping with non-string keys gets READY-012 as `dict[int, T]` does.
#[test]
fn abstract_collections_a_list_satisfies_are_json_arrays_under_v2_only() {
    let v1 = summary("collections.py", ReadinessPolicy::V1);
    let v2 = summary("collections.py", ReadinessPolicy::V2);
    let names = [
        "total", "join", "count", "push", "nested", "spelled", "anything",
    ];
    for name in names.into_iter().chain(["members", "lookup", "mapping"]) {
        assert!(v1.contains(&format!("{name} Conditional")), "{name}: {v1}");
        assert!(v2.contains(&format!("{name} Ready")), "{name}: {v2}");
    }
    let ints = r#"{"items":{"type":"integer"},"type":"array"}"#;
    assert!(v2.contains(&format!(r#""values":{ints}"#)), "{v2}");
    let rows = r#""rows":{"items":{"items":{"type":"number"},"type":"array"},"type":"array"}"#;
    assert!(v2.contains(rows), "{v2}");
    let spelled = r#""a":{"items":{"type":"string"},"type":"array"},"b":{"items":{"type":"integer"},"type":"array"}"#;
    assert!(v2.contains(spelled), "{v2}");
    // Abstract sets are sets (unique items), mappings are objects with string keys.
    let sets = r#""more":{"items":{"type":"integer"},"type":"array","uniqueItems":true},"tags":{"items":{"type":"string"},"type":"array","uniqueItems":true}"#;
    assert!(v2.contains(sets), "{v2}");
    let maps = r#""extra":{"additionalProperties":{"type":"string"},"type":"object"},"table":{"additionalProperties":{"type":"integer"},"type":"object"}"#;
    assert!(v2.contains(maps), "{v2}");
    assert!(
        v2.contains("int_keys Unsupported APIZR-READY-012(table)"),
        "{v2}"
    );
    // A bare ABC is an array of any JSON value (READY-007 keeps it ready).
    assert!(
        v2.contains(r#""values":{"items":{},"type":"array"}"#),
        "{v2}"
    );
    for (name, param) in [("reversible", "values"), ("iterator", "values")] {
        assert!(
            v2.contains(&format!("{name} Conditional APIZR-READY-013({param})")),
            "{name}: {v2}"
        );
    }
    insta::assert_snapshot!(
        "input_types_collections",
        format!("--- v1\n{v1}--- v2\n{v2}")
    );
}

/// `bytes` and `bytearray` (also nested in lists, dicts, sets and `Optional`) are base64 JSON
/// strings under v2 (`contentEncoding: base64`); v1 keeps READY-012/013. As a return type
/// `bytes`, or a class holding it, stays READY-016 (the result would not be JSON), and
/// `memoryview` keeps READY-013 under v2.
#[test]
fn bytes_and_bytearray_are_base64_strings_under_v2_only() {
    let v1 = summary("blobs.py", ReadinessPolicy::V1);
    let v2 = summary("blobs.py", ReadinessPolicy::V2);
    assert!(
        v1.contains("size Unsupported APIZR-READY-012(data)"),
        "{v1}"
    );
    assert!(v1.contains("grow Conditional APIZR-READY-013(buf)"), "{v1}");
    for name in ["size", "grow", "chunks", "keyed", "echo"] {
        let ready = format!("{name} Ready");
        assert!(v2.lines().any(|l| l.starts_with(&ready)), "{name}: {v2}");
    }
    let b64 = r#"{"contentEncoding":"base64","type":"string"}"#;
    assert!(v2.contains(&format!(r#""data":{b64}"#)), "{v2}");
    assert!(v2.contains(&format!(r#""buf":{b64}"#)), "{v2}");
    let parts = format!(r#""parts":{{"items":{b64},"type":"array"}}"#);
    assert!(v2.contains(&parts), "{v2}");
    let unique = format!(r#""unique":{{"items":{b64},"type":"array","uniqueItems":true}}"#);
    assert!(v2.contains(&unique), "{v2}");
    assert!(v2.contains("echo Ready APIZR-READY-016(-)\n"), "{v2}");
    assert!(
        v2.contains("view Conditional APIZR-READY-013(data)"),
        "{v2}"
    );
    assert!(v2.contains("record Ready APIZR-READY-016(-)\n"), "{v2}");
    insta::assert_snapshot!("input_types_blobs", format!("--- v1\n{v1}--- v2\n{v2}"));
}

/// The IR's schema version and each capability's parameters as `name:kind`.
fn ir_parameters(file: &str, policy: ReadinessPolicy) -> String {
    let bytes = std::fs::read(format!("{DIR}/{file}")).unwrap();
    let options = InspectOptions {
        readiness: policy,
        ..InspectOptions::default()
    };
    let (outcome, _) = apizr_inspect::on_inspect_stack(|| {
        inspect_bytes_in_index(&bytes, SourceKind::Python, "shapes", options, None, None)
    })
    .unwrap()
    .unwrap();
    let ir = &outcome.inspection.capability_ir;
    let mut out = format!("{}\n", ir.schema_version);
    for c in &ir.capabilities {
        let params: Vec<String> = c
            .signature
            .parameters
            .iter()
            .map(|p| {
                format!(
                    "{}:{}",
                    p.name,
                    apizr_ir::to_value(&p.kind)
                        .unwrap()
                        .canonical_string()
                        .unwrap()
                )
            })
            .collect();
        writeln!(out, "  {} {}", c.name, params.join(" ")).unwrap();
    }
    out
}

/// `*args`/`**kwargs` under v2 are parameters (IR kinds `var_positional`/`var_keyword`, schema
/// `apizr.capability/v2`): `*args: T` an array of T that needs every optional positional
/// parameter before it, `**kwargs: T` the object's other keys (its own name excepted);
/// unannotated they are Any (READY-007, a ready note), an item type v2 cannot build keeps
/// READY-013 on the parameter. v1 keeps the reference's READY-011 and IR v1 (no capability).
#[test]
fn variadic_parameters_are_contract_parameters_under_v2_only() {
    let v1 = summary("variadics.py", ReadinessPolicy::V1);
    let v2 = summary("variadics.py", ReadinessPolicy::V2);
    assert!(v1.contains("total Unsupported APIZR-READY-011(-)"), "{v1}");
    assert!(!v1.contains("request"), "{v1}");
    for name in ["total", "tag", "spread"] {
        let ready = format!("{name} Ready");
        assert!(v2.lines().any(|l| l.starts_with(&ready)), "{name}: {v2}");
    }
    assert!(v2.contains("APIZR-READY-007(args)"), "{v2}");
    assert!(v2.contains("APIZR-READY-007(kwargs)"), "{v2}");
    assert!(
        v2.contains("view Conditional APIZR-READY-013(chunks)"),
        "{v2}"
    );
    let total = r#"request {"additionalProperties":false,"properties":{"first":{"type":"integer"},"rest":{"items":{"type":"integer"},"type":"array"}},"required":["first"],"type":"object"}"#;
    assert!(v2.contains(total), "{v2}");
    let tag = r#"request {"additionalProperties":{"type":"string"},"properties":{"name":{"type":"string"}},"propertyNames":{"not":{"const":"attributes"}},"required":["name"],"type":"object"}"#;
    assert!(v2.contains(tag), "{v2}");
    assert!(
        v2.contains(r#""dependentRequired":{"args":["b","c"]}"#),
        "{v2}"
    );
    let ir_v1 = ir_parameters("variadics.py", ReadinessPolicy::V1);
    let ir_v2 = ir_parameters("variadics.py", ReadinessPolicy::V2);
    assert_eq!(ir_v1, "apizr.capability/v1\n", "{ir_v1}");
    assert!(ir_v2.starts_with("apizr.capability/v2\n"), "{ir_v2}");
    let spread = r#"spread a:"positional_only" b:"positional_only" c:"positional_or_keyword" args:"var_positional" d:"keyword_only" kwargs:"var_keyword""#;
    assert!(ir_v2.contains(spread), "{ir_v2}");
    // A v2 IR without variadics keeps the v1 label.
    assert!(ir_parameters("shapes.py", ReadinessPolicy::V2).starts_with("apizr.capability/v1\n"));
    insta::assert_snapshot!(
        "input_types_variadics",
        format!("--- v1\n{v1}{ir_v1}--- v2\n{v2}{ir_v2}")
    );
}

const PACKAGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/input_types_pkg");

/// Per function of `module`: (state, reason codes) from `inspect DIR`'s package-aware verdict.
fn package_verdicts(module: &str, policy: ReadinessPolicy) -> Vec<(String, String, String)> {
    let options = ProjectOptions {
        inspect: InspectOptions {
            readiness: policy,
            ..InspectOptions::default()
        },
        threads: Some(2),
        keep_envelopes: true,
    };
    let project = inspect_dir(std::path::Path::new(PACKAGE), &options).unwrap();
    let entry = project
        .modules
        .iter()
        .find(|e| e.module.as_deref() == Some(module))
        .unwrap();
    let report = entry.result.as_ref().unwrap();
    let envelope: serde_json::Value = serde_json::from_slice(&report.envelope).unwrap();
    let mut out = Vec::new();
    for a in envelope["readiness"]["assessments"].as_array().unwrap() {
        let codes: Vec<String> = ["inputs", "outputs", "execution"]
            .iter()
            .flat_map(|d| a["dimensions"][d]["reasons"].as_array().unwrap())
            .map(|r| {
                format!(
                    "{}({})",
                    r["code"].as_str().unwrap(),
                    r["parameter"].as_str().unwrap_or("-")
                )
            })
            .collect();
        out.push((
            a["source"]["symbol"].as_str().unwrap().to_string(),
            a["state"].as_str().unwrap().to_string(),
            codes.join(" "),
        ));
    }
    out
}

#[test]
fn classes_imported_from_sibling_modules_are_exact_json_types_under_v2() {
    // `inspect DIR --readiness v2`: the package-aware verdict. Every function of `shop.api`
    // is ready: its parameters name a dataclass, an Enum, a NamedTuple and an alias of
    // `shop.models`/`shop.kinds` (imported at module level), and a frozen dataclass of
    // `shop.extra` imported only under `if TYPE_CHECKING:` (the worker imports `shop.extra`,
    // which is proved harmless like an import in a function body).
    for (symbol, state, codes) in package_verdicts("shop.api", ReadinessPolicy::V2) {
        assert_eq!((state.as_str(), codes.as_str()), ("ready", ""), "{symbol}");
    }
    // v1 over the same tree is unchanged: the class parameters stay READY-013.
    let v1 = package_verdicts("shop.api", ReadinessPolicy::V1);
    assert!(
        v1.iter()
            .any(|(s, _, c)| s == "move" && c.contains("APIZR-READY-013(p)")),
        "{v1:?}"
    );

    // `serve DIR`/`generate DIR`: the module assessed alone (its local imports make it
    // conditional) with the package index: the same exact schemas, and the class keeps its
    // real module, which the worker imports to build the instance.
    let index = PackageIndex::scan(std::path::Path::new(PACKAGE)).unwrap();
    let api = format!("{PACKAGE}/shop/api.py");
    let served = summary_in(&api, "shop.api", ReadinessPolicy::V2, Some(&index));
    assert!(!served.contains("READY-013"), "{served}");
    let point = r#"{"additionalProperties":false,"properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x"],"type":"object"}"#;
    assert!(served.contains(&format!("returns {point}")), "{served}");
    assert!(
        served.contains(&format!(r#""ps":{{"items":{point},"type":"array"}}"#)),
        "{served}"
    );
    let color = r#"{"anyOf":[{"const":"red","type":"string"},{"const":"green","type":"string"}]}"#;
    assert!(served.contains(&format!(r#""c":{color}"#)), "{served}");
    let bytes = std::fs::read(&api).unwrap();
    let options = InspectOptions {
        readiness: ReadinessPolicy::V2,
        ..InspectOptions::default()
    };
    let contracts = apizr_inspect::on_inspect_stack(|| {
        let (outcome, parsed) = inspect_bytes_in_index(
            &bytes,
            SourceKind::Python,
            "shop.api",
            options,
            None,
            Some(&index),
        )
        .unwrap();
        let all: Vec<_> = outcome.inspection.readiness.assessments.iter().collect();
        contracts_in_package(&parsed, &outcome.inspection, &all, Some(&index)).unwrap()
    })
    .unwrap();
    let unbox = contracts.iter().find(|c| c.name == "unbox").unwrap();
    let modules: Vec<(String, String)> = unbox
        .parameters
        .iter()
        .map(|p| {
            let python = p.type_spec.python.as_ref().unwrap();
            (python.module.clone(), python.name.clone())
        })
        .collect();
    assert_eq!(
        modules,
        [
            ("shop.extra".to_string(), "Box".to_string()),
            ("shop.models".to_string(), "Pair".to_string())
        ]
    );
    // A single file (no package index) stays as today.
    let alone = summary_in(&api, "shop.api", ReadinessPolicy::V2, None);
    assert!(alone.contains("APIZR-READY-013(p)"), "{alone}");
}

#[test]
fn imported_classes_that_cannot_be_proved_keep_ready_013_naming_the_parameter_and_why() {
    let verdicts = package_verdicts("shop.refused", ReadinessPolicy::V2);
    for param in ["h", "l", "r"] {
        assert!(
            verdicts
                .iter()
                .any(|(_, _, c)| c.contains(&format!("APIZR-READY-013({param})"))),
            "{param}: {verdicts:?}"
        );
    }
    // A class imported only under `if TYPE_CHECKING:` from a module whose top level is not
    // proved (`shop.noisy` prints at import): the worker would import it to build the
    // argument, so the import is judged as one that runs (READY-015), never excused.
    let (_, state, codes) = verdicts.iter().find(|(s, _, _)| s == "noisy").unwrap();
    assert_ne!(state, "ready");
    assert!(codes.contains("APIZR-READY-015(-)"), "{codes}");
    let index = PackageIndex::scan(std::path::Path::new(PACKAGE)).unwrap();
    let path = format!("{PACKAGE}/shop/refused.py");
    let served = summary_in(&path, "shop.refused", ReadinessPolicy::V2, Some(&index));
    for why in [
        // A field without a JSON type, in the other module.
        "`Holder` of `shop.models`: field `payload` does not have a precise JSON type",
        // A cycle of type imports (`shop.cycle` reads `Ring2` back from this module).
        "`Ring` of `shop.cycle`: field `next` does not have a precise JSON type",
    ] {
        assert!(served.contains(why), "{why}: {served}");
    }
    // A plain class is no input type: v1's reason (a name bound by an import) stays.
    assert!(served.contains("APIZR-READY-013(l)"), "{served}");
}

#[test]
fn auto_values_are_the_ones_cpython_gives_where_the_stdlib_fixes_them() {
    let v2 = summary("auto.py", ReadinessPolicy::V2);
    let level = r#""level":{"anyOf":[{"const":1,"type":"integer"},{"const":5,"type":"integer"},{"const":6,"type":"integer"}]}"#;
    let mode = r#""mode":{"anyOf":[{"const":"fast","type":"string"},{"const":"slow_path","type":"string"}]}"#;
    let plain = r#""plain":{"anyOf":[{"const":1,"type":"integer"},{"const":2,"type":"integer"}]}"#;
    for schema in [level, mode, plain] {
        assert!(v2.contains(schema), "{schema}: {v2}");
    }
    // The worker's CPython agrees (each enum's member values, in definition order).
    let script = "import runpy,sys\nns=runpy.run_path(sys.argv[1])\n\
                  print([[m.value for m in ns[c]] for c in ('Level','Mode','Plain')])";
    let out = std::process::Command::new("python3")
        .args(["-c", script, &format!("{DIR}/auto.py")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        "[[1, 5, 6], ['fast', 'slow_path'], [1, 2]]"
    );
    // Not fixed statically: a `(str, Enum)` mixin, and a last value below an earlier one
    // (3.11 adds one to the last value, 3.12 to the largest).
    for (param, member) in [("m", "A"), ("d", "C")] {
        assert!(
            v2.contains(&format!("APIZR-READY-013({param})")),
            "{param}: {v2}"
        );
        let why = format!("enum member `{member}`: this `auto()` value is not fixed statically");
        assert!(v2.contains(&why), "{why}: {v2}");
    }
}

#[test]
fn dataclasses_inherit_the_fields_of_a_proved_dataclass_base_in_cpythons_order() {
    let v2 = summary("inherit.py", ReadinessPolicy::V2);
    let derived = r#""d":{"additionalProperties":false,"properties":{"label":{"type":"string"},"x":{"type":"integer"},"z":{"type":"number"}},"required":["x"],"type":"object"}"#;
    let frozen = r#""f":{"additionalProperties":false,"properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x"],"type":"object"}"#;
    for schema in [derived, frozen] {
        assert!(v2.contains(schema), "{schema}: {v2}");
    }
    // The fields CPython's dataclass machinery gives, in order, with whether each is
    // required: the same as the lowered objects'.
    let script = "import dataclasses as d,runpy,sys\nns=runpy.run_path(sys.argv[1])\n\
                  print([[(f.name, f.default is d.MISSING and f.default_factory is d.MISSING) \
                  for f in d.fields(ns[c])] for c in ('Derived','FrozenToo')])";
    let out = std::process::Command::new("python3")
        .args(["-c", script, &format!("{DIR}/inherit.py")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let python = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        python.trim(),
        "[[('x', True), ('label', False), ('z', False)], [('x', True), ('y', False)]]"
    );
    let options = InspectOptions {
        readiness: ReadinessPolicy::V2,
        ..InspectOptions::default()
    };
    let bytes = std::fs::read(format!("{DIR}/inherit.py")).unwrap();
    let fields = apizr_inspect::on_inspect_stack(|| {
        let (outcome, parsed) =
            inspect_bytes_in_index(&bytes, SourceKind::Python, "inherit", options, None, None)
                .unwrap();
        let all: Vec<_> = outcome.inspection.readiness.assessments.iter().collect();
        let contracts = contracts_in_package(&parsed, &outcome.inspection, &all, None).unwrap();
        contracts[0]
            .parameters
            .iter()
            .map(|p| {
                let fields = p.type_spec.fields.as_ref().unwrap();
                let listed: Vec<String> = fields
                    .iter()
                    .map(|f| {
                        format!(
                            "('{}', {})",
                            f.name,
                            if f.required { "True" } else { "False" }
                        )
                    })
                    .collect();
                format!("[{}]", listed.join(", "))
            })
            .collect::<Vec<_>>()
    })
    .unwrap();
    assert_eq!(format!("[{}]", fields.join(", ")), python.trim());
}

/// Builds a wheel (a real zip, deflated, as pip writes them) with these file names.
fn wheel(path: &std::path::Path, files: &[&str]) {
    let script = "import sys, zipfile\n\
                  with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n\
                  \x20   for name in sys.argv[2:]:\n\
                  \x20       z.writestr(name, '# ' + name + '\\n' * 64)\n";
    let status = std::process::Command::new("python3")
        .args(["-c", script, path.to_str().unwrap()])
        .args(files)
        .status()
        .unwrap();
    assert!(status.success());
}

/// A distribution whose import name differs (`PyYAML` installs `yaml`): under v2 the import is
/// declared only when the wheel the bundle installs says so — read from the wheel's file list,
/// never guessed; without it the refusal names the declared distributions and `--wheelhouse`.
#[test]
fn import_names_of_declared_distributions_come_from_their_wheels() {
    use apizr_inspect::package::{wheel_imports, wheelhouse_imports};
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("requirements.txt"), "PyYAML>=6\n").unwrap();
    std::fs::write(
        project.join("app.py"),
        "import yaml\n\n\ndef f(x: int) -> int:\n    return x\n",
    )
    .unwrap();
    let wheels = tmp.path().join("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    // Files of a platform wheel: packages, an extension module, a `.data` purelib tree; the
    // metadata and scripts install no import name.
    let files = [
        "yaml/__init__.py",
        "yaml/composer.py",
        "_yaml.cpython-311-x86_64-linux-gnu.so",
        "PyYAML-6.0.1.data/purelib/yaml_extra/__init__.py",
        "PyYAML-6.0.1.data/scripts/yamltool",
        "PyYAML-6.0.1.dist-info/METADATA",
        "PyYAML-6.0.1.dist-info/RECORD",
    ];
    let pyyaml = wheels.join("PyYAML-6.0.1-cp311-cp311-linux_x86_64.whl");
    wheel(&pyyaml, &files);
    let names = wheel_imports(&std::fs::read(&pyyaml).unwrap()).unwrap();
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        ["_yaml", "yaml", "yaml_extra"]
    );
    let verdict = |provides: &std::collections::BTreeMap<String, String>| {
        let options = ProjectOptions {
            inspect: InspectOptions {
                explain: true,
                readiness: ReadinessPolicy::V2,
                ..InspectOptions::default()
            },
            threads: Some(1),
            keep_envelopes: true,
        };
        let project =
            apizr_inspect::project::inspect_dir_with_wheels(&project, &options, &|_| {}, provides)
                .unwrap();
        let report = project.modules[0].result.as_ref().unwrap();
        let envelope: serde_json::Value = serde_json::from_slice(&report.envelope).unwrap();
        let assessment = &envelope["readiness"]["assessments"][0];
        let codes: Vec<String> = assessment["dimensions"]["execution"]["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["code"].as_str().unwrap().to_string())
            .collect();
        let explanation = report.explanation.as_ref().unwrap();
        let fixes: Vec<String> = explanation
            .module_reasons
            .iter()
            .chain(explanation.capabilities.iter().flat_map(|c| &c.reasons))
            .map(|r| r.fix.clone())
            .collect();
        (
            assessment["state"].as_str().unwrap().to_string(),
            codes,
            fixes.join("\n"),
        )
    };
    // No wheel: refused, saying what was declared and how to make the mapping known.
    let (state, codes, fixes) = verdict(&Default::default());
    assert_ne!(state, "ready");
    assert_eq!(codes, ["APIZR-READY-015"]);
    assert!(fixes.contains("(declared here: pyyaml)"), "{fixes}");
    assert!(fixes.contains("--wheelhouse DIR"), "{fixes}");
    // The wheel of the declared distribution installs `yaml`: ready, explicitly (READY-020).
    let provides = wheelhouse_imports(&wheels).unwrap();
    assert_eq!(provides.get("yaml").map(String::as_str), Some("pyyaml"));
    let (state, codes, _) = verdict(&provides);
    assert_eq!(
        (state.as_str(), codes),
        ("ready", vec!["APIZR-READY-020".to_string()])
    );
    // A wheel of a distribution the project does not declare proves nothing.
    std::fs::remove_file(&pyyaml).unwrap();
    wheel(&wheels.join("yamlish-1.0-py3-none-any.whl"), &files[..2]);
    let (state, codes, _) = verdict(&wheelhouse_imports(&wheels).unwrap());
    assert_ne!(state, "ready");
    assert_eq!(codes, ["APIZR-READY-015"]);
}

/// `@total_ordering` (bound as `total_ordering` or `functools.total_ordering`) over an enum
/// whose body defines an ordering method is a literal of its values, as without it; the near
/// miss without an ordering method keeps READY-013 naming the decorator rule, and CPython
/// refuses that class with `ValueError` while it builds the proved ones by value.
#[test]
fn total_ordering_enums_are_literals_of_their_values_when_the_body_orders_them() {
    let v2 = summary("ordered.py", ReadinessPolicy::V2);
    assert!(v2.starts_with("coarser Ready \n"), "{v2}");
    let unit = r#""unit":{"anyOf":[{"const":0,"type":"integer"},{"const":1,"type":"integer"},{"const":2,"type":"integer"}]}"#;
    let size = r#""size":{"anyOf":[{"const":"s","type":"string"},{"const":"l","type":"string"}]}"#;
    for schema in [unit, size] {
        assert!(v2.contains(schema), "{schema}: {v2}");
    }
    let v1 = summary("ordered.py", ReadinessPolicy::V1);
    assert!(v1.contains("APIZR-READY-013(unit)"), "{v1}");
    let near = summary("unordered.py", ReadinessPolicy::V2);
    assert!(near.contains("APIZR-READY-013(unit)"), "{near}");
    assert!(
        near.contains("enum decorators other than `unique`, or `total_ordering` over an ordering method, are unsupported"),
        "{near}"
    );
    let script = "import runpy,sys\nns=runpy.run_path(sys.argv[1])\n\
                  print(ns['coarser'](ns['Unit'](2), ns['Size']('s')).value)\n\
                  try:\n    runpy.run_path(sys.argv[2])\nexcept ValueError as e:\n    print(e)";
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            script,
            &format!("{DIR}/ordered.py"),
            &format!("{DIR}/unordered.py"),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "2\nmust define at least one ordering operation: < > <= >=\n"
    );
}

/// String annotations are forward references under v2: `NumberOrString: TypeAlias = "float |
/// str"` (TypeAlias bound only under `if TYPE_CHECKING:`, once per Python version, as in
/// humanize) and `"te.Literal[...]"` (`import typing_extensions as te` under TYPE_CHECKING, as
/// in click and jinja2) lower to the type they spell. Near misses keep READY-013 at the
/// string: one that does not parse, one naming nothing, a string inside a forward reference,
/// and a plain string constant used as an alias. v1 keeps READY-013 for all of them.
#[test]
fn string_annotations_are_forward_references_resolved_in_the_module_under_v2() {
    let v2 = summary("forward.py", ReadinessPolicy::V2);
    for name in ["ordinal", "stream", "sort_by", "listed"] {
        let ready = format!("{name} Ready \n");
        assert!(
            v2.lines().any(|l| format!("{l}\n") == ready),
            "{name}: {v2}"
        );
    }
    let number = r#"{"anyOf":[{"type":"number"},{"type":"string"}]}"#;
    assert!(v2.contains(&format!(r#""value":{number}"#)), "{v2}");
    assert!(
        v2.contains(&format!(r#""items":{{"items":{number},"type":"array"}}"#)),
        "{v2}"
    );
    let streams = r#""name":{"anyOf":[{"const":"stdin","type":"string"},{"const":"stdout","type":"string"},{"const":"stderr","type":"string"}]}"#;
    assert!(v2.contains(streams), "{v2}");
    assert!(
        v2.contains(
            r#""by":{"anyOf":[{"const":"key","type":"string"},{"const":"value","type":"string"}]}"#
        ),
        "{v2}"
    );
    for (name, at) in [
        ("broken", "39:15"),
        ("unknown", "43:16"),
        ("nested", "47:15"),
        ("constant", "54:17"),
    ] {
        assert!(
            v2.contains(&format!("{name} Conditional APIZR-READY-013(x)")),
            "{name}: {v2}"
        );
        assert!(v2.contains(&format!("APIZR-READY-013 {at}")), "{at}: {v2}");
    }
    let v1 = summary("forward.py", ReadinessPolicy::V1);
    for param in ["value", "name", "by", "items"] {
        assert!(
            v1.contains(&format!("APIZR-READY-013({param})")),
            "{param}: {v1}"
        );
    }
    assert!(!v1.contains("request"), "{v1}");
}

/// `datetime.date`/`datetime`/`time`/`timedelta` (through `import datetime [as m]`, `from
/// datetime import ...` or a TYPE_CHECKING-only import) are exact JSON types under v2: strict
/// RFC 3339 strings with a `pattern` and a `description` stating naive vs aware, a bounded
/// number of seconds for timedelta. A set of them keeps READY-013 (Python's equality is not
/// the JSON text's) and a returned one READY-016; v1 keeps READY-013 for all of them.
#[test]
fn datetime_classes_are_strict_rfc3339_strings_under_v2_only() {
    let v2 = summary("temporal.py", ReadinessPolicy::V2);
    for name in ["stamp", "day", "clock", "span", "either", "later", "many"] {
        let ready = format!("{name} Ready \n");
        assert!(
            v2.lines().any(|l| format!("{l}\n") == ready),
            "{name}: {v2}"
        );
    }
    let schema = |kind| {
        type_schema(&apizr_ir::TypeSpec::simple(kind))
            .canonical_string()
            .unwrap()
    };
    let (date, datetime) = (
        schema(apizr_ir::TypeKind::Date),
        schema(apizr_ir::TypeKind::Datetime),
    );
    let delta = schema(apizr_ir::TypeKind::Timedelta);
    assert_eq!(
        delta,
        r#"{"description":"datetime.timedelta: seconds, fractions rounded to microseconds","maximum":86399999999999,"minimum":-86399999913600,"type":"number"}"#
    );
    assert!(datetime.contains(r#""pattern":"^([0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,6})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])?$""#), "{datetime}");
    assert!(
        datetime.contains("naive without an offset, aware (fixed offset)"),
        "{datetime}"
    );
    assert!(v2.contains(&format!(r#""value":{datetime}"#)), "{v2}");
    assert!(v2.contains(&format!(r#""value":{date}"#)), "{v2}");
    assert!(v2.contains(&format!(r#""value":{delta}"#)), "{v2}");
    assert!(
        v2.contains(&format!(r#""value":{{"anyOf":[{date},{datetime}]}}"#)),
        "{v2}"
    );
    assert!(
        v2.contains(&format!(
            r#""gaps":{{"additionalProperties":{delta},"type":"object"}}"#
        )),
        "{v2}"
    );
    assert!(
        v2.contains("unique Conditional APIZR-READY-013(values)"),
        "{v2}"
    );
    assert!(v2.contains("APIZR-READY-013 42:20"), "{v2}");
    assert!(v2.contains("take a `list` instead of `set[date]`"), "{v2}");
    assert!(v2.contains("now Ready APIZR-READY-016(-)\n"), "{v2}");
    let v1 = summary("temporal.py", ReadinessPolicy::V1);
    for name in ["stamp", "day", "clock", "span", "either", "later", "many"] {
        assert!(
            v1.contains(&format!("{name} Conditional APIZR-READY-013")),
            "{name}: {v1}"
        );
    }
    assert!(!v1.contains("request"), "{v1}");
}

/// `frozenset[T]` is an array of unique items under v2 (a frozenset of them in the worker,
/// hashable so a set may hold it); v1 keeps READY-013, and a bare `frozenset` keeps READY-013
/// under v2 too (no item type).
#[test]
fn frozensets_are_arrays_of_unique_items_under_v2_only() {
    let v2 = summary("frozen.py", ReadinessPolicy::V2);
    for name in ["skip_until", "groups"] {
        let ready = format!("{name} Ready \n");
        assert!(
            v2.lines().any(|l| format!("{l}\n") == ready),
            "{name}: {v2}"
        );
    }
    let strs = r#""error_on":{"items":{"type":"string"},"type":"array","uniqueItems":true}"#;
    assert!(v2.contains(strs), "{v2}");
    let nested = r#""members":{"items":{"items":{"type":"integer"},"type":"array","uniqueItems":true},"type":"array","uniqueItems":true}"#;
    assert!(v2.contains(nested), "{v2}");
    assert!(v2.contains("bare Conditional APIZR-READY-013(x)"), "{v2}");
    let v1 = summary("frozen.py", ReadinessPolicy::V1);
    assert!(
        v1.contains("skip_until Conditional APIZR-READY-013(error_on)"),
        "{v1}"
    );
    assert!(
        v1.contains("groups Conditional APIZR-READY-013(members)"),
        "{v1}"
    );
}
