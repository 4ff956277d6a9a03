//! [`Interpreter`]: the shared state of every tier (host probe, engine connection, package
//! store) and the factory of [`Environment`]s — one tier, one policy, one import allowlist,
//! one working directory — that execute code.
//!
//! Order of one execution: size → import check (the `static` tier stops here) → the tier
//! (refusals, packages, run). The import check parses with `apizr-inspect`'s parser on a large
//! stack; code that does not parse is still run by the executing tiers (the interpreter then
//! reports the `SyntaxError`, as mellea's tiers do), with the in-worker guard in place.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use apizr_inspect::imports::{self, ImportKind};
use apizr_inspect::{InspectError, on_inspect_stack};
use serde_json::json;

use super::docker::{DockerConfig, DockerTier};
use super::enforcement::{EnforcementReport, TierSupport};
use super::local::{Job, LocalTier};
use super::packages::PackageStore;
use super::policy::{CapabilityPolicy, PolicyError, validate_package};
use super::result::ExecutionResult;
use super::session::{Session, SessionError, SessionOptions, sweep};
use super::tier::{Tier, UnknownTier};
use crate::audit::AuditSink;
use crate::local::prestart::{PrestartConfig, PrestartStats};
use crate::local::runtime::LauncherLocation;

/// The largest code an environment accepts (the inspector's source limit).
pub const MAX_CODE_BYTES: usize = 16 * 1024 * 1024;

/// How the interpreter is set up (nothing here is part of a result).
#[derive(Debug, Clone)]
pub struct InterpreterConfig {
    /// The local tiers' interpreter command (`$APIZR_PYTHON`, else `python3`).
    pub python: PathBuf,
    /// The local sandbox's launcher (the current executable by default).
    pub launcher: LauncherLocation,
    /// Parent of workspaces and scratch directories.
    pub temp_root: PathBuf,
    /// Where package environments are kept (`<apizr cache>/interpreter-packages`).
    pub package_dir: PathBuf,
    /// Install packages from this directory only (`--no-index --find-links`);
    /// `$APIZR_WHEELHOUSE` by default.
    pub wheelhouse: Option<PathBuf>,
    pub docker: DockerConfig,
}

impl Default for InterpreterConfig {
    fn default() -> Self {
        let temp_root = std::env::temp_dir();
        InterpreterConfig {
            python: std::env::var_os("APIZR_PYTHON")
                .filter(|p| !p.is_empty())
                .map_or_else(|| PathBuf::from("python3"), PathBuf::from),
            launcher: LauncherLocation::CurrentExe,
            package_dir: crate::local::host::cache_dir()
                .unwrap_or_else(|| temp_root.join("apizr-cache"))
                .join("interpreter-packages"),
            temp_root,
            wheelhouse: std::env::var_os("APIZR_WHEELHOUSE")
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
            docker: DockerConfig::default(),
        }
    }
}

/// Why an environment could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvironmentError {
    #[error(transparent)]
    Tier(#[from] UnknownTier),
    #[error("policy: {0}")]
    Policy(#[from] PolicyError),
    #[error("packages[{index}]: {message}")]
    Package { index: usize, message: String },
    #[error("allowed_imports[{index}]: expected a top-level module name, got {name:?}")]
    AllowedImport { index: usize, name: String },
}

/// What an environment is made with (mellea's `make_execution_environment` arguments).
#[derive(Debug, Clone, Default)]
pub struct EnvironmentOptions {
    /// `None`: the tier's default (`local`/`docker` presets; no policy on unsafe tiers).
    pub policy: Option<CapabilityPolicy>,
    /// Top-level modules the code may import (`None`: any; `[]`: none).
    pub allowed_imports: Option<Vec<String>>,
    /// Local tiers: the working directory (kept; artifacts are reported in place).
    /// Docker tiers: where artifacts are copied to. `None`: a fresh private directory, kept
    /// only when it holds artifacts.
    pub working_directory: Option<PathBuf>,
    /// Packages to install (merged into the policy, as mellea's `python_tool(packages=…)`).
    pub packages: Vec<String>,
}

/// The shared state of all tiers. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Interpreter {
    inner: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    local: LocalTier,
    docker: DockerTier,
    store: PackageStore,
    /// The crash sweep of the temp root has been started (once, at the first run).
    swept: std::sync::Once,
}

