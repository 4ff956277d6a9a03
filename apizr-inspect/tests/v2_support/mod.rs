//! What the readiness v2 test files share: a single-file fixture that defines `probe`,
//! inspected with explanations under a policy, read as `probe`'s verdict and the culprits of
//! the module reasons (the statements and imports every function of the module pays for).

#![allow(dead_code)] // each test binary uses part of it

use apizr_inspect::{InspectOptions, inspect_bytes};
use apizr_ir::{ReadinessPolicy, SourceKind};

/// One culprit of a module reason: its reason code, where it is, and why.
pub struct Culprit {
    pub code: String,
    pub line: u32,
    pub column: u32,
    pub note: Option<String>,
}

/// Whether `probe` can become an interface when `source` is inspected under `policy`, and
/// every culprit of the module reasons.
pub fn probe(source: &str, policy: ReadinessPolicy) -> (bool, Vec<Culprit>) {
    let options = InspectOptions {
        explain: true,
        readiness: policy,
        ..InspectOptions::default()
    };
    let outcome = apizr_inspect::on_inspect_stack(|| {
        inspect_bytes(source.as_bytes(), SourceKind::Python, "fixture", options)
    })
    .unwrap()
    .unwrap();
    let ready = outcome
        .inspection
        .readiness
        .assessments
        .iter()
        .find(|a| a.source.symbol == "probe")
        .expect("every fixture defines probe")
        .can_generate_interface;
    let culprits = outcome
        .explanation
        .unwrap()
        .module_reasons
        .iter()
        .flat_map(|r| {
            r.culprits.iter().map(|c| Culprit {
                code: r.code.to_string(),
                line: c.span.line,
                column: c.span.column,
                note: c.note.clone(),
            })
        })
        .collect();
    (ready, culprits)
}

/// The notes of the culprits of reason `code`.
pub fn notes(culprits: &[Culprit], code: &str) -> Vec<String> {
    culprits
        .iter()
        .filter(|c| c.code == code)
        .filter_map(|c| c.note.clone())
        .collect()
}
