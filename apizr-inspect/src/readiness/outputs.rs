//! Per-signature input reasons and the output dimension (contract 3.6-3.7): every parameter of
//! the implementation and of each overload stub is classified at its own `def` line; a return
//! annotation that is missing or classifies to any code gives one READY-016.

use std::collections::HashMap;

use apizr_ir::{ReasonCode, TypeSpec};
use ruff_python_ast::StmtFunctionDef;

use super::Finding;
use super::inputs::Context;
use super::typeddict::Candidate;
use crate::facts::ModuleFacts;

/// The classifier context for a function at `def_line`: only candidates proven and declared
/// before the function count as proven shapes.
pub fn context_at<'a>(
    facts: &'a ModuleFacts<'a>,
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

pub fn parameter_findings(ctx: &Context, def: &StmtFunctionDef, line: u32) -> Vec<Finding> {
    let mut out = Vec::new();
    for param in def.parameters.iter_non_variadic_params() {
        let name = param.parameter.name.as_str();
        match param.parameter.annotation.as_deref() {
            None => out.push(Finding::new(ReasonCode::R007, line).parameter(name)),
            Some(annotation) => out.extend(
                ctx.codes(annotation)
                    .into_iter()
                    .map(|code| Finding::new(code, line).parameter(name)),
            ),
        }
    }
    out
}

pub fn return_finding(ctx: &Context, def: &StmtFunctionDef, line: u32) -> Option<Finding> {
    let imprecise = match def.returns.as_deref() {
        None => true,
        Some(annotation) => !ctx.codes(annotation).is_empty(),
    };
    imprecise.then(|| Finding::new(ReasonCode::R016, line))
}
