//! The local tiers: `local` runs the code in the local backend's sandbox under the policy's
//! restrictions (each one enforced by a named mechanism of the backend's enforcement plan, or
//! refused); `local_unsafe` runs it with the host's environment and no restriction, but still
//! as PID 1 of its own PID namespace so that a timeout kills the whole tree.
//!
//! Order: plan (refusals) → packages → a pre-started process with its own fresh workspace
//! (servers' pool, [`LocalTier::pooled`]), else workspace and snapshot → start
//! ([`LocalTier::launch`]: the backend's `Factory::start`, the one implementation of the
//! controls, with the bootstrap as its [`Program::Code`]) → supervise ([`super::process`]) →
//! artifacts (new or changed files, successful runs only) → clean-up (a fresh workspace
//! without artifacts is removed).

pub(crate) mod persistent;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use apizr_ir::Digest;
use apizr_ir::policy::{FilesystemMode, NetworkMode, PolicyV1, Resources, SubprocessMode};

use super::artifacts::{self, Caps, Snapshot};
use super::bootstrap::{self, BootRequest};
use super::capture;
use super::enforcement::{Capability, EnforcementReport, Support, TierSupport, base_features};
use super::outcome::{self, Context, Produced};
use super::packages::{PackageStore, Target};
use super::policy::CapabilityPolicy;
use super::process;
use super::result::{Artifact, ExecutionResult};
use super::session::sweep;
use super::tier::Tier;
use crate::local::config::RuntimeConfig;
use crate::local::enforcement::{self, ControlReport, EnforcementPlan};
use crate::local::host::HostCapabilities;
use crate::local::prestart::{ColdReason, Key, Pool, PrestartConfig, PrestartStats, ProcessSource};
use crate::local::process::{Factory, WorkerProcess};
use crate::local::program::{CodeProgram, CodeWorkspace, Program};
use crate::local::runtime::LauncherLocation;
use crate::local::seccomp;
use crate::local::spawn::LocalSpawner;

/// One execution request, as every tier receives it.
pub(crate) struct Job<'a> {
    /// `local`: take a pre-started process when the tier's pool has one (servers).
    pub prestart: bool,
    pub code: &'a str,
    pub allowed: Option<&'a [String]>,
    pub policy: Option<&'a CapabilityPolicy>,
    pub packages: &'a [String],
    pub working_directory: Option<&'a Path>,
    pub store: &'a PackageStore,
    pub started: Instant,
}

