//! [`ExecutionResult`] (schema `apizr.interpreter-result/v1`): mellea's fields, with the same
//! meaning, plus what mellea leaves out — the enforcement report, truncation flags, the exit
//! signal, package outcomes — and [`Artifact`] with a content-sniffed type and a digest.
//!
//! Outcomes (what `success`/`skipped` mean, as in mellea):
//!
//! | situation | success | skipped | stdout/stderr | exit_code | timed_out |
//! |---|---|---|---|---|---|
//! | static parse ok | true | true | null | null | false |
//! | static parse error, import violation, policy refused, package failure | false | true | null | null | false |
//! | ran, exit 0 | true | false | text | 0 | false |
//! | ran, exit ≠ 0 | false | false | text | code | false |
//! | timeout (every tier) | false | true | partial text | null | true |
//!
//! A timed-out run keeps the output it produced (mellea discards it locally and reports
//! `timed_out: false` for Docker); artifacts are attached only to successful runs.
//!
//! Versioning: `exit_signal` and `oom_killed` were added to v1 (2026-12-01) as an additive
//! change — every earlier field keeps its name, type and meaning (`exit_code` stays
//! `128 + N` for signal N), readers ignore fields they do not know, and the result is not a
//! hashed artifact. Renaming, removing or re-typing a field, or changing a meaning, is a v2.

use std::path::PathBuf;

use serde::Serialize;

use super::enforcement::EnforcementReport;
use super::packages::PackageReport;
use super::tier::Tier;

pub const RESULT_SCHEMA: &str = "apizr.interpreter-result/v1";

/// A file the run created or changed, exported to the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Artifact {
    /// Absolute host path of the exported file.
    pub path: PathBuf,
    /// Its path relative to the workspace (or the export root it was found under).
    pub name: String,
    pub size_bytes: u64,
    /// Sniffed from the content (the name only refines text formats); `null` when unknown.
    pub content_type: Option<&'static str>,
    /// Lower-case hex sha256 of the content.
    pub sha256: String,
}

/// The outcome of one execution.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExecutionResult {
    pub schema_version: &'static str,
    pub success: bool,
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    pub skipped: bool,
    pub skip_message: Option<String>,
    pub analysis_result: Option<serde_json::Value>,
    pub exit_code: Option<i32>,
    /// The signal that ended the code's process (`null` when it exited on its own or did
    /// not run); 9 after a timeout (the SIGKILL that ended it), in every tier.
    pub exit_signal: Option<i32>,
    /// The kernel killed a process of the run at its memory limit (the run's own memory
    /// cgroup record); `false` also when no memory limit applied.
    pub oom_killed: bool,
    pub timed_out: bool,
    pub artifacts: Vec<Artifact>,
    /// The tier's name.
    pub execution_mode: Tier,
    /// Labels the unsafe tiers in every result.
    #[serde(rename = "unsafe")]
    pub unsafe_tier: bool,
    pub working_directory: Option<PathBuf>,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// Bytes the code wrote to each stream (before any truncation).
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    /// More artifacts than the caps allow: the rest were not exported.
    pub artifacts_truncated: bool,
    /// Clean-up after the run that failed (a directory or cgroup left behind): reported,
    /// never claimed done.
    pub cleanup: Vec<String>,
    pub enforcement: Option<EnforcementReport>,
    pub packages: Option<PackageReport>,
    pub duration_ms: u64,
}

impl ExecutionResult {
    /// A result of `tier` that did not run (`success` false unless stated).
    pub fn skipped(tier: Tier, message: impl Into<String>) -> Self {
        ExecutionResult {
            schema_version: RESULT_SCHEMA,
            success: false,
            stdout: None,
            stderr: None,
            skipped: true,
            skip_message: Some(message.into()),
            analysis_result: None,
            exit_code: None,
            exit_signal: None,
            oom_killed: false,
            timed_out: false,
            artifacts: Vec::new(),
            execution_mode: tier,
            unsafe_tier: tier.is_unsafe(),
            working_directory: None,
            stdout_truncated: false,
            stderr_truncated: false,
            stdout_bytes: 0,
            stderr_bytes: 0,
            artifacts_truncated: false,
            cleanup: Vec::new(),
            enforcement: None,
            packages: None,
            duration_ms: 0,
        }
    }

    /// mellea's `to_validationresult_reason`: the skip message, else stdout on success and
    /// stderr on failure.
    pub fn reason(&self) -> &str {
        if let Some(message) = &self.skip_message {
            return message;
        }
        let text = if self.success {
            &self.stdout
        } else {
            &self.stderr
        };
        text.as_deref().unwrap_or_default()
    }

    /// The result as one line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(r#"{{"schema_version":"{RESULT_SCHEMA}","success":false,"skipped":true,"skip_message":"result encoding failed: {e}"}}"#)
        })
    }
}
