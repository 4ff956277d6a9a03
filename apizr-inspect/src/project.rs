//! Directory inspection: every `.py` / `.ipynb` under a root, inspected in parallel.
//!
//! This goes beyond the reference tool, which only inspects one file. The design goals are:
//!
//! * **Deterministic.** Files are collected by a sequential walk, sorted by their relative path
//!   (`/`-separated, code-point order) and inspected by a rayon pool whose `collect` keeps that
//!   order, so two runs over the same tree give byte-identical output.
//! * **Bounded memory.** Each worker parses one file, builds its IR and readiness report,
//!   encodes the envelope canonically and drops the AST before taking the next file; only the
//!   compact [`ModuleReport`] (digests, counts and, optionally, the envelope bytes) is kept.
//! * **Robust.** A file that fails (syntax, decoding, bad module name, unreadable) becomes an
//!   error entry; it never stops the rest. Only an unreadable root is fatal.
//! * **Deep recursion is safe.** The parser and the unparser recurse; pool threads get the same
//!   large stack the CLI gives single-file inspection ([`INSPECT_STACK_BYTES`]), so a file that
//!   inspects on its own also inspects inside a directory.
//!
//! Module names come from relative paths (`pkg/sub/mod.py` → `pkg.sub.mod`, `pkg/__init__.py` →
//! `pkg`), see [`walk`]. The `project_digest` is defined in [`output`].

pub mod blockers;
mod explain;
mod output;
mod packaged;
mod selected;
pub mod walk;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use apizr_ir::{Digest, Inspection, ReadinessState, Severity};
use rayon::prelude::*;

pub use explain::PROJECT_EXPLANATION_SCHEMA;
pub use output::{PROJECT_SCHEMA, project_digest};
pub use selected::inspect_modules_in_dir;

use crate::error::{InspectError, Position};
use crate::{InspectOptions, Note};

/// Stack size for threads that run an inspection (parser and unparser recurse).
pub const INSPECT_STACK_BYTES: usize = 256 * 1024 * 1024;

/// How to inspect a directory.
#[derive(Debug, Clone, Copy)]
pub struct ProjectOptions {
    /// Options applied to every file.
    pub inspect: InspectOptions,
    /// Worker threads; `None` uses the available parallelism.
    pub threads: Option<usize>,
    /// Keep each module's canonical envelope bytes (needed for JSON output). Text summaries
    /// only need digests and counts, so they can switch this off to save memory.
    pub keep_envelopes: bool,
}

impl Default for ProjectOptions {
    fn default() -> Self {
        ProjectOptions {
            inspect: InspectOptions::default(),
            threads: None,
            keep_envelopes: true,
        }
    }
}

/// The result of inspecting a directory. Entries are sorted by `path`.
#[derive(Debug, Clone)]
pub struct ProjectInspection {
    pub modules: Vec<ModuleEntry>,
    pub project_digest: Digest,
    pub summary: Summary,
}

/// One file (or unreadable directory) found under the root.
#[derive(Debug, Clone)]
pub struct ModuleEntry {
    /// Relative to the root, `/`-separated.
    pub path: String,
    /// The logical module name derived from `path`; `None` when no name could be formed.
    pub module: Option<String>,
    pub result: Result<ModuleReport, ModuleError>,
    /// Pipeline notes (e.g. stripped notebook magics); not part of the JSON document.
    pub notes: Vec<Note>,
}

/// What is kept of a successful inspection.
#[derive(Debug, Clone)]
pub struct ModuleReport {
    pub ir_digest: Digest,
    pub readiness_digest: Digest,
    pub counts: ModuleCounts,
    /// Canonical bytes of the inspection envelope, trailing newline included. Empty when
    /// [`ProjectOptions::keep_envelopes`] is off.
    pub envelope: Vec<u8>,
    /// For each reason code present, how many of the module's assessments have it (sorted by
    /// code): what keeps functions from being ready, at a glance.
    pub reason_counts: Vec<(&'static str, usize)>,
    /// With [`InspectOptions::explain`](crate::InspectOptions::explain): the explanation.
    pub explanation: Option<crate::explain::Explanation>,
}

/// Per-module counts for summaries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModuleCounts {
    pub capabilities: usize,
    pub ready: usize,
    pub conditional: usize,
    pub unsupported: usize,
    pub ambiguous: usize,
    pub diagnostic_errors: usize,
    pub diagnostic_warnings: usize,
    pub diagnostic_infos: usize,
}

