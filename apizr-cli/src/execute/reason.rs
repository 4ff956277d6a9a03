//! The one stderr line of a call that ended before a worker ran.
//!
//! Stdout carries only the envelope (the reference's bytes, e.g.
//! `{"schema_version":…,"status":"invalid_input","value":null}`), which says what happened but
//! not why; the reason used to be visible only in `--report`. So every failure decided before a
//! worker started prints one line, `apizr execute: <status>: <stage>: <detail>`, naming the
//! file, the policy field, the capability or the argument path that was wrong. The exit code
//! stays the reference's (1 for any status but `success`).
//!
//! When `--report` writes its JSON document to stderr, the line is left out: the report holds
//! the same stage and detail, and stderr stays one parseable document.

use apizr_runtime::Status;
use apizr_runtime::call::{Outcome, Report};
use apizr_runtime::validate::FieldError;

use super::report::Stage;

/// `invalid_input: policy: p.json: No such file or directory (os error 2)`, or for an argument
/// `invalid_input: validate: Input should be a valid integer (at /x: expected integer, found
/// string)`.
pub fn line(status: Status, stage: Stage, detail: &str, field: Option<&FieldError>) -> String {
    // One line, whatever the detail holds (a JSON error may quote a newline).
    let mut line =
        format!("{}: {}: {detail}", status.wire_name(), stage.as_str()).replace(['\n', '\r'], " ");
    if let Some(field) = field {
        let at = if field.path.is_empty() {
            "the arguments"
        } else {
            &field.path
        };
        line.push_str(&format!(
            " (at {at}: expected {}, found {})",
            field.expected, field.found
        ));
    }
    line
}

/// The line for a call the runtime refused before starting its worker (a control this host
/// cannot enforce, an engine that does not hold a control), or `None` when a worker ran.
pub fn refused_by_runtime(outcome: &Outcome) -> Option<String> {
    let status = outcome.status.wire_name();
    match &outcome.report {
        Report::Local(report) if !report.refused.is_empty() => Some(format!(
            "{status}: run: this host cannot enforce {} (see `apizr doctor`)",
            report.refused.join(", ")
        )),
        Report::Oci(report) => match (&report.refused, &report.detail) {
            (Some(refusal), _) => Some(format!("{status}: run: {refusal}")),
            (None, Some(detail)) if report.container.is_none() => {
                Some(format!("{status}: run: {detail}"))
            }
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_status_stage_and_detail_on_one_line() {
        assert_eq!(
            line(
                Status::InvalidInput,
                Stage::Policy,
                "p.json: bad\nvalue",
                None
            ),
            "invalid_input: policy: p.json: bad value"
        );
        let field = FieldError {
            path: "/items/2".into(),
            expected: "integer".into(),
            found: "string".into(),
        };
        assert_eq!(
            line(
                Status::InvalidInput,
                Stage::Validate,
                "Value does not match the declared input type",
                Some(&field)
            ),
            "invalid_input: validate: Value does not match the declared input type \
             (at /items/2: expected integer, found string)"
        );
        assert_eq!(
            line(
                Status::PolicyRefused,
                Stage::Plan,
                "unknown_required_effect: network",
                None
            ),
            "policy_refused: plan: unknown_required_effect: network"
        );
    }

    #[test]
    fn a_call_that_ran_has_no_refusal_line() {
        assert_eq!(refused_by_runtime(&Outcome::status(Status::Success)), None);
    }
}
