//! Per-signature input reasons and the output dimension (contract 3.6-3.7): every parameter of
//! the implementation and of each overload stub is classified at its own `def` line; a return
//! annotation that is missing or classifies to any code gives one READY-016.

use std::collections::HashMap;

use apizr_ir::{ReasonCode, TypeSpec};
use ruff_python_ast::StmtFunctionDef;

use super::RawReason;
use super::inputs::Context;
use super::scan::ModuleFacts;
use super::typeddict::Candidate;

/// The classifier context for a function at `def_line`: only candidates proven and declared
/// before the function count as proven shapes.
pub fn context_at<'a>(
    facts: &'a ModuleFacts,
    candidates: &'a [Candidate],
    def_line: u32,
) -> Context<'a> {
    let mut map: HashMap<String, Option<&'a TypeSpec>> = HashMap::new();
    for candidate in candidates {
        let entry = map.entry(candidate.name.clone()).or_insert(None);
        if let Ok(shape) = &candidate.outcome
            && candidate.line < def_line
        {
            *entry = Some(shape);
        }
    }
    Context::new(facts, map)
}

pub fn parameter_reasons(ctx: &Context, def: &StmtFunctionDef, line: u32) -> Vec<RawReason> {
    let mut out = Vec::new();
    for param in def.parameters.iter_non_variadic_params() {
        let name = param.parameter.name.to_string();
        match param.parameter.annotation.as_deref() {
            None => out.push((ReasonCode::R007, line, Some(name))),
            Some(annotation) => out.extend(
                ctx.codes(annotation)
                    .into_iter()
                    .map(|code| (code, line, Some(name.clone()))),
            ),
        }
    }
    out
}

pub fn return_reason(ctx: &Context, def: &StmtFunctionDef, line: u32) -> Option<RawReason> {
    let imprecise = match def.returns.as_deref() {
        None => true,
        Some(annotation) => !ctx.codes(annotation).is_empty(),
    };
    imprecise.then_some((ReasonCode::R016, line, None))
}
