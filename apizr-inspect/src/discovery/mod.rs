//! Discovery: Python AST -> Capability IR (`apizr.capability/v1`; v2 when readiness v2 keeps a
//! variadic signature).
//!
//! Static only: nothing is imported or executed. Module-scope facts (statements, bindings,
//! calls) come from the fact pass ([`crate::facts`]). The pieces:
//! [`candidates`] (module-scope defs and lambda assignments), [`overloads`] (overload markers),
//! [`decorators`] (the inert `experiment` decorator), [`groups`] (per-name resolution and
//! diagnostics), [`signature`], [`docstring`], [`execution`] and [`spans`] (capability fields).

pub mod candidates;
pub mod decorators;
pub mod docstring;
pub mod execution;
pub mod groups;
pub mod overloads;
pub mod signature;
pub mod spans;

use std::collections::HashMap;

use apizr_ir::{CapabilityIr, Diagnostic, DiagnosticKind, ReadinessPolicy, SourceRecord};

use crate::facts::ModuleFacts;
use crate::module::ParsedModule;
use candidates::{Candidate, Candidates};

/// Under readiness v2 (`policy`) a function taking `*args`/`**kwargs` is a capability whose
/// signature holds them (kinds `var_positional`/`var_keyword`, IR `apizr.capability/v2`); under
/// v1 it is rejected with CAP-002, as the reference does.
pub fn build_ir(
    parsed: &ParsedModule,
    facts: &ModuleFacts,
    source: SourceRecord,
    policy: ReadinessPolicy,
) -> CapabilityIr {
    let variadics = policy == ReadinessPolicy::V2;
    let found = Candidates::collect(facts);

    // Group by name, in order of first appearance.
    let mut groups: Vec<(&str, Vec<&Candidate>)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for candidate in &found.functions {
        let name = candidate.def.name.as_str();
        match index.get(name).and_then(|&i| groups.get_mut(i)) {
            Some((_, members)) => members.push(candidate),
            None => {
                index.insert(name, groups.len());
                groups.push((name, vec![candidate]));
            }
        }
    }

    let mut capabilities = Vec::new();
    let mut diagnostics = Vec::new();
    for (name, members) in &groups {
        let resolved = groups::resolve(parsed, facts, name, members, variadics);
        capabilities.extend(resolved.capability);
        diagnostics.extend(resolved.diagnostics);
    }
    for lambda in &found.lambdas {
        diagnostics.push(Diagnostic::new(
            DiagnosticKind::LambdaAssignment,
            spans::statement_span(parsed, lambda.stmt, lambda.name),
        ));
    }

    let mut ir = CapabilityIr {
        schema_version: CapabilityIr::schema_for(&capabilities),
        source,
        capabilities,
        diagnostics,
    };
    ir.normalize_order();
    ir
}
