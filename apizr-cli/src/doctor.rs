//! `apizr doctor`: what this host can enforce, and how.
//!
//! The matrix is not a second opinion: each control's row comes from the same planner a call
//! uses ([`apizr_runtime::enforcement::plan`]) applied to a policy that requests just that
//! control, over host facts observed afresh (the on-disk caches that `execute` reads are
//! rewritten, so a stale entry is repaired by running `apizr doctor`). A row that says
//! `enforced: no` is a control that `execute` answers with `policy_refused`; the reason names
//! the missing host mechanism.

use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};

use apizr_ir::policy::PolicyV1;
use apizr_runtime::HostCapabilities;
use apizr_runtime::RuntimeConfig;
use apizr_runtime::enforcement::{plan, refusal_reason};
use apizr_runtime::host::Freshness;
use apizr_runtime::local::prestart;
use apizr_runtime::local::workdir::{self, DirOwner};
use apizr_runtime::oci::pool::census::{PoolOwner, census};
use apizr_runtime::oci::{Engine, PoolConfig};
use apizr_runtime::serve::mcp::interpreter as interpreter_serve;
use clap::Args;
use serde::Serialize;

use crate::style::Style;

pub const DOCTOR_SCHEMA: &str = "apizr.doctor/v1";

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A readable table
    Text,
    /// The matrix as one JSON document (`apizr.doctor/v1`)
    Json,
}

/// One row of the matrix.
#[derive(Debug, Serialize)]
struct Row {
    control: &'static str,
    requested: String,
    enforced: bool,
    /// The mechanism when enforced.
    mechanism: Option<String>,
    /// Why `execute` would refuse it, when not enforced.
    reason: Option<String>,
}

#[derive(Debug, Serialize)]
struct Docker {
    reachable: bool,
    /// Server version, or why it could not be reached.
    detail: String,
    /// Controls the engine lacks for the `oci-container` backend (empty: usable).
    missing: Vec<&'static str>,
    /// Prepared-container pools of v2 servers on this engine.
    oci_pool: OciPool,
}

/// What `apizr doctor` can see of v2 servers' pools from outside: their containers on the
/// engine, by owner (each server's own counters are on its `/metrics`).
#[derive(Debug, Serialize)]
struct OciPool {
    /// Containers a v2 server keeps ready unless `--oci-pool` says otherwise.
    default_size: usize,
    /// How long a prepared container may wait before it is replaced, in seconds.
    max_idle_secs: u64,
    /// Pooled containers by owner; a dead owner's are removed by the next sweep.
    owners: Vec<PoolOwner>,
    /// Why the engine could not be listed.
    error: Option<String>,
}

impl OciPool {
    fn of(engine: Option<&Engine>) -> OciPool {
        let config = PoolConfig::default();
        let (owners, error) = match engine.map(census) {
            Some(Ok(owners)) => (owners, None),
            Some(Err(e)) => (Vec::new(), Some(e.to_string())),
            None => (Vec::new(), Some("engine unreachable".into())),
        };
        OciPool {
            default_size: apizr_runtime::serve::DEFAULT_OCI_POOL,
            max_idle_secs: config.max_idle.as_secs(),
            owners,
            error,
        }
    }
}

#[derive(Debug, Serialize)]
struct Doctor {
    schema_version: &'static str,
    python_version: Option<String>,
    host: HostCapabilities,
    controls: Vec<Row>,
    docker: Docker,
    v1_pool: V1Pool,
    interpreter_pool: InterpreterPool,
}

/// `apizr serve interpreter`'s pre-started `local` processes, as configured by default (a
/// server's own counters are on its `/metrics` with `--http`; its processes' working
/// directories are among `v1_pool.owners`: one implementation starts both).
#[derive(Debug, Serialize)]
struct InterpreterPool {
    /// Processes kept per policy for one-shot `local` runs unless `--prestart` or
    /// `APIZR_INTERPRETER_PRESTART` says otherwise (0: off). Sessions and `apizr run` never
    /// use the pool.
    default_size: usize,
    size_env: &'static str,
    max_idle_secs: u64,
}

/// What `apizr doctor` can see of v1 servers' pre-started workers from outside: the working
/// directories in the temp dir by owner (each server's own counters are on its `/metrics`).
#[derive(Debug, Serialize)]
struct V1Pool {
    /// Workers a v1 server pre-starts per served module unless `--v1-prestart` or
    /// `APIZR_V1_PRESTART` says otherwise (0: off).
    default_size: usize,
    /// How long a pre-started worker may wait before it is replaced, in seconds.
    max_idle_secs: u64,
    /// When a pre-started worker also imports its module before the call.
    preimport: &'static str,
    /// Working directories (pre-started workers and calls in flight) by owner.
    owners: Vec<DirOwner>,
}