/// The default timeout of a local run without a policy (mellea's).
pub const LOCAL_DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The local tiers' shared state: the backend's process factory (host probe, identities,
/// spawner), the seccomp programs, the interpreter's version, and servers' pre-start pool.
#[derive(Debug)]
pub(crate) struct LocalTier {
    /// The one implementation of every control a process starts under (the v1 worker's too).
    factory: Arc<Factory>,
    seccomp: OnceLock<Option<Vec<Vec<u8>>>>,
    version: OnceLock<Option<String>>,
    /// Pre-started `local` processes (servers; see [`LocalTier::start_prestart`]).
    prestart: OnceLock<Pool>,
}

impl LocalTier {
    pub fn new(python: PathBuf, launcher: &LauncherLocation, temp_root: PathBuf) -> Self {
        let config = RuntimeConfig {
            python,
            launcher: launcher.clone(),
            temp_root,
            ids: None,
        };
        LocalTier {
            factory: Arc::new(Factory::new(config, Arc::new(LocalSpawner))),
            seccomp: OnceLock::new(),
            version: OnceLock::new(),
            prestart: OnceLock::new(),
        }
    }

    /// Keep `config.size` processes of each (policy, tier) pre-started for one-shot `local`
    /// runs (the v1 pool's implementation, [`Program::Code`]); the first run of a policy goes
    /// cold and registers it. False when the keeper thread could not start.
    pub fn start_prestart(&self, config: PrestartConfig) -> bool {
        if self.prestart.get().is_some() {
            return true;
        }
        match Pool::start(self.factory.clone(), config) {
            Ok(pool) => self.prestart.set(pool).is_ok() || self.prestart.get().is_some(),
            Err(e) => {
                eprintln!("apizr: interpreter pre-start pool not started: {e}");
                false
            }
        }
    }

    pub fn prestart_stats(&self) -> Option<PrestartStats> {
        self.prestart.get().map(Pool::stats)
    }

    pub(crate) fn temp_root(&self) -> &Path {
        &self.factory.config.temp_root
    }

    /// What `tier` enforces on this host: the backend's plan for the strictest policy,
    /// control by control.
    pub fn support(&self, tier: Tier) -> TierSupport {
        let strict = v1_policy(
            tier,
            Some(&CapabilityPolicy::strict()),
            LOCAL_DEFAULT_TIMEOUT,
        );
        let host = self.factory.host.for_policy(&strict);
        let plan = plan_for(tier, &strict, &host);
        measure(tier, &plan, &host)
    }

    pub fn run(&self, tier: Tier, job: &Job<'_>) -> ExecutionResult {
        let Setup {
            mut ctx,
            plan,
            v1,
            host,
            site_dirs,
            seccomp,
            timeout,
            ..
        } = match self.setup(tier, job) {
            Ok(s) => s,
            Err(result) => return *result,
        };
        let request = BootRequest {
            code: job.code.to_string(),
            allowed: job.allowed.map(<[String]>::to_vec),
            seccomp,
            site_dirs,
            ..BootRequest::default()
        };
        // A pre-started process (its own fresh workspace), else one started for this run.
        let (process, workspace, before) = match self.pooled(tier, job, &v1, &plan, &host) {
            Ok(process) => {
                ctx.enforcement.process = Some(ProcessSource::Prestarted);
                let path = process.workspace.as_ref().map(|w| w.path.clone());
                let workspace = Workspace {
                    path: path.unwrap_or_default(),
                    fresh: true,
                };
                let before = Snapshot::take(&workspace.path);
                (process, workspace, before)
            }
            Err(reason) => {
                ctx.enforcement.process = Some(ProcessSource::Cold);
                ctx.enforcement.cold_reason = reason;
                let workspace = match Workspace::prepare(self.temp_root(), job.working_directory) {
                    Ok(w) => w,
                    Err(e) => {
                        return outcome::skipped(
                            ctx,
                            format!("Execution could not start: workspace: {e}"),
                        );
                    }
                };
                let before = Snapshot::take(&workspace.path);
                match self.launch(tier, job.policy, &plan, &v1, &host, &workspace.path) {
                    Ok(process) => (process, workspace, before),
                    Err(message) => {
                        workspace.discard();
                        return outcome::skipped(ctx, message);
                    }
                }
            }
        };
        let (started, held, _) = process.split();
        let finished = process::supervise(
            started.into_child(),
            request.frame(),
            job.started + timeout,
            keeps(job.policy),
        );
        let oom_killed = held.oom_killed();
        let cleanup = held.release();
        let mut produced = Produced {
            stdout: finished.stdout,
            stderr: finished.stderr,
            exit_code: finished.exit_code,
            exit_signal: finished.signal,
            oom_killed,
            timed_out: finished.timed_out,
            cleanup,
            ..Produced::default()
        };
        if !produced.timed_out && produced.exit_code == Some(0) {
            let (found, truncated) = new_artifacts(&before, &workspace.path, job.policy);
            produced.artifacts = found;
            produced.artifacts_truncated = truncated;
        }
        let keep =
            !produced.artifacts.is_empty() && produced.exit_code == Some(0) && !produced.timed_out;
        produced.working_directory = workspace.finish(keep, &mut produced.artifacts);
        outcome::finish(ctx, produced)
    }

    /// A pre-started process for a one-shot `local` run in a fresh workspace, or why the run
    /// goes cold (`None`: this interpreter keeps no pool, or the run cannot use one).
    fn pooled(
        &self,
        tier: Tier,
        job: &Job<'_>,
        v1: &PolicyV1,
        plan: &EnforcementPlan,
        host: &HostCapabilities,
    ) -> Result<WorkerProcess, Option<ColdReason>> {
        let Some(pool) = self.prestart.get() else {
            return Err(None);
        };
        if !job.prestart || tier != Tier::Local || job.working_directory.is_some() {
            return Err(None);
        }
        let program = Bootstrap {
            tier,
            policy: job.policy.cloned(),
            workspace: None,
            temp_root: self.temp_root().to_path_buf(),
        };
        let key = program.key().ok_or(Some(ColdReason::NoKey))?;
        let program = Program::Code(Arc::new(program));
        let process = pool
            .take_program(key, v1, &program, plan, host)
            .map_err(Some)?;
        if process.workspace.as_ref().is_some_and(|w| w.fresh) {
            Ok(process)
        } else {
            // Never reached (the key's program makes a fresh workspace): refuse to guess.
            let _ = process.discard();
            Err(Some(ColdReason::NoKey))
        }
    }

    /// Everything decided before a process starts: the plan, refusals, packages, seccomp.
    /// `Err` is the result that ends the run here.
    pub(crate) fn setup<'a>(
        &self,
        tier: Tier,
        job: &Job<'a>,
    ) -> Result<Setup<'a>, Box<ExecutionResult>> {
        let timeout = job
            .policy
            .map_or(LOCAL_DEFAULT_TIMEOUT, CapabilityPolicy::timeout_duration);
        let v1 = v1_policy(tier, job.policy, timeout);
        let host = self.factory.host.for_policy(&v1);
        let plan = plan_for(tier, &v1, &host);
        let support = measure(tier, &plan, &host);
        let mut report = EnforcementReport::assess(&support, job.policy);
        for control in &plan.refused {
            if let Some(c) = capability_of(control)
                && !report.refused.contains(&c)
                && !job.policy.is_some_and(|p| p.declared_only.contains(&c))
            {
                report.refused.push(c);
            }
        }
        let mut ctx = Context {
            tier,
            policy: job.policy,
            enforcement: report,
            packages: None,
            started: job.started,
            timeout: timeout.as_secs_f64(),
        };
        if !ctx.enforcement.refused.is_empty() {
            let message = refusal_message(&ctx.enforcement);
            return Err(Box::new(outcome::skipped(ctx, message)));
        }
        let Some(python) = host.python.clone() else {
            return Err(Box::new(outcome::skipped(
                ctx,
                "No Python interpreter answered on this host.".into(),
            )));
        };
        let mut site_dirs = Vec::new();
        if !job.packages.is_empty() {
            let Some(version) = self.python_version(&python) else {
                return Err(Box::new(outcome::skipped(
                    ctx,
                    "Package installation failed: the interpreter's version is unknown".into(),
                )));
            };
            match job.store.ensure(
                &Target::Local {
                    python: python.clone(),
                    version,
                },
                job.packages,
            ) {
                Ok(ready) => {
                    site_dirs.push(ready.site_dir.display().to_string());
                    ctx.packages = Some(ready.report);
                }
                Err(report) => {
                    let message = package_failure_message(&report);
                    ctx.packages = Some(report);
                    return Err(Box::new(outcome::skipped(ctx, message)));
                }
            }
        }
        let seccomp = if plan.seccomp {
            match self
                .seccomp
                .get_or_init(|| seccomp::subprocess_deny_programs().ok())
            {
                Some(p) => Some(p.clone()),
                None => {
                    ctx.enforcement
                        .refused
                        .push(Capability::SubprocessExecution);
                    let message = refusal_message(&ctx.enforcement);
                    return Err(Box::new(outcome::skipped(ctx, message)));
                }
            }
        } else {
            None
        };
        Ok(Setup {
            ctx,
            plan,
            v1,
            host,
            site_dirs,
            seccomp,
            timeout,
        })
    }

    /// Start the run's process in `workspace` through the backend's one implementation of
    /// the controls ([`Factory::start`]): identity, working directory, the workspace and write
    /// roots lent to the run's uid, cgroups, the launcher.
    pub(crate) fn launch(
        &self,
        tier: Tier,
        policy: Option<&CapabilityPolicy>,
        plan: &EnforcementPlan,
        v1: &PolicyV1,
        host: &HostCapabilities,
        workspace: &Path,
    ) -> Result<WorkerProcess, String> {
        let program = Program::Code(Arc::new(Bootstrap {
            tier,
            policy: policy.cloned(),
            workspace: Some(workspace.to_path_buf()),
            temp_root: self.temp_root().to_path_buf(),
        }));
        self.factory
            .start(v1, plan, host, &program)
            .map_err(|e| format!("Execution could not start: {e}"))
    }

    /// `major.minor` of the interpreter, asked once.
    fn python_version(&self, python: &Path) -> Option<String> {
        self.version
            .get_or_init(|| {
                let out = std::process::Command::new(python)
                    .args([
                        "-I",
                        "-S",
                        "-c",
                        "import sys;print('%d.%d'%sys.version_info[:2])",
                    ])
                    .output()
                    .ok()?;
                let text = String::from_utf8(out.stdout).ok()?;
                Some(text.trim().to_string()).filter(|v| !v.is_empty())
            })
            .clone()
    }
}