impl Interpreter {
    pub fn new(config: InterpreterConfig) -> Self {
        let host_python = config.python.clone();
        Interpreter {
            inner: Arc::new(Shared {
                local: LocalTier::new(config.python, &config.launcher, config.temp_root.clone()),
                docker: DockerTier::new(config.docker, config.temp_root),
                store: PackageStore::new(config.package_dir, config.wheelhouse, host_python),
                swept: std::sync::Once::new(),
            }),
        }
    }

    /// The environment for the tier named `tier` (mellea's `make_execution_environment`).
    pub fn environment(
        &self,
        tier: &str,
        options: EnvironmentOptions,
    ) -> Result<Environment, EnvironmentError> {
        let tier = Tier::parse(tier)?;
        for (index, spec) in options.packages.iter().enumerate() {
            validate_package(spec)
                .map_err(|message| EnvironmentError::Package { index, message })?;
        }
        for (index, name) in options.allowed_imports.iter().flatten().enumerate() {
            if !is_module_name(name) {
                return Err(EnvironmentError::AllowedImport {
                    index,
                    name: name.clone(),
                });
            }
        }
        let policy = match (tier, options.policy) {
            (Tier::Static, _) => None,
            (_, Some(p)) => Some(p.with_packages(&options.packages)),
            (Tier::Local, None) => Some(CapabilityPolicy::local().with_packages(&options.packages)),
            (Tier::Docker, None) => {
                Some(CapabilityPolicy::docker().with_packages(&options.packages))
            }
            (_, None) => None,
        };
        if let Some(p) = &policy {
            p.validate()?;
        }
        let packages = match &policy {
            Some(p) => p.packages.clone(),
            None if tier.executes() => options.packages,
            None => Vec::new(),
        };
        Ok(Environment {
            tier,
            policy,
            allowed: options.allowed_imports,
            working_directory: options.working_directory,
            packages,
            interpreter: self.clone(),
            audit: None,
            prestart: false,
        })
    }

    /// What `tier` enforces on this host (measured).
    pub fn support(&self, tier: Tier) -> TierSupport {
        match tier {
            Tier::Static => TierSupport::unavailable(
                tier,
                "the static tier never executes code",
                super::enforcement::base_features(tier),
            ),
            Tier::LocalUnsafe | Tier::Local => self.inner.local.support(tier),
            Tier::DockerUnsafe | Tier::Docker => self.inner.docker.support(tier),
        }
    }

    /// The compatibility matrix of this host: every tier's support.
    pub fn compatibility_matrix(&self) -> Vec<TierSupport> {
        Tier::ALL.into_iter().map(|t| self.support(t)).collect()
    }

    /// The package store (forget failures to retry at once).
    pub fn packages(&self) -> &PackageStore {
        &self.inner.store
    }
}

/// One tier with one policy: executes code.
#[derive(Debug, Clone)]
pub struct Environment {
    tier: Tier,
    policy: Option<CapabilityPolicy>,
    allowed: Option<Vec<String>>,
    working_directory: Option<PathBuf>,
    packages: Vec<String>,
    interpreter: Interpreter,
    audit: Option<Arc<dyn AuditSink>>,
    /// One-shot runs take pre-started processes ([`Environment::start_prestart`]).
    prestart: bool,
}

/// Why an environment's runs cannot come from pre-started processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NoPrestart {
    #[error("size 0")]
    Off,
    #[error("only the `local` tier pre-starts its processes")]
    Tier,
    #[error("runs share the caller's working directory (a pre-started process has its own)")]
    WorkingDirectory,
    #[error(
        "the policy has write roots (each run lends them to its own uid, so two processes \
         cannot hold them ahead)"
    )]
    WriteRoots,
    #[error("the pool's thread could not start")]
    Thread,
}

