//! Binding rules (contract 3.3): READY-001 (defined under control flow), READY-002 (a
//! non-inert decorator), READY-003 (the name is bound again later in module scope) and READY-008
//! (star imports or namespace builtins anywhere in module scope).

use apizr_ir::ReasonCode;
use ruff_python_ast::StmtFunctionDef;
use ruff_text_size::Ranged;

use super::RawReason;
use super::scan::ModuleFacts;

/// `def` is the implementation's AST node and whether it is a direct module statement.
pub fn binding_reasons(
    facts: &ModuleFacts,
    name: &str,
    line: u32,
    def: Option<(&StmtFunctionDef, bool)>,
    decorated: bool,
) -> Vec<RawReason> {
    let mut out = Vec::new();
    if def.is_some_and(|(_, direct)| !direct) {
        out.push((ReasonCode::R001, line, None));
    }
    if decorated {
        out.push((ReasonCode::R002, line, None));
    }
    if let Some(own) = def.and_then(|(d, _)| facts.own_seq.get(&d.start()).copied()) {
        out.extend(
            facts
                .bindings(name)
                .filter(|e| e.seq > own)
                .map(|e| (ReasonCode::R003, e.line, None)),
        );
    }
    out.extend(
        facts
            .namespace_lines
            .iter()
            .map(|l| (ReasonCode::R008, *l, None)),
    );
    out
}
