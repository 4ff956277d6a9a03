//! Host capabilities: what this machine can enforce, probed once and cached.
//!
//! Namespaces, Landlock and seccomp are probed inside a launcher process (the only place that
//! is guaranteed single-threaded); the cgroup hierarchy and the interpreter path are probed
//! here. `apizr doctor` prints this structure; the enforcement planner reads it to decide,
//! per control, "enforced by X" or "refused".

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Serialize;

use crate::cgroup::{self, PidsHierarchy};
use crate::launcher::{LAUNCH_ARG, ProbeReport};

/// The probed facts. Every field is a fact observed on this host, not an assumption.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HostCapabilities {
    /// The real interpreter (pyenv shims resolved), if one answered.
    pub python: Option<PathBuf>,
    /// The launcher used for enforcement, if configured and it answered the probe.
    pub launcher: Option<PathBuf>,
    pub is_root: bool,
    /// Namespaces needed a user namespace (non-root host).
    pub user_namespace: bool,
    pub network_namespace: bool,
    pub pid_namespace: bool,
    /// Kernel Landlock ABI, 0 when unavailable.
    pub landlock_abi: u32,
    pub landlock_fully_enforced: bool,
    pub seccomp_filter: bool,
    /// `v1` / `v2` and the directory per-call `pids` groups are created in.
    pub cgroup_pids: Option<CgroupPids>,
    /// Probe errors worth showing in `apizr doctor`.
    pub notes: Vec<String>,
}

/// Serializable view of a [`PidsHierarchy`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CgroupPids {
    pub version: &'static str,
    pub base: PathBuf,
}

impl HostCapabilities {
    /// Probe with the given interpreter command (e.g. `python3`) and optional launcher.
    pub fn probe(python: &Path, launcher: Option<&Path>) -> HostCapabilities {
        let mut caps = HostCapabilities {
            python: resolve_python(python),
            is_root: nix::unistd::Uid::effective().is_root(),
            ..HostCapabilities::default()
        };
        caps.seccomp_filter = std::fs::read_to_string("/proc/self/status")
            .map(|s| s.contains("Seccomp_filters:"))
            .unwrap_or(false);
        if caps.python.is_none() {
            caps.notes
                .push(format!("python: {} did not answer", python.display()));
        }
        if let Some(launcher) = launcher {
            match run_probe(launcher) {
                Ok(report) => {
                    caps.launcher = Some(launcher.to_path_buf());
                    caps.user_namespace = report.user_ns;
                    caps.network_namespace = report.net_ns;
                    caps.pid_namespace = report.pid_ns;
                    caps.landlock_abi = report.landlock_abi;
                    caps.landlock_fully_enforced = report.landlock_full;
                    caps.notes.extend(report.errors);
                }
                Err(e) => caps.notes.push(format!("launcher probe: {e}")),
            }
            caps.cgroup_pids = cgroup::probe_pids().map(|h| CgroupPids {
                version: h.version,
                base: h.base,
            });
        } else {
            caps.notes
                .push("no launcher configured: only the reference controls apply".into());
        }
        caps
    }

    pub(crate) fn pids_hierarchy(&self) -> Option<PidsHierarchy> {
        self.cgroup_pids.as_ref().map(|c| PidsHierarchy {
            version: c.version,
            base: c.base.clone(),
        })
    }
}

fn resolve_python(python: &Path) -> Option<PathBuf> {
    let out = Command::new(python)
        .args([
            "-I",
            "-S",
            "-c",
            "import sys; sys.stdout.write(sys.executable)",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?);
    (out.status.success() && path.is_absolute()).then_some(path)
}

fn run_probe(launcher: &Path) -> Result<ProbeReport, String> {
    let out = Command::new(launcher)
        .args([LAUNCH_ARG, "probe"])
        .env_clear()
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("exit {}", out.status));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
}
