//! Explanations of readiness reasons (`apizr.explanation/v1`): per reason, the culprit (an
//! import, a type expression, a statement, ...) with its span, a one-line fix, and the
//! reasons every function of a module shares listed once for the module.
//!
//! Explanations are never part of a hashed artifact: the IR, the readiness report and the
//! inspection envelope stay byte-identical to the reference. They are built from the same
//! findings the readiness rules produce ([`crate::readiness::Finding`] with its
//! [`crate::readiness::evidence::Evidence`]), so an explanation cannot disagree with the
//! report: every reason of every assessment is explained, with the same code, line and
//! parameter, and `readiness_digest` names the report it explains.
//!
//! * [`culprit`] — evidence → what and where (text, span, notebook cell, a note);
//! * [`fix`] — evidence → one line saying what to change;
//! * [`types`] — the fixes of input and output types.
//!
//! The document (canonical JSON, like every apizr document):
//!
//! ```text
//! {"capabilities":[{"can_generate_interface","capability_id","module_reasons":bool,
//!                   "next_step":str|null,"reasons":[REASON],"state","symbol"}],
//!  "module","module_advice":str|null,"module_reasons":[REASON],
//!  "readiness_digest":{"algorithm","value"},"schema_version":"apizr.explanation/v1"}
//! REASON  = {"code","culprits":[CULPRIT],"dimension","fix","line","parameter":str|null,
//!            "state","summary"}
//! CULPRIT = {"cell":{"execution_count":int|null,"line","number"}|null,"kind","note":str|null,
//!            "span":{"column","end_column","end_line","line"},"text"
//!            [,"runs":[module],"leads_to":{"chain":[module],"culprit":CULPRIT|null,"module","path"}]}
//! ```
//!
//! `module_reasons` holds the reasons shared by every capability in the IR (READY-004,
//! READY-008 and module-level READY-014/015); a capability's own `reasons` never repeat them,
//! and its `module_reasons` flag says whether they apply to it (they do to every capability in
//! the IR, not to rejected symbols). Spans are 1-based; columns count characters; the end is
//! exclusive. `cell` is set for notebooks: the cell's position in the notebook, its `In[n]`
//! count and the line within the cell.
//!
//! Readiness v2 only (v1 explanations keep their bytes): a module lists its `module_reasons`
//! even when it has no capability — its top level is what every importer and every
//! submodule runs, so a package `__init__` defining no function still names the statements
//! that keep its importers from being ready. In a directory, a culprit that is about another
//! module of the directory (a parent package's `__init__`, an import of a local module, a
//! base class from one) has `runs`, the modules it runs whose import is not proved, and
//! `leads_to`, the first statement at fault along the import chain
//! ([`crate::project::blockers`]). Both keys are absent otherwise.

pub mod culprit;
pub mod fix;
mod rejected;
pub mod types;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

use std::collections::HashSet;

use apizr_ir::{CapabilityIr, Digest, DimensionName, ReadinessReport, ReadinessState, ReasonCode};
use serde::Serialize;

use crate::facts::ModuleFacts;
use crate::module::ParsedModule;
use crate::notebook::CellLines;
use crate::readiness::{Finding, ModuleRules, assemble};

pub use culprit::{CellRef, Culprit, CulpritKind, LeadsTo, SourceSpan};

pub const EXPLANATION_SCHEMA: &str = "apizr.explanation/v1";

/// The explanation of one module's readiness report.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    pub schema_version: &'static str,
    pub module: String,
    /// The readiness report this explains.
    pub readiness_digest: Digest,
    /// Reasons every capability in the IR shares, once.
    pub module_reasons: Vec<ExplainedReason>,
    /// What to do about the module reasons as a whole.
    pub module_advice: Option<String>,
    /// One per assessment, in the report's order.
    pub capabilities: Vec<CapabilityExplanation>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CapabilityExplanation {
    pub capability_id: String,
    pub symbol: String,
    pub state: ReadinessState,
    pub can_generate_interface: bool,
    /// The module's shared reasons apply to this capability.
    pub module_reasons: bool,
    /// Its own reasons (never the shared ones).
    pub reasons: Vec<ExplainedReason>,
    /// What to do next, when it cannot be generated as it is.
    pub next_step: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExplainedReason {
    pub code: &'static str,
    pub dimension: &'static str,
    /// The state this reason implies.
    pub state: ReadinessState,
    pub line: u32,
    pub parameter: Option<String>,
    /// What the code means.
    pub summary: &'static str,
    pub culprits: Vec<Culprit>,
    pub fix: String,
}

/// Everything rendering needs to know about the module.
pub struct Module<'a> {
    pub parsed: &'a ParsedModule,
    pub facts: &'a ModuleFacts<'a>,
    pub rules: &'a ModuleRules<'a>,
    pub report: &'a ReadinessReport,
    pub cells: &'a [CellLines],
}

/// Explain `report`, which readiness produced for `ir` from this module.
pub fn explain(
    parsed: &ParsedModule,
    facts: &ModuleFacts,
    ir: &CapabilityIr,
    report: &ReadinessReport,
    readiness_digest: &Digest,
    cells: &[CellLines],
) -> Explanation {
    let report = Report {
        readiness: report,
        digest: readiness_digest,
        cells,
    };
    explain_in_package(parsed, facts, ir, report, None)
}

/// The report to explain, its digest and the notebook cells (if any).
pub struct Report<'r> {
    pub readiness: &'r ReadinessReport,
    pub digest: &'r Digest,
    pub cells: &'r [CellLines],
}

