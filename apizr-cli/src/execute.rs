//! `apizr execute SOURCE CAPABILITY --arguments FILE --policy FILE`: run one capability once,
//! under a policy, in a fresh worker process, and print the result envelope.
//!
//! The order of the steps is the reference's because it decides which status a caller sees
//! when several things are wrong: policy file → arguments file → source →
//! inspection → selection/eligibility → effect requirements → argument validation → run.
//! Every failure is an envelope on stdout (exit 1); exit 2 is reserved for usage errors that
//! clap reports (and an audit file that cannot be opened). A failure decided before a worker
//! ran also prints one line on stderr naming the reason ([`reason`]). Unlike the reference, bad arguments never start a worker, and the
//! network/filesystem/subprocess deny controls are enforced by the runtime (or refused when
//! this host cannot enforce them) instead of always being refused.
//!
//! * [`pydantic`] — the stdout encoding (pydantic `model_dump_json` style, as the reference's
//!   stdout);
//! * [`report`] — `--report`: timings, the digest chain and the enforcement report;
//! * [`reason`] — the stderr line of a call that ended before a worker ran.
//!
//! The policy is read once as an [`AnyPolicy`]; after validation the call runs through the
//! runtime's call API: [`AnyExecutor::for_policy_audited`] picks the backend (v1: a fresh sandboxed
//! process, v2: a fresh container) and [`Outcome`] is printed in its envelope version.

mod pydantic;
mod reason;
mod report;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use apizr_inspect::{InspectOptions, interface, on_inspect_stack};
use apizr_ir::admission::{DEFAULT_VALUE_BYTES, check_budget, parse_permissive, preflight};
use apizr_ir::plan::RuntimePlan;
use apizr_ir::policy::{AnyPolicy, PolicyV1};
use apizr_ir::policy_v2::PolicyV2;
use apizr_ir::{Digest, Value};
use apizr_runtime::audit::{AUDIT_SCHEMA, AuditRecord, AuditSink, FileAuditSink};
use apizr_runtime::call::{AnyExecutor, BackendKind, Call, Outcome};
use apizr_runtime::oci::RuntimeImage;
use apizr_runtime::validate::{FieldError, validate_arguments};
use apizr_runtime::{Executable, LauncherLocation, RuntimeConfig, Status};
use clap::{Args, ValueEnum};

use self::report::{Report, Stage};

/// The policy file is read up to this many bytes (larger files are `invalid_input`).
const MAX_POLICY_BYTES: u64 = 1_048_576;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Platform {
    #[value(name = "linux/amd64")]
    LinuxAmd64,
    #[value(name = "linux/arm64")]
    LinuxArm64,
}

impl Platform {
    /// The OCI platform literal.
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::LinuxAmd64 => "linux/amd64",
            Platform::LinuxArm64 => "linux/arm64",
        }
    }
}

#[derive(Debug, Args)]
pub struct ExecuteArgs {
    /// The `.py` file or `.ipynb` notebook that defines the capability
    pub source: PathBuf,
    /// The function name or full capability ID (`python:<module>:<name>`)
    pub capability: String,
    /// JSON object of arguments, keyed by parameter name
    #[arg(long, value_name = "FILE")]
    pub arguments: PathBuf,
    /// Execution policy (`apizr.execution/v1`); `{}` is the default policy
    #[arg(long, value_name = "FILE")]
    pub policy: PathBuf,
    /// Logical dotted module name (default: the file stem)
    #[arg(long, value_name = "NAME")]
    pub module_name: Option<String>,
    /// Full `sha256:` image ID (see `apizr image build`) for `apizr.execution/v2` policies
    #[arg(long, value_name = "sha256:…")]
    pub runtime_image: Option<String>,
    /// OCI platform for `apizr.execution/v2` policies
    #[arg(long, value_enum)]
    pub runtime_platform: Option<Platform>,
    /// Write timings, the digest chain and the enforcement report (JSON) to FILE, or to
    /// stderr when FILE is omitted. Stdout is unchanged.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub report: Option<PathBuf>,
    /// Append one audit record (JSON line: capability id, digests, status, duration, limits
    /// hit, enforcement mechanisms; never argument or environment values) to FILE per call,
    /// including calls refused before a worker starts. Default: `$APIZR_AUDIT_FILE` when set.
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,
    /// Readiness policy deciding whether the capability is ready: v1 (the reference's) or v2
    #[arg(long, value_enum, default_value_t = crate::cli::Readiness::V1)]
    pub readiness: crate::cli::Readiness,
}

/// Why the call ended before (or instead of) running.
struct Failure {
    status: Status,
    stage: Stage,
    detail: String,
    /// For argument validation: where in the arguments and what was expected (stderr only;
    /// the report's `detail` stays the reference's message).
    field: Option<FieldError>,
    /// Policy v2 answers carry the v2 envelope schema.
    v2: bool,
}

