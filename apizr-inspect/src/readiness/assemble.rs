//! Findings → assessments: reasons are grouped by dimension, de-duplicated and sorted by
//! (line, code, parameter); a dimension's state is the highest state its codes imply (ready
//! when it has none); an assessment's state is the highest over its dimensions.
//!
//! Rejected symbols (a diagnostic for a symbol that has no capability) get one assessment
//! each, from their diagnostics: CAP-001 → READY-009, CAP-004 → READY-010, CAP-002 →
//! READY-011, the lambda form of CAP-005 → READY-018, at the span of the last diagnostic.

use std::collections::{HashMap, HashSet};

use apizr_ir::{
    Assessment, CapabilityIr, DiagnosticKind, Dimension, DimensionName, Dimensions, Effects,
    ReadinessState, Reason, ReasonCode, Span, capability_id,
};

/// One reason a rule found, before de-duplication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub code: ReasonCode,
    /// The reason's line (the hashed `line`).
    pub line: u32,
    /// The parameter an input reason is about.
    pub parameter: Option<String>,
}

impl Finding {
    pub fn new(code: ReasonCode, line: u32) -> Self {
        Finding {
            code,
            line,
            parameter: None,
        }
    }

    pub fn parameter(mut self, name: &str) -> Self {
        self.parameter = Some(name.to_string());
        self
    }

    /// The order of reasons inside a dimension.
    fn sort_key(&self) -> (u32, &'static str, &str) {
        (
            self.line,
            self.code.code(),
            self.parameter.as_deref().unwrap_or(""),
        )
    }
}

/// Build one assessment from its findings.
pub fn assessment(
    capability_id: String,
    source: Span,
    in_ir: bool,
    effects: Effects,
    findings: Vec<Finding>,
) -> Assessment {
    let mut binding = Vec::new();
    let mut execution = Vec::new();
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    for finding in findings {
        match finding.code.dimension() {
            DimensionName::Binding => binding.push(finding),
            DimensionName::Execution => execution.push(finding),
            DimensionName::Inputs => inputs.push(finding),
            DimensionName::Outputs => outputs.push(finding),
        }
    }
    let dimensions = Dimensions {
        binding: dimension(binding),
        execution: dimension(execution),
        inputs: dimension(inputs),
        outputs: dimension(outputs),
    };
    let state = [
        &dimensions.binding,
        &dimensions.execution,
        &dimensions.inputs,
        &dimensions.outputs,
    ]
    .iter()
    .map(|d| d.state)
    .max()
    .unwrap_or(ReadinessState::Ready);
    Assessment {
        capability_id,
        source,
        in_ir,
        dimensions,
        effects,
        state,
        can_generate_interface: in_ir && state == ReadinessState::Ready,
    }
}

/// One dimension: sorted, de-duplicated reasons and their highest implied state.
pub fn dimension(mut findings: Vec<Finding>) -> Dimension {
    findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    findings.dedup();
    let state = findings
        .iter()
        .map(|f| f.code.implied_state())
        .max()
        .unwrap_or(ReadinessState::Ready);
    Dimension {
        state,
        reasons: findings
            .into_iter()
            .map(|f| Reason {
                code: f.code.code(),
                evidence: "inferred",
                line: f.line,
                parameter: f.parameter,
            })
            .collect(),
    }
}

/// The reason a diagnostic gives a rejected symbol.
pub fn rejection_code(kind: DiagnosticKind) -> Option<ReasonCode> {
    match kind {
        DiagnosticKind::DuplicateDefinition => Some(ReasonCode::R009),
        DiagnosticKind::AmbiguousOverload => Some(ReasonCode::R010),
        DiagnosticKind::Variadic => Some(ReasonCode::R011),
        DiagnosticKind::LambdaAssignment => Some(ReasonCode::R018),
        DiagnosticKind::ControlFlow
        | DiagnosticKind::Decorated
        | DiagnosticKind::UnknownTypeStructure => None,
    }
}

/// One assessment per rejected symbol, in order of first diagnostic.
pub fn rejected(ir: &CapabilityIr) -> Vec<Assessment> {
    struct Rejected {
        span: Span,
        findings: Vec<Finding>,
    }
    let in_ir: HashSet<&str> = ir.capabilities.iter().map(|c| c.name.as_str()).collect();
    let mut order: Vec<&str> = Vec::new();
    let mut symbols: HashMap<&str, Rejected> = HashMap::new();
    for diagnostic in &ir.diagnostics {
        let symbol = diagnostic.source.symbol.as_str();
        let Some(code) = rejection_code(diagnostic.kind) else {
            continue;
        };
        if in_ir.contains(symbol) {
            continue;
        }
        let entry = symbols.entry(symbol).or_insert_with(|| {
            order.push(symbol);
            Rejected {
                span: diagnostic.source.clone(),
                findings: Vec::new(),
            }
        });
        entry.span = diagnostic.source.clone();
        entry
            .findings
            .push(Finding::new(code, diagnostic.source.line));
    }
    order
        .into_iter()
        .filter_map(|symbol| {
            let rejected = symbols.remove(symbol)?;
            let id = capability_id(&ir.source.module, symbol);
            Some(assessment(
                id,
                rejected.span,
                false,
                Effects::UNKNOWN,
                rejected.findings,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_deduplicated_and_sorted() {
        let findings = vec![
            Finding::new(ReasonCode::R013, 5).parameter("b"),
            Finding::new(ReasonCode::R007, 5).parameter("a"),
            Finding::new(ReasonCode::R013, 5).parameter("b"),
            Finding::new(ReasonCode::R012, 2).parameter("z"),
        ];
        let dim = dimension(findings);
        let order: Vec<(&str, u32)> = dim.reasons.iter().map(|r| (r.code, r.line)).collect();
        assert_eq!(
            order,
            [
                ("APIZR-READY-012", 2),
                ("APIZR-READY-007", 5),
                ("APIZR-READY-013", 5)
            ]
        );
        assert_eq!(dim.state, ReadinessState::Unsupported);
    }

    #[test]
    fn only_rejections_map_to_reasons() {
        let mapped: Vec<_> = [
            DiagnosticKind::DuplicateDefinition,
            DiagnosticKind::AmbiguousOverload,
            DiagnosticKind::Variadic,
            DiagnosticKind::LambdaAssignment,
            DiagnosticKind::ControlFlow,
            DiagnosticKind::Decorated,
            DiagnosticKind::UnknownTypeStructure,
        ]
        .into_iter()
        .map(rejection_code)
        .collect();
        use ReasonCode::*;
        assert_eq!(
            mapped,
            [
                Some(R009),
                Some(R010),
                Some(R011),
                Some(R018),
                None,
                None,
                None
            ]
        );
    }
}
