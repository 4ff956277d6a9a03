//! The local tiers: `local` runs the code in the local backend's sandbox under the policy's
//! restrictions (each one enforced by a named mechanism of the backend's enforcement plan, or
//! refused); `local_unsafe` runs it with the host's environment and no restriction, but still
//! as PID 1 of its own PID namespace so that a timeout kills the whole tree.
//!
//! Order: plan (refusals) → packages → workspace and snapshot → spawn ([`spawn::spawn_spec`])
//! → supervise ([`super::process`]) → artifacts (new or changed files, successful runs only)
//! → clean-up (a fresh workspace without artifacts is removed).

mod ownership;
pub(crate) mod persistent;
pub(crate) mod spawn;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

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
use crate::local::cgroup::{CallCgroups, Limits};
use crate::local::enforcement::{self, ControlReport, EnforcementPlan, IdentityPlan, ViewPlan};
use crate::local::host::{HostCapabilities, LazyHost};
use crate::local::identity::{self, IdRange};
use crate::local::launch::SANDBOX_CWD;
use crate::local::runtime::LauncherLocation;
use crate::local::seccomp;
use crate::local::spawn::{LocalSpawner, ProcessSpawner, SpawnSpec};
use crate::local::workdir::WorkDir;

/// One execution request, as every tier receives it.
pub(crate) struct Job<'a> {
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

/// The local tiers' shared state: the host probe, the seccomp programs, the interpreter.
#[derive(Debug)]
pub(crate) struct LocalTier {
    temp_root: PathBuf,
    host: LazyHost,
    spawner: Arc<dyn ProcessSpawner>,
    seccomp: OnceLock<Option<Vec<Vec<u8>>>>,
    version: OnceLock<Option<String>>,
    /// Per-call ids on a root host (`APIZR_ID_RANGE`, else the default range).
    ids: Result<IdRange, String>,
}

impl LocalTier {
    pub fn new(python: PathBuf, launcher: &LauncherLocation, temp_root: PathBuf) -> Self {
        let launcher = match launcher {
            LauncherLocation::None => None,
            LauncherLocation::CurrentExe => std::env::current_exe().ok(),
            LauncherLocation::Binary(path) => Some(path.clone()),
        };
        LocalTier {
            temp_root,
            host: LazyHost::new(python, launcher),
            spawner: Arc::new(LocalSpawner),
            seccomp: OnceLock::new(),
            version: OnceLock::new(),
            ids: IdRange::from_env(),
        }
    }

    pub(crate) fn spawner(&self) -> &dyn ProcessSpawner {
        self.spawner.as_ref()
    }

    pub(crate) fn temp_root(&self) -> &Path {
        &self.temp_root
    }

    /// What `tier` enforces on this host: the backend's plan for the strictest policy,
    /// control by control.
    pub fn support(&self, tier: Tier) -> TierSupport {
        let strict = v1_policy(
            tier,
            Some(&CapabilityPolicy::strict()),
            LOCAL_DEFAULT_TIMEOUT,
        );
        let host = self.host.for_policy(&strict);
        let plan = plan_for(tier, &strict, &host);
        measure(tier, &plan, &host)
    }