fn fail(status: Status, stage: Stage, detail: impl std::fmt::Display) -> Failure {
    Failure {
        status,
        stage,
        detail: detail.to_string(),
        field: None,
        v2: false,
    }
}

fn invalid(stage: Stage, detail: impl std::fmt::Display) -> Failure {
    fail(Status::InvalidInput, stage, detail)
}

/// Run the command; never panics, always prints one envelope line.
pub fn run(args: &ExecuteArgs) -> ExitCode {
    let audit = match audit_sink(args) {
        Ok(sink) => sink,
        Err(message) => {
            // An audit trail that was asked for and cannot be written: nothing runs.
            eprintln!(
                "{} {message}",
                crate::style::Style::for_stderr().error("apizr execute:")
            );
            return ExitCode::from(crate::EXIT_INPUT);
        }
    };
    let mut report = Report::new();
    // A report written to stderr already holds the stage and detail (and must stay one document).
    let say_why = |line: String| {
        if args.report.as_deref() != Some(Path::new("-")) {
            let style = crate::style::Style::for_stderr();
            eprintln!("{} {line}", style.error("apizr execute:"));
        }
    };
    let outcome = match execute(args, audit.clone(), &mut report) {
        Ok(outcome) => {
            if let Some(line) = reason::refused_by_runtime(&outcome) {
                say_why(line);
            }
            outcome
        }
        Err(f) => {
            say_why(reason::line(f.status, f.stage, &f.detail, f.field.as_ref()));
            report.finish_stage(f.stage, &f.detail);
            if let Some(sink) = &audit {
                // The call ended before the runtime (which records the calls it runs).
                let _ = sink.record(&early_audit_record(args, &report, f.status));
            }
            let outcome = Outcome::status(f.status);
            if f.v2 {
                outcome.with_backend(BackendKind::OciContainer)
            } else {
                outcome
            }
        }
    };
    let schema = outcome.result_schema().wire_name();
    println!(
        "{}",
        pydantic::envelope(schema, outcome.status.wire_name(), &outcome.value)
    );
    report.status = outcome.status.wire_name();
    if let Some(target) = &args.report {
        report.write(target);
    }
    if outcome.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The audit record of a call that ended before the runtime: the resolved capability id (or
/// the capability as requested, when planning did not get that far), the executable and policy
/// digests when known (empty otherwise), the status and the time spent; no controls ran.
fn early_audit_record(args: &ExecuteArgs, report: &Report, status: Status) -> AuditRecord {
    AuditRecord {
        schema_version: AUDIT_SCHEMA,
        capability_id: report
            .capability_id
            .clone()
            .unwrap_or_else(|| args.capability.clone()),
        executable_digest: report
            .executable_digest
            .as_ref()
            .map(Digest::prefixed)
            .unwrap_or_default(),
        policy_digest: report
            .policy_digest
            .as_ref()
            .map(Digest::prefixed)
            .unwrap_or_default(),
        status: status.wire_name(),
        duration_ms: report.elapsed_ms(),
        limits_hit: Vec::new(),
        refused: Vec::new(),
        controls: Vec::new(),
        // Decided here, before any worker ran.
        status_source: "supervisor",
        worker_status: None,
        exit: None,
        process: None,
    }
}

/// The audit file of `--audit` or `APIZR_AUDIT_FILE`, opened for appending.
fn audit_sink(args: &ExecuteArgs) -> Result<Option<Arc<dyn AuditSink>>, String> {
    let path = args.audit.clone().or_else(|| {
        std::env::var_os("APIZR_AUDIT_FILE")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    });
    let Some(path) = path else {
        return Ok(None);
    };
    let sink = FileAuditSink::open(&path)
        .map_err(|e| format!("cannot open audit file {}: {e}", path.display()))?;
    Ok(Some(Arc::new(sink)))
}

fn execute(
    args: &ExecuteArgs,
    audit: Option<Arc<dyn AuditSink>>,
    report: &mut Report,
) -> Result<Outcome, Failure> {
    // 1-2. Policy (the image flags are checked before a v2 document, as the reference does).
    let started = Instant::now();
    let policy_bytes =
        read_limited(&args.policy, MAX_POLICY_BYTES).map_err(|e| invalid(Stage::Policy, e))?;
    // Errors inside a file name the file (stderr line and report).
    let in_policy = |e: &dyn std::fmt::Display| {
        invalid(Stage::Policy, format!("{}: {e}", args.policy.display()))
    };
    let in_arguments = |e: &dyn std::fmt::Display| {
        invalid(
            Stage::Arguments,
            format!("{}: {e}", args.arguments.display()),
        )
    };
    let policy_doc: serde_json::Value =
        serde_json::from_slice(&policy_bytes).map_err(|e| in_policy(&e))?;
    let policy = if AnyPolicy::is_v2_document(&policy_doc) {
        AnyPolicy::V2(policy_v2(args, &policy_doc)?)
    } else {
        let policy = PolicyV1::from_json(&policy_doc).map_err(|e| in_policy(&e))?;
        if args.runtime_image.is_some() || args.runtime_platform.is_some() {
            return Err(invalid(
                Stage::Policy,
                "--runtime-image/--runtime-platform require an apizr.execution/v2 policy",
            ));
        }
        AnyPolicy::V1(policy)
    };
    report.policy_digest = policy.digest().ok();
    let v2 = policy.is_v2();

    // 3. Arguments file: byte limit, lexical preflight, permissive decode, finite budget.
    let limit = policy.limits().max_input_bytes;
    let raw = read_limited(&args.arguments, limit).map_err(|e| invalid(Stage::Arguments, e))?;
    let raw = raw.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&raw);
    preflight(raw, limit).map_err(|e| in_arguments(&e))?;
    let payload = parse_permissive(raw).map_err(|e| in_arguments(&e.python_message(raw)))?;
    check_budget(&payload, DEFAULT_VALUE_BYTES).map_err(|e| in_arguments(&e))?;
    report.time("read", started);

    // 4. Source and inspection (on a large stack: the parser recurses).
    let started = Instant::now();
    let (bytes, kind) =
        apizr_inspect::source::read_source(&args.source).map_err(|e| invalid(Stage::Source, e))?;
    let module = match &args.module_name {
        Some(name) => name.clone(),
        None => apizr_inspect::source::default_module_name(&args.source)
            .map_err(|e| invalid(Stage::Source, e))?,
    };
    let selection = [args.capability.clone()];
    let options = InspectOptions {
        readiness: args.readiness.policy(),
        ..InspectOptions::default()
    };
    let (outcome, planned) = on_inspect_stack(|| {
        let (outcome, parsed) = apizr_inspect::inspect_bytes_parsed(&bytes, kind, &module, options)
            .map_err(|e| invalid(Stage::Inspect, e))?;
        let planned = interface::plan_interfaces(&parsed, &outcome.inspection, Some(&selection));
        Ok::<_, Failure>((outcome, planned))
    })
    .map_err(|e| invalid(Stage::Inspect, e))??;
    let inspection = outcome.inspection;
    let executable_text = outcome.executable;
    report.inspection(&inspection);
    report.time("inspect", started);

    // 5. Plan: selection and eligibility, then effect requirements.
    let started = Instant::now();
    if let Some(refusal) = policy.refusal() {
        return Err(fail(
            Status::PolicyRefused,
            Stage::Plan,
            refusal.to_string(),
        ));
    }
    let contract = planned
        .map_err(|e| match crate::refusal::refused_capabilities(&e) {
            Some(list) => fail(
                Status::PolicyRefused,
                Stage::Plan,
                format!("cannot run {list}: only ready capabilities run"),
            ),
            None => invalid(Stage::Plan, e),
        })?
        .into_iter()
        .next()
        .ok_or_else(|| invalid(Stage::Plan, "no capability selected"))?;
    if let Some(effect) = policy.effects().require_known.first() {
        // v1 never infers effects: every required effect is still `unknown`.
        return Err(fail(
            Status::PolicyRefused,
            Stage::Plan,
            format!("unknown_required_effect: {effect}"),
        ));
    }
    let plan = RuntimePlan::new(&inspection, contract.clone(), policy.worker_policy())
        .map_err(|e| invalid(Stage::Plan, e))?;
    report.interface_digest = contract.digest().ok();
    report.plan_digest = plan.digest().ok();
    report.capability_id = Some(contract.capability_id.clone());
    report.executable_digest = Some(plan.executable_digest.clone());
    let executable = executable_bytes(executable_text, &plan.executable_digest)
        .ok_or_else(|| fail(Status::SourceMismatch, Stage::Plan, "executable digest"))?;
    report.time("plan", started);

    // 6. Input limit (canonical payload + LF) and argument validation: no worker on failure.
    // In the reference's OCI runner, argument failures carry the v2 envelope.
    let started = Instant::now();
    let on_v2 = |mut f: Failure| {
        f.v2 = v2;
        f
    };
    let canonical = payload
        .canonical_bytes()
        .map_err(|e| on_v2(invalid(Stage::Validate, e)))?;
    if canonical.len() as u64 > limit {
        let detail = format!(
            "canonical arguments are {} bytes > {limit}",
            canonical.len()
        );
        return Err(on_v2(invalid(Stage::Validate, detail)));
    }
    request_budget(&payload, &plan).map_err(|e| on_v2(invalid(Stage::Validate, e)))?;
    let validated = validate_arguments(&contract.parameters, &payload).map_err(|e| {
        let mut failure = invalid(Stage::Validate, &e);
        failure.field = Some(e.field_error());
        on_v2(failure)
    })?;
    report.time("validate", started);

    // 7. Run through the call API: v1 in a fresh sandboxed process, v2 in a fresh container.
    let started = Instant::now();
    let executor = executor(args, policy, audit).map_err(on_v2)?;
    let call =
        Call::new(&contract, Executable::new(executable), module, validated).with_original(bytes);
    let outcome = executor.execute(&call);
    report.time("run", started);
    report.runtime = serde_json::to_value(&outcome.report).ok();
    report.stage = Stage::Run;
    Ok(outcome)
}

/// The executor for the policy, chosen by the runtime ([`AnyExecutor::for_policy_audited`]):
/// the local-process backend re-executing this binary as its launcher, or the container
/// backend in the `--runtime-image` (both flags were checked by [`policy_v2`]; a v1 policy
/// with either flag was refused while reading it). Both record each call in the audit sink.
fn executor(
    args: &ExecuteArgs,
    policy: AnyPolicy,
    audit: Option<Arc<dyn AuditSink>>,
) -> Result<AnyExecutor, Failure> {
    let platform = args.runtime_platform.unwrap_or(Platform::LinuxAmd64);
    let image = args
        .runtime_image
        .as_deref()
        .map(|image| RuntimeImage::parse(image, platform.as_str()))
        .transpose()
        .map_err(|e| invalid(Stage::Run, e))?;
    AnyExecutor::for_policy_audited(policy, runtime_config(), image, audit)
        .map_err(|e| invalid(Stage::Run, e))
}

/// A v2 (OCI) policy: the same checks as the reference (both image flags, a `sha256:` image
/// ID, a strictly valid v2 document); the call then proceeds through reading, planning and
/// argument validation and runs in a fresh container.
fn policy_v2(args: &ExecuteArgs, doc: &serde_json::Value) -> Result<PolicyV2, Failure> {
    if args.runtime_image.is_none() || args.runtime_platform.is_none() {
        return Err(invalid(
            Stage::Policy,
            "OCI policy requires --runtime-image and --runtime-platform",
        ));
    }
    let image_ok = args.runtime_image.as_deref().is_some_and(|i| {
        i.strip_prefix("sha256:").is_some_and(|h| {
            h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        })
    });
    if !image_ok {
        return Err(invalid(
            Stage::Policy,
            "--runtime-image must be sha256:<64 hex>",
        ));
    }
    PolicyV2::from_json(doc)
        .map_err(|e| invalid(Stage::Policy, format!("{}: {e}", args.policy.display())))
}

/// The reference's worker request `{"arguments", "plan", "plan_digest"}` is held to the value
/// budget (100,000 nodes, depth 64), so the usable payload budget shrinks by the size of the
/// plan (observed: 99,576 list items pass for a one-parameter function whose plan has 412
/// nodes, 99,577 do not) and payloads of depth 64 are refused although REST accepts them.
fn request_budget(payload: &Value, plan: &RuntimePlan) -> Result<(), String> {
    let plan_value = apizr_ir::to_value(plan).map_err(|e| e.to_string())?;
    let digest = plan.digest().map_err(|e| e.to_string())?;
    let digest_value = apizr_ir::to_value(&digest).map_err(|e| e.to_string())?;
    let request = Value::Object(
        [
            ("arguments".to_string(), payload.clone()),
            ("plan".to_string(), plan_value),
            ("plan_digest".to_string(), digest_value),
        ]
        .into_iter()
        .collect(),
    );
    check_budget(&request, DEFAULT_VALUE_BYTES)
        .map_err(|e| format!("worker request over the value budget: {e}"))
}

/// Read at most `limit` bytes; a longer file is an error (nothing past `limit + 1` is read).
fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > limit {
        return Err(format!("{} is larger than {limit} bytes", path.display()));
    }
    Ok(bytes)
}

/// The executable Python text (the file itself, or a notebook's exported text as hashed).
/// Returns None if it does not hash to the bound digest.
fn executable_bytes(executable: Vec<u8>, bound: &Digest) -> Option<Vec<u8>> {
    (Digest::sha256(&executable) == *bound).then_some(executable)
}

/// The launcher is this binary; the interpreter is `$APIZR_PYTHON` or `python3` (the runtime's
/// default, resolved to the real executable without running a shim per call).
fn runtime_config() -> RuntimeConfig {
    RuntimeConfig {
        launcher: LauncherLocation::CurrentExe,
        ..RuntimeConfig::default()
    }
}
