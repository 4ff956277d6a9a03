//! Per-signature input reasons and the output dimension: every parameter of
//! the implementation and of each overload stub is classified at its own `def` line; a return
//! annotation that is missing or classifies to any code gives one READY-016.

use std::collections::HashMap;

use apizr_ir::{ReasonCode, TypeKind, TypeSpec};
use ruff_python_ast::StmtFunctionDef;

use ruff_text_size::Ranged;

use super::Finding;
use super::classes::V2Types;
use super::evidence::{Evidence, TypeCause};
use super::inputs::Context;
use super::typeddict::Candidate;
use crate::facts::ModuleFacts;

/// The classifier context for a function at `def_line`: only candidates proven and declared
/// before the function count as proven shapes; `v2`'s classes and aliases (empty under readiness v1) likewise.
pub fn context_at<'a>(
    facts: &'a ModuleFacts<'a>,
    candidates: &'a [Candidate],
    v2: &'a V2Types,
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
    let mut ctx = Context::new(facts, map);
    ctx.v2 = v2.enabled;
    for class in v2.classes.iter().filter(|c| c.line < def_line) {
        let shape = class.outcome.as_ref().map_err(String::as_str);
        ctx.classes.insert(class.name.clone(), shape);
    }
    for alias in v2.aliases.iter().filter(|a| a.line < def_line) {
        ctx.aliases.insert(alias.name.clone(), alias);
    }
    ctx
}

pub fn parameter_findings(ctx: &Context, def: &StmtFunctionDef, line: u32) -> Vec<Finding> {
    let mut out = Vec::new();
    // Every parameter in signature order; `*args`/`**kwargs` are in the IR only under readiness
    // v2, where their annotation is the type of each item or value (unannotated: READY-007).
    for param in def.parameters.iter() {
        let name = param.name().as_str();
        match param.annotation() {
            None => {
                let evidence = Evidence::Type {
                    range: param.name().range(),
                    cause: TypeCause::Missing,
                };
                out.push(Finding::new(ReasonCode::R007, line, evidence).parameter(name));
            }
            Some(annotation) => out.extend(ctx.findings(annotation).into_iter().map(|found| {
                let evidence = Evidence::Type {
                    range: found.range,
                    cause: found.cause,
                };
                Finding::new(found.code, line, evidence).parameter(name)
            })),
        }
    }
    out
}

/// One READY-016 when the return annotation is missing or implies any code; the evidence is
/// its first finding. Under v2 a return type holding `bytes`/`bytearray` or a `datetime` class
/// (input-only JSON forms: the worker decodes arguments but does not encode results) is one
/// too.
pub fn return_finding(ctx: &Context, def: &StmtFunctionDef, line: u32) -> Option<Finding> {
    let (range, cause) = match def.returns.as_deref() {
        None => (def.name.range(), TypeCause::Missing),
        Some(annotation) => match ctx.findings(annotation).into_iter().next() {
            Some(first) => (first.range, first.cause),
            None if ctx.v2 && has_bytes(&ctx.lower(annotation)) => {
                (annotation.range(), TypeCause::Bytes)
            }
            None if ctx.v2 && super::temporal::holds_temporal(&ctx.lower(annotation)) => {
                (annotation.range(), TypeCause::Temporal)
            }
            None => return None,
        },
    };
    let evidence = Evidence::Type { range, cause };
    Some(Finding::new(ReasonCode::R016, line, evidence))
}

/// `spec` or a type nested in it is `bytes`/`bytearray`.
fn has_bytes(spec: &TypeSpec) -> bool {
    matches!(spec.kind, TypeKind::Bytes | TypeKind::Bytearray)
        || spec.items.iter().any(has_bytes)
        || spec
            .fields
            .iter()
            .flatten()
            .any(|f| has_bytes(&f.type_spec))
}
