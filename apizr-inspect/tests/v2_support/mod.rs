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

/// The module of package directory `dir` whose path ends with `path_suffix`, inspected under
/// v2 with explanations: its envelope (as JSON) and its explanation.
pub fn package_module(
    dir: &std::path::Path,
    path_suffix: &str,
) -> (serde_json::Value, apizr_inspect::explain::Explanation) {
    let options = apizr_inspect::project::ProjectOptions {
        inspect: InspectOptions {
            explain: true,
            readiness: ReadinessPolicy::V2,
            ..InspectOptions::default()
        },
        threads: Some(1),
        keep_envelopes: true,
    };
    let project = apizr_inspect::project::inspect_dir(dir, &options).unwrap();
    let entry = project
        .modules
        .iter()
        .find(|m| m.path.ends_with(path_suffix))
        .unwrap();
    let report = entry.result.as_ref().unwrap();
    let envelope = serde_json::from_slice(&report.envelope).unwrap();
    (envelope, report.explanation.clone().unwrap())
}

/// Whether function `symbol` of the module of package directory `dir` whose path ends with
/// `path_suffix` is ready under v2, and the culprits (line, column, note) of that module's
/// reasons.
pub fn package_verdict(
    dir: &std::path::Path,
    path_suffix: &str,
    symbol: &str,
) -> (bool, Vec<(u32, u32, String)>) {
    let (envelope, explanation) = package_module(dir, path_suffix);
    let ready = envelope["readiness"]["assessments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["source"]["symbol"] == symbol)
        .unwrap_or_else(|| panic!("{path_suffix} defines {symbol}"))["can_generate_interface"]
        == true;
    let culprits = explanation
        .module_reasons
        .iter()
        .flat_map(|r| r.culprits.iter())
        .map(|c| {
            (
                c.span.line,
                c.span.column,
                c.note.clone().unwrap_or_default(),
            )
        })
        .collect();
    (ready, culprits)
}

/// `python3 -I -S -W error -B -c script` (isolated like the workers, warnings as errors, no
/// bytecode written into the fixtures): its output.
pub fn python_isolated(script: &str) -> std::process::Output {
    std::process::Command::new("python3")
        .args(["-I", "-S", "-W", "error", "-B", "-c", script])
        .output()
        .expect("python3 runs (CI installs it)")
}

/// `python3 -I -S -c driver` with `input` on stdin (the workers' isolated mode): its output.
pub fn python_stdin(driver: &str, input: &[u8]) -> std::process::Output {
    use std::io::Write as _;
    let mut child = std::process::Command::new("python3")
        .args(["-I", "-S", "-c", driver])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs (CI installs it)");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}
