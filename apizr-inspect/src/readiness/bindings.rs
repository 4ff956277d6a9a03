//! Binding rules: READY-001 (defined under control flow), READY-002 (a non-inert decorator),
//! READY-003 (the name is bound again later in module scope) and READY-008 (star imports or
//! namespace builtins anywhere in module scope).

use apizr_ir::ReasonCode;

use ruff_text_size::Ranged;

use super::Finding;
use super::evidence::Evidence;
use crate::facts::{Binding, BindingId, ModuleFacts, StmtId, View};
use crate::module::ParsedModule;

/// READY-003: the [`View::Namespace`] bindings of `name` evaluated after the function's own.
pub fn later_bindings<'f, 'a>(
    facts: &'f ModuleFacts<'a>,
    name: &str,
    def: StmtId,
) -> impl Iterator<Item = (BindingId, &'f Binding<'a>)> + use<'f, 'a> {
    let own = facts.own_binding(def);
    facts
        .bindings_of(name, View::Namespace)
        .filter(move |(id, _)| own.is_some_and(|own| *id > own))
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
    let Some(def) = def else {
        if decorated {
            out.push(Finding::new(
                ReasonCode::R002,
                line,
                Evidence::Rejected {
                    kind: apizr_ir::DiagnosticKind::Decorated,
                },
            ));
        }
        return out;
    };
    if let Some(parent) = facts.statement(def).parent {
        out.push(Finding::new(
            ReasonCode::R001,
            line,
            Evidence::ControlFlow { parent },
        ));
    }
    if decorated {
        out.push(Finding::new(
            ReasonCode::R002,
            line,
            Evidence::Decorated { def },
        ));
    }
    out.extend(later_bindings(facts, name, def).map(|(binding, b)| {
        Finding::new(ReasonCode::R003, b.line, Evidence::Rebinding { binding })
    }));
    out
}

/// READY-008: star imports and namespace builtin calls in module scope.
pub fn namespace_findings(parsed: &ParsedModule, facts: &ModuleFacts) -> Vec<Finding> {
    let stars = facts.star_imports().map(|import| {
        let range = import.range();
        Finding::new(
            ReasonCode::R008,
            import.line,
            Evidence::StarImport { range },
        )
    });
    let calls = facts.namespace_calls().map(|c| {
        let range = c.node.range();
        Finding::new(
            ReasonCode::R008,
            parsed.start_line(c.node),
            Evidence::Call { range },
        )
    });
    stars.chain(calls).collect()
}
