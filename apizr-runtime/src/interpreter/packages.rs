//! Packages: installed into an isolated environment keyed by the requirement set, never into
//! the host interpreter, shared by every run that asks for the same set.
//!
//! * Key: sha256 of the target interpreter (path and version, or the container image), the
//!   sorted, de-duplicated specifiers and the wheelhouse. Two runs with the same set share one
//!   environment; a different set never sees it.
//! * Local tiers: a virtual environment (`python -m venv --without-pip`) filled by
//!   `uv pip install --python <venv>` when `uv` is on `PATH`, else by the host's
//!   `python -m pip --python <venv> install`. Docker tiers: a `pip install --target` directory
//!   built on the host for the image's interpreter (its version and platform), bound read-only
//!   into the container — the container needs no network and no pip.
//! * Offline: with a wheelhouse (`APIZR_WHEELHOUSE` or the store's setting), installs use
//!   `--no-index --find-links <dir>` and reach no index.
//! * Built in a temporary directory under a per-key lock and renamed into place when complete,
//!   so a concurrent or interrupted install is never used. On failure each specifier is tried
//!   alone (`--dry-run`) to report which ones fail and why; failures are remembered for
//!   [`FAILURE_TTL`], after which (or after [`PackageStore::forget_failures`]) a run retries.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;
use sha2::{Digest as _, Sha256};

use super::capture;
use super::policy::validate_package;

/// How long a failed requirement set is not retried.
pub const FAILURE_TTL: Duration = Duration::from_secs(60);
/// The longest one install may take.
pub const INSTALL_TIMEOUT: Duration = Duration::from_secs(600);
/// Kept of an installer's output per failure.
const ERROR_TAIL_BYTES: usize = 2000;

/// What happened to a run's packages (in the result).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageReport {
    /// The environment's key (its directory name).
    pub environment: String,
    pub installer: &'static str,
    /// The environment existed already.
    pub reused: bool,
    pub installed: Vec<String>,
    pub failed: Vec<PackageFailure>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageFailure {
    pub package: String,
    pub error: String,
}

/// A ready environment: what the bootstrap adds to `sys.path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ready {
    /// The environment's root (venv or target directory).
    pub root: PathBuf,
    /// Its site directory.
    pub site_dir: PathBuf,
    pub report: PackageReport,
}

/// Which interpreter the packages are for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A local interpreter (resolved path) and its `major.minor` version.
    Local { python: PathBuf, version: String },
    /// A container image's interpreter: its image ID, `major.minor` version and pip platform
    /// tags (`manylinux_2_36_x86_64`, …).
    Image {
        image: String,
        version: String,
        platforms: Vec<String>,
    },
}

/// Where environments live, and the remembered failures.
#[derive(Debug)]
pub struct PackageStore {
    root: PathBuf,
    wheelhouse: Option<PathBuf>,
    /// The interpreter that runs pip for image targets (and for local targets without uv).
    host_python: PathBuf,
    failures: Mutex<BTreeMap<String, (Instant, Vec<PackageFailure>)>>,
}

