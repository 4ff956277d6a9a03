//! Culprits of symbols discovery rejected (READY-009/010/011/018): every definition of the
//! name, the variadic parameters, the lambda assignments.

use apizr_ir::DiagnosticKind;
use ruff_python_ast::{Expr, Stmt};
use ruff_text_size::Ranged;

use super::Module;
use super::culprit::{Culprit, CulpritKind, first_line};

pub(super) fn culprits(module: &Module, kind: DiagnosticKind, name: &str) -> Vec<Culprit> {
    use CulpritKind as K;
    let facts = module.facts;
    let defs = facts
        .functions()
        .filter(|(_, _, def)| def.name.as_str() == name);
    match kind {
        DiagnosticKind::DuplicateDefinition | DiagnosticKind::AmbiguousOverload => defs
            .map(|(id, _, def)| {
                let note = (!def.decorator_list.is_empty()).then(|| {
                    format!(
                        "decorated with `{}`",
                        module.text(def.decorator_list[0].range())
                    )
                });
                let range = first_line(module, module.statement_range(id));
                module.culprit(K::Definition, range, note)
            })
            .collect(),
        DiagnosticKind::Variadic => defs
            .flat_map(|(_, _, def)| {
                let params = &def.parameters;
                let star = params.vararg.iter().map(|p| (p.range(), "*"));
                let stars = params.kwarg.iter().map(|p| (p.range(), "**"));
                star.chain(stars).collect::<Vec<_>>()
            })
            .map(|(range, stars)| {
                // ruff's range of `*args` may or may not hold the stars; show them once.
                let mut culprit = module.culprit(K::Parameter, range, None);
                if !culprit.text.starts_with('*') {
                    culprit.text = format!("{stars}{}", culprit.text);
                }
                culprit
            })
            .collect(),
        DiagnosticKind::LambdaAssignment => facts
            .statements()
            .filter(|(_, s)| assigns_lambda_to(s.node, name))
            .map(|(id, _)| module.culprit(K::Statement, module.statement_range(id), None))
            .collect(),
        DiagnosticKind::ControlFlow
        | DiagnosticKind::Decorated
        | DiagnosticKind::UnknownTypeStructure => Vec::new(),
    }
}

fn assigns_lambda_to(stmt: &Stmt, name: &str) -> bool {
    let is_name = |e: &Expr| matches!(e, Expr::Name(n) if n.id.as_str() == name);
    match stmt {
        Stmt::Assign(a) => {
            matches!(a.value.as_ref(), Expr::Lambda(_)) && a.targets.iter().any(is_name)
        }
        Stmt::AnnAssign(a) => {
            matches!(a.value.as_deref(), Some(Expr::Lambda(_))) && is_name(&a.target)
        }
        _ => false,
    }
}