impl ModuleCounts {
    pub fn of(inspection: &Inspection) -> Self {
        let mut counts = ModuleCounts {
            capabilities: inspection.capability_ir.capabilities.len(),
            ..ModuleCounts::default()
        };
        for assessment in &inspection.readiness.assessments {
            match assessment.state {
                ReadinessState::Ready => counts.ready += 1,
                ReadinessState::Conditional => counts.conditional += 1,
                ReadinessState::Unsupported => counts.unsupported += 1,
                ReadinessState::Ambiguous => counts.ambiguous += 1,
            }
        }
        for diagnostic in &inspection.capability_ir.diagnostics {
            match diagnostic.severity {
                Severity::Error => counts.diagnostic_errors += 1,
                Severity::Warning => counts.diagnostic_warnings += 1,
                Severity::Info => counts.diagnostic_infos += 1,
            }
        }
        counts
    }

    pub fn assessments(&self) -> usize {
        self.ready + self.conditional + self.unsupported + self.ambiguous
    }

    /// The inspect exit-1 condition: an unsupported or ambiguous assessment, or an IR
    /// diagnostic of severity `error`.
    pub fn needs_attention(&self) -> bool {
        self.unsupported + self.ambiguous + self.diagnostic_errors > 0
    }
}

/// The inspect exit-1 condition for one inspection: an unsupported or ambiguous assessment,
/// or an IR error diagnostic.
pub fn needs_attention(inspection: &Inspection) -> bool {
    ModuleCounts::of(inspection).needs_attention()
}

/// Why one entry could not be inspected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleError {
    /// A stable snake_case name of the failure (see [`InspectError::kind`]).
    pub kind: &'static str,
    /// Human-readable, without the file path (the entry carries it).
    pub message: String,
    pub position: Option<Position>,
}

impl ModuleError {
    pub fn from_inspect(error: &InspectError) -> Self {
        let message = match error {
            InspectError::Read { message, .. } => message.clone(),
            InspectError::UnsupportedSuffix { .. } => {
                "unsupported source suffix; expected a .py file or a .ipynb notebook".into()
            }
            other => other.to_string(),
        };
        ModuleError {
            kind: error.kind(),
            message,
            position: error.position(),
        }
    }
}

/// Totals over all entries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Entries in `modules`.
    pub modules: usize,
    pub inspected: usize,
    pub failed: usize,
    /// Inspected modules that meet the exit-1 condition.
    pub needing_attention: usize,
    pub counts: ModuleCounts,
}

impl Summary {
    fn of(entries: &[ModuleEntry]) -> Self {
        let mut summary = Summary {
            modules: entries.len(),
            ..Summary::default()
        };
        for entry in entries {
            match &entry.result {
                Ok(report) => {
                    summary.inspected += 1;
                    if report.counts.needs_attention() {
                        summary.needing_attention += 1;
                    }
                    let c = &report.counts;
                    let t = &mut summary.counts;
                    t.capabilities += c.capabilities;
                    t.ready += c.ready;
                    t.conditional += c.conditional;
                    t.unsupported += c.unsupported;
                    t.ambiguous += c.ambiguous;
                    t.diagnostic_errors += c.diagnostic_errors;
                    t.diagnostic_warnings += c.diagnostic_warnings;
                    t.diagnostic_infos += c.diagnostic_infos;
                }
                Err(_) => summary.failed += 1,
            }
        }
        summary
    }

    /// True when every entry inspected and none meets the exit-1 condition.
    pub fn is_clean(&self) -> bool {
        self.failed == 0 && self.needing_attention == 0
    }
}

