//! `--allow-conditional` (beyond the reference): expose explicitly selected capabilities whose
//! readiness is `conditional` (a module-level logger, a class, a third-party import, ...).
//!
//! The reference refuses any selection with a non-ready capability. Conditional capabilities
//! are fully typed and bound; what makes them conditional is their module's environment, which
//! an operator can judge. So: only with `--select` (never "everything"), only `conditional`
//! (never `unsupported`/`ambiguous`, which still get the reference's refusal), and the reasons
//! are recorded in the manifest's top-level `conditional` map, so the choice stays visible.

use std::collections::{BTreeMap, BTreeSet};

use apizr_inspect::ParsedModule;
use apizr_inspect::interface::{self, PlanError, bindable};
use apizr_inspect::package::PackageIndex;
use apizr_ir::interface::InvocationContract;
use apizr_ir::{Assessment, Inspection, Value};

use apizr_ir::json::{obj, text};

/// Contracts for `selection`, allowing `conditional` members; falls back to the reference's
/// rules (and refusal message) as soon as one selected capability is not ready/conditional.
pub fn plan(
    parsed: &ParsedModule,
    inspection: &Inspection,
    selection: &[String],
) -> Result<(Vec<InvocationContract>, Option<Value>), PlanError> {
    plan_in_package(parsed, inspection, selection, None)
}

/// [`plan`] for a module of the package directory `index` (types imported from its other
/// modules are lowered as readiness v2 resolved them).
pub fn plan_in_package(
    parsed: &ParsedModule,
    inspection: &Inspection,
    selection: &[String],
    index: Option<&PackageIndex>,
) -> Result<(Vec<InvocationContract>, Option<Value>), PlanError> {
    let assessments = &inspection.readiness.assessments;
    let mut ids = BTreeSet::new();
    for item in selection {
        match assessments
            .iter()
            .find(|a| &a.capability_id == item || &a.source.symbol == item)
        {
            Some(found) => ids.insert(found.capability_id.as_str()),
            None => return Err(PlanError::UnknownSelection(item.clone())),
        };
    }
    let chosen: Vec<&Assessment> = assessments
        .iter()
        .filter(|a| ids.contains(a.capability_id.as_str()))
        .collect();
    if chosen.is_empty() || !chosen.iter().all(|a| bindable(a, true)) {
        let contracts = interface::plan_in_package(parsed, inspection, Some(selection), index)?;
        return Ok((contracts, None));
    }
    let contracts = interface::contracts_in_package(parsed, inspection, &chosen, index)?;
    let conditional: BTreeMap<String, Value> = chosen
        .iter()
        .filter(|a| !a.can_generate_interface)
        .map(|a| (a.capability_id.clone(), record(a)))
        .collect();
    let conditional = (!conditional.is_empty()).then_some(Value::Object(conditional));
    Ok((contracts, conditional))
}

/// `{"reasons": [sorted codes], "state": "conditional"}`.
fn record(a: &Assessment) -> Value {
    let d = &a.dimensions;
    let codes: BTreeSet<&str> = [&d.binding, &d.execution, &d.inputs, &d.outputs]
        .iter()
        .flat_map(|dim| dim.reasons.iter().map(|r| r.code))
        .collect();
    obj(vec![
        (
            "reasons",
            Value::Array(codes.into_iter().map(text).collect()),
        ),
        ("state", text(a.state.as_str())),
    ])
}
