//! Host capabilities: what this machine can enforce, observed once per process and, where
//! observing is slow, cached on disk.
//!
//! Namespaces and Landlock are probed inside a launcher process (the only place that is
//! guaranteed single-threaded); seccomp, cgroups and the interpreter path are probed here.
//! `apizr doctor` prints this structure; the enforcement planner reads it to decide, per
//! control, "enforced by X" or "refused".
//!
//! Start-up cost matters (`apizr execute` is one process per call), so [`LazyHost`] observes
//! each fact only when a call needs it: the interpreter always ([`python`]: in-process for an
//! ELF binary, a disk cache for script shims), the launcher probe whenever a launcher is
//! configured (every call uses it: the PID namespace is what stops detached descendants; the
//! answer is cached on disk, keyed by everything it depends on — see [`probe_key`]), and the
//! cgroup hierarchy only for a policy with `resources.pids`.

mod cache;
mod python;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use apizr_ir::policy::PolicyV1;
use serde::Serialize;

use crate::local::cgroup::{self, Hierarchy};
use crate::local::launcher::{LAUNCH_ARG, ProbeReport};

/// The probed facts. Every field is a fact observed on this host, not an assumption.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HostCapabilities {
    /// The real interpreter (pyenv shims resolved), if one answered.
    pub python: Option<PathBuf>,
    /// How [`HostCapabilities::python`] was found.
    pub python_resolution: Option<&'static str>,
    /// The launcher used for enforcement, if configured and it answered the probe.
    pub launcher: Option<PathBuf>,
    /// Whether the launcher facts came from the on-disk cache.
    pub launcher_probe_cached: bool,
    pub is_root: bool,
    /// Namespaces needed a user namespace (non-root host).
    pub user_namespace: bool,
    pub network_namespace: bool,
    pub pid_namespace: bool,
    /// Kernel Landlock ABI, 0 when unavailable.
    pub landlock_abi: u32,
    pub landlock_fully_enforced: bool,
    pub seccomp_filter: bool,
    /// New IPC and UTS namespaces.
    pub ipc_uts_namespace: bool,
    /// A private mount namespace (fresh `/proc`, the sandbox's private root).
    pub mount_namespace: bool,
    /// A fresh `/proc` can be mounted for a call's PID namespace (not inside a container
    /// engine that masks `/proc` paths).
    pub fresh_proc: bool,
    /// A root launcher holds `CAP_SETUID`, `CAP_SETGID` and `CAP_SETPCAP`, so it can drop to a
    /// per-call uid with an empty bounding set.
    pub can_switch_ids: bool,
    /// The interpreter's installation prefixes (what a private root must show).
    pub python_prefixes: Vec<PathBuf>,
    /// `v1` / `v2` and the directory per-call `pids` groups are created in.
    pub cgroup_pids: Option<CgroupPids>,
    /// A writable cgroup `memory` hierarchy (per-call memory limit; counts memfd, shared
    /// memory and tmpfs pages, which `RLIMIT_AS` does not).
    pub cgroup_memory: Option<CgroupPids>,
    /// Probe errors worth showing in `apizr doctor`.
    pub notes: Vec<String>,
}

/// Serializable view of a cgroup [`Hierarchy`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CgroupPids {
    pub version: &'static str,
    pub base: PathBuf,
}

impl CgroupPids {
    fn hierarchy(&self) -> Hierarchy {
        Hierarchy {
            version: self.version,
            base: self.base.clone(),
        }
    }
}

/// The directory apizr caches in (`$APIZR_CACHE_DIR`, else `$XDG_CACHE_HOME/apizr`, else
/// `~/.cache/apizr`), if one can be named; nothing is created.
pub fn cache_dir() -> Option<PathBuf> {
    cache::dir()
}

/// Whether cached answers may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// Use the on-disk cache (what calls do).
    Cached,
    /// Observe everything again and rewrite the cache (`apizr doctor`).
    Refresh,
}

impl HostCapabilities {
    /// Probe everything with the given interpreter command (e.g. `python3`) and optional
    /// launcher.
    pub fn probe(python: &Path, launcher: Option<&Path>) -> HostCapabilities {
        Self::probe_with(python, launcher, Freshness::Cached)
    }

    /// [`HostCapabilities::probe`], choosing whether cached answers may be used.
    pub fn probe_with(
        python: &Path,
        launcher: Option<&Path>,
        freshness: Freshness,
    ) -> HostCapabilities {
        let host = LazyHost::new(python.to_path_buf(), launcher.map(Path::to_path_buf));
        host.freshness_override(freshness).full().clone()
    }

