//! Readiness assessment (`apizr.readiness/v1`).
//!
//! Inputs are the parsed module with its facts ([`crate::facts`]) and the finished Capability
//! IR (which symbols are capabilities, their overload stubs, and the diagnostics of rejected
//! symbols). The rules live in small files:
//!
//! * [`bindings`] — READY-001/002/003/008;
//! * [`init`] — the READY-004 initialization heuristic;
//! * [`imports`] + [`stdlib`] — READY-014/015;
//! * [`inputs`] + [`outputs`] — per-parameter and return classification;
//! * [`typeddict`] + [`lower`] — TypedDict proofs and their object TypedSpecs;
//! * [`classes`] + [`aliases`] — v2 only: Enum, dataclass and NamedTuple classes as
//!   input/output types, and type aliases (also under `if TYPE_CHECKING:`);
//! * [`abcs`] — v2 only: abstract collections (`Sequence[T]`, `Mapping[str, T]`, ...) as the
//!   list, set or dict the worker builds (`bytes`/`bytearray` are in [`inputs`]/[`lower`]);
//! * [`assemble`] — findings → assessments (de-duplicated, sorted, states);
//! * [`v2`] — the opt-in policy `apizr.readiness/v2`: the same rules, plus proofs that more
//!   top-level statements are harmless (it only changes which READY-004/015 findings remain).
//!
//! This file runs the rules: [`ModuleRules`] holds what is decided once per module (TypedDict
//! proofs, the findings every capability shares), [`ModuleRules::capability`] adds one
//! capability's own findings.

pub mod abcs;
pub mod aliases;
pub mod assemble;
pub mod bindings;
pub mod classes;
pub mod evidence;
pub mod forward;
pub mod imported;
pub mod imports;
pub mod init;
pub mod inputs;
pub mod lower;
pub mod outputs;
pub mod pyrepr;
pub mod stdlib;
pub mod temporal;
pub mod typeddict;
pub mod v2;

use std::collections::HashSet;

use apizr_ir::{
    Capability, CapabilityIr, DiagnosticKind, Digest, ExecutionKind, ReadinessPolicy,
    ReadinessReport, ReasonCode, Span, StructuredType,
};

use ruff_text_size::Ranged;

use crate::facts::{ModuleFacts, Scope, StmtId};
use crate::module::ParsedModule;

pub use assemble::Finding;
use evidence::Evidence;

/// Assess every symbol of `ir` (walks the module once for its facts).
pub fn assess(parsed: &ParsedModule, ir: &CapabilityIr, ir_digest: Digest) -> ReadinessReport {
    let facts = ModuleFacts::collect(parsed);
    assess_with(parsed, &facts, ir, ir_digest)
}

/// [`assess`] with facts already collected (policy v1).
pub fn assess_with<'a>(
    parsed: &'a ParsedModule,
    facts: &'a ModuleFacts<'a>,
    ir: &CapabilityIr,
    ir_digest: Digest,
) -> ReadinessReport {
    assess_policy(parsed, facts, ir, ir_digest, ReadinessPolicy::V1)
}

/// [`assess_with`] under `policy`.
pub fn assess_policy<'a>(
    parsed: &'a ParsedModule,
    facts: &'a ModuleFacts<'a>,
    ir: &CapabilityIr,
    ir_digest: Digest,
    policy: ReadinessPolicy,
) -> ReadinessReport {
    assess_in_package(parsed, facts, ir, ir_digest, policy, None).0
}

/// [`assess_policy`] for a module of a package directory: under v2, its local imports are
/// followed ([`v2::package`]) and what other modules need to know about it is returned.
pub fn assess_in_package<'a>(
    parsed: &'a ParsedModule,
    facts: &'a ModuleFacts<'a>,
    ir: &CapabilityIr,
    ir_digest: Digest,
    policy: ReadinessPolicy,
    package: Option<&'a v2::package::PackageContext<'a>>,
) -> (ReadinessReport, Option<v2::package::PackageOutcome>) {
    assess_in_index(parsed, facts, ir, ir_digest, policy, package, None)
}

