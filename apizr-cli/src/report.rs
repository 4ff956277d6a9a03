//! The human-readable inspection report (`apizr inspect FILE`, the default `--format text`).
//!
//! It carries the same information as the reference tool's text mode (header with source,
//! module, kind, digests and counts; one block per assessment ordered by capability id; reasons
//! grouped by dimension; structured types; IR diagnostics) in our own wording, plus the
//! explanation of every reason: the culprit with its position (the notebook cell for
//! notebooks), a one-line fix, and the reasons every function shares printed once, above the
//! functions. Machines should read `--format json` (the envelope) or `--explain` (the
//! explanation document); this text may change between releases.

use std::collections::HashMap;
use std::fmt::Write as _;

use apizr_inspect::explain::{CapabilityExplanation, Explanation};
use apizr_ir::{
    Assessment, Capability, Dimension, ExecutionKind, Inspection, ReadinessState, Reason,
    ReasonCode, Severity, SourceKind,
};

use crate::style::Style;
use explained::{explained_block, module_reasons};

mod explained;

/// Render the report. Always ends with a newline. `source` is the path as the user wrote it
/// (for the commands the report suggests).
pub fn render(
    inspection: &Inspection,
    explanation: Option<&Explanation>,
    source: &str,
    style: Style,
) -> String {
    let mut out = String::new();
    header(&mut out, inspection, style);
    if let Some(explanation) = explanation {
        module_reasons(&mut out, explanation, style);
    }
    let capabilities: HashMap<&str, &Capability> = inspection
        .capability_ir
        .capabilities
        .iter()
        .map(|c| (c.id.as_str(), c))
        .collect();
    for assessment in &inspection.readiness.assessments {
        out.push('\n');
        let capability = capabilities.get(assessment.capability_id.as_str()).copied();
        let explained = explanation.and_then(|e| {
            e.capabilities
                .iter()
                .find(|c| c.capability_id == assessment.capability_id)
        });
        block(&mut out, assessment, capability, explained, source, style);
    }
    structured_types(&mut out, inspection, style);
    diagnostics(&mut out, inspection, style);
    verdict(&mut out, inspection, style);
    out
}

fn header(out: &mut String, inspection: &Inspection, style: Style) {
    let ir = &inspection.capability_ir;
    let kind = match ir.source.kind {
        SourceKind::Python => "Python module",
        SourceKind::Notebook => "notebook",
    };
    let _ = writeln!(
        out,
        "{} {}",
        style.bold(&format!("Inspection of `{}`", ir.source.module)),
        style.dim(&format!("({kind})"))
    );
    let mut row = |label: &str, value: String| {
        let _ = writeln!(out, "  {label:<19}{value}");
    };
    row("source digest", ir.source.digest.prefixed());
    if let Some(transformed) = &ir.source.transformed_digest {
        row("exported digest", transformed.prefixed());
    }
    row("IR digest", inspection.ir_digest.prefixed());
    row("readiness digest", inspection.readiness_digest.prefixed());
    row(
        "readiness policy",
        inspection.readiness.policy_version.to_string(),
    );
    row("capabilities", ir.capabilities.len().to_string());
    let assessments = &inspection.readiness.assessments;
    let count = |state: ReadinessState| assessments.iter().filter(|a| a.state == state).count();
    row(
        "assessments",
        format!(
            "{} ({} ready, {} conditional, {} unsupported, {} ambiguous)",
            assessments.len(),
            count(ReadinessState::Ready),
            count(ReadinessState::Conditional),
            count(ReadinessState::Unsupported),
            count(ReadinessState::Ambiguous),
        ),
    );
}

fn block(
    out: &mut String,
    assessment: &Assessment,
    capability: Option<&Capability>,
    explained: Option<&CapabilityExplanation>,
    source: &str,
    style: Style,
) {
    let span = &assessment.source;
    let lines = if span.end_line > span.line {
        format!("lines {}-{}", span.line, span.end_line)
    } else {
        format!("line {}", span.line)
    };
    let _ = writeln!(
        out,
        "{}  {}  {}",
        style.bold(&span.symbol),
        style.state(assessment.state, assessment.state.as_str()),
        style.dim(&format!("({lines}, {})", assessment.capability_id)),
    );
    let generate = if assessment.can_generate_interface {
        "can be generated"
    } else {
        "cannot be generated"
    };
    field(out, "interface", generate);
    match capability {
        Some(capability) => {
            field(out, "execution", execution(capability.execution));
            field(out, "inputs", assessment.dimensions.inputs.state.as_str());
            let returns = match &capability.signature.returns.annotation {
                Some(annotation) => format!(
                    "{} (declared, enforcement: {})",
                    annotation.declared, capability.signature.returns.enforcement
                ),
                None => format!(
                    "not declared (enforcement: {})",
                    capability.signature.returns.enforcement
                ),
            };
            field(out, "returns", &returns);
        }
        None => field(
            out,
            "contract",
            "none: not a module-level function in the Capability IR",
        ),
    }
    field(out, "effects", "unknown (side effects are never inferred)");
    if let Some(explained) = explained {
        explained_block(out, explained, source, style);
        return;
    }
    let dimensions = &assessment.dimensions;
    for (name, dimension) in [
        ("binding", &dimensions.binding),
        ("execution", &dimensions.execution),
        ("inputs", &dimensions.inputs),
        ("outputs", &dimensions.outputs),
    ] {
        reasons(out, name, dimension, style);
    }
}

