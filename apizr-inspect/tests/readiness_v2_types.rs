//! Readiness v2 input types (`tests/data/input_types/*.py`): Enum classes (by value),
//! dataclasses and NamedTuples of the module become exact JSON Schemas under v2 and keep
//! READY-013 under v1; classes whose JSON form cannot be proved keep READY-013 under v2 too,
//! naming the parameter and why. The snapshot records, per fixture and policy, each function's
//! state and reasons, and under v2 its request and return schemas (canonical JSON).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;

use apizr_inspect::interface::contracts_for;
use apizr_inspect::{InspectOptions, inspect_bytes_parsed};
use apizr_ir::interface::type_schema;
use apizr_ir::{ReadinessPolicy, SourceKind};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/input_types");

fn summary(file: &str, policy: ReadinessPolicy) -> String {
    let bytes = std::fs::read(format!("{DIR}/{file}")).unwrap();
    let options = InspectOptions {
        explain: true,
        readiness: policy,
        ..InspectOptions::default()
    };
    let (outcome, parsed) = apizr_inspect::on_inspect_stack(|| {
        inspect_bytes_parsed(&bytes, SourceKind::Python, "shapes", options)
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
        if a.can_generate_interface {
            let contract = contracts_for(&parsed, &outcome.inspection, &[a]).unwrap();
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
        ("a", "enum member `A` must have a JSON scalar literal value"),
        ("d", "dataclass base classes are unsupported"),
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
    // An alias of a non-JSON type gives the parameter the alias value's reason (READY-012).
    assert!(v2.contains("APIZR-READY-012(b)"), "{v2}");
    insta::assert_snapshot!("input_types_refused", v2);
}