/// [`assess_in_package`]; names imported from the modules of `index` may be input types
/// ([`imported`]).
pub fn assess_in_index<'a>(
    parsed: &'a ParsedModule,
    facts: &'a ModuleFacts<'a>,
    ir: &CapabilityIr,
    ir_digest: Digest,
    policy: ReadinessPolicy,
    package: Option<&'a v2::package::PackageContext<'a>>,
    index: Option<&'a crate::package::PackageIndex>,
) -> (ReadinessReport, Option<v2::package::PackageOutcome>) {
    let rules = ModuleRules::with_index(parsed, facts, ir, policy, package, index);
    let mut assessments: Vec<_> = ir
        .capabilities
        .iter()
        .map(|cap| {
            let findings = rules.capability(cap);
            assemble::assessment(
                cap.id.clone(),
                cap.source.clone(),
                true,
                cap.effects.clone(),
                findings,
            )
        })
        .collect();
    assessments.extend(assemble::rejected(ir));
    assessments.sort_by(|a, b| a.capability_id.cmp(&b.capability_id));
    let report = ReadinessReport {
        assessments,
        ir_digest,
        policy_version: policy.schema(),
        source: ir.source.clone(),
        structured_types: rules.structured_types(),
    };
    // The assumptions are complete only now: the capabilities' own imports were judged too.
    let outcome = rules.package_outcome.clone().map(|mut outcome| {
        if let Some(package) = &rules.package {
            (outcome.assumed, outcome.missing) = package.assumptions();
        }
        outcome
    });
    (report, outcome)
}

/// What is decided once per module.
pub struct ModuleRules<'a> {
    parsed: &'a ParsedModule,
    facts: &'a ModuleFacts<'a>,
    ir: &'a CapabilityIr,
    /// TypedDict candidates and their proofs, in source order.
    pub typed_dicts: Vec<typeddict::Candidate>,
    /// v2 only (empty under v1): Enum, dataclass and NamedTuple classes and their shapes.
    pub classes: classes::V2Types,
    /// Findings every capability of the module gets: READY-004, READY-008 and the module-scope
    /// READY-014/015.
    pub shared: Vec<Finding>,
    /// v2: import statements that never run or whose failure is handled (no READY-015).
    excused_imports: HashSet<ruff_text_size::TextRange>,
    /// v2 inside a package directory: the module's view of its package.
    package: Option<v2::package::ModulePackage<'a>>,
    /// v2 inside a package directory: what importers of this module need to know.
    pub package_outcome: Option<v2::package::PackageOutcome>,
}

impl<'a> ModuleRules<'a> {
    pub fn new(parsed: &'a ParsedModule, facts: &'a ModuleFacts<'a>, ir: &'a CapabilityIr) -> Self {
        Self::with_policy(parsed, facts, ir, ReadinessPolicy::V1)
    }

    /// The module's rules under `policy`: v2 runs v1's rules, then keeps only the READY-004
    /// statements it cannot prove and drops READY-015 for imports that never run.
    pub fn with_policy(
        parsed: &'a ParsedModule,
        facts: &'a ModuleFacts<'a>,
        ir: &'a CapabilityIr,
        policy: ReadinessPolicy,
    ) -> Self {
        Self::with_package(parsed, facts, ir, policy, None)
    }

    /// [`Self::with_policy`]; under v2 with a package context, READY-015 of local imports
    /// and of declared third-party imports is decided by [`v2::package`].
    pub fn with_package(
        parsed: &'a ParsedModule,
        facts: &'a ModuleFacts<'a>,
        ir: &'a CapabilityIr,
        policy: ReadinessPolicy,
        package: Option<&'a v2::package::PackageContext<'a>>,
    ) -> Self {
        Self::with_index(parsed, facts, ir, policy, package, None)
    }