/// A fatal problem with the root itself.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error("{path}: {message}")]
    Root { path: PathBuf, message: String },
    #[error("could not start the worker threads: {0}")]
    ThreadPool(String),
}

/// Progress of a running directory inspection: `done` of `total` files finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
}

/// Inspect every Python file and notebook under `root`.
pub fn inspect_dir(
    root: &Path,
    options: &ProjectOptions,
) -> Result<ProjectInspection, ProjectError> {
    inspect_dir_with_progress(root, options, &|_| {})
}

/// [`inspect_dir`], calling `progress` after each file (from worker threads).
pub fn inspect_dir_with_progress(
    root: &Path,
    options: &ProjectOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<ProjectInspection, ProjectError> {
    inspect_dir_with_wheels(root, options, progress, &Default::default())
}

/// [`inspect_dir_with_progress`]; under readiness v2, `provides` (import name → normalised
/// distribution, [`crate::package::wheelhouse_imports`]) says which import names the declared
/// distributions install.
pub fn inspect_dir_with_wheels(
    root: &Path,
    options: &ProjectOptions,
    progress: &(dyn Fn(Progress) + Sync),
    provides: &std::collections::BTreeMap<String, String>,
) -> Result<ProjectInspection, ProjectError> {
    let found = walk::collect(root).map_err(|e| ProjectError::Root {
        path: root.to_path_buf(),
        message: e.to_string(),
    })?;
    let pool = inspect_pool(options.threads)?;
    let total = found.len();
    let done = AtomicUsize::new(0);
    let package = match options.inspect.readiness {
        apizr_ir::ReadinessPolicy::V2 => crate::package::PackageIndex::scan(root).ok(),
        apizr_ir::ReadinessPolicy::V1 => None,
    };
    if let Some(index) = package {
        let declared = crate::package::declared_dependencies(root);
        let inspect = |found: &walk::Found,
                       ctx: Option<&crate::readiness::v2::package::PackageContext>,
                       earlier: crate::Earlier,
                       keep: Option<&packaged::Keep>| {
            inspect_found_in(found.clone(), options, ctx, earlier, keep)
        };
        let modules = pool.install(|| {
            let all = |_: &walk::Found| true;
            packaged::inspect_all(
                &index,
                (&declared, provides),
                found,
                (progress, &all),
                &inspect,
            )
        });
        let mut modules = modules;
        if options.inspect.explain {
            blockers::link(&mut modules);
        }
        return Ok(finish(modules));
    }
    let modules: Vec<ModuleEntry> = pool.install(|| {
        found
            .into_par_iter()
            .map(|found| {
                let entry = inspect_found(found, options);
                let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                progress(Progress {
                    done: finished,
                    total,
                });
                entry
            })
            .collect()
    });
    Ok(finish(modules))
}

/// The pool directory inspection runs on: `threads` workers (default: the available
/// parallelism), each with the large stack inspection needs.
fn inspect_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, ProjectError> {
    let mut builder = rayon::ThreadPoolBuilder::new()
        .stack_size(INSPECT_STACK_BYTES)
        .thread_name(|i| format!("apizr-inspect-{i}"));
    if let Some(threads) = threads {
        builder = builder.num_threads(threads.max(1));
    }
    builder
        .build()
        .map_err(|e| ProjectError::ThreadPool(e.to_string()))
}

fn finish(mut modules: Vec<ModuleEntry>) -> ProjectInspection {
    walk::note_shared_module_names(&mut modules);
    let project_digest = project_digest(&modules);
    let summary = Summary::of(&modules);
    ProjectInspection {
        modules,
        project_digest,
        summary,
    }
}

fn inspect_found(found: walk::Found, options: &ProjectOptions) -> ModuleEntry {
    inspect_found_in(found, options, None, crate::Earlier::Nothing, None).0
}

/// [`inspect_found`] with readiness v2's view of the package (and what it learned), given what
/// an earlier step computed for the module. With `keep`, what this inspection built is
/// returned for a later one when v2's verdict assumed something about other modules (the
/// second pass may assess it again, [`packaged`]) and `keep` has room for it.
fn inspect_found_in(
    found: walk::Found,
    options: &ProjectOptions,
    package: Option<&crate::readiness::v2::package::PackageContext>,
    earlier: crate::Earlier,
    keep: Option<&packaged::Keep>,
) -> (
    ModuleEntry,
    Option<crate::readiness::v2::package::PackageOutcome>,
    Option<Box<crate::Built>>,
) {
    let walk::Found {
        path,
        rel,
        module,
        problem,
    } = found;
    let failed = |error: ModuleError, module: Option<String>| {
        let entry = ModuleEntry {
            path: rel.clone(),
            module,
            result: Err(error),
            notes: Vec::new(),
        };
        (entry, None, None)
    };
    if let Some(error) = problem {
        return failed(error, module);
    }
    let Some(name) = module else {
        let error = ModuleError {
            kind: "module_name",
            message: "no module name could be formed from the path".into(),
            position: None,
        };
        return failed(error, None);
    };
    let name = match crate::source::validate_module_name(&name) {
        Ok(valid) => valid,
        Err(error) => return failed(ModuleError::from_inspect(&error), Some(name)),
    };
    // A bug in one stage must not take the other files down with it: the panic becomes this
    // entry's error (the process-wide panic hook still reports it).
    let inspected = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::inspect_path_parsed(&path, Some(&name), options.inspect, package, earlier)
    }));
    let Ok(inspected) = inspected else {
        let error = ModuleError {
            kind: "internal",
            message: "internal error while inspecting this file; please report it".into(),
            position: None,
        };
        return failed(error, Some(name));
    };
    match inspected {
        Ok((mut outcome, parsed)) => match report_of(&mut outcome, options.keep_envelopes) {
            Ok(report) => {
                let learned = outcome.package.take();
                let entry = ModuleEntry {
                    path: rel,
                    module: Some(outcome.inspection.capability_ir.source.module.clone()),
                    result: Ok(report),
                    notes: std::mem::take(&mut outcome.notes),
                };
                let assumed = learned
                    .as_ref()
                    .is_some_and(|l| !l.assumed.is_empty() || !l.missing.is_empty());
                let built = match keep {
                    Some(keep) if assumed && keep.reserve(parsed.text.len()) => {
                        crate::Built::of(outcome, parsed)
                    }
                    _ => None,
                };
                (entry, learned, built)
            }
            Err(error) => failed(ModuleError::from_inspect(&error), Some(name)),
        },
        Err(error) => failed(ModuleError::from_inspect(&error), Some(name)),
    }
}

