//! One capability's InvocationContract: IR parameters (name, kind, required)
//! with TypeSpecs lowered from the `def`'s annotations, the docstring as description,
//! and `returns` = `any` whenever the outputs dimension has a reason.

use apizr_ir::interface::{ContractExecution, ContractParameter, InvocationContract};
use apizr_ir::{Assessment, ExecutionKind, Inspection, TypeKind, TypeSpec};
use ruff_python_ast::{Stmt, StmtFunctionDef};

use super::select::PlanError;
use crate::facts::ModuleFacts;
use crate::module::ParsedModule;
use crate::readiness::classes::V2Types;
use crate::readiness::outputs;
use crate::readiness::typeddict::Candidate;

/// Build the contract of an eligible assessment.
pub fn build<'a>(
    parsed: &'a ParsedModule,
    facts: &'a ModuleFacts<'a>,
    candidates: &[Candidate],
    classes: &V2Types,
    inspection: &Inspection,
    assessment: &Assessment,
) -> Result<InvocationContract, PlanError> {
    let id = assessment.capability_id.as_str();
    let lowering = |why: &str| PlanError::Lowering(format!("{id}: {why}"));
    let cap = inspection
        .capability_ir
        .capabilities
        .iter()
        .find(|c| c.id == id)
        .ok_or_else(|| lowering("not in the IR"))?;
    let execution = match cap.execution {
        ExecutionKind::Sync => ContractExecution::Sync,
        ExecutionKind::Async => ContractExecution::Async,
        _ => return Err(lowering("not a plain function or coroutine")),
    };
    let def = find_def(parsed, &cap.name, cap.source.line)
        .ok_or_else(|| lowering("definition not found"))?;
    let ctx = outputs::context_at(facts, candidates, classes, cap.source.line);
    // Signature order, `*args`/`**kwargs` included (the IR holds them under readiness v2 only).
    let params: Vec<_> = def.parameters.iter().collect();
    if params.len() != cap.signature.parameters.len() {
        return Err(lowering("parameter count differs from the IR"));
    }
    let mut parameters = Vec::with_capacity(params.len());
    for (ir, ast) in cap.signature.parameters.iter().zip(params) {
        if ast.name().as_str() != ir.name {
            return Err(lowering("parameter names differ from the IR"));
        }
        let type_spec = match ast.annotation() {
            None => TypeSpec::simple(TypeKind::Any),
            Some(annotation) => ctx.lower(annotation),
        };
        parameters.push(ContractParameter {
            kind: ir.kind,
            name: ir.name.clone(),
            required: ir.required,
            type_spec,
        });
    }
    let returns = match def.returns.as_deref() {
        Some(annotation) if assessment.dimensions.outputs.reasons.is_empty() => {
            ctx.lower(annotation)
        }
        _ => TypeSpec::simple(TypeKind::Any),
    };
    Ok(InvocationContract {
        capability_id: cap.id.clone(),
        description: cap.docstring.clone(),
        execution,
        name: cap.name.clone(),
        parameters,
        returns,
    })
}

/// The module-level `def name` whose `def` keyword is on `line`.
fn find_def<'a>(parsed: &'a ParsedModule, name: &str, line: u32) -> Option<&'a StmtFunctionDef> {
    parsed.body().iter().find_map(|stmt| match stmt {
        Stmt::FunctionDef(def) if def.name.as_str() == name && parsed.stmt_line(stmt) == line => {
            Some(def)
        }
        _ => None,
    })
}
