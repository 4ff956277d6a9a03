//! Discovery: Python AST -> Capability IR (`apizr.capability/v1`), contract sections 2.3–2.7.
//!
//! Static only: nothing is imported or executed. The pieces:
//! [`candidates`] (module-scope defs and lambda assignments), [`bindings`] (module-scope binding
//! scan), [`overloads`] (overload markers), [`decorators`] and [`namespace`] (the inert `experiment` decorator),
//! [`groups`] (per-name resolution and diagnostics), [`signature`], [`docstring`], [`execution`]
//! and [`spans`] (capability fields).

pub mod bindings;
pub mod candidates;
pub mod decorators;
pub mod docstring;
pub mod execution;
pub mod groups;
pub mod namespace;
pub mod overloads;
pub mod signature;
pub mod spans;

use std::collections::HashMap;

use apizr_ir::{CAPABILITY_SCHEMA, CapabilityIr, Diagnostic, DiagnosticKind, SourceRecord};

use crate::module::ParsedModule;
use bindings::ModuleBindings;
use candidates::{Candidate, Candidates};

pub fn build_ir(parsed: &ParsedModule, source: SourceRecord) -> CapabilityIr {
    let found = Candidates::collect(parsed.body());
    let bindings = ModuleBindings::scan(parsed.body());
    let namespace = namespace::NamespaceFacts::scan(parsed.body());

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
        let resolved = groups::resolve(parsed, &bindings, namespace, name, members);
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
        schema_version: CAPABILITY_SCHEMA,
        source,
        capabilities,
        diagnostics,
    };
    ir.normalize_order();
    ir
}
