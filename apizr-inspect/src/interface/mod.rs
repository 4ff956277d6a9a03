//! Interface planning: the InvocationContract of every selected,
//! eligible capability, built from the inspected module.
//!
//! Why from the AST and not from the IR's `declared` texts: lowering needs the module's
//! name resolution (`import typing as t`, shadowed builtins, proven TypedDict names declared
//! before the function), which readiness already implements over the parsed module. This
//! module reuses that resolution unchanged, so a contract can only exist for an annotation
//! that readiness classified as precise or "any".
//!
//! * [`contract`] — one capability's contract;
//! * [`select`] — the selection rules and the refusal message shared with `generate`.

pub mod contract;
pub mod select;

use apizr_ir::interface::InvocationContract;
use apizr_ir::{Assessment, Inspection};

use crate::facts::ModuleFacts;
use crate::module::ParsedModule;
use crate::package::PackageIndex;
use crate::readiness::{classes, typeddict};
use apizr_ir::ReadinessPolicy;

pub use select::{PlanError, bindable, parse_selection};

/// Contracts of the selected capabilities (all, when `selection` is `None`), sorted by
/// capability id. Refuses when a selected capability is not eligible.
pub fn plan_interfaces(
    parsed: &ParsedModule,
    inspection: &Inspection,
    selection: Option<&[String]>,
) -> Result<Vec<InvocationContract>, PlanError> {
    let chosen = select::select(inspection, selection)?;
    contracts_for(parsed, inspection, &chosen)
}

/// Contracts of `chosen`, whatever their readiness (the caller decides who may be exposed, e.g.
/// `--allow-conditional`), in the given order.
pub fn contracts_for(
    parsed: &ParsedModule,
    inspection: &Inspection,
    chosen: &[&Assessment],
) -> Result<Vec<InvocationContract>, PlanError> {
    contracts_in_package(parsed, inspection, chosen, None)
}

/// [`plan_interfaces`] for a module of the package directory `index` (types imported from its
/// other modules are resolved as readiness resolved them).
pub fn plan_in_package(
    parsed: &ParsedModule,
    inspection: &Inspection,
    selection: Option<&[String]>,
    index: Option<&PackageIndex>,
) -> Result<Vec<InvocationContract>, PlanError> {
    let chosen = select::select(inspection, selection)?;
    contracts_in_package(parsed, inspection, &chosen, index)
}

/// [`contracts_for`] for a module of the package directory `index`.
pub fn contracts_in_package(
    parsed: &ParsedModule,
    inspection: &Inspection,
    chosen: &[&Assessment],
    index: Option<&PackageIndex>,
) -> Result<Vec<InvocationContract>, PlanError> {
    let facts = ModuleFacts::collect(parsed);
    let typed_dicts = typeddict::prove_all(parsed, &facts);
    // The contract lowers exactly what readiness classified: classes only under v2.
    let classes = if inspection.readiness.policy_version == ReadinessPolicy::V2.schema() {
        classes::prove_in_package(parsed, &facts, &typed_dicts, index)
    } else {
        classes::V2Types::default()
    };
    chosen
        .iter()
        .map(|assessment| {
            contract::build(
                parsed,
                &facts,
                &typed_dicts,
                &classes,
                inspection,
                assessment,
            )
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
