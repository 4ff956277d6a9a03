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

use super::evidence::Evidence;

/// One reason a rule found, before de-duplication. Several findings can make one reason
/// (`x: A | B` with two unresolvable names); they keep their own evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub code: ReasonCode,
    /// The reason's line (the hashed `line`).
    pub line: u32,
    /// The parameter an input reason is about.
    pub parameter: Option<String>,
    /// What the finding points at (not hashed).
    pub evidence: Evidence,
}

impl Finding {
    pub fn new(code: ReasonCode, line: u32, evidence: Evidence) -> Self {
        Finding {
            code,
            line,
            parameter: None,
            evidence,
        }
    }

    /// The identity of the reason this finding contributes to.
    pub fn key(&self) -> (u32, &'static str, &str) {
        self.sort_key()
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
    findings.dedup_by(|a, b| a.sort_key() == b.sort_key());
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

/// A symbol discovery rejected (a diagnostic for a symbol that has no capability).
#[derive(Debug, Clone)]
pub struct RejectedSymbol {
    pub symbol: String,
    /// The span of its last diagnostic.
    pub span: Span,
    pub findings: Vec<Finding>,
}

/// The rejected symbols, in order of first diagnostic.
pub fn rejected_findings(ir: &CapabilityIr) -> Vec<RejectedSymbol> {
    let in_ir: HashSet<&str> = ir.capabilities.iter().map(|c| c.name.as_str()).collect();
    let mut order: Vec<&str> = Vec::new();
    let mut symbols: HashMap<&str, RejectedSymbol> = HashMap::new();
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
            RejectedSymbol {
                symbol: symbol.to_string(),
                span: diagnostic.source.clone(),
                findings: Vec::new(),
            }
        });
        entry.span = diagnostic.source.clone();
        let evidence = Evidence::Rejected {
            kind: diagnostic.kind,
        };
        entry
            .findings
            .push(Finding::new(code, diagnostic.source.line, evidence));
    }
    order
        .into_iter()
        .filter_map(|symbol| symbols.remove(symbol))
        .collect()
}

/// One assessment per rejected symbol, in order of first diagnostic.
pub fn rejected(ir: &CapabilityIr) -> Vec<Assessment> {
    rejected_findings(ir)
        .into_iter()
        .map(|rejected| {
            let id = capability_id(&ir.source.module, &rejected.symbol);
            assessment(
                id,
                rejected.span,
                false,
                Effects::UNKNOWN,
                rejected.findings,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_deduplicated_and_sorted() {
        let at = |start: u32| Evidence::Call {
            range: ruff_text_size::TextRange::empty(start.into()),
        };
        let findings = vec![
            Finding::new(ReasonCode::R013, 5, at(1)).parameter("b"),
            Finding::new(ReasonCode::R007, 5, at(2)).parameter("a"),
            Finding::new(ReasonCode::R013, 5, at(3)).parameter("b"),
            Finding::new(ReasonCode::R012, 2, at(4)).parameter("z"),
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