/// What [`LocalTier::setup`] decided for a run.
pub(crate) struct Setup<'a> {
    pub ctx: Context<'a>,
    pub plan: EnforcementPlan,
    pub v1: PolicyV1,
    pub host: HostCapabilities,
    pub site_dirs: Vec<String>,
    pub seccomp: Option<Vec<Vec<u8>>>,
    pub timeout: Duration,
}

/// The `local` tiers' program: the bootstrap under the interpreter, in the run's workspace
/// (the caller's, or a fresh private one per process), with the tier's environment.
#[derive(Debug)]
struct Bootstrap {
    tier: Tier,
    policy: Option<CapabilityPolicy>,
    /// `None`: a fresh private workspace for each process (named for the crash sweep).
    workspace: Option<PathBuf>,
    temp_root: PathBuf,
}

impl Bootstrap {
    /// The pool key of its processes: (the tier and canonical policy, the bootstrap).
    fn key(&self) -> Option<Key> {
        let policy = apizr_ir::json::canonical_bytes(&self.policy).ok()?;
        let mut setting = self.tier.name().as_bytes().to_vec();
        setting.push(0);
        setting.extend(policy);
        Some((
            Digest::sha256(&setting),
            Digest::sha256(bootstrap::BOOTSTRAP_SOURCE.as_bytes()),
        ))
    }
}