impl Environment {
    /// Serve this environment's one-shot runs from pre-started processes (servers): each is
    /// started ahead through the same implementation as a cold run (identity, workspace,
    /// cgroups, launcher namespaces, Landlock, seccomp, the interpreter waiting for its
    /// request) and runs exactly one code. Sessions keep their own long-lived process. Only
    /// the `local` tier, with a fresh workspace per run.
    pub fn start_prestart(&mut self, config: PrestartConfig) -> Result<(), NoPrestart> {
        if config.size == 0 {
            return Err(NoPrestart::Off);
        }
        if self.tier != Tier::Local {
            return Err(NoPrestart::Tier);
        }
        if self.working_directory.is_some() {
            return Err(NoPrestart::WorkingDirectory);
        }
        let write_roots = self
            .policy
            .as_ref()
            .and_then(|p| p.filesystem_write_roots.as_ref());
        if write_roots.is_some_and(|roots| !roots.is_empty()) {
            return Err(NoPrestart::WriteRoots);
        }
        if !self.interpreter.inner.local.start_prestart(config) {
            return Err(NoPrestart::Thread);
        }
        self.prestart = true;
        Ok(())
    }

    /// The pre-start pool's counters (`None`: no pool).
    pub fn prestart_stats(&self) -> Option<PrestartStats> {
        self.prestart
            .then(|| self.interpreter.inner.local.prestart_stats())
            .flatten()
    }

    /// Write one audit record per run (and per session call) to `sink` ([`super::audit`]).
    #[must_use]
    pub fn with_audit(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.audit = Some(sink);
        self
    }

    /// Record `result`, a run of `code`, when an audit sink is set. Returns why the record
    /// could not be written.
    pub(crate) fn audited(&self, code: &str, result: ExecutionResult) -> ExecutionResult {
        if let Some(sink) = &self.audit
            && let Err(e) = sink.record(&super::audit::record(code, self.policy(), &result))
        {
            let mut result = result;
            result
                .cleanup
                .push(format!("audit record not written: {e}"));
            return result;
        }
        result
    }

    pub fn tier(&self) -> Tier {
        self.tier
    }

    /// The policy applied (`None`: unsafe tiers without one, and `static`).
    pub fn policy(&self) -> Option<&CapabilityPolicy> {
        self.policy.as_ref()
    }

    pub fn allowed_imports(&self) -> Option<&[String]> {
        self.allowed.as_deref()
    }

    pub fn working_directory(&self) -> Option<&std::path::Path> {
        self.working_directory.as_deref()
    }

    /// What this tier enforces on this host.
    pub fn support(&self) -> TierSupport {
        self.interpreter.support(self.tier)
    }

    /// Open a persistent session of this tier and policy (local tiers; see [`Session`]).
    pub fn session(&self, options: SessionOptions) -> Result<Session, SessionError> {
        Session::open(self, options)
    }