impl PackageStore {
    pub fn new(root: PathBuf, wheelhouse: Option<PathBuf>, host_python: PathBuf) -> Self {
        PackageStore {
            root,
            wheelhouse,
            host_python,
            failures: Mutex::new(BTreeMap::new()),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Retry every failed set on the next run.
    pub fn forget_failures(&self) {
        if let Ok(mut f) = self.failures.lock() {
            f.clear();
        }
    }

    /// The environment for `specs` on `target`, installing it if needed.
    pub fn ensure(&self, target: &Target, specs: &[String]) -> Result<Ready, PackageReport> {
        let specs = normalise(specs);
        let key = self.key(target, &specs);
        let installer = self.installer(target);
        let fail = |failed: Vec<PackageFailure>| PackageReport {
            environment: key.clone(),
            installer,
            reused: false,
            installed: Vec::new(),
            failed,
        };
        if let Some(bad) = specs.iter().find_map(|s| validate_package(s).err()) {
            return Err(fail(vec![PackageFailure {
                package: String::new(),
                error: bad,
            }]));
        }
        if let Some(failed) = self.recent_failure(&key) {
            return Err(fail(failed));
        }
        let dir = self.root.join(&key);
        let done = |reused| Ready {
            site_dir: site_dir(&dir, target),
            root: dir.clone(),
            report: PackageReport {
                environment: key.clone(),
                installer,
                reused,
                installed: specs.clone(),
                failed: Vec::new(),
            },
        };
        if dir.join(COMPLETE).is_file() {
            return Ok(done(true));
        }
        if let Err(e) = std::fs::create_dir_all(&self.root) {
            return Err(fail(vec![PackageFailure {
                package: String::new(),
                error: format!("package store {}: {e}", self.root.display()),
            }]));
        }
        let lock = match lock(&self.root.join(format!("{key}.lock"))) {
            Ok(l) => l,
            Err(e) => {
                return Err(fail(vec![PackageFailure {
                    package: String::new(),
                    error: format!("lock: {e}"),
                }]));
            }
        };
        if dir.join(COMPLETE).is_file() {
            drop(lock);
            return Ok(done(true));
        }
        let result = self.build(target, &specs, &dir);
        drop(lock);
        match result {
            Ok(()) => Ok(done(false)),
            Err(failed) => {
                if let Ok(mut f) = self.failures.lock() {
                    f.insert(key.clone(), (Instant::now(), failed.clone()));
                }
                Err(fail(failed))
            }
        }
    }

    fn recent_failure(&self, key: &str) -> Option<Vec<PackageFailure>> {
        let mut failures = self.failures.lock().ok()?;
        match failures.get(key) {
            Some((at, failed)) if at.elapsed() < FAILURE_TTL => Some(failed.clone()),
            Some(_) => {
                failures.remove(key);
                None
            }
            None => None,
        }
    }

    fn key(&self, target: &Target, specs: &[String]) -> String {
        let mut h = Sha256::new();
        match target {
            Target::Local { python, version } => {
                h.update(b"local\0");
                h.update(python.as_os_str().as_encoded_bytes());
                h.update(b"\0");
                h.update(version.as_bytes());
            }
            Target::Image {
                image,
                version,
                platforms,
            } => {
                h.update(b"image\0");
                h.update(image.as_bytes());
                h.update(b"\0");
                h.update(version.as_bytes());
                h.update(platforms.join(",").as_bytes());
            }
        }
        for s in specs {
            h.update(b"\0");
            h.update(s.as_bytes());
        }
        if let Some(w) = &self.wheelhouse {
            h.update(b"\0wheelhouse\0");
            h.update(w.as_os_str().as_encoded_bytes());
        }
        let digest = h.finalize();
        let hex: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
        format!("env-{hex}")
    }

    fn installer(&self, target: &Target) -> &'static str {
        match target {
            Target::Local { .. } if uv().is_some() => "uv",
            _ => "pip",
        }
    }

    fn build(
        &self,
        target: &Target,
        specs: &[String],
        dir: &Path,
    ) -> Result<(), Vec<PackageFailure>> {
        let tmp = self
            .root
            .join(format!(".tmp-{}-{}", std::process::id(), dir_name(dir)));
        let _ = std::fs::remove_dir_all(&tmp);
        let general = |error: String| {
            vec![PackageFailure {
                package: String::new(),
                error,
            }]
        };
        let outcome = (|| {
            if let Target::Local { python, .. } = target {
                let out = run(
                    Command::new(python)
                        .args(["-I", "-m", "venv", "--without-pip"])
                        .arg(&tmp),
                    INSTALL_TIMEOUT,
                );
                if !out.ok {
                    return Err(general(format!("venv: {}", out.tail)));
                }
            } else {
                std::fs::create_dir_all(&tmp).map_err(|e| general(e.to_string()))?;
            }
            let out = run(
                &mut self.install_command(target, &tmp, specs, false),
                INSTALL_TIMEOUT,
            );
            if !out.ok {
                return Err(self.diagnose(target, &tmp, specs, &out.tail));
            }
            std::fs::write(tmp.join(COMPLETE), specs.join("\n"))
                .map_err(|e| general(e.to_string()))?;
            std::fs::rename(&tmp, dir).map_err(|e| general(format!("rename: {e}")))
        })();
        if outcome.is_err() {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        outcome
    }

    /// Which specifiers fail on their own (dry runs); the whole set's error when each
    /// installs alone (a conflict between them).
    fn diagnose(
        &self,
        target: &Target,
        tmp: &Path,
        specs: &[String],
        whole: &str,
    ) -> Vec<PackageFailure> {
        let mut failed = Vec::new();
        if specs.len() > 1 {
            for spec in specs {
                let out = run(
                    &mut self.install_command(target, tmp, std::slice::from_ref(spec), true),
                    INSTALL_TIMEOUT,
                );
                if !out.ok {
                    failed.push(PackageFailure {
                        package: spec.clone(),
                        error: out.tail,
                    });
                }
            }
        }
        if failed.is_empty() {
            failed = specs
                .iter()
                .map(|s| PackageFailure {
                    package: s.clone(),
                    error: whole.to_string(),
                })
                .collect();
        }
        failed
    }

    fn install_command(
        &self,
        target: &Target,
        tmp: &Path,
        specs: &[String],
        dry_run: bool,
    ) -> Command {
        let mut cmd = match (target, uv()) {
            (Target::Local { .. }, Some(uv)) => {
                let mut c = Command::new(uv);
                c.args(["pip", "install", "--python"])
                    .arg(tmp.join("bin/python"));
                c
            }
            (Target::Local { .. }, None) => {
                let mut c = Command::new(&self.host_python);
                c.args(["-m", "pip", "--python"])
                    .arg(tmp.join("bin/python"))
                    .args(["install", "--no-input", "--disable-pip-version-check"]);
                c
            }
            (
                Target::Image {
                    version, platforms, ..
                },
                _,
            ) => {
                let mut c = Command::new(&self.host_python);
                c.args([
                    "-m",
                    "pip",
                    "install",
                    "--no-input",
                    "--disable-pip-version-check",
                ])
                .args(["--target"])
                .arg(tmp)
                .args(["--python-version", version, "--implementation", "cp"])
                .arg("--only-binary=:all:");
                for p in platforms {
                    c.args(["--platform", p]);
                }
                c
            }
        };
        if dry_run {
            cmd.arg("--dry-run");
        }
        if let Some(w) = &self.wheelhouse {
            cmd.arg("--no-index").arg("--find-links").arg(w);
        }
        // `--` ends the options: a specifier can never be read as one (they are validated too).
        cmd.arg("--").args(specs);
        cmd
    }
}

const COMPLETE: &str = ".apizr-complete";

fn dir_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Sorted, de-duplicated, trimmed specifiers (the key must not depend on their order).
pub fn normalise(specs: &[String]) -> Vec<String> {
    let mut v: Vec<String> = specs.iter().map(|s| s.trim().to_string()).collect();
    v.sort();
    v.dedup();
    v
}

/// The site directory of an environment.
fn site_dir(dir: &Path, target: &Target) -> PathBuf {
    match target {
        Target::Local { version, .. } => dir.join(format!("lib/python{version}/site-packages")),
        Target::Image { .. } => dir.to_path_buf(),
    }
}

/// `uv` on `PATH`, looked up once.
fn uv() -> Option<&'static Path> {
    static UV: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    UV.get_or_init(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|d| d.join("uv"))
            .find(|p| p.is_file())
    })
    .as_deref()
}