    pub fn run(&self, tier: Tier, job: &Job<'_>) -> ExecutionResult {
        let Setup {
            ctx,
            plan,
            v1,
            host,
            python,
            site_dirs,
            seccomp,
            timeout,
        } = match self.setup(tier, job) {
            Ok(s) => s,
            Err(result) => return *result,
        };
        let workspace = match Workspace::prepare(&self.temp_root, job.working_directory) {
            Ok(w) => w,
            Err(e) => {
                return outcome::skipped(ctx, format!("Execution could not start: workspace: {e}"));
            }
        };
        let before = Snapshot::take(&workspace.path);
        let request = BootRequest {
            code: job.code.to_string(),
            allowed: job.allowed.map(<[String]>::to_vec),
            seccomp,
            site_dirs,
            ..BootRequest::default()
        };
        let launched = self.launch(
            tier,
            job.policy,
            &plan,
            &v1,
            &host,
            &python,
            &workspace.path,
        );
        let started = launched.and_then(|(spec, held)| {
            let finished = process::supervise(
                self.spawner.as_ref(),
                &spec,
                request.frame(),
                job.started + timeout,
                keeps(job.policy),
            );
            let oom_killed = held.oom_killed();
            let cleanup = held.release();
            match finished.spawn_error {
                Some(error) => Err(format!("Execution could not start: {error}")),
                None => Ok(Produced {
                    stdout: finished.stdout,
                    stderr: finished.stderr,
                    exit_code: finished.exit_code,
                    exit_signal: finished.signal,
                    oom_killed,
                    timed_out: finished.timed_out,
                    cleanup,
                    ..Produced::default()
                }),
            }
        });
        let mut produced = match started {
            Ok(p) => p,
            Err(message) => {
                workspace.discard();
                return outcome::skipped(ctx, message);
            }
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
        let host = self.host.for_policy(&v1);
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
            python,
            site_dirs,
            seccomp,
            timeout,
        })
    }

    /// The process's spawn spec and what it holds (identity, cgroups, the backend's working
    /// directory, the lent workspace) until [`Held::release`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch(
        &self,
        tier: Tier,
        policy: Option<&CapabilityPolicy>,
        plan: &EnforcementPlan,
        v1: &PolicyV1,
        host: &HostCapabilities,
        python: &Path,
        workspace: &Path,
    ) -> Result<(SpawnSpec, Held), String> {
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            format!("Execution could not start: {what}: {e}")
        };
        // The run's identity is held (a kernel lock) until every process of the run is gone.
        let call_id = if plan.identity == IdentityPlan::PerCallIds {
            let range = self.ids.clone().map_err(|e| fail("identity", &e))?;
            Some(identity::allocate(range).map_err(|e| fail("identity", &e))?)
        } else {
            None
        };
        let uid = call_id.as_ref().map(|id| id.uid);
        let workdir =
            WorkDir::create(&self.temp_root).map_err(|e| fail("working directory", &e))?;
        let sandbox = plan.view == Some(ViewPlan::Sandbox);
        let mut held = Held {
            call_id,
            uid,
            workdir: Some(workdir),
            cgroups: None,
            lent: Vec::new(),
        };
        let fail_held = |held: Held, message: String| {
            let cleanup = held.release();
            if cleanup.is_empty() {
                message
            } else {
                format!("{message}; {}", cleanup.join("; "))
            }
        };
        if let (Some(uid), false, Some(workdir)) = (uid, sandbox, held.workdir.as_ref())
            && let Err(e) = workdir.chown(uid, uid)
        {
            return Err(fail_held(held, fail("working directory", &e)));
        }
        let mut read_write = vec![workspace.to_path_buf()];
        read_write.extend(
            policy
                .and_then(|p| p.filesystem_write_roots.clone())
                .unwrap_or_default(),
        );
        // Lent to the run's uid for the run (the workspace, and the write roots).
        if let Some(uid) = uid {
            for dir in &read_write {
                match ownership::lend(dir, uid) {
                    Ok(l) => held.lent.push(l),
                    Err(e) => return Err(fail_held(held, fail("workspace", &e))),
                }
            }
        }
        if plan.pids.is_some() || plan.memory.is_some() {
            let limits = Limits {
                pids: plan.pids.map(|p| p.saturating_add(1)),
                memory: plan.memory,
            };
            let (pids, memory) = (host.pids_hierarchy(), host.memory_hierarchy());
            match CallCgroups::create(pids.as_ref(), memory.as_ref(), limits) {
                Ok(groups) => held.cgroups = Some(groups),
                Err(e) => return Err(fail_held(held, fail("cgroup", &e))),
            }
        }
        let Some(workdir) = held.workdir.as_ref() else {
            return Err(fail_held(held, fail("working directory", &"missing")));
        };
        let tmp = if sandbox {
            PathBuf::from(SANDBOX_CWD)
        } else {
            workdir.tmp()
        };
        let spec = spawn::spawn_spec(
            plan,
            spawn::Inputs {
                python: python.to_path_buf(),
                args: bootstrap::python_args(),
                host,
                workdir,
                uid,
                cgroup_procs: held
                    .cgroups
                    .as_ref()
                    .map(CallCgroups::procs_files)
                    .unwrap_or_default(),
                read_roots: &v1.filesystem.read_roots,
                read_write: &read_write,
                cwd: workspace.to_path_buf(),
                env: environment(tier, policy, workspace, &tmp),
            },
        );
        match spec {
            Ok(spec) => Ok((spec, held)),
            Err(e) => Err(fail_held(held, fail("launch", &e))),
        }
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
    pub python: PathBuf,
    pub site_dirs: Vec<String>,
    pub seccomp: Option<Vec<Vec<u8>>>,
    pub timeout: Duration,
}

/// What a started process holds on the host until every process of it is gone.
pub(crate) struct Held {
    call_id: Option<identity::CallId>,
    pub uid: Option<u32>,
    workdir: Option<WorkDir>,
    cgroups: Option<CallCgroups>,
    lent: Vec<ownership::Lent>,
}

impl Held {
    /// Whether the run's memory cgroup recorded an OOM kill (read before [`Held::release`]).
    pub fn oom_killed(&self) -> bool {
        self.cgroups.as_ref().is_some_and(CallCgroups::memory_hit)
    }

    /// Destroy the cgroups, remove the backend's directory, give the workspace back, free
    /// the identity. Returns what could not be cleaned up.
    pub fn release(mut self) -> Vec<String> {
        let mut cleanup = Vec::new();
        if let Some(groups) = self.cgroups.take()
            && let Err(failed) = groups.destroy()
        {
            cleanup.extend(failed);
        }
        if let Some(workdir) = self.workdir.take()
            && let Err(e) = workdir.remove()
        {
            cleanup.push(format!("working directory: {e}"));
        }
        for l in std::mem::take(&mut self.lent) {
            if let Err(e) = l.give_back() {
                cleanup.push(e);
            }
        }
        drop(self.call_id.take());
        cleanup
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
