//! `--report`: what happened during one `apizr execute`, as one JSON document on stderr or in
//! a file. Stdout (the envelope) never changes. Holds timings, the digest chain (source → IR →
//! readiness → interface → policy → plan), the stage that decided the status with a detail
//! message (e.g. the validation error the envelope does not show), and the runtime's
//! enforcement report. Never contains argument values or environment values.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use apizr_ir::{Digest, Inspection};
use serde::Serialize;

pub const REPORT_SCHEMA: &str = "apizr.execute-report/v1";

/// The step that produced the status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    #[default]
    Policy,
    Arguments,
    Source,
    Inspect,
    Plan,
    Validate,
    Run,
}

impl Stage {
    /// The name used in the report's `stage` and in the stderr reason line.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Policy => "policy",
            Stage::Arguments => "arguments",
            Stage::Source => "source",
            Stage::Inspect => "inspect",
            Stage::Plan => "plan",
            Stage::Validate => "validate",
            Stage::Run => "run",
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub schema_version: &'static str,
    pub status: &'static str,
    pub stage: Stage,
    pub detail: Option<String>,
    pub digests: Digests,
    /// Milliseconds per step, plus `total`.
    pub timings_ms: BTreeMap<&'static str, f64>,
    /// The runtime's `CallReport` (controls, mechanisms, limits hit, exit, worker stderr).
    pub runtime: Option<serde_json::Value>,
    #[serde(skip)]
    pub policy_digest: Option<Digest>,
    #[serde(skip)]
    pub interface_digest: Option<Digest>,
    #[serde(skip)]
    pub plan_digest: Option<Digest>,
    /// For the audit record of calls that end before the runtime.
    #[serde(skip)]
    pub capability_id: Option<String>,
    #[serde(skip)]
    pub executable_digest: Option<Digest>,
    #[serde(skip)]
    started: Instant,
}

/// `sha256:<hex>` texts, null where the step was not reached.
#[derive(Debug, Default, Serialize)]
pub struct Digests {
    pub source: Option<String>,
    pub transformed: Option<String>,
    pub ir: Option<String>,
    pub readiness: Option<String>,
    pub interface: Option<String>,
    pub policy: Option<String>,
    pub plan: Option<String>,
}

impl Report {
    pub fn new() -> Self {
        Report {
            schema_version: REPORT_SCHEMA,
            status: "",
            stage: Stage::Policy,
            detail: None,
            digests: Digests::default(),
            timings_ms: BTreeMap::new(),
            runtime: None,
            policy_digest: None,
            interface_digest: None,
            plan_digest: None,
            capability_id: None,
            executable_digest: None,
            started: Instant::now(),
        }
    }

    pub fn time(&mut self, step: &'static str, since: Instant) {
        self.timings_ms
            .insert(step, since.elapsed().as_secs_f64() * 1000.0);
    }

    pub fn inspection(&mut self, inspection: &Inspection) {
        let source = &inspection.capability_ir.source;
        self.digests.source = Some(source.digest.prefixed());
        self.digests.transformed = source.transformed_digest.as_ref().map(Digest::prefixed);
        self.digests.ir = Some(inspection.ir_digest.prefixed());
        self.digests.readiness = Some(inspection.readiness_digest.prefixed());
    }

    /// Whole milliseconds since the command started.
    pub fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    pub fn finish_stage(&mut self, stage: Stage, detail: &str) {
        self.stage = stage;
        self.detail = Some(detail.to_string());
    }

    /// Write the report; `-` means stderr. Failures to write are reported on stderr only.
    pub fn write(&mut self, target: &Path) {
        self.timings_ms
            .insert("total", self.started.elapsed().as_secs_f64() * 1000.0);
        self.digests.policy = self.policy_digest.as_ref().map(Digest::prefixed);
        self.digests.interface = self.interface_digest.as_ref().map(Digest::prefixed);
        self.digests.plan = self.plan_digest.as_ref().map(Digest::prefixed);
        let text = match serde_json::to_string_pretty(self) {
            Ok(text) => text + "\n",
            Err(e) => {
                eprintln!("apizr execute: report: {e}");
                return;
            }
        };
        if target == Path::new("-") {
            eprint!("{text}");
        } else if let Err(e) = std::fs::write(target, text) {
            eprintln!("apizr execute: report {}: {e}", target.display());
        }
    }
}