    /// [`Self::with_package`]; under v2, names imported from the modules of `index` (or of
    /// the package context's index) may be input types ([`imported`]).
    pub fn with_index(
        parsed: &'a ParsedModule,
        facts: &'a ModuleFacts<'a>,
        ir: &'a CapabilityIr,
        policy: ReadinessPolicy,
        package: Option<&'a v2::package::PackageContext<'a>>,
        index: Option<&'a crate::package::PackageIndex>,
    ) -> Self {
        let typed_dicts = typeddict::prove_all(parsed, facts);
        let classes = match policy {
            ReadinessPolicy::V1 => classes::V2Types::default(),
            ReadinessPolicy::V2 => {
                let index = index.or(package.map(|p| p.index));
                classes::prove_in_package(parsed, facts, &typed_dicts, index)
            }
        };
        let package = match (policy, package) {
            (ReadinessPolicy::V2, Some(ctx)) => Some(
                v2::package::ModulePackage::new(ctx, parsed)
                    .with_worker_imports(classes.worker_imports.clone()),
            ),
            _ => None,
        };
        let namespace = bindings::namespace_findings(parsed, facts);
        let exempt = exempt_statements(facts, ir, &typed_dicts);
        let inert = inert_definitions(facts, ir);
        let init = init::InitContext {
            parsed,
            facts,
            exempt: &exempt,
            inert: &inert,
            has_namespace_reasons: !namespace.is_empty(),
        };
        let mut risky = init::risky_statements(&init);
        let mut excused_imports = HashSet::new();
        let mut exports = v2::package::Exports::new();
        if policy == ReadinessPolicy::V2 {
            let proved = v2::prove(&init, &risky, package.as_ref());
            risky = proved.risky;
            excused_imports = proved.excused_imports;
            // A handled import of a module of the package runs it when it succeeds, and one of
            // a declared distribution runs its code: judged by the package rule like any
            // other import (its verdict, READY-020 for a declared one), not excused.
            if let Some(package) = &package {
                excused_imports.retain(|r| {
                    let declared =
                        matches!(package.verdict(*r), Some(v2::package::Verdict::Declared(_)));
                    !(proved.handled_imports.contains(r) && (package.runs_local(*r) || declared))
                });
            }
            // The worker runs these imports to build arguments (see `imported`).
            excused_imports.retain(|r| !classes.worker_imports.contains(r));
            exports = proved.exports;
        }
        let mut shared: Vec<Finding> = risky
            .into_iter()
            .map(|(stmt, risk)| {
                let line = facts.statement(stmt).line;
                Finding::new(ReasonCode::R004, line, Evidence::Statement { stmt, risk })
            })
            .collect();
        shared.extend(namespace);
        let dependencies = dependency_findings(parsed, facts, Scope::Module)
            .into_iter()
            .filter(|f| !is_excused(f, &excused_imports) && !never_runs(f, &excused_imports));
        shared.extend(package_findings(dependencies, package.as_ref()));
        let package_outcome = package.as_ref().map(|package| {
            let own_proved = !shared.iter().any(|f| {
                matches!(
                    f.code,
                    ReasonCode::R004 | ReasonCode::R014 | ReasonCode::R015
                )
            });
            for parent in package.unproved_parents() {
                let evidence = Evidence::ParentPackage { package: parent };
                shared.push(Finding::new(ReasonCode::R004, 1, evidence));
            }
            v2::package::PackageOutcome {
                own_proved,
                exports: if own_proved {
                    exports
                } else {
                    Default::default()
                },
                interpreted: package.interpreted(),
                ..Default::default()
            }
        });
        ModuleRules {
            parsed,
            facts,
            ir,
            typed_dicts,
            classes,
            shared,
            excused_imports,
            package,
            package_outcome,
        }
    }