    pub(crate) fn pids_hierarchy(&self) -> Option<Hierarchy> {
        self.cgroup_pids.as_ref().map(CgroupPids::hierarchy)
    }

    pub(crate) fn memory_hierarchy(&self) -> Option<Hierarchy> {
        self.cgroup_memory.as_ref().map(CgroupPids::hierarchy)
    }
}

/// Host facts observed on first need, each at most once.
#[derive(Debug)]
pub struct LazyHost {
    python_cmd: PathBuf,
    launcher: Option<PathBuf>,
    freshness: Freshness,
    python: OnceLock<(Option<PathBuf>, Option<&'static str>)>,
    prefixes: OnceLock<Vec<PathBuf>>,
    worker: OnceLock<Option<std::sync::Arc<Vec<u8>>>>,
    mechanisms: OnceLock<(Result<ProbeReport, String>, bool)>,
    cgroups: OnceLock<(Option<CgroupPids>, Option<CgroupPids>)>,
    full: OnceLock<HostCapabilities>,
}

impl LazyHost {
    pub fn new(python_cmd: PathBuf, launcher: Option<PathBuf>) -> LazyHost {
        LazyHost {
            python_cmd,
            launcher,
            freshness: Freshness::Cached,
            python: OnceLock::new(),
            prefixes: OnceLock::new(),
            worker: OnceLock::new(),
            mechanisms: OnceLock::new(),
            cgroups: OnceLock::new(),
            full: OnceLock::new(),
        }
    }

    fn freshness_override(mut self, freshness: Freshness) -> LazyHost {
        self.freshness = freshness;
        self
    }

    /// Every fact, observed once.
    pub fn full(&self) -> &HostCapabilities {
        self.full.get_or_init(|| self.assemble(true))
    }

    /// The facts `policy` needs (the full set once it has been observed).
    pub fn for_policy(&self, policy: &PolicyV1) -> HostCapabilities {
        if let Some(full) = self.full.get() {
            return full.clone();
        }
        let cgroups = policy
            .resources
            .is_some_and(|r| r.pids.is_some() || r.memory_bytes.is_some());
        self.assemble(cgroups)
    }

    /// The worker compiled by this host's interpreter (`None`: run it from source).
    pub fn compiled_worker(&self) -> Option<std::sync::Arc<Vec<u8>>> {
        self.worker
            .get_or_init(|| {
                let python = self.full_python()?;
                let refresh = self.freshness == Freshness::Refresh;
                python::compiled_worker(&python, refresh).map(std::sync::Arc::new)
            })
            .clone()
    }

    fn full_python(&self) -> Option<PathBuf> {
        self.python_entry().0
    }

    /// The resolved interpreter and how it was found, observed once.
    fn python_entry(&self) -> (Option<PathBuf>, Option<&'static str>) {
        let refresh = self.freshness == Freshness::Refresh;
        self.python
            .get_or_init(|| match python::resolve(&self.python_cmd, refresh) {
                Some((path, via)) => (Some(path), Some(via.describe())),
                None => (None, None),
            })
            .clone()
    }

    /// Drop the cached launcher facts on disk: the launcher failed its set-up, so the next
    /// process probes again (this one keeps its answer; its calls keep failing closed).
    pub fn invalidate_launcher_probe(&self) {
        if let Some(launcher) = &self.launcher {
            cache::remove("probe", &probe_key(launcher));
        }
    }

