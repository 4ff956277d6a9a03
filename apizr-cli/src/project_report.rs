//! The text summary of a directory inspection: one row per module, then totals.
//!
//! Columns are sized from the data so the table stays aligned in a terminal and in a file. The
//! JSON document (`--format json`) is the stable interface; this table is for people.

use std::fmt::Write as _;

use apizr_inspect::project::{ModuleEntry, ProjectInspection};
use apizr_ir::ReadinessState;

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
    totals(&mut out, inspection, style);
    out
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