impl V1Pool {
    fn here() -> V1Pool {
        V1Pool {
            default_size: prestart::DEFAULT_SIZE,
            max_idle_secs: prestart::MAX_IDLE.as_secs(),
            preimport: prestart::PREIMPORT_RULE,
            owners: workdir::census(&std::env::temp_dir()),
        }
    }
}

/// The policy documents that request one control each (the row's `requested`).
const PROBES: &[(&str, &str)] = &[
    ("network", r#"{"network":{"mode":"deny"}}"#),
    ("filesystem", r#"{"filesystem":{"mode":"sandbox"}}"#),
    ("subprocess", r#"{"subprocess":{"mode":"deny"}}"#),
    ("memory", r#"{"resources":{"memory_bytes":268435456}}"#),
    ("pids", r#"{"resources":{"pids":64}}"#),
    ("cpu", r#"{"resources":{"cpu_millis":1000}}"#),
    (
        "disk",
        r#"{"filesystem":{"mode":"sandbox"},"resources":{"disk_bytes":67108864}}"#,
    ),
    // Every governed call gets these; the rows say how (or why not).
    ("identity", "{}"),
    ("syscalls", "{}"),
    ("proc", "{}"),
    ("descendants", "{}"),
    ("lifetime", "{}"),
];

pub fn run(args: &DoctorArgs) -> ExitCode {
    let config = RuntimeConfig::default();
    let launcher = std::env::current_exe().ok();
    let host =
        HostCapabilities::probe_with(&config.python, launcher.as_deref(), Freshness::Refresh);
    let doctor = Doctor {
        schema_version: DOCTOR_SCHEMA,
        python_version: host.python.as_ref().and_then(python_version),
        controls: rows(&host),
        docker: docker(),
        v1_pool: V1Pool::here(),
        interpreter_pool: InterpreterPool {
            default_size: interpreter_serve::DEFAULT_PRESTART,
            size_env: interpreter_serve::PRESTART_ENV,
            max_idle_secs: prestart::MAX_IDLE.as_secs(),
        },
        host,
    };
    match args.format {
        Format::Json => match serde_json::to_string_pretty(&doctor) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("apizr doctor: {e}");
                return ExitCode::from(crate::EXIT_INPUT);
            }
        },
        Format::Text => print!("{}", text(&doctor, Style::for_stdout())),
    }
    ExitCode::SUCCESS
}

fn rows(host: &HostCapabilities) -> Vec<Row> {
    let mut out = Vec::new();
    for (control, doc) in PROBES {
        let Some(policy) = serde_json::from_str(doc)
            .ok()
            .and_then(|v| PolicyV1::from_json(&v).ok())
        else {
            continue;
        };
        let planned = plan(&policy, host);
        let Some(report) = planned.controls.into_iter().find(|c| c.control == *control) else {
            continue;
        };
        // An always-on control that is not enforced carries its own reason in the plan.
        let reason = (!report.enforced).then(|| {
            report
                .mechanism
                .clone()
                .unwrap_or_else(|| refusal_reason(control, host))
        });
        out.push(Row {
            control,
            requested: report.requested,
            enforced: report.enforced,
            mechanism: if report.enforced {
                report.mechanism
            } else {
                None
            },
            reason,
        });
    }
    out
}

fn python_version(python: &PathBuf) -> Option<String> {
    let out = Command::new(python)
        .args([
            "-I",
            "-S",
            "-c",
            "import sys; sys.stdout.write(sys.version.split()[0])",
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn docker() -> Docker {
    let engine = match Engine::from_env() {
        Ok(engine) => engine,
        Err(e) => {
            return Docker {
                reachable: false,
                detail: e.to_string(),
                missing: Vec::new(),
                oci_pool: OciPool::of(None),
            };
        }
    };
    let oci_pool = OciPool::of(Some(&engine));
    match engine.capabilities() {
        Ok(caps) => Docker {
            reachable: true,
            detail: format!("Docker {} (API {})", caps.server_version, caps.api_version),
            missing: caps.missing,
            oci_pool,
        },
        Err(e) => Docker {
            reachable: true,
            detail: format!("Docker {}: {e}", engine.server_version),
            missing: vec!["info"],
            oci_pool,
        },
    }
}

/// `default N, idle ≤ Ns; pid P (alive): R running, O other; …`
fn pool_text(pool: &OciPool) -> String {
    let mut text = format!(
        "default {} per v2 server, replaced after {} s idle",
        pool.default_size, pool.max_idle_secs
    );
    if let Some(error) = &pool.error {
        text.push_str(&format!("; containers not listed: {error}"));
    } else if pool.owners.is_empty() {
        text.push_str("; no pooled containers");
    }
    for owner in &pool.owners {
        let who = owner
            .pid
            .map_or_else(|| "unknown owner".to_string(), |pid| format!("pid {pid}"));
        text.push_str(&format!(
            "; {who} ({}): {} running, {} other",
            owner.liveness, owner.running, owner.other
        ));
    }
    text
}

/// `default N per capability, idle ≤ Ns; pid P (alive): D directories; …`
fn v1_pool_text(pool: &V1Pool) -> String {
    let mut text = format!(
        "default {} per served module of a v1 server ({}), replaced after {} s idle; {}",
        pool.default_size,
        prestart::SIZE_ENV,
        pool.max_idle_secs,
        pool.preimport
    );
    if pool.owners.is_empty() {
        text.push_str("; no worker directories");
    }
    for owner in &pool.owners {
        text.push_str(&format!(
            "; pid {} ({}): {} worker director{}",
            owner.pid,
            if owner.alive {
                "alive"
            } else {
                "dead: next sweep"
            },
            owner.directories,
            if owner.directories == 1 { "y" } else { "ies" }
        ));
    }
    text
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

fn text(d: &Doctor, style: Style) -> String {
    let h = &d.host;
    let path = |p: &Option<PathBuf>| {
        p.as_ref()
            .map_or("-".to_string(), |p| p.display().to_string())
    };
    let mut out = format!("{}\n", style.bold("Host"));
    let python = match (&h.python, &d.python_version) {
        (Some(p), Some(v)) => format!("{} (Python {v})", p.display()),
        (Some(p), None) => format!("{} (did not answer)", p.display()),
        _ => "not found".into(),
    };
    let mut facts = vec![
        ("python", python),
        (
            "python resolution",
            h.python_resolution.unwrap_or("-").to_string(),
        ),
        ("launcher", path(&h.launcher)),
        ("root", yes_no(h.is_root).into()),
        ("user namespace", yes_no(h.user_namespace).into()),
        ("network namespace", yes_no(h.network_namespace).into()),
        ("pid namespace", yes_no(h.pid_namespace).into()),
        ("mount namespace", yes_no(h.mount_namespace).into()),
        ("fresh /proc", yes_no(h.fresh_proc).into()),
        (
            "landlock",
            if h.landlock_abi == 0 {
                "no".into()
            } else {
                format!(
                    "ABI {} ({})",
                    h.landlock_abi,
                    if h.landlock_fully_enforced {
                        "fully enforced"
                    } else {
                        "partial"
                    }
                )
            },
        ),
        ("seccomp filter", yes_no(h.seccomp_filter).into()),
    ];
    for (name, cg) in [
        ("cgroup pids", &h.cgroup_pids),
        ("cgroup memory", &h.cgroup_memory),
    ] {
        let value = cg.as_ref().map_or("not delegated".to_string(), |c| {
            format!("{} {}", c.version, c.base.display())
        });
        facts.push((name, value));
    }
    let docker = if d.docker.reachable && d.docker.missing.is_empty() {
        format!("{} (usable)", d.docker.detail)
    } else if d.docker.reachable {
        format!(
            "{} (missing: {})",
            d.docker.detail,
            d.docker.missing.join(", ")
        )
    } else {
        format!("unreachable: {}", d.docker.detail)
    };
    facts.push(("docker", docker));
    facts.push(("oci pool", pool_text(&d.docker.oci_pool)));
    facts.push(("v1 pool", v1_pool_text(&d.v1_pool)));
    facts.push((
        "interpreter pool",
        format!(
            "default {} per policy of `apizr serve interpreter` ({}), one-shot `local` runs \
             only, replaced after {} s idle",
            d.interpreter_pool.default_size,
            d.interpreter_pool.size_env,
            d.interpreter_pool.max_idle_secs
        ),
    ));
    for (name, value) in facts {
        out.push_str(&format!("  {name:<22} {value}\n"));
    }
    out.push_str(&format!("\n{}\n", style.bold("Controls")));
    let width = d
        .controls
        .iter()
        .map(|r| r.requested.len())
        .chain([9])
        .max()
        .unwrap_or(9);
    out.push_str(&format!(
        "  {:<12} {:<width$} {:<9} {}\n",
        "CONTROL", "REQUESTED", "ENFORCED", "MECHANISM / REASON"
    ));
    for row in &d.controls {
        let how = row
            .mechanism
            .as_deref()
            .or(row.reason.as_deref())
            .unwrap_or("-");
        out.push_str(&format!(
            "  {:<12} {:<width$} {:<9} {how}\n",
            row.control,
            row.requested,
            yes_no(row.enforced)
        ));
    }
    if !h.notes.is_empty() {
        out.push_str(&format!("\n{}\n", style.bold("Notes")));
        for note in &h.notes {
            out.push_str(&format!("  {note}\n"));
        }
    }
    out
}