fn lock(path: &Path) -> std::io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)?;
    Ok(file)
}

struct Ran {
    ok: bool,
    tail: String,
}

/// Run an installer with a deadline (its whole process group is killed at the deadline) and
/// keep the tail of its output.
fn run(cmd: &mut Command, timeout: Duration) -> Ran {
    use std::os::unix::process::CommandExt;
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            return Ran {
                ok: false,
                tail: format!("cannot start {:?}: {e}", cmd.get_program()),
            };
        }
    };
    let pid = child.id();
    let out = child
        .stdout
        .take()
        .map(|s| std::thread::spawn(move || capture::drain(s, 1 << 20)));
    let err = child
        .stderr
        .take()
        .map(|s| std::thread::spawn(move || capture::drain(s, 1 << 20)));
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => break None,
        }
    };
    if let Ok(pgid) = i32::try_from(pid) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pgid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let _ = child.wait();
    let mut text = Vec::new();
    for h in [out, err].into_iter().flatten() {
        if let Ok(c) = h.join() {
            text.extend_from_slice(&c.head);
        }
    }
    let text = String::from_utf8_lossy(&text);
    let tail = text.trim();
    let start = tail.len().saturating_sub(ERROR_TAIL_BYTES);
    let mut start = start;
    while !tail.is_char_boundary(start) {
        start += 1;
    }
    let mut tail = tail.get(start..).unwrap_or_default().to_string();
    if status.is_none() {
        tail = format!("installer timed out after {} s; {tail}", timeout.as_secs());
    }
    Ran {
        ok: status.is_some_and(|s| s.success()),
        tail,
    }
}
