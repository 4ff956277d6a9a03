//! Interface planning (contract 5.2 and 5.4): the InvocationContract of every selected,
//! eligible capability, built from the inspected module.
//!
//! Why from the AST and not from the IR's `declared` texts: lowering (5.1) needs the module's
//! name resolution (`import typing as t`, shadowed builtins, proven TypedDict names declared
//! before the function), which readiness already implements over the parsed module. This
//! module reuses that resolution unchanged, so a contract can only exist for an annotation
//! that readiness classified as precise or "any".
//!
//! * [`contract`] — one capability's contract;
//! * [`select`] — the selection rules and the refusal message shared with `generate`.

pub mod contract;
pub mod select;

use apizr_ir::Inspection;
use apizr_ir::interface::InvocationContract;

use crate::module::ParsedModule;
use crate::readiness::{scan, typeddict};

pub use select::{PlanError, parse_selection};

/// Contracts of the selected capabilities (all, when `selection` is `None`), sorted by
/// capability id. Refuses when a selected capability is not eligible.
pub fn plan_interfaces(
    parsed: &ParsedModule,
    inspection: &Inspection,
    selection: Option<&[String]>,
) -> Result<Vec<InvocationContract>, PlanError> {
    let chosen = select::select(inspection, selection)?;
    let aliases = scan::dynamic_import_aliases(parsed);
    let facts = scan::scan_module(parsed, &aliases);
    let candidates = typeddict::prove_all(parsed, &facts);
    chosen
        .into_iter()
        .map(|assessment| contract::build(parsed, &facts, &candidates, inspection, assessment))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