    fn assemble(&self, with_cgroups: bool) -> HostCapabilities {
        let refresh = self.freshness == Freshness::Refresh;
        let (python, via) = self.python_entry();
        let mut caps = HostCapabilities {
            python,
            python_resolution: via,
            is_root: nix::unistd::Uid::effective().is_root(),
            seccomp_filter: seccomp_available(),
            ..HostCapabilities::default()
        };
        if caps.python.is_none() {
            caps.notes.push(format!(
                "python: {} did not answer",
                self.python_cmd.display()
            ));
        }
        let Some(launcher) = &self.launcher else {
            caps.notes
                .push("no launcher configured: only the reference controls apply".into());
            return caps;
        };
        let (probe, cached) = self
            .mechanisms
            .get_or_init(|| cached_probe(launcher, refresh));
        match probe {
            Ok(report) => {
                caps.launcher = Some(launcher.clone());
                caps.launcher_probe_cached = *cached;
                caps.user_namespace = report.user_ns;
                caps.network_namespace = report.net_ns;
                caps.pid_namespace = report.pid_ns;
                caps.landlock_abi = report.landlock_abi;
                caps.landlock_fully_enforced = report.landlock_full;
                caps.ipc_uts_namespace = report.ipc_uts_ns;
                caps.mount_namespace = report.mount_ns;
                caps.fresh_proc = report.fresh_proc;
                // CAP_SETGID (6), CAP_SETUID (7), CAP_SETPCAP (8).
                caps.can_switch_ids =
                    report.is_root && report.cap_eff & 0b1_1100_0000 == 0b1_1100_0000;
                caps.notes.extend(report.errors.iter().cloned());
            }
            Err(e) => caps.notes.push(format!("launcher probe: {e}")),
        }
        if let Some(python) = &caps.python {
            caps.python_prefixes = self
                .prefixes
                .get_or_init(|| python::prefixes(python, refresh).unwrap_or_default())
                .clone();
            if caps.python_prefixes.is_empty() {
                caps.notes.push(
                    "python: installation prefixes unknown (sys.prefix did not answer)".into(),
                );
            }
        }
        if with_cgroups {
            let (pids, memory) = self
                .cgroups
                .get_or_init(|| {
                    let seen = |h: Hierarchy| CgroupPids {
                        version: h.version,
                        base: h.base,
                    };
                    (
                        cgroup::probe("pids").map(seen),
                        cgroup::probe("memory").map(seen),
                    )
                })
                .clone();
            caps.cgroup_pids = pids;
            caps.cgroup_memory = memory;
        }
        caps
    }
}

/// Seccomp filters are supported when the kernel reports the field (the filter itself is
/// installed by the worker, so there is nothing to spawn).
fn seccomp_available() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| s.contains("Seccomp_filters:"))
        .unwrap_or(false)
}

/// The launcher probe, from the disk cache when its key still matches.
fn cached_probe(launcher: &Path, refresh: bool) -> (Result<ProbeReport, String>, bool) {
    let key = probe_key(launcher);
    if !refresh
        && let Some(bytes) = cache::load("probe", &key)
        && let Ok(report) = serde_json::from_slice::<ProbeReport>(&bytes)
    {
        return (Ok(report), true);
    }
    let report = run_probe(launcher);
    if let Ok(r) = &report
        && let Ok(bytes) = serde_json::to_vec(r)
    {
        cache::store("probe", &key, &bytes);
    }
    (report, false)
}

/// What the probe's answer depends on: the launcher binary, this boot, who we are, which
/// namespaces we are in, our seccomp/capability state, and the sysctls that gate user
/// namespaces. A container shares the host's boot id but not its namespaces.
fn probe_key(launcher: &Path) -> cache::Key {
    let mut key = cache::Key::new("probe");
    key.push("launcher", launcher.as_os_str().as_encoded_bytes());
    key.push_file_identity("launcher-file", launcher);
    key.push_file("boot", Path::new("/proc/sys/kernel/random/boot_id"));
    key.push(
        "ids",
        format!(
            "{} {} {} {}",
            nix::unistd::Uid::current(),
            nix::unistd::Uid::effective(),
            nix::unistd::Gid::current(),
            nix::unistd::Gid::effective()
        ),
    );
    for ns in ["user", "pid", "net", "mnt", "cgroup"] {
        let link = std::fs::read_link(format!("/proc/self/ns/{ns}")).unwrap_or_default();
        key.push(&format!("ns:{ns}"), link.as_os_str().as_encoded_bytes());
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    for line in status.lines().filter(|l| {
        ["Seccomp:", "NoNewPrivs:", "CapEff:", "CapBnd:"]
            .iter()
            .any(|p| l.starts_with(p))
    }) {
        key.push("status", line);
    }
    for sysctl in [
        "/proc/sys/kernel/unprivileged_userns_clone",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
        "/proc/sys/user/max_user_namespaces",
        "/proc/sys/user/max_net_namespaces",
        "/proc/sys/user/max_pid_namespaces",
        "/sys/kernel/security/lsm",
    ] {
        key.push_file(sysctl, Path::new(sysctl));
    }
    key
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_policy_does_not_probe_cgroups() {
        let host = LazyHost::new(PathBuf::from("python3"), None);
        let policy = PolicyV1::from_json(&serde_json::json!({})).unwrap_or_default();
        let caps = host.for_policy(&policy);
        assert!(caps.cgroup_pids.is_none());
        assert!(host.cgroups.get().is_none());
        assert!(host.full.get().is_none());
    }

    #[test]
    fn the_probe_key_names_the_launcher_file() {
        let a = probe_key(Path::new("/bin/sh"));
        let b = probe_key(Path::new("/bin/ls"));
        assert_ne!(format!("{a:?}"), format!("{b:?}"));
        assert_eq!(
            format!("{a:?}"),
            format!("{:?}", probe_key(Path::new("/bin/sh")))
        );
    }
}