impl CodeProgram for Bootstrap {
    fn args(&self) -> Vec<String> {
        bootstrap::python_args()
    }

    fn workspace(&self) -> std::io::Result<CodeWorkspace> {
        match &self.workspace {
            Some(path) => Ok(CodeWorkspace {
                path: path.clone(),
                fresh: false,
            }),
            None => Ok(CodeWorkspace {
                path: artifacts::private_dir(&self.temp_root, &sweep::run_prefix())?,
                fresh: true,
            }),
        }
    }

    fn write_roots(&self) -> Vec<PathBuf> {
        self.policy
            .as_ref()
            .and_then(|p| p.filesystem_write_roots.clone())
            .unwrap_or_default()
    }

    fn environment(&self, workspace: &Path, scratch: &Path) -> Vec<(OsString, OsString)> {
        environment(self.tier, self.policy.as_ref(), workspace, scratch)
    }
}

/// The bytes kept per stream (stdout, stderr) under `policy`.
pub(crate) fn keeps(policy: Option<&CapabilityPolicy>) -> (u64, u64) {
    policy.map_or((capture::keep_for(None), capture::keep_for(None)), |p| {
        (
            capture::keep_for(p.stdout_max_bytes),
            capture::keep_for(p.stderr_max_bytes),
        )
    })
}

/// The files of `workspace` new or changed since `before`, under the policy's export paths
/// and caps.
pub(crate) fn new_artifacts(
    before: &Snapshot,
    workspace: &Path,
    policy: Option<&CapabilityPolicy>,
) -> (Vec<super::result::Artifact>, bool) {
    let after = Snapshot::take(workspace);
    let names = before.changed(&after);
    let caps = Caps::for_policy(policy);
    let names = filter_exports(names, policy, workspace);
    artifacts::describe(workspace, &names, &after, caps)
}

