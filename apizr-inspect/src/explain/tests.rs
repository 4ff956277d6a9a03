use super::*;
use crate::InspectOptions;
use apizr_ir::SourceKind;

fn explained(text: &str) -> Explanation {
    let options = InspectOptions {
        explain: true,
        ..InspectOptions::default()
    };
    crate::inspect_bytes(text.as_bytes(), SourceKind::Python, "m", options)
        .unwrap()
        .explanation
        .unwrap()
}

#[test]
fn module_reasons_are_listed_once_and_not_per_function() {
    let doc = explained(
        "import numpy\n\ndef f(x: int) -> int:\n    return x\n\ndef g(y: int) -> int:\n    return y\n",
    );
    assert_eq!(doc.module_reasons.len(), 1);
    let reason = &doc.module_reasons[0];
    assert_eq!(reason.code, "APIZR-READY-015");
    assert_eq!(reason.culprits[0].text, "numpy");
    assert_eq!(reason.culprits[0].span.line, 1);
    assert_eq!(reason.culprits[0].span.column, 8);
    assert!(reason.fix.contains("`numpy`"), "{}", reason.fix);
    assert!(doc.module_advice.is_some());
    for cap in &doc.capabilities {
        assert!(cap.module_reasons && cap.reasons.is_empty());
        assert!(
            cap.next_step
                .as_deref()
                .unwrap()
                .contains("--allow-conditional")
        );
    }
}

#[test]
fn every_reason_of_the_report_is_explained_once() {
    let text = "import os, json\nfrom typing import List as L\nX = [1 for _ in ()]\n\
                def f(a, b: L[int], c: bytes | str = b'') -> 'Foo':\n    import requests\n    return a\n";
    let options = InspectOptions {
        explain: true,
        ..InspectOptions::default()
    };
    let outcome = crate::inspect_bytes(text.as_bytes(), SourceKind::Python, "m", options).unwrap();
    let doc = outcome.explanation.unwrap();
    let assessment = &outcome.inspection.readiness.assessments[0];
    let d = &assessment.dimensions;
    let reported: Vec<(u32, &str, Option<&str>)> =
        [&d.binding, &d.execution, &d.inputs, &d.outputs]
            .iter()
            .flat_map(|dim| dim.reasons.iter())
            .map(|r| (r.line, r.code, r.parameter.as_deref()))
            .collect();
    let mut explained: Vec<(u32, &str, Option<&str>)> = doc
        .module_reasons
        .iter()
        .chain(&doc.capabilities[0].reasons)
        .map(|r| (r.line, r.code, r.parameter.as_deref()))
        .collect();
    let mut sorted = reported.clone();
    sorted.sort();
    explained.sort();
    assert_eq!(sorted, explained);
    for reason in doc
        .module_reasons
        .iter()
        .chain(&doc.capabilities[0].reasons)
    {
        assert!(
            !reason.culprits.is_empty(),
            "{} has no culprit",
            reason.code
        );
        assert!(!reason.fix.is_empty());
    }
}

#[test]
fn an_alias_fix_writes_the_type_out_only_when_that_would_work() {
    let doc = explained(
        "from typing import Union\nNum = Union[int, str]\nBad = Union[int, bytes]\n\
         def f(x: Num, y: Bad) -> int:\n    return 1\n",
    );
    let reasons = &doc.capabilities[0].reasons;
    let fix = |param: &str| {
        reasons
            .iter()
            .find(|r| r.parameter.as_deref() == Some(param) && r.code == "APIZR-READY-013")
            .map(|r| r.fix.clone())
            .unwrap()
    };
    assert!(fix("x").contains("`x: Union[int, str]`"), "{}", fix("x"));
    assert!(fix("y").contains("not a JSON type"), "{}", fix("y"));
    let note = reasons[0].culprits[0].note.as_deref().unwrap();
    assert!(note.contains("assignment at line 2"), "{note}");
}