    /// v2 inside a package directory: the module's view of its package (explanations name
    /// the local modules a refusal is about).
    pub fn package(&self) -> Option<&v2::package::ModulePackage<'a>> {
        self.package.as_ref()
    }

    /// Every finding of one capability: its own and the shared ones.
    pub fn capability(&self, cap: &Capability) -> Vec<Finding> {
        let mut findings = self.own_findings(cap);
        findings.extend(self.shared.iter().cloned());
        findings
    }

    /// The findings that are about this capability alone.
    pub fn own_findings(&self, cap: &Capability) -> Vec<Finding> {
        let (facts, line) = (self.facts, cap.source.line);
        let def = facts.function(&cap.name, line);
        let mut findings = bindings::binding_findings(
            facts,
            &cap.name,
            line,
            def.map(|(id, _, _)| id),
            is_decorated(self.ir, &cap.name),
        );
        let generator = Evidence::Generator {
            def: def.map(|(id, _, _)| id),
        };
        match cap.execution {
            ExecutionKind::Generator => {
                findings.push(Finding::new(ReasonCode::R005, line, generator));
            }
            ExecutionKind::AsyncGenerator => {
                findings.push(Finding::new(ReasonCode::R006, line, generator));
            }
            ExecutionKind::Sync | ExecutionKind::Async => {}
        }
        let Some((id, _, def)) = def else {
            return findings;
        };
        findings.extend(package_findings(
            dependency_findings(self.parsed, facts, Scope::Function(id))
                .into_iter()
                .filter(|f| !is_excused(f, &self.excused_imports)),
            self.package.as_ref(),
        ));
        let ctx = outputs::context_at(facts, &self.typed_dicts, &self.classes, line);
        findings.extend(outputs::parameter_findings(&ctx, def, line));
        for overload in &cap.overloads {
            if let Some((_, stub, stub_def)) = facts.function(&cap.name, overload.source.line) {
                findings.extend(outputs::parameter_findings(&ctx, stub_def, stub.line));
            }
        }
        findings.extend(outputs::return_finding(&ctx, def, line));
        findings
    }

    /// The distributions the package declares (normalised; empty outside a package).
    pub fn declared(&self) -> Vec<String> {
        self.package
            .as_ref()
            .map(|p| p.ctx.declared.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The `structured_types` member: every TypedDict candidate, sorted by name.
    pub fn structured_types(&self) -> Vec<StructuredType> {
        let mut types: Vec<StructuredType> = self
            .typed_dicts
            .iter()
            .map(|c| StructuredType {
                source: Span {
                    module: self.parsed.module.clone(),
                    symbol: c.name.clone(),
                    line: c.line,
                    end_line: c.end_line,
                },
                name: c.name.clone(),
                type_spec: c.outcome.as_ref().ok().cloned(),
                problem: c.outcome.as_ref().err().cloned(),
            })
            .collect();
        types.sort_by(|a, b| a.name.cmp(&b.name));
        types
    }
}

/// A READY-015 finding about an import v2 excused.
fn is_excused(finding: &Finding, excused: &HashSet<ruff_text_size::TextRange>) -> bool {
    matches!(&finding.evidence, Evidence::Import { statement, .. } if excused.contains(statement))
}

/// A module-level READY-014 finding (a dynamic import call) inside a body v2 knows never runs
/// on a worker: the call never happens, like the excused imports of that body.
fn never_runs(finding: &Finding, excused: &HashSet<ruff_text_size::TextRange>) -> bool {
    finding.code == ReasonCode::R014
        && matches!(&finding.evidence, Evidence::Call { range }
            if excused.iter().any(|body| body.contains_range(*range)))
}

/// v2 in a package: each READY-015 finding gets the package's verdict on its statement:
/// dropped (local and proved), READY-020 (declared third-party), or kept with the reason.
fn package_findings(
    findings: impl Iterator<Item = Finding>,
    package: Option<&v2::package::ModulePackage>,
) -> Vec<Finding> {
    use v2::package::Verdict;
    let Some(package) = package else {
        return findings.collect();
    };
    findings
        .filter_map(|finding| {
            let Evidence::Import {
                statement,
                range,
                level,
                ..
            } = finding.evidence
            else {
                return Some(finding);
            };
            match package.verdict(statement) {
                None => Some(finding),
                Some(Verdict::Accept) => None,
                Some(Verdict::Declared(distributions)) => {
                    let evidence = Evidence::Declared {
                        statement,
                        distributions,
                    };
                    Some(Finding::new(ReasonCode::R020, finding.line, evidence))
                }
                Some(Verdict::Refuse(problem)) => {
                    let evidence = Evidence::Import {
                        range,
                        statement,
                        level,
                        problem,
                    };
                    Some(Finding::new(finding.code, finding.line, evidence))
                }
            }
        })
        .collect()
}

/// READY-014 and READY-015 findings in `scope`.
fn dependency_findings(parsed: &ParsedModule, facts: &ModuleFacts, scope: Scope) -> Vec<Finding> {
    let dynamic = imports::dynamic_imports(facts, scope)
        .into_iter()
        .map(|call| {
            let evidence = Evidence::Call {
                range: call.range(),
            };
            Finding::new(ReasonCode::R014, parsed.start_line(call), evidence)
        });
    let unresolved = imports::unresolved_imports(facts, scope)
        .into_iter()
        .map(|import| {
            let evidence = Evidence::Import {
                range: import.module.range,
                statement: import.statement,
                level: import.module.level,
                problem: import.problem,
            };
            Finding::new(ReasonCode::R015, import.line, evidence)
        });
    dynamic.chain(unresolved).collect()
}

/// Statements READY-004 never counts: associated overload stubs and proven TypedDict classes.
fn exempt_statements(
    facts: &ModuleFacts,
    ir: &CapabilityIr,
    typed_dicts: &[typeddict::Candidate],
) -> HashSet<StmtId> {
    let proven = typed_dicts
        .iter()
        .filter(|c| c.outcome.is_ok())
        .map(|c| c.stmt);
    let stubs = ir.capabilities.iter().flat_map(|cap| {
        cap.overloads.iter().filter_map(|o| {
            facts
                .function(&cap.name, o.source.line)
                .map(|(id, _, _)| id)
        })
    });
    proven.chain(stubs).collect()
}

/// Implementations whose decorators discovery accepted as the inert tracking decorator.
fn inert_definitions(facts: &ModuleFacts, ir: &CapabilityIr) -> HashSet<StmtId> {
    ir.capabilities
        .iter()
        .filter(|cap| !cap.decorators.is_empty() && !is_decorated(ir, &cap.name))
        .filter_map(|cap| {
            facts
                .function(&cap.name, cap.source.line)
                .map(|(id, _, _)| id)
        })
        .collect()
}

/// Discovery reported that `name`'s decorators may replace it (CAP-005).
fn is_decorated(ir: &CapabilityIr, name: &str) -> bool {
    ir.diagnostics
        .iter()
        .any(|d| d.source.symbol == name && d.kind == DiagnosticKind::Decorated)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use apizr_ir::{CAPABILITY_SCHEMA, Diagnostic, ReadinessState, SourceKind, SourceRecord};

    fn parsed(text: &str) -> ParsedModule {
        ParsedModule::parse(text.to_string(), "m".to_string()).unwrap()
    }

    fn ir(diagnostics: Vec<Diagnostic>) -> CapabilityIr {
        CapabilityIr {
            schema_version: CAPABILITY_SCHEMA,
            source: SourceRecord {
                kind: SourceKind::Python,
                module: "m".into(),
                digest: Digest::sha256(b""),
                transformed_digest: None,
            },
            capabilities: vec![],
            diagnostics,
        }
    }

    fn span(symbol: &str, line: u32) -> Span {
        Span {
            module: "m".into(),
            symbol: symbol.into(),
            line,
            end_line: line,
        }
    }

    #[test]
    fn rejected_symbol_uses_last_diagnostic_span_and_maps_codes() {
        let module = parsed("q = lambda: 1\nif x:\n    q = lambda: 2\n");
        let diagnostics = vec![
            Diagnostic::new(DiagnosticKind::LambdaAssignment, span("q", 1)),
            Diagnostic::new(DiagnosticKind::LambdaAssignment, span("q", 3)),
        ];
        let report = assess(&module, &ir(diagnostics), Digest::sha256(b""));
        let [assessment] = report.assessments.as_slice() else {
            panic!("one assessment expected");
        };
        assert_eq!(assessment.capability_id, "python:m:q");
        assert_eq!(assessment.source.line, 3);
        assert!(!assessment.in_ir && !assessment.can_generate_interface);
        assert_eq!(assessment.state, ReadinessState::Unsupported);
        let lines: Vec<u32> = assessment
            .dimensions
            .execution
            .reasons
            .iter()
            .map(|r| r.line)
            .collect();
        assert_eq!(lines, [1, 3]);
        assert!(assessment.dimensions.binding.reasons.is_empty());
    }

    #[test]
    fn decorated_statement_line_is_the_keyword_line() {
        let module = parsed("@a  # c\n# d\n@(b)\n\ndef f():\n    pass\n");
        assert_eq!(module.stmt_line(&module.body()[0]), 5);
    }

    #[test]
    fn structured_types_sorted_by_name_and_omitted_when_empty() {
        let module = parsed(
            "from typing import TypedDict\nclass b(TypedDict):\n    x: int\nclass A(TypedDict):\n    y: bytes\n",
        );
        let report = assess(&module, &ir(vec![]), Digest::sha256(b""));
        let names: Vec<&str> = report
            .structured_types
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(names, ["A", "b"]);
        assert!(report.structured_types[1].type_spec.is_some());
        let empty = assess(&parsed("x = 1\n"), &ir(vec![]), Digest::sha256(b""));
        let bytes = apizr_ir::canonical_bytes(&empty).unwrap();
        assert!(
            !String::from_utf8(bytes)
                .unwrap()
                .contains("structured_types")
        );
    }
}
