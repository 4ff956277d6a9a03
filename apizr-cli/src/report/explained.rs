//! The explained parts of the text report: the module-level reasons once, and each
//! capability's own reasons with their culprits, fixes and next step.

use std::fmt::Write as _;

use apizr_inspect::explain::{CapabilityExplanation, Culprit, ExplainedReason, Explanation};
use apizr_ir::ReadinessState;

use super::field;
use crate::style::Style;

/// The reasons every function shares, once, with the advice for the module.
pub(super) fn module_reasons(out: &mut String, explanation: &Explanation, style: Style) {
    let reasons = &explanation.module_reasons;
    if reasons.is_empty() {
        return;
    }
    let functions = explanation
        .capabilities
        .iter()
        .filter(|c| c.module_reasons)
        .count();
    // Readiness v2 lists them for a module without functions too: its importers run them.
    let whose = match functions {
        0 => "no function here; every importer runs them".to_string(),
        n => format!("shared by all {n} function(s) of the module"),
    };
    let _ = writeln!(
        out,
        "\n{}",
        style.bold(&format!(
            "Module-level reasons: {} ({whose})",
            reasons.len()
        ))
    );
    for reason in reasons {
        explained_reason(out, reason, "  ", style);
    }
    if let Some(advice) = &explanation.module_advice {
        let _ = writeln!(out, "  {} {advice}", style.bold("what to do:"));
    }
}

/// A capability's own reasons, by dimension, each with its culprits and fix.
pub(super) fn explained_block(
    out: &mut String,
    explained: &CapabilityExplanation,
    source: &str,
    style: Style,
) {
    if explained.module_reasons {
        field(out, "module", "the module-level reasons above apply");
    }
    for dimension in ["binding", "execution", "inputs", "outputs"] {
        let reasons: Vec<&ExplainedReason> = explained
            .reasons
            .iter()
            .filter(|r| r.dimension == dimension)
            .collect();
        let Some(state) = reasons.iter().map(|r| r.state).max() else {
            continue;
        };
        let _ = writeln!(
            out,
            "  {dimension} reasons ({}):",
            style.state(state, state.as_str())
        );
        for reason in reasons {
            explained_reason(out, reason, "    ", style);
        }
    }
    if let Some(next) = &explained.next_step {
        let _ = writeln!(out, "  {} {next}", style.bold("next:"));
    }
    if explained.state == ReadinessState::Conditional {
        let _ = writeln!(
            out,
            "  {}",
            style.dim(&format!(
                "e.g. apizr generate rest {} --output-dir OUT --select {} --allow-conditional",
                shell_word(source),
                explained.symbol
            ))
        );
    }
}

/// `text` quoted for a POSIX shell when it needs it.
fn shell_word(text: &str) -> String {
    let plain = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c));
    if plain && !text.is_empty() {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

fn explained_reason(out: &mut String, reason: &ExplainedReason, indent: &str, style: Style) {
    let parameter = match &reason.parameter {
        Some(parameter) => format!(" [{parameter}]"),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "{indent}line {}{parameter}: {} {}",
        reason.line,
        style.state(reason.state, reason.code),
        reason.summary
    );
    for culprit in &reason.culprits {
        let _ = writeln!(out, "{indent}  {}", culprit_line(culprit, style));
    }
    let _ = writeln!(out, "{indent}  {} {}", style.bold("fix:"), reason.fix);
}

/// `at 12:5 `text` (note)`, or for notebooks `at cell 3 [In 7] line 2 ...`.
fn culprit_line(culprit: &Culprit, style: Style) -> String {
    let place = match &culprit.cell {
        Some(cell) => {
            let count = match cell.execution_count {
                Some(n) => format!(" [In {n}]"),
                None => String::new(),
            };
            format!("cell {}{count} line {}", cell.number, cell.line)
        }
        None => format!("{}:{}", culprit.span.line, culprit.span.column),
    };
    let note = match &culprit.note {
        Some(note) => format!(" — {note}"),
        None => String::new(),
    };
    format!("at {} `{}`{note}", style.dim(&place), culprit.text)
}
