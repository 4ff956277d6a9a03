//! Helpers for the interpreter tests: real CPython through the real launcher, a private
//! temp root per test (removed by [`Scope`]), environments by tier name.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use apizr_runtime::LauncherLocation;
use apizr_runtime::interpreter::{
    CapabilityPolicy, Environment, EnvironmentOptions, ExecutionResult, Interpreter,
    InterpreterConfig, NoPrestart,
};
use apizr_runtime::local::prestart::PrestartConfig;

static SEQ: AtomicU64 = AtomicU64::new(0);

/// A private directory for one test, removed when dropped.
pub struct Scope {
    pub root: PathBuf,
}

impl Scope {
    pub fn new(tag: &str) -> Scope {
        let root = std::env::temp_dir().join(format!(
            "apizr-interp-test-{}-{}-{tag}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&root).unwrap();
        Scope { root }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    pub fn config(&self) -> InterpreterConfig {
        InterpreterConfig {
            launcher: LauncherLocation::Binary(PathBuf::from(env!("CARGO_BIN_EXE_apizr-launch"))),
            temp_root: self.root.join("tmp"),
            package_dir: self.root.join("packages"),
            ..InterpreterConfig::default()
        }
    }

    pub fn interpreter(&self) -> Interpreter {
        std::fs::create_dir_all(self.root.join("tmp")).unwrap();
        Interpreter::new(self.config())
    }

    /// An environment of `tier`. In the pool pass (`APIZR_TEST_V1_PRESTART=1`, CI's second
    /// run of the hostile suites) a `local` environment without a working directory takes
    /// every one-shot run from the pre-start pool (waiting for a process rather than going
    /// cold), so the attacks are run against pre-started processes.
    pub fn env(&self, tier: &str, options: EnvironmentOptions) -> Environment {
        let mut env = self.interpreter().environment(tier, options).unwrap();
        if pool_pass() && tier == "local" && env.working_directory().is_none() {
            // Write roots are lent to one run's uid at a time: such runs stay cold.
            match env.start_prestart(waiting_pool()) {
                Ok(()) | Err(NoPrestart::WriteRoots) => {}
                Err(e) => panic!("the pool did not start: {e}"),
            }
        }
        env
    }

    /// Nothing of a run is left in the temp root.
    pub fn assert_clean(&self) {
        let left: Vec<_> = std::fs::read_dir(self.root.join("tmp"))
            .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// CI's pool pass of the hostile suites.
pub fn pool_pass() -> bool {
    std::env::var_os("APIZR_TEST_V1_PRESTART").is_some_and(|v| v == "1")
}

/// A pool whose runs wait for a pre-started process instead of going cold (tests).
pub fn waiting_pool() -> PrestartConfig {
    PrestartConfig {
        wait: Some(std::time::Duration::from_secs(30)),
        ..PrestartConfig::with_size(1)
    }
}

/// `r` ran in the process the pass promises: pre-started in the pool pass, else cold.
pub fn assert_process(r: &ExecutionResult) {
    assert_process_is(r, pool_pass());
}

/// `r` ran in a pre-started process (`pooled`), else in a cold one.
pub fn assert_process_is(r: &ExecutionResult, pooled: bool) {
    let want = if pooled { "prestarted" } else { "cold" };
    let report = serde_json::to_value(r.enforcement.as_ref().unwrap()).unwrap();
    assert_eq!(report["process"], want, "{}", show(r));
}

pub fn with_policy(policy: CapabilityPolicy) -> EnvironmentOptions {
    EnvironmentOptions {
        policy: Some(policy),
        ..EnvironmentOptions::default()
    }
}

pub fn in_dir(dir: &Path) -> EnvironmentOptions {
    EnvironmentOptions {
        working_directory: Some(dir.to_path_buf()),
        ..EnvironmentOptions::default()
    }
}

/// The result, printed when an assertion about it fails.
pub fn show(r: &ExecutionResult) -> String {
    r.to_json()
}

/// Whether a process with this PID exists.
pub fn alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false)
}
