//! Readiness assessment (`apizr.readiness/v1`, contract section 3).
//!
//! Inputs are the parsed module (for line numbers and the AST the rules inspect) and the finished
//! Capability IR (which symbols are capabilities, their overload stubs, and the diagnostics of
//! rejected symbols). The rules live in small files:
//!
//! * [`scan`] — module-scope facts (bindings, mutations, namespace calls, imports);
//! * [`bindings`] — READY-001/002/003/008;
//! * [`init`] — the READY-004 initialization heuristic;
//! * [`imports`] + [`stdlib`] — READY-014/015;
//! * [`inputs`] + [`outputs`] — per-parameter and return classification;
//! * [`typeddict`] + [`lower`] — TypedDict proofs and their object TypeSpecs.
//!
//! This file assembles assessments: reasons de-duplicated and sorted by (line, code, parameter),
//! dimension state = max implied state, assessment state = max over dimensions.

pub mod bindings;
pub mod imports;
pub mod init;
pub mod inputs;
pub mod lower;
pub mod outputs;
pub mod pyrepr;
pub mod scan;
pub mod stdlib;
pub mod typeddict;

use std::collections::{HashMap, HashSet};

use apizr_ir::{
    Assessment, CapabilityIr, Diagnostic, Digest, Dimension, Dimensions, Effects, READINESS_POLICY,
    ReadinessReport, ReadinessState, Reason, ReasonCode, Span, StructuredType, capability_id,
};
use ruff_python_ast::{self as ast, Stmt};
use ruff_text_size::{Ranged, TextSize};

use crate::module::ParsedModule;

pub fn assess(parsed: &ParsedModule, ir: &CapabilityIr, ir_digest: Digest) -> ReadinessReport {
    let aliases = scan::dynamic_import_aliases(parsed);
    let facts = scan::scan_module(parsed, &aliases);
    let candidates = typeddict::prove_all(parsed, &facts);
    let defs = module_defs(parsed);
    let find_def = |name: &str, line: u32| {
        defs.iter()
            .find(|d| d.def.name.as_str() == name && d.line == line)
    };

    let mut exempt: HashSet<TextSize> = candidates
        .iter()
        .filter(|c| c.outcome.is_ok())
        .map(|c| c.stmt_start)
        .collect();
    let mut inert = HashSet::new();
    for cap in &ir.capabilities {
        for overload in &cap.overloads {
            if let Some(stub) = find_def(&cap.name, overload.source.line) {
                exempt.insert(stub.def.start());
            }
        }
        if let Some(def) = find_def(&cap.name, cap.source.line)
            && !cap.decorators.is_empty()
            && !has_decorated_diagnostic(ir, &cap.name)
        {
            inert.insert(def.def.start());
        }
    }
    let init_ctx = init::InitContext {
        parsed,
        facts: &facts,
        exempt: &exempt,
        inert: &inert,
    };
    let risky = init::risky_lines(&init_ctx);

    let mut assessments = Vec::new();
    for cap in &ir.capabilities {
        let mut reasons = Vec::new();
        let line = cap.source.line;
        let def = find_def(&cap.name, line);
        let decorated = has_decorated_diagnostic(ir, &cap.name);
        reasons.extend(bindings::binding_reasons(
            &facts,
            &cap.name,
            line,
            def.map(|d| (d.def, d.direct)),
            decorated,
        ));
        reasons.extend(risky.iter().map(|l| (ReasonCode::R004, *l, None)));
        match cap.execution {
            apizr_ir::ExecutionKind::Generator => reasons.push((ReasonCode::R005, line, None)),
            apizr_ir::ExecutionKind::AsyncGenerator => reasons.push((ReasonCode::R006, line, None)),
            _ => {}
        }
        reasons.extend(
            facts
                .dynamic_import_lines
                .iter()
                .map(|l| (ReasonCode::R014, *l, None)),
        );
        reasons.extend(
            facts
                .imports
                .iter()
                .filter(|u| u.unresolved)
                .map(|u| (ReasonCode::R015, u.line, None)),
        );
        if let Some(def) = def {
            let body = imports::body_dependencies(parsed, &def.def.body, &aliases);
            reasons.extend(
                body.dynamic_import_lines
                    .iter()
                    .map(|l| (ReasonCode::R014, *l, None)),
            );
            reasons.extend(
                body.unresolved_import_lines
                    .iter()
                    .map(|l| (ReasonCode::R015, *l, None)),
            );
            let mut signatures = vec![(def.def, def.line)];
            for overload in &cap.overloads {
                if let Some(stub) = find_def(&cap.name, overload.source.line) {
                    signatures.push((stub.def, stub.line));
                }
            }
            let ctx = outputs::context_at(&facts, &candidates, line);
            for (sig, sig_line) in signatures {
                reasons.extend(outputs::parameter_reasons(&ctx, sig, sig_line));
            }
            reasons.extend(outputs::return_reason(&ctx, def.def, line));
        }
        assessments.push(build(
            cap.id.clone(),
            cap.source.clone(),
            true,
            cap.effects.clone(),
            reasons,
        ));
    }
    assessments.extend(rejected(ir));
    assessments.sort_by(|a, b| a.capability_id.cmp(&b.capability_id));

    let mut structured_types: Vec<StructuredType> = candidates
        .into_iter()
        .map(|c| StructuredType {
            source: Span {
                module: parsed.module.clone(),
                symbol: c.name.clone(),
                line: c.line,
                end_line: c.end_line,
            },
            name: c.name,
            type_spec: c.outcome.as_ref().ok().cloned(),
            problem: c.outcome.err(),
        })
        .collect();
    structured_types.sort_by(|a, b| a.name.cmp(&b.name));

    ReadinessReport {
        assessments,
        ir_digest,
        policy_version: READINESS_POLICY,
        source: ir.source.clone(),
        structured_types,
    }
}