/// The local backend's policy for a run of `tier` under `policy`.
fn v1_policy(tier: Tier, policy: Option<&CapabilityPolicy>, timeout: Duration) -> PolicyV1 {
    let mut v1 = PolicyV1::default();
    v1.limits.wall_time_ms = u64::try_from(timeout.as_millis())
        .unwrap_or(u64::MAX)
        .max(1);
    let (Tier::Local, Some(p)) = (tier, policy) else {
        return v1;
    };
    if !p.network_access {
        v1.network.mode = NetworkMode::Deny;
    }
    if p.filesystem_read_roots.is_some() || p.filesystem_write_roots.is_some() {
        v1.filesystem.mode = FilesystemMode::Sandbox;
        let mut roots: Vec<String> = p
            .filesystem_read_roots
            .iter()
            .flatten()
            .map(|r| r.display().to_string())
            .collect();
        roots.sort();
        roots.dedup();
        v1.filesystem.read_roots = roots;
    }
    if !p.subprocess_execution {
        v1.subprocess.mode = SubprocessMode::Deny;
    }
    if p.memory_bytes.is_some() || p.pids.is_some() {
        v1.resources = Some(Resources {
            memory_bytes: p.memory_bytes,
            pids: p.pids,
            cpu_millis: None,
            disk_bytes: None,
        });
    }
    v1
}

/// The plan of a run: the backend's, or — `local_unsafe` — only the launcher's PID namespace
/// (so a timeout takes the whole tree) and its lifeline, as the caller, on the host's view.
fn plan_for(tier: Tier, v1: &PolicyV1, host: &HostCapabilities) -> EnforcementPlan {
    if tier == Tier::Local {
        return enforcement::plan(v1, host);
    }
    let launcher = host.launcher.is_some();
    let pid_ns = launcher && host.pid_namespace;
    let row = |control, requested: &str, enforced, mechanism: &str| ControlReport {
        control,
        requested: requested.into(),
        enforced,
        mechanism: Some(mechanism.into()),
    };
    EnforcementPlan {
        use_launcher: launcher,
        user_ns: launcher && host.user_namespace,
        pid_ns,
        controls: vec![
            if pid_ns {
                row(
                    "descendants",
                    "terminated with the call",
                    true,
                    "PID namespace with the code as PID 1",
                )
            } else {
                row(
                    "descendants",
                    "terminated with the call",
                    false,
                    "process-group kill only",
                )
            },
            row(
                "lifetime",
                "ends with the supervisor",
                launcher,
                "the launcher's lifeline",
            ),
        ],
        ..EnforcementPlan::default()
    }
}

/// The backend's control behind a capability.
fn capability_of(control: &str) -> Option<Capability> {
    Some(match control {
        "network" => Capability::NetworkAccess,
        "filesystem" | "disk" => Capability::FilesystemWriteRoots,
        "subprocess" => Capability::SubprocessExecution,
        "memory" => Capability::MemoryBytes,
        "pids" => Capability::Pids,
        _ => return None,
    })
}

fn control<'a>(plan: &'a EnforcementPlan, name: &str) -> Option<&'a ControlReport> {
    plan.controls.iter().find(|c| c.control == name)
}