pub(super) fn field(out: &mut String, label: &str, value: &str) {
    let _ = writeln!(out, "  {:<11}{value}", format!("{label}:"));
}

fn execution(kind: ExecutionKind) -> &'static str {
    match kind {
        ExecutionKind::Sync => "sync function",
        ExecutionKind::Async => "async function",
        ExecutionKind::Generator => "generator",
        ExecutionKind::AsyncGenerator => "async generator",
    }
}

fn reasons(out: &mut String, name: &str, dimension: &Dimension, style: Style) {
    if dimension.reasons.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "  {name} reasons ({}):",
        style.state(dimension.state, dimension.state.as_str())
    );
    for reason in &dimension.reasons {
        let _ = writeln!(out, "    {}", reason_line(reason));
    }
}

fn reason_line(reason: &Reason) -> String {
    let parameter = match &reason.parameter {
        Some(parameter) => format!(" [{parameter}]"),
        None => String::new(),
    };
    let explanation = ReasonCode::ALL
        .iter()
        .find(|code| code.code() == reason.code)
        .map(|code| code.explanation())
        .unwrap_or("see the reason code documentation");
    format!(
        "line {}{parameter}: {} {explanation}",
        reason.line, reason.code
    )
}

fn structured_types(out: &mut String, inspection: &Inspection, style: Style) {
    let types = &inspection.readiness.structured_types;
    if types.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n{}",
        style.bold(&format!("TypedDict types: {}", types.len()))
    );
    for item in types {
        let outcome = match &item.problem {
            Some(problem) => format!("not usable: {problem}"),
            None => "proven JSON object shape".to_string(),
        };
        let _ = writeln!(
            out,
            "  {} (line {}): {outcome}",
            item.name, item.source.line
        );
    }
}

fn diagnostics(out: &mut String, inspection: &Inspection, style: Style) {
    let diagnostics = &inspection.capability_ir.diagnostics;
    let _ = writeln!(
        out,
        "\n{}",
        style.bold(&format!("IR diagnostics: {}", diagnostics.len()))
    );
    for diagnostic in diagnostics {
        let severity = match diagnostic.severity {
            Severity::Error => style.error("error"),
            Severity::Warning => style.warning("warning"),
            Severity::Info => "info".to_string(),
        };
        let _ = writeln!(
            out,
            "  line {}: {} {severity} {}: {}",
            diagnostic.source.line, diagnostic.code, diagnostic.source.symbol, diagnostic.message
        );
    }
}

fn verdict(out: &mut String, inspection: &Inspection, style: Style) {
    let blocking = inspection
        .readiness
        .assessments
        .iter()
        .filter(|a| {
            matches!(
                a.state,
                ReadinessState::Unsupported | ReadinessState::Ambiguous
            )
        })
        .count();
    let errors = inspection
        .capability_ir
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let total = inspection.readiness.assessments.len();
    let generatable = inspection
        .readiness
        .assessments
        .iter()
        .filter(|a| a.can_generate_interface)
        .count();
    let line = if blocking + errors > 0 {
        style.error(&format!(
            "Verdict: needs attention: {blocking} unsupported or ambiguous assessment(s), \
             {errors} error diagnostic(s)"
        ))
    } else if total == 0 {
        "Verdict: no capabilities found".to_string()
    } else if generatable == total {
        style.state(
            ReadinessState::Ready,
            &format!("Verdict: all {total} assessment(s) allow interface generation"),
        )
    } else {
        style.state(
            ReadinessState::Conditional,
            &format!(
                "Verdict: {generatable} of {total} assessment(s) allow interface generation; \
                 the others are conditional"
            ),
        )
    };
    let _ = writeln!(out, "\n{line}");
}