/// [`explain`] for a module that readiness v2 assessed inside a package directory: the same
/// package context gives the same findings.
pub fn explain_in_package<'a>(
    parsed: &'a ParsedModule,
    facts: &'a ModuleFacts<'a>,
    ir: &'a CapabilityIr,
    report: Report,
    package: Option<&'a crate::readiness::v2::package::PackageContext<'a>>,
) -> Explanation {
    explain_in_index(parsed, facts, ir, report, package, None)
}

/// [`explain_in_package`] with the index types are imported from (see
/// [`crate::readiness::imported`]).
pub fn explain_in_index<'a>(
    parsed: &'a ParsedModule,
    facts: &'a ModuleFacts<'a>,
    ir: &'a CapabilityIr,
    report: Report,
    package: Option<&'a crate::readiness::v2::package::PackageContext<'a>>,
    index: Option<&'a crate::package::PackageIndex>,
) -> Explanation {
    let Report {
        readiness: report,
        digest: readiness_digest,
        cells,
    } = report;
    let policy = if report.policy_version == apizr_ir::READINESS_POLICY_V2 {
        apizr_ir::ReadinessPolicy::V2
    } else {
        apizr_ir::ReadinessPolicy::V1
    };
    let rules = ModuleRules::with_index(parsed, facts, ir, policy, package, index);
    let module = Module {
        parsed,
        facts,
        rules: &rules,
        report,
        cells,
    };
    // v1 lists the shared reasons only when some capability has them (the reference's
    // shape); v2 always, since importers and submodules run this top level too.
    let shared_apply = !ir.capabilities.is_empty() || policy == apizr_ir::ReadinessPolicy::V2;
    let module_reasons = if shared_apply {
        module.reasons(&rules.shared, None)
    } else {
        Vec::new()
    };
    let shared: HashSet<(u32, &str, &str)> = rules.shared.iter().map(Finding::key).collect();
    let rejected = assemble::rejected_findings(ir);
    let capabilities = report
        .assessments
        .iter()
        .map(|assessment| {
            let symbol = assessment.source.symbol.as_str();
            let own: Vec<Finding> = match ir.capabilities.iter().find(|c| c.name == symbol) {
                Some(cap) if assessment.in_ir => rules.own_findings(cap),
                _ => rejected
                    .iter()
                    .find(|r| r.symbol == symbol)
                    .map(|r| r.findings.clone())
                    .unwrap_or_default(),
            };
            let own: Vec<Finding> = own
                .into_iter()
                .filter(|f| !shared.contains(&f.key()))
                .collect();
            CapabilityExplanation {
                capability_id: assessment.capability_id.clone(),
                symbol: symbol.to_string(),
                state: assessment.state,
                can_generate_interface: assessment.can_generate_interface,
                module_reasons: assessment.in_ir && !module_reasons.is_empty(),
                reasons: module.reasons(&own, Some(symbol)),
                next_step: fix::next_step(assessment),
            }
        })
        .collect();
    Explanation {
        schema_version: EXPLANATION_SCHEMA,
        module: parsed.module.clone(),
        readiness_digest: readiness_digest.clone(),
        module_advice: if ir.capabilities.is_empty() {
            fix::importers_advice(&module_reasons)
        } else {
            fix::module_advice(&module_reasons)
        },
        module_reasons,
        capabilities,
    }
}

impl Module<'_> {
    /// One explained reason per (line, code, parameter); all findings of a reason become its
    /// culprits. A capability's reasons are ordered by dimension and then like the report
    /// orders them, the module's (`symbol` is `None`) by line.
    fn reasons(&self, findings: &[Finding], symbol: Option<&str>) -> Vec<ExplainedReason> {
        let mut sorted: Vec<&Finding> = findings.iter().collect();
        let rank = |f: &Finding| match symbol {
            Some(_) => dimension_rank(f.code),
            None => 0,
        };
        sorted.sort_by(|a, b| (rank(a), a.key()).cmp(&(rank(b), b.key())));
        let mut out: Vec<ExplainedReason> = Vec::new();
        let mut last_key = None;
        for finding in sorted {
            let culprits = culprit::culprits(self, finding, symbol);
            if last_key == Some(finding.key())
                && let Some(reason) = out.last_mut()
            {
                for culprit in culprits {
                    if !reason.culprits.contains(&culprit) {
                        reason.culprits.push(culprit);
                    }
                }
                continue;
            }
            last_key = Some(finding.key());
            out.push(ExplainedReason {
                code: finding.code.code(),
                dimension: dimension_name(finding.code),
                state: finding.code.implied_state(),
                line: finding.line,
                parameter: finding.parameter.clone(),
                summary: finding.code.explanation(),
                culprits,
                fix: fix::fix(self, finding, symbol),
            });
        }
        out
    }
}

fn dimension_rank(code: ReasonCode) -> u8 {
    match code.dimension() {
        DimensionName::Binding => 0,
        DimensionName::Execution => 1,
        DimensionName::Inputs => 2,
        DimensionName::Outputs => 3,
    }
}

fn dimension_name(code: ReasonCode) -> &'static str {
    match code.dimension() {
        DimensionName::Binding => "binding",
        DimensionName::Execution => "execution",
        DimensionName::Inputs => "inputs",
        DimensionName::Outputs => "outputs",
    }
}

impl Explanation {
    /// Canonical JSON bytes (sorted keys, one trailing newline).
    pub fn canonical_bytes(&self) -> Result<Vec<u8>, apizr_ir::json::CanonicalError> {
        apizr_ir::canonical_bytes(self)
    }
}