/// Per capability, the plan's mechanism or why it has none.
fn measure(tier: Tier, plan: &EnforcementPlan, host: &HostCapabilities) -> TierSupport {
    let from = |name: &str| match control(plan, name) {
        Some(ControlReport {
            enforced: true,
            mechanism: Some(m),
            ..
        }) => Support::enforced(m.clone()),
        _ => Support::unavailable(format!(
            "this host cannot enforce `{name}` in the local sandbox (see `apizr doctor`)"
        )),
    };
    let tree = match control(plan, "descendants") {
        Some(ControlReport {
            enforced: true,
            mechanism: Some(m),
            ..
        }) => Support::enforced(format!(
            "deadline covering start-up; SIGKILL of the whole tree ({m})"
        )),
        _ => Support::unavailable(
            "no PID namespace on this host: detached descendants could outlive a timeout",
        ),
    };
    let always = [
        (Capability::Timeout, tree.clone()),
        (
            Capability::StdoutMaxBytes,
            Support::enforced("bounded capture on the host; mellea's truncation marker"),
        ),
        (
            Capability::StderrMaxBytes,
            Support::enforced("bounded capture on the host; mellea's truncation marker"),
        ),
        (
            Capability::ArtifactExportPaths,
            Support::enforced(
                "before/after snapshot of the workspace; openat2 beneath it, no symlinks; caps",
            ),
        ),
        (
            Capability::Packages,
            if host.python.is_some() {
                Support::enforced("isolated virtual environment keyed by the requirement set")
            } else {
                Support::unavailable("no Python interpreter")
            },
        ),
    ];
    let mut capabilities: std::collections::BTreeMap<_, _> = always.into_iter().collect();
    let mut features = base_features(tier);
    features.insert("process_tree_kill", tree.is_enforced());
    for (feature, name) in [
        ("unprivileged_identity", "identity"),
        ("baseline_seccomp", "syscalls"),
        ("private_proc", "proc"),
        ("ends_with_caller", "lifetime"),
    ] {
        features.insert(feature, control(plan, name).is_some_and(|c| c.enforced));
    }
    if tier == Tier::LocalUnsafe {
        for c in [
            Capability::FilesystemReadRoots,
            Capability::FilesystemWriteRoots,
            Capability::NetworkAccess,
            Capability::PackageInstallation,
            Capability::SubprocessExecution,
            Capability::EnvVarAccess,
            Capability::MemoryBytes,
            Capability::Pids,
        ] {
            capabilities.insert(
                c,
                Support::unavailable("local_unsafe applies no restrictions"),
            );
        }
        features.insert("network_isolation", false);
        features.insert("filesystem_isolation", false);
        return TierSupport {
            tier,
            capabilities,
            features,
        };
    }
    let network = from("network");
    let filesystem = from("filesystem");
    capabilities.insert(Capability::NetworkAccess, network.clone());
    capabilities.insert(Capability::FilesystemReadRoots, filesystem.clone());
    capabilities.insert(
        Capability::FilesystemWriteRoots,
        match &filesystem {
            Support::Enforced { mechanism } => Support::enforced(format!(
                "{mechanism}; besides /tmp, only the run's workspace and the write roots are bound \
                 read-write (lent to the run's uid for the run)"
            )),
            other => other.clone(),
        },
    );
    capabilities.insert(Capability::SubprocessExecution, from("subprocess"));
    capabilities.insert(Capability::MemoryBytes, from("memory"));
    capabilities.insert(Capability::Pids, from("pids"));
    capabilities.insert(
        Capability::EnvVarAccess,
        Support::enforced("environment built from scratch: never the host's"),
    );
    capabilities.insert(
        Capability::PackageInstallation,
        match &network {
            Support::Enforced { .. } => {
                Support::enforced("no network: no package index is reachable from the code")
            }
            Support::Unavailable { .. } => Support::unavailable(
                "without network isolation the code could reach a package index",
            ),
        },
    );
    features.insert("network_isolation", network.is_enforced());
    features.insert("filesystem_isolation", filesystem.is_enforced());
    TierSupport {
        tier,
        capabilities,
        features,
    }
}

/// `Policy refused: …` naming each restriction this host cannot enforce.
pub(crate) fn refusal_message(report: &EnforcementReport) -> String {
    let parts: Vec<String> = report
        .capabilities
        .iter()
        .filter(|r| report.refused.contains(&r.capability))
        .map(|r| format!("{} ({}): {}", r.capability.name(), r.requested, r.detail))
        .collect();
    let parts = if parts.is_empty() {
        report
            .refused
            .iter()
            .map(|c| c.name().to_string())
            .collect()
    } else {
        parts
    };
    format!(
        "Policy refused: {}; list them in declared_only to run with them declared only",
        parts.join("; ")
    )
}

pub(crate) fn package_failure_message(report: &super::packages::PackageReport) -> String {
    let names: Vec<&str> = report
        .failed
        .iter()
        .map(|f| {
            if f.package.is_empty() {
                f.error.as_str()
            } else {
                f.package.as_str()
            }
        })
        .collect();
    format!("Package installation failed: {}", names.join(", "))
}

