//! Whether a served module may be imported before its call ([`ImportTime`]): the one rule,
//! read from the module's readiness report.
//!
//! A v1 worker pre-started for a module may import it ahead of the call only when importing
//! it changes nothing a call could observe: then the import a call would have run is the one
//! already done, and the call's status and report are those of a cold start. Readiness says
//! so when no capability of the module carries
//!
//! * `APIZR-READY-004` — a top-level statement may fail or change things at import (under
//!   `--readiness v2`, only the statements v2 could not prove harmless keep it, and a module
//!   of a package also gets it for a parent package whose top level it could not prove);
//! * `APIZR-READY-015` — an import readiness cannot vouch for (a third-party, relative or
//!   star import): importing it runs someone else's top level, which nothing inspected.
//!
//! Under readiness v1 a module of a package is never imported ahead: v1 does not look at
//! the parent packages' `__init__.py`, which the import runs first.

use crate::json::Value;
use crate::readiness::{READINESS_POLICY_V2, ReadinessReport};

/// The reason codes that keep a module from being imported ahead of its call.
const EFFECT_CODES: [&str; 2] = ["APIZR-READY-004", "APIZR-READY-015"];

/// Whether a module's top level may run before its call (in a pre-started v1 worker).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ImportTime {
    /// Readiness shows no import-time effects: the module may be imported ahead.
    Harmless,
    /// Readiness found a top-level statement or import it cannot vouch for (READY-004 or
    /// READY-015), or a package module under readiness v1: imported with the call only.
    Effects,
    /// No readiness for this source (e.g. a program registering native endpoints): imported
    /// with the call only.
    #[default]
    Unknown,
}

impl ImportTime {
    /// The verdict from the reason codes of every capability of the module, under the
    /// report's `policy_version`; `in_package`: the module is served as part of a package.
    pub fn from_codes<'a>(
        policy_version: &str,
        in_package: bool,
        mut codes: impl Iterator<Item = &'a str>,
    ) -> ImportTime {
        if in_package && policy_version != READINESS_POLICY_V2 {
            return ImportTime::Effects;
        }
        if codes.any(|code| EFFECT_CODES.contains(&code)) {
            ImportTime::Effects
        } else {
            ImportTime::Harmless
        }
    }

    /// The verdict of an inspection's readiness report.
    pub fn of_report(report: &ReadinessReport, in_package: bool) -> ImportTime {
        let codes = report.assessments.iter().flat_map(|a| {
            let d = &a.dimensions;
            [&d.binding, &d.execution, &d.inputs, &d.outputs]
                .into_iter()
                .flat_map(|dim| dim.reasons.iter().map(|r| r.code))
        });
        ImportTime::from_codes(report.policy_version, in_package, codes)
    }

    /// The verdict of a readiness document as written (`readiness.json` of a bundle);
    /// `Unknown` when it does not have the report's shape.
    pub fn of_document(doc: &Value, in_package: bool) -> ImportTime {
        let (Some(Value::Str(version)), Some(Value::Array(assessments))) =
            (doc.get("policy_version"), doc.get("assessments"))
        else {
            return ImportTime::Unknown;
        };
        let mut codes = Vec::new();
        for assessment in assessments {
            let Some(Value::Object(dims)) = assessment.get("dimensions") else {
                return ImportTime::Unknown;
            };
            for dim in dims.values() {
                let Some(Value::Array(reasons)) = dim.get("reasons") else {
                    return ImportTime::Unknown;
                };
                for reason in reasons {
                    match reason.get("code") {
                        Some(Value::Str(code)) => codes.push(code.as_str()),
                        _ => return ImportTime::Unknown,
                    }
                }
            }
        }
        ImportTime::from_codes(version, in_package, codes.into_iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::readiness::READINESS_POLICY;

    #[test]
    fn effects_or_an_unvouched_import_keep_the_import_with_the_call() {
        let v1 = READINESS_POLICY;
        assert_eq!(
            ImportTime::from_codes(v1, false, ["APIZR-READY-007"].into_iter()),
            ImportTime::Harmless
        );
        for code in EFFECT_CODES {
            assert_eq!(
                ImportTime::from_codes(v1, false, ["APIZR-READY-007", code].into_iter()),
                ImportTime::Effects
            );
        }
        // v1 never looked at the parent packages' top level.
        assert_eq!(
            ImportTime::from_codes(v1, true, std::iter::empty()),
            ImportTime::Effects
        );
        assert_eq!(
            ImportTime::from_codes(READINESS_POLICY_V2, true, std::iter::empty()),
            ImportTime::Harmless
        );
    }

    #[test]
    fn a_document_is_read_with_the_same_rule() {
        let doc = |code: &str| {
            crate::json::parse(
                format!(
                    r#"{{"policy_version":"apizr.readiness/v1","assessments":[{{"dimensions":
                    {{"binding":{{"reasons":[]}},"execution":{{"reasons":[{{"code":"{code}"}}]}}}}}}]}}"#
                )
                .as_bytes(),
                crate::json::Dialect::Strict,
            )
            .unwrap()
        };
        assert_eq!(
            ImportTime::of_document(&doc("APIZR-READY-004"), false),
            ImportTime::Effects
        );
        assert_eq!(
            ImportTime::of_document(&doc("APIZR-READY-020"), false),
            ImportTime::Harmless
        );
        assert_eq!(
            ImportTime::of_document(&Value::Null, false),
            ImportTime::Unknown
        );
    }
}