fn report_of(
    outcome: &mut crate::Outcome,
    keep_envelope: bool,
) -> Result<ModuleReport, InspectError> {
    let inspection = &outcome.inspection;
    let envelope = if keep_envelope {
        apizr_ir::canonical_bytes(inspection)?
    } else {
        Vec::new()
    };
    Ok(ModuleReport {
        ir_digest: inspection.ir_digest.clone(),
        readiness_digest: inspection.readiness_digest.clone(),
        counts: ModuleCounts::of(inspection),
        envelope,
        reason_counts: reason_counts(inspection),
        explanation: outcome.explanation.take(),
    })
}

/// Per reason code, the number of assessments that have it.
fn reason_counts(inspection: &Inspection) -> Vec<(&'static str, usize)> {
    let mut counts: std::collections::BTreeMap<&'static str, usize> = Default::default();
    for assessment in &inspection.readiness.assessments {
        let d = &assessment.dimensions;
        let codes: std::collections::BTreeSet<&'static str> =
            [&d.binding, &d.execution, &d.inputs, &d.outputs]
                .iter()
                .flat_map(|dim| dim.reasons.iter().map(|r| r.code))
                .collect();
        for code in codes {
            *counts.entry(code).or_default() += 1;
        }
    }
    counts.into_iter().collect()
}