/// Only names under the policy's export paths (all when it lists none). An export path is
/// relative to the workspace, or absolute beneath `workspace` (a container's `/workspace`).
pub(crate) fn filter_exports<'a>(
    names: Vec<&'a str>,
    policy: Option<&CapabilityPolicy>,
    workspace: &Path,
) -> Vec<&'a str> {
    let Some(paths) = policy
        .map(|p| &p.artifact_export_paths)
        .filter(|p| !p.is_empty())
    else {
        return names;
    };
    let prefixes: Vec<String> = paths
        .iter()
        .filter_map(|p| {
            let p = if p.is_absolute() {
                p.strip_prefix(workspace).ok()?
            } else {
                p.as_path()
            };
            let text = p.to_string_lossy();
            Some(
                text.trim_start_matches("./")
                    .trim_end_matches('/')
                    .to_string(),
            )
        })
        .collect();
    names
        .into_iter()
        .filter(|n| {
            prefixes
                .iter()
                .any(|p| p.is_empty() || *n == p.as_str() || n.starts_with(&format!("{p}/")))
        })
        .collect()
}

/// The code's environment. `local_unsafe`: the host's. `local`: built from scratch.
fn environment(
    tier: Tier,
    policy: Option<&CapabilityPolicy>,
    workspace: &Path,
    scratch: &Path,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    if tier == Tier::LocalUnsafe {
        env.extend(std::env::vars_os());
    } else if policy.is_none_or(|p| p.env_var_access) {
        env.push(("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()));
        env.push(("HOME".into(), workspace.into()));
        env.push(("LANG".into(), "C.UTF-8".into()));
        env.push(("TMPDIR".into(), scratch.into()));
        for name in policy.map(|p| p.env.as_slice()).unwrap_or_default() {
            if let Some(value) = std::env::var_os(name) {
                env.push((name.into(), value));
            }
        }
    }
    // Plots go to files, never to a display: through the environment, not by rewriting code.
    if !env.iter().any(|(k, _)| k == "MPLBACKEND") {
        env.push(("MPLBACKEND".into(), "Agg".into()));
    }
    env.push(("MPLCONFIGDIR".into(), scratch.join("matplotlib").into()));
    // Caches libraries write (fontconfig's, through matplotlib's `fc-list`) go to the run's
    // scratch: under `HOME` they would land in the workspace and come back as artifacts.
    if tier != Tier::LocalUnsafe {
        env.push(("XDG_CACHE_HOME".into(), scratch.join("cache").into()));
    }
    env
}

/// The run's working directory: the caller's (kept), or a fresh private one (kept only when
/// it holds artifacts).
struct Workspace {
    path: PathBuf,
    fresh: bool,
}

impl Workspace {
    fn prepare(temp_root: &Path, given: Option<&Path>) -> std::io::Result<Workspace> {
        match given {
            Some(path) => {
                use std::os::unix::fs::DirBuilderExt;
                if !path.is_dir() {
                    std::fs::DirBuilder::new()
                        .recursive(true)
                        .mode(0o700)
                        .create(path)?;
                }
                Ok(Workspace {
                    path: std::path::absolute(path)?,
                    fresh: false,
                })
            }
            None => Ok(Workspace {
                path: artifacts::private_dir(temp_root, &sweep::run_prefix())?,
                fresh: true,
            }),
        }
    }

    /// The working directory to report: the caller's, or a fresh one that is kept (renamed
    /// out of the crash sweep's reach; `artifacts` are moved along).
    fn finish(self, keep: bool, artifacts: &mut [Artifact]) -> Option<PathBuf> {
        if !self.fresh {
            return Some(self.path);
        }
        if keep {
            let Some(kept) = sweep::kept_path(&self.path) else {
                return Some(self.path);
            };
            if std::fs::rename(&self.path, &kept).is_err() {
                return Some(self.path);
            }
            for a in artifacts {
                if let Ok(rel) = a.path.strip_prefix(&self.path) {
                    a.path = kept.join(rel);
                }
            }
            return Some(kept);
        }
        let _ = std::fs::remove_dir_all(&self.path);
        None
    }

    fn discard(self) {
        if self.fresh {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}
