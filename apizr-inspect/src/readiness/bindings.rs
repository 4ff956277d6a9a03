//! Binding rules: READY-001 (defined under control flow), READY-002 (a non-inert decorator),
//! READY-003 (the name is bound again later in module scope) and READY-008 (star imports or
//! namespace builtins anywhere in module scope).

use apizr_ir::ReasonCode;

use super::Finding;
use crate::facts::{Binding, ModuleFacts, StmtId, View};
use crate::module::ParsedModule;

/// READY-003: the [`View::Namespace`] bindings of `name` evaluated after the function's own.
pub fn later_bindings<'f, 'a>(
    facts: &'f ModuleFacts<'a>,
    name: &str,
    def: StmtId,
) -> impl Iterator<Item = &'f Binding<'a>> + use<'f, 'a> {
    let own = facts.own_binding(def);
    facts
        .bindings_of(name, View::Namespace)
        .filter(move |(id, _)| own.is_some_and(|own| *id > own))
        .map(|(_, binding)| binding)
}

/// READY-001/002/003 of one capability. `def` is its implementation, when found in module
/// scope; `decorated` is true when discovery reported its decorators (CAP-005).
pub fn binding_findings(
    facts: &ModuleFacts,
    name: &str,
    line: u32,
    def: Option<StmtId>,
    decorated: bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if def.is_some_and(|id| !facts.statement(id).is_direct()) {
        out.push(Finding::new(ReasonCode::R001, line));
    }
    if decorated {
        out.push(Finding::new(ReasonCode::R002, line));
    }
    if let Some(def) = def {
        out.extend(
            later_bindings(facts, name, def).map(|b| Finding::new(ReasonCode::R003, b.line)),
        );
    }
    out
}

/// READY-008 lines: star imports and namespace builtin calls in module scope.
pub fn namespace_lines(parsed: &ParsedModule, facts: &ModuleFacts) -> Vec<u32> {
    facts
        .star_imports()
        .map(|import| import.line)
        .chain(facts.namespace_calls().map(|c| parsed.start_line(c.node)))
        .collect()
}
