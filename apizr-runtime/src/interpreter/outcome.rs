//! From what a run produced to an [`ExecutionResult`], the same way for every executing tier
//! (so `timed_out`, truncation and exit codes mean the same thing locally and in containers).

use std::path::PathBuf;
use std::time::Instant;

use super::capture::{self, Captured};
use super::enforcement::EnforcementReport;
use super::packages::PackageReport;
use super::policy::CapabilityPolicy;
use super::result::{Artifact, ExecutionResult};
use super::tier::Tier;

/// Prefix of a set-up failure reported by the launcher or the bootstrap (exit 125, nothing of
/// the code ran).
pub const SETUP_PREFIXES: [&str; 2] = ["apizr-launch:", "apizr-bootstrap:"];
pub const SETUP_FAILED: i32 = 125;
const SIGKILL: i32 = 9;

/// What one execution produced.
#[derive(Debug, Default)]
pub(crate) struct Produced {
    pub stdout: Captured,
    pub stderr: Captured,
    pub exit_code: Option<i32>,
    /// The signal that ended the code's process, when known.
    pub exit_signal: Option<i32>,
    /// The run's memory cgroup recorded an OOM kill.
    pub oom_killed: bool,
    pub timed_out: bool,
    pub artifacts: Vec<Artifact>,
    pub artifacts_truncated: bool,
    pub working_directory: Option<PathBuf>,
    /// Clean-up that failed after the run (never reported as done).
    pub cleanup: Vec<String>,
}

/// Everything besides the output that goes into the result.
pub(crate) struct Context<'a> {
    pub tier: Tier,
    pub policy: Option<&'a CapabilityPolicy>,
    pub enforcement: EnforcementReport,
    pub packages: Option<PackageReport>,
    pub started: Instant,
    /// The run's wall-clock limit in seconds (for the timeout message).
    pub timeout: f64,
}

/// The set-up failure message when the process exited 125 after saying why on stderr.
pub(crate) fn setup_failure(produced: &Produced) -> Option<String> {
    if produced.exit_code != Some(SETUP_FAILED) {
        return None;
    }
    let text = String::from_utf8_lossy(&produced.stderr.head);
    let line = text
        .lines()
        .find(|l| SETUP_PREFIXES.iter().any(|p| l.starts_with(p)))?;
    Some(line.to_string())
}

pub(crate) fn finish(ctx: Context<'_>, produced: Produced) -> ExecutionResult {
    let budgets = ctx
        .policy
        .map_or((None, None), |p| (p.stdout_max_bytes, p.stderr_max_bytes));
    if let Some(line) = setup_failure(&produced) {
        let mut r = skipped(
            ctx,
            format!("Sandbox set-up failed; the code did not run: {line}"),
        );
        r.stderr_bytes = produced.stderr.total;
        return r;
    }
    let (stdout, stdout_truncated) = capture::render(&produced.stdout, budgets.0);
    let (stderr, stderr_truncated) = capture::render(&produced.stderr, budgets.1);
    let timeout = ctx.timeout;
    let success = !produced.timed_out && produced.exit_code == Some(0);
    ExecutionResult {
        success,
        stdout: Some(stdout),
        stderr: Some(stderr),
        skipped: produced.timed_out,
        skip_message: produced.timed_out.then(|| {
            format!("Execution timed out after {timeout} s; the process tree was killed.")
        }),
        exit_code: if produced.timed_out {
            None
        } else {
            produced.exit_code
        },
        // A timeout ends the process with SIGKILL in every tier.
        exit_signal: if produced.timed_out {
            Some(SIGKILL)
        } else {
            produced.exit_signal
        },
        oom_killed: produced.oom_killed,
        timed_out: produced.timed_out,
        artifacts: if success {
            produced.artifacts
        } else {
            Vec::new()
        },
        artifacts_truncated: success && produced.artifacts_truncated,
        working_directory: produced.working_directory,
        cleanup: produced.cleanup,
        stdout_truncated,
        stderr_truncated,
        stdout_bytes: produced.stdout.total,
        stderr_bytes: produced.stderr.total,
        enforcement: Some(ctx.enforcement),
        packages: ctx.packages,
        duration_ms: millis(ctx.started),
        ..ExecutionResult::skipped(ctx.tier, String::new())
    }
}

/// A run that did not execute the code.
pub(crate) fn skipped(ctx: Context<'_>, message: String) -> ExecutionResult {
    ExecutionResult {
        enforcement: Some(ctx.enforcement),
        packages: ctx.packages,
        duration_ms: millis(ctx.started),
        ..ExecutionResult::skipped(ctx.tier, message)
    }
}

pub(crate) fn millis(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}