    /// What a session needs of the shared state.
    pub(crate) fn parts(&self) -> Parts<'_> {
        Parts {
            local: &self.interpreter.inner.local,
            docker: &self.interpreter.inner.docker,
            store: &self.interpreter.inner.store,
            packages: &self.packages,
            temp_root: self.interpreter.inner.local.temp_root(),
        }
    }

    /// Run `code` (or, in the `static` tier, only check it). Never panics; every failure is
    /// a result.
    pub fn execute(&self, code: &str) -> ExecutionResult {
        let result = self.run(code);
        self.audited(code, result)
    }

    fn run(&self, code: &str) -> ExecutionResult {
        let started = Instant::now();
        if let Some(result) = self.check(code, started) {
            return result;
        }
        // Directories of runs and sessions whose host died (`session/sweep.rs`): once per
        // interpreter, off the run's path.
        self.interpreter.inner.swept.call_once(|| {
            let root = self.interpreter.inner.local.temp_root().to_path_buf();
            std::thread::spawn(move || sweep::sweep(&root));
        });
        let job = Job {
            prestart: self.prestart,
            code,
            allowed: self.allowed.as_deref(),
            policy: self.policy.as_ref(),
            packages: &self.packages,
            working_directory: self.working_directory.as_deref(),
            store: &self.interpreter.inner.store,
            started,
        };
        match self.tier {
            Tier::Static => unreachable_static(started),
            Tier::LocalUnsafe | Tier::Local => self.interpreter.inner.local.run(self.tier, &job),
            Tier::DockerUnsafe | Tier::Docker => self.interpreter.inner.docker.run(self.tier, &job),
        }
    }

    /// The import check; `Some` ends the execution here (refused, or the `static` tier).
    pub(crate) fn check(&self, code: &str, started: Instant) -> Option<ExecutionResult> {
        // A result that ends here still says what this tier enforces on this host for this
        // policy (the probed report), like every result of an executing run.
        let finish = |mut r: ExecutionResult| {
            r.enforcement = Some(EnforcementReport::assess(
                &self.support(),
                self.policy.as_ref(),
            ));
            r.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            Some(r)
        };
        if code.len() > MAX_CODE_BYTES {
            return finish(ExecutionResult::skipped(
                self.tier,
                format!(
                    "The code is {} bytes; the limit is {MAX_CODE_BYTES} bytes.",
                    code.len()
                ),
            ));
        }
        if self.tier.executes() && self.allowed.is_none() {
            return None;
        }
        let scanned = on_inspect_stack(|| imports::scan_imports(code)).unwrap_or_else(|e| {
            Err(InspectError::StructureLimit {
                message: e.to_string(),
            })
        });
        let refs = match scanned {
            Ok(refs) => refs,
            Err(error) if self.tier == Tier::Static => {
                let mut r = ExecutionResult::skipped(self.tier, "Parse failed.");
                r.analysis_result = Some(syntax_error(&error));
                return finish(r);
            }
            // Executing tiers run it: the interpreter reports the error, the guard stays.
            Err(_) => return None,
        };
        let listed: Vec<_> = refs
            .iter()
            .map(|r| {
                json!({
                    "module": r.module,
                    "line": r.position.line,
                    "column": r.position.column,
                    "kind": kind_name(r.kind),
                })
            })
            .collect();
        if let Some(allowed) = &self.allowed {
            let bad = imports::unauthorized(&refs, allowed);
            if !bad.is_empty() {
                let mut r = ExecutionResult::skipped(
                    self.tier,
                    format!("Unauthorized imports detected: {}", bad.join(", ")),
                );
                r.analysis_result = Some(json!({ "imports": listed, "unauthorized": bad }));
                return finish(r);
            }
        }
        if self.tier != Tier::Static {
            return None;
        }
        let mut r = ExecutionResult::skipped(
            self.tier,
            "Static analysis only: the code parsed and its imports were checked; it was not executed.",
        );
        r.success = true;
        r.analysis_result = Some(json!({ "imports": listed }));
        finish(r)
    }
}

/// The shared state a session starts from.
pub(crate) struct Parts<'a> {
    pub local: &'a LocalTier,
    pub docker: &'a DockerTier,
    pub store: &'a PackageStore,
    pub packages: &'a [String],
    pub temp_root: &'a std::path::Path,
}

/// The static tier never reaches the executing branch ([`Environment::check`] answers it).
fn unreachable_static(started: Instant) -> ExecutionResult {
    let mut r = ExecutionResult::skipped(Tier::Static, "the static tier never executes code");
    r.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    r
}

fn kind_name(kind: ImportKind) -> &'static str {
    match kind {
        ImportKind::Import => "import",
        ImportKind::From => "from",
        ImportKind::RelativeName => "relative_name",
        ImportKind::Call => "call",
        ImportKind::Dynamic => "dynamic",
    }
}

fn syntax_error(error: &InspectError) -> serde_json::Value {
    match error {
        InspectError::Syntax {
            message,
            position,
            line_text,
        } => json!({
            "syntax_error": {
                "message": message,
                "line": position.line,
                "column": position.column,
                "text": line_text,
            }
        }),
        other => json!({ "syntax_error": { "message": other.to_string() } }),
    }
}

/// A dotted Python module name (`os`, `os.path`).
fn is_module_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            let mut chars = part.chars();
            chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
                && chars.all(|c| c == '_' || c.is_alphanumeric())
        })
}
