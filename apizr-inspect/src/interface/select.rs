//! Selection: names or full capability IDs, and the eligibility refusal whose
//! message is shared by `generate` (exit 1) and `execute` (`policy_refused`).

use std::collections::BTreeSet;

use apizr_ir::{Assessment, Inspection};

/// Why no contracts could be planned. Messages are the reference's, verbatim.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("No callable declarations to generate")]
    NoCallables,
    #[error("Selection requires non-empty capability names or IDs")]
    EmptySelection,
    #[error("Unknown capability selection: {0}")]
    UnknownSelection(String),
    /// The full refusal message (`Generation refused; select only eligible capabilities: …`).
    #[error("{0}")]
    Refused(String),
    /// The inspection and the module disagree (an internal inconsistency, never user input).
    #[error("Capability contract cannot be lowered: {0}")]
    Lowering(String),
}

impl PlanError {
    /// Eligibility refusals (`policy_refused` in execute, exit 1 in generate).
    pub fn is_refusal(&self) -> bool {
        matches!(self, PlanError::Refused(_))
    }
}

/// Whether a capability may be exposed: eligible for an interface, or - only when the caller
/// explicitly allows it (`generate --allow-conditional`, `#[python(allow_conditional)]`) -
/// `conditional` and in the IR. `unsupported` and `ambiguous` are never exposed: what makes a
/// conditional capability conditional is its module's environment, which an operator can
/// judge; the other states mean the contract itself is unknown.
pub fn bindable(assessment: &Assessment, allow_conditional: bool) -> bool {
    assessment.can_generate_interface
        || (allow_conditional
            && assessment.in_ir
            && assessment.state == apizr_ir::ReadinessState::Conditional)
}

/// `--select a, python:m:b` → `["a", "python:m:b"]`; an empty item is an error.
pub fn parse_selection(text: &str) -> Result<Vec<String>, PlanError> {
    text.split(',')
        .map(|item| {
            let item = item.trim();
            if item.is_empty() {
                Err(PlanError::EmptySelection)
            } else {
                Ok(item.to_string())
            }
        })
        .collect()
}

/// The selected assessments, sorted by capability id; every one must be eligible.
pub fn select<'a>(
    inspection: &'a Inspection,
    selection: Option<&[String]>,
) -> Result<Vec<&'a Assessment>, PlanError> {
    let assessments = &inspection.readiness.assessments;
    if assessments.is_empty() {
        return Err(PlanError::NoCallables);
    }
    let chosen: Vec<&Assessment> = match selection {
        None => assessments.iter().collect(),
        Some(items) => {
            let mut ids = BTreeSet::new();
            for item in items {
                if item.is_empty() {
                    return Err(PlanError::EmptySelection);
                }
                let found = assessments
                    .iter()
                    .find(|a| &a.capability_id == item || &a.source.symbol == item)
                    .ok_or_else(|| PlanError::UnknownSelection(item.clone()))?;
                ids.insert(found.capability_id.as_str());
            }
            assessments
                .iter()
                .filter(|a| ids.contains(a.capability_id.as_str()))
                .collect()
        }
    };
    let refused: Vec<String> = chosen
        .iter()
        .filter(|a| !bindable(a, false))
        .map(|a| refusal_entry(a))
        .collect();
    if !refused.is_empty() {
        return Err(PlanError::Refused(format!(
            "Generation refused; select only eligible capabilities: {}",
            refused.join("; ")
        )));
    }
    Ok(chosen)
}

/// `<symbol>: <state> (<sorted codes>)`.
fn refusal_entry(a: &Assessment) -> String {
    let d = &a.dimensions;
    let codes: BTreeSet<&str> = [&d.binding, &d.execution, &d.inputs, &d.outputs]
        .iter()
        .flat_map(|dim| dim.reasons.iter().map(|r| r.code))
        .collect();
    format!(
        "{}: {} ({})",
        a.source.symbol,
        a.state.as_str(),
        codes.into_iter().collect::<Vec<_>>().join(", ")
    )
}