fn has_decorated_diagnostic(ir: &CapabilityIr, name: &str) -> bool {
    let decorated = apizr_ir::DiagnosticKind::Decorated;
    ir.diagnostics.iter().any(|d| {
        d.source.symbol == name && d.code == decorated.code() && d.message == decorated.message()
    })
}

/// One assessment per rejected symbol (a diagnostic whose symbol has no capability).
fn rejected(ir: &CapabilityIr) -> Vec<Assessment> {
    let in_ir: HashSet<&str> = ir.capabilities.iter().map(|c| c.name.as_str()).collect();
    let mut order: Vec<&str> = Vec::new();
    let mut groups: HashMap<&str, (Span, Vec<RawReason>)> = HashMap::new();
    for diagnostic in &ir.diagnostics {
        let symbol = diagnostic.source.symbol.as_str();
        let Some(code) = rejection_code(diagnostic) else {
            continue;
        };
        if in_ir.contains(symbol) {
            continue;
        }
        let entry = groups.entry(symbol).or_insert_with(|| {
            order.push(symbol);
            (diagnostic.source.clone(), Vec::new())
        });
        entry.0 = diagnostic.source.clone();
        entry.1.push((code, diagnostic.source.line, None));
    }
    order
        .into_iter()
        .filter_map(|symbol| {
            let (span, reasons) = groups.remove(symbol)?;
            let id = capability_id(&ir.source.module, symbol);
            Some(build(id, span, false, Effects::UNKNOWN, reasons))
        })
        .collect()
}

fn rejection_code(diagnostic: &Diagnostic) -> Option<ReasonCode> {
    use apizr_ir::DiagnosticKind as K;
    match diagnostic.code {
        "APIZR-CAP-001" => Some(ReasonCode::R009),
        "APIZR-CAP-004" => Some(ReasonCode::R010),
        "APIZR-CAP-002" => Some(ReasonCode::R011),
        "APIZR-CAP-005" if diagnostic.message == K::LambdaAssignment.message() => {
            Some(ReasonCode::R018)
        }
        _ => None,
    }
}

/// (code, line, parameter) before de-duplication.
pub type RawReason = (ReasonCode, u32, Option<String>);

fn build(
    capability_id: String,
    source: Span,
    in_ir: bool,
    effects: Effects,
    raw: Vec<RawReason>,
) -> Assessment {
    let mut per: [Vec<RawReason>; 4] = Default::default();
    for reason in raw {
        let index = match reason.0.dimension() {
            apizr_ir::DimensionName::Binding => 0,
            apizr_ir::DimensionName::Execution => 1,
            apizr_ir::DimensionName::Inputs => 2,
            apizr_ir::DimensionName::Outputs => 3,
        };
        if let Some(bucket) = per.get_mut(index) {
            bucket.push(reason);
        }
    }
    let [binding, execution, inputs, outputs] = per.map(dimension);
    let state = [&binding, &execution, &inputs, &outputs]
        .iter()
        .map(|d| d.state)
        .max()
        .unwrap_or(ReadinessState::Ready);
    Assessment {
        capability_id,
        source,
        in_ir,
        dimensions: Dimensions {
            binding,
            execution,
            inputs,
            outputs,
        },
        effects,
        state,
        can_generate_interface: in_ir && state == ReadinessState::Ready,
    }
}

