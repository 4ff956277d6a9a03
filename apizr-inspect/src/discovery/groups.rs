//! Per-name group resolution: duplicates, overload association, variadics, then
//! the capability with its control-flow / decorator / annotation diagnostics.
//!
//! Check order (observed with the oracle): more than one concrete definition -> CAP-001 only;
//! else stubs present but not associable -> CAP-004 only; else any variadic member -> one CAP-002
//! per variadic member (readiness v1 only: under v2 variadics are parameters); else the capability (+ CAP-003, CAP-005, CAP-006 for it and its stubs).

use apizr_ir::{
    Availability, Capability, CapabilityKind, Diagnostic, DiagnosticKind, Effects, Evidence,
    Overload, capability_id,
};

use super::candidates::Candidate;
use super::overloads::{Marker, classify};
use super::signature::{build_signature, expression, is_variadic};
use super::spans::function_span;
use super::{decorators, docstring, execution};
use crate::facts::ModuleFacts;
use crate::module::ParsedModule;

/// The output of resolving one group.
pub struct Resolved {
    pub capability: Option<Capability>,
    pub diagnostics: Vec<Diagnostic>,
}

struct Member<'c, 'a> {
    candidate: &'c Candidate<'a>,
    stub: bool,
    ambiguous: bool,
}

fn marker_of(candidate: &Candidate<'_>, facts: &ModuleFacts) -> Marker {
    let def_start = ruff_text_size::Ranged::start(candidate.def);
    let mut result = Marker::None;
    for decorator in &candidate.def.decorator_list {
        match classify(&decorator.expression, facts, def_start) {
            Marker::Ambiguous => return Marker::Ambiguous,
            Marker::Marker => result = Marker::Marker,
            Marker::None => {}
        }
    }
    result
}

fn associable(members: &[Member<'_, '_>]) -> bool {
    let Some((last, stubs)) = members.split_last() else {
        return false;
    };
    let concrete_last = !last.stub;
    let all_direct = members.iter().all(|m| m.candidate.direct);
    let consecutive = members
        .windows(2)
        .all(|w| matches!(w, [a, b] if b.candidate.top_index == a.candidate.top_index + 1));
    let same_async = members
        .iter()
        .all(|m| m.candidate.def.is_async == last.candidate.def.is_async);
    let single_decorator = stubs
        .iter()
        .all(|m| m.candidate.def.decorator_list.len() == 1);
    let no_ambiguous = members.iter().all(|m| !m.ambiguous);
    concrete_last && all_direct && consecutive && same_async && single_decorator && no_ambiguous
}

/// Resolve the definitions sharing `name` (in source order).
pub fn resolve(
    parsed: &ParsedModule,
    facts: &ModuleFacts,
    name: &str,
    group: &[&Candidate<'_>],
    variadics: bool,
) -> Resolved {
    let mut diagnostics = Vec::new();
    let members: Vec<Member> = group
        .iter()
        .map(|candidate| {
            let marker = marker_of(candidate, facts);
            Member {
                candidate,
                stub: marker != Marker::None,
                ambiguous: marker == Marker::Ambiguous,
            }
        })
        .collect();
    let span_of = |c: &Candidate<'_>| function_span(parsed, c.def, name);
    let Some(first) = members.first() else {
        return Resolved {
            capability: None,
            diagnostics,
        };
    };
    let concrete = members.iter().filter(|m| !m.stub).count();
    let has_stubs = members.iter().any(|m| m.stub);
    let rejection = if concrete > 1 {
        Some(DiagnosticKind::DuplicateDefinition)
    } else if has_stubs && !associable(&members) {
        Some(DiagnosticKind::AmbiguousOverload)
    } else {
        None
    };
    if let Some(kind) = rejection {
        diagnostics.push(Diagnostic::new(kind, span_of(first.candidate)));
        return Resolved {
            capability: None,
            diagnostics,
        };
    }
    for member in &members {
        if !variadics && is_variadic(member.candidate.def) {
            diagnostics.push(Diagnostic::new(
                DiagnosticKind::Variadic,
                span_of(member.candidate),
            ));
        }
    }
    let Some((implementation, stubs)) = members.split_last() else {
        return Resolved {
            capability: None,
            diagnostics,
        };
    };
    if !diagnostics.is_empty() {
        return Resolved {
            capability: None,
            diagnostics,
        };
    }
    let candidate = implementation.candidate;
    let def = candidate.def;
    let span = span_of(candidate);
    let kind = execution::execution_kind(def);
    let mut unconditional = true;
    if !candidate.direct {
        unconditional = false;
        diagnostics.push(Diagnostic::new(DiagnosticKind::ControlFlow, span.clone()));
    }
    // The inert decorator exception only applies to an unconditional definition.
    let inert = candidate.direct && decorators::is_inert(def, execution::is_generator(kind), facts);
    if !def.decorator_list.is_empty() && !inert {
        unconditional = false;
        diagnostics.push(Diagnostic::new(DiagnosticKind::Decorated, span.clone()));
    }
    let built = build_signature(parsed, def);
    for _ in 0..built.unknown_annotations {
        diagnostics.push(Diagnostic::new(
            DiagnosticKind::UnknownTypeStructure,
            span.clone(),
        ));
    }
    let mut overloads = Vec::new();
    for stub in stubs {
        let stub_span = span_of(stub.candidate);
        let stub_built = build_signature(parsed, stub.candidate.def);
        for _ in 0..stub_built.unknown_annotations {
            diagnostics.push(Diagnostic::new(
                DiagnosticKind::UnknownTypeStructure,
                stub_span.clone(),
            ));
        }
        overloads.push(Overload {
            evidence: Evidence::Declared,
            signature: stub_built.signature,
            source: stub_span,
        });
    }
    let capability = Capability {
        id: capability_id(&parsed.module, name),
        name: name.to_string(),
        qualified_name: name.to_string(),
        kind: CapabilityKind::Function,
        source: span,
        docstring: docstring::docstring(&def.body),
        execution: kind,
        signature: built.signature,
        decorators: def
            .decorator_list
            .iter()
            .map(|d| expression(parsed, &d.expression))
            .collect(),
        overloads,
        availability: if unconditional {
            Availability::UNCONDITIONAL
        } else {
            Availability::UNKNOWN
        },
        effects: Effects::UNKNOWN,
        evidence: Evidence::Observed,
    };
    Resolved {
        capability: Some(capability),
        diagnostics,
    }
}
