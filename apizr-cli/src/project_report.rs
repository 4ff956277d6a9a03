//! The text summary of a directory inspection: one row per module, a legend saying what the
//! columns count, the totals, and what keeps functions from being ready (per reason code, how
//! many functions have it).
//!
//! Columns are sized from the data so the table stays aligned in a terminal and in a file. The
//! JSON document (`--format json`) is the stable interface; this table is for people.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use apizr_inspect::project::{ModuleEntry, ProjectInspection};
use apizr_ir::{ReadinessState, ReasonCode};

use crate::style::Style;

const NUMBER_HEADERS: [&str; 6] = ["caps", "ready", "cond", "unsup", "ambig", "errors"];

/// Render the table and totals. Always ends with a newline.
pub fn render(inspection: &ProjectInspection, style: Style) -> String {
    let rows: Vec<Row> = inspection.modules.iter().map(Row::of).collect();
    let path_width = rows
        .iter()
        .map(|r| r.path.chars().count())
        .chain([4])
        .max()
        .unwrap_or(4);
    let module_width = rows
        .iter()
        .map(|r| r.module.chars().count())
        .chain([6])
        .max()
        .unwrap_or(6);
    let mut out = String::new();
    let mut header = format!("{:<path_width$}  {:<module_width$}", "path", "module");
    for name in NUMBER_HEADERS {
        let _ = write!(header, "  {name:>6}");
    }
    header.push_str("  status");
    let _ = writeln!(out, "{}", style.bold(&header));
    for row in &rows {
        let mut line = format!("{:<path_width$}  {:<module_width$}", row.path, row.module);
        for value in &row.numbers {
            let _ = write!(line, "  {value:>6}");
        }
        let status = match row.state {
            Some(state) => style.state(state, &row.status),
            None => style.error(&row.status),
        };
        let _ = writeln!(out, "{line}  {status}");
    }
    legend(&mut out, style);
    totals(&mut out, inspection, style);
    blockers(&mut out, inspection, style);
    out
}

/// What the columns count.
fn legend(out: &mut String, style: Style) {
    let lines = [
        "caps: functions in the Capability IR (module-level `def`s that could become an interface)",
        "ready/cond/unsup/ambig: assessments by readiness state (a rejected symbol, e.g. a \
         duplicate or a lambda, has an assessment but no capability)",
        "errors: IR diagnostics of severity error",
        "status: `needs attention` = an unsupported or ambiguous assessment or an error \
         (exit 1); `ok (conditional)` = only `--allow-conditional` can expose its functions",
    ];
    for line in lines {
        let _ = writeln!(out, "{}", style.dim(line));
    }
}

/// Per reason code, the functions that have it, most frequent first.
fn blockers(out: &mut String, inspection: &ProjectInspection, style: Style) {
    let mut counts: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    for entry in &inspection.modules {
        if let Ok(report) = &entry.result {
            for (code, n) in &report.reason_counts {
                let slot = counts.entry(code).or_default();
                slot.0 += n;
                slot.1 += 1;
            }
        }
    }
    if counts.is_empty() {
        return;
    }
    let mut rows: Vec<(&'static str, (usize, usize))> = counts.into_iter().collect();
    rows.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(b.0)));
    let _ = writeln!(
        out,
        "\n{}",
        style.bold("Reasons (functions with the reason, in how many modules):")
    );
    for (code, (functions, modules)) in rows {
        let meaning = ReasonCode::ALL
            .iter()
            .find(|c| c.code() == code)
            .map(|c| c.explanation())
            .unwrap_or("");
        let _ = writeln!(out, "  {code}  {functions:>5} in {modules:>4}  {meaning}");
    }
    let _ = writeln!(
        out,
        "{}",
        style.dim("`apizr inspect FILE` explains each reason with its culprit and a fix")
    );
}

struct Row {
    path: String,
    module: String,
    numbers: Vec<String>,
    /// `None` for entries that failed.
    state: Option<ReadinessState>,
    status: String,
}

impl Row {
    fn of(entry: &ModuleEntry) -> Row {
        let module = entry.module.clone().unwrap_or_else(|| "-".into());
        match &entry.result {
            Ok(report) => {
                let c = &report.counts;
                let numbers = [
                    c.capabilities,
                    c.ready,
                    c.conditional,
                    c.unsupported,
                    c.ambiguous,
                    c.diagnostic_errors,
                ]
                .iter()
                .map(ToString::to_string)
                .collect();
                let (state, status) = if c.needs_attention() {
                    (ReadinessState::Unsupported, "needs attention")
                } else if c.conditional > 0 {
                    (ReadinessState::Conditional, "ok (conditional)")
                } else {
                    (ReadinessState::Ready, "ok")
                };
                Row {
                    path: entry.path.clone(),
                    module,
                    numbers,
                    state: Some(state),
                    status: status.into(),
                }
            }
            Err(error) => {
                let at = match error.position {
                    Some(p) => format!(" at {}:{}", p.line, p.column),
                    None => String::new(),
                };
                Row {
                    path: entry.path.clone(),
                    module,
                    numbers: vec!["-".into(); NUMBER_HEADERS.len()],
                    state: None,
                    status: format!("{} error{at}: {}", error.kind, error.message)
                        .replace('\n', " "),
                }
            }
        }
    }
}

fn totals(out: &mut String, inspection: &ProjectInspection, style: Style) {
    let s = &inspection.summary;
    let c = &s.counts;
    let _ = writeln!(
        out,
        "\n{} files: {} inspected, {} failed, {} need attention",
        s.modules, s.inspected, s.failed, s.needing_attention
    );
    let _ = writeln!(
        out,
        "{} capabilities; assessments: {} ready, {} conditional, {} unsupported, {} ambiguous; \
         IR diagnostics: {} error, {} warning, {} info",
        c.capabilities,
        c.ready,
        c.conditional,
        c.unsupported,
        c.ambiguous,
        c.diagnostic_errors,
        c.diagnostic_warnings,
        c.diagnostic_infos
    );
    let _ = writeln!(
        out,
        "project digest: {}",
        style.dim(&inspection.project_digest.prefixed())
    );
}