fn dimension(mut raw: Vec<RawReason>) -> Dimension {
    raw.sort_by(|a, b| {
        (a.1, a.0.code(), a.2.as_deref().unwrap_or("")).cmp(&(
            b.1,
            b.0.code(),
            b.2.as_deref().unwrap_or(""),
        ))
    });
    raw.dedup();
    let state = raw
        .iter()
        .map(|r| r.0.implied_state())
        .max()
        .unwrap_or(ReadinessState::Ready);
    Dimension {
        state,
        reasons: raw
            .into_iter()
            .map(|(code, line, parameter)| Reason {
                code: code.code(),
                evidence: "inferred",
                line,
                parameter,
            })
            .collect(),
    }
}

/// A module-scope `def` (direct or nested in control flow) with its `def` line.
pub struct ModuleDef<'a> {
    pub def: &'a ast::StmtFunctionDef,
    pub line: u32,
    pub direct: bool,
}

fn module_defs(parsed: &ParsedModule) -> Vec<ModuleDef<'_>> {
    fn walk<'a>(
        parsed: &'a ParsedModule,
        body: &'a [Stmt],
        direct: bool,
        out: &mut Vec<ModuleDef<'a>>,
    ) {
        for stmt in body {
            match stmt {
                Stmt::FunctionDef(def) => out.push(ModuleDef {
                    def,
                    line: stmt_line(parsed, stmt),
                    direct,
                }),
                Stmt::If(n) => {
                    walk(parsed, &n.body, false, out);
                    for c in &n.elif_else_clauses {
                        walk(parsed, &c.body, false, out);
                    }
                }
                Stmt::For(n) => {
                    walk(parsed, &n.body, false, out);
                    walk(parsed, &n.orelse, false, out);
                }
                Stmt::While(n) => {
                    walk(parsed, &n.body, false, out);
                    walk(parsed, &n.orelse, false, out);
                }
                Stmt::With(n) => walk(parsed, &n.body, false, out),
                Stmt::Try(n) => {
                    walk(parsed, &n.body, false, out);
                    for ast::ExceptHandler::ExceptHandler(h) in &n.handlers {
                        walk(parsed, &h.body, false, out);
                    }
                    walk(parsed, &n.orelse, false, out);
                    walk(parsed, &n.finalbody, false, out);
                }
                Stmt::Match(n) => {
                    for case in &n.cases {
                        walk(parsed, &case.body, false, out);
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(parsed, parsed.body(), true, &mut out);
    out
}

/// CPython's `lineno` of a statement: for decorated `def`/`class`, the keyword's line.
pub fn stmt_line(parsed: &ParsedModule, stmt: &Stmt) -> u32 {
    let last_decorator = match stmt {
        Stmt::FunctionDef(def) => def.decorator_list.last(),
        Stmt::ClassDef(class) => class.decorator_list.last(),
        _ => None,
    };
    let Some(decorator) = last_decorator else {
        return parsed.start_line(stmt);
    };
    // Skip trivia after the decorator: whitespace, comments, line continuations and the
    // closing parentheses of a parenthesized decorator expression.
    let text = parsed.text.as_str();
    let mut offset = usize::from(decorator.end());
    let bytes = text.as_bytes();
    while let Some(&byte) = bytes.get(offset) {
        match byte {
            b' ' | b'\t' | b'\x0c' | b'\r' | b'\n' | b'\\' | b')' => offset += 1,
            b'#' => {
                while bytes
                    .get(offset)
                    .is_some_and(|b| *b != b'\n' && *b != b'\r')
                {
                    offset += 1;
                }
            }
            _ => break,
        }
    }
    let offset = u32::try_from(offset).unwrap_or(u32::MAX);
    parsed.line(TextSize::from(offset).min(stmt.end()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use apizr_ir::{CAPABILITY_SCHEMA, DiagnosticKind, SourceKind, SourceRecord};

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
    fn reasons_are_deduplicated_and_sorted() {
        let raw = vec![
            (ReasonCode::R013, 5, Some("b".to_string())),
            (ReasonCode::R007, 5, Some("a".to_string())),
            (ReasonCode::R013, 5, Some("b".to_string())),
            (ReasonCode::R012, 2, Some("z".to_string())),
        ];
        let dim = dimension(raw);
        let order: Vec<(&str, u32)> = dim.reasons.iter().map(|r| (r.code, r.line)).collect();
        assert_eq!(
            order,
            [
                ("APIZR-READY-012", 2),
                ("APIZR-READY-007", 5),
                ("APIZR-READY-013", 5)
            ]
        );
        assert_eq!(dim.state, ReadinessState::Unsupported);
    }

    #[test]
    fn decorated_statement_line_is_the_keyword_line() {
        let module = parsed("@a  # c\n# d\n@(b)\n\ndef f():\n    pass\n");
        assert_eq!(stmt_line(&module, &module.body()[0]), 5);
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
