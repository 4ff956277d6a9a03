//! [`CapabilityPolicy`]: what a code-execution environment is allowed to do — mellea's fields,
//! mellea's defaults, and a few additions that a real sandbox can enforce (memory, process
//! count, host variables passed through, artifact caps).
//!
//! The policy only *declares*. Which restrictions a tier actually enforces on this host is
//! measured ([`super::enforcement`]); a restriction that cannot be enforced refuses the call
//! unless it is listed in [`CapabilityPolicy::declared_only`], and is then reported as
//! declared-only in the result.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::enforcement::Capability;

/// The largest `timeout` (seconds) a policy may ask for.
pub const MAX_TIMEOUT_SECS: f64 = 86_400.0;
/// Default caps on what one run may export.
pub const DEFAULT_ARTIFACT_MAX_COUNT: u32 = 100;
pub const DEFAULT_ARTIFACT_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// Declared capabilities and limits of one execution environment (JSON field names as below;
/// unknown fields are refused).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CapabilityPolicy {
    /// Host paths the code may read (`null`: unrestricted). Under a restriction the code sees
    /// the interpreter, these paths (read-only) and its workspace, nothing else of the host.
    pub filesystem_read_roots: Option<Vec<PathBuf>>,
    /// Host paths the code may write (`null`: unrestricted), besides its workspace.
    pub filesystem_write_roots: Option<Vec<PathBuf>>,
    /// Outbound network connections (default `false`).
    pub network_access: bool,
    /// Installing packages at all; `packages` requires it, and `false` means the code cannot
    /// install anything itself either.
    pub package_installation: bool,
    /// Creating child processes.
    pub subprocess_execution: bool,
    /// Whether the code may read environment variables. Either way the code never sees the
    /// host's environment: `true` gives a small fixed environment plus the `env` names,
    /// `false` an empty one.
    pub env_var_access: bool,
    /// Wall-clock seconds before the whole process tree (or container) is killed.
    pub timeout: f64,
    /// Truncate stdout / stderr to this many bytes (mellea's marker rule); `null`: no policy
    /// truncation (a hard ceiling still bounds what the host holds).
    pub stdout_max_bytes: Option<u64>,
    pub stderr_max_bytes: Option<u64>,
    /// Where artifacts are looked for: paths relative to the workspace (or, in containers,
    /// absolute container paths). Empty: the whole workspace.
    pub artifact_export_paths: Vec<PathBuf>,
    /// Requirement specifiers installed (into an isolated environment) before the run.
    pub packages: Vec<String>,
    /// Host environment variables passed through by name (needs `env_var_access`).
    pub env: Vec<String>,
    /// Memory limit of the whole run, in bytes.
    pub memory_bytes: Option<u64>,
    /// Maximum number of processes and threads of the run.
    pub pids: Option<u64>,
    /// Caps on the artifacts one run reports.
    pub artifact_max_count: u32,
    pub artifact_max_bytes: u64,
    /// Restrictions the caller accepts as declared only when this host cannot enforce them.
    /// Anything not listed here that cannot be enforced refuses the run.
    pub declared_only: Vec<Capability>,
}

impl Default for CapabilityPolicy {
    /// mellea's `CapabilityPolicy()`: no network, no installs, no subprocesses, environment
    /// readable, 30 s, no truncation, no exports, no packages.
    fn default() -> Self {
        CapabilityPolicy {
            filesystem_read_roots: None,
            filesystem_write_roots: None,
            network_access: false,
            package_installation: false,
            subprocess_execution: false,
            env_var_access: true,
            timeout: 30.0,
            stdout_max_bytes: None,
            stderr_max_bytes: None,
            artifact_export_paths: Vec::new(),
            packages: Vec::new(),
            env: Vec::new(),
            memory_bytes: None,
            pids: None,
            artifact_max_count: DEFAULT_ARTIFACT_MAX_COUNT,
            artifact_max_bytes: DEFAULT_ARTIFACT_MAX_BYTES,
            declared_only: Vec::new(),
        }
    }
}

/// Why a policy document was refused: where, and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {expected}")]
pub struct PolicyError {
    /// A field name (`packages[2]`), or `line L column C` for a JSON error.
    pub path: String,
    pub expected: String,
}

impl CapabilityPolicy {
    /// mellea's `LOCAL_POLICY`: subprocesses and environment allowed, 30 s.
    pub fn local() -> Self {
        CapabilityPolicy {
            subprocess_execution: true,
            ..CapabilityPolicy::default()
        }
    }

    /// mellea's `DOCKER_POLICY`: installs, subprocesses and environment allowed, 60 s.
    pub fn docker() -> Self {
        CapabilityPolicy {
            package_installation: true,
            subprocess_execution: true,
            timeout: 60.0,
            ..CapabilityPolicy::default()
        }
    }

    /// Everything restricted: no network, no subprocesses, empty environment, only the
    /// interpreter and the workspace visible, 512 MiB, 64 processes, 30 s.
    pub fn strict() -> Self {
        CapabilityPolicy {
            filesystem_read_roots: Some(Vec::new()),
            filesystem_write_roots: Some(Vec::new()),
            env_var_access: false,
            memory_bytes: Some(512 * 1024 * 1024),
            pids: Some(64),
            ..CapabilityPolicy::default()
        }
    }

    /// Parse and validate a JSON policy document.
    pub fn from_json_str(text: &str) -> Result<Self, PolicyError> {
        let policy: CapabilityPolicy = serde_json::from_str(text).map_err(|e| PolicyError {
            path: format!("line {} column {}", e.line(), e.column()),
            expected: strip_position(&e.to_string()),
        })?;
        policy.validate()?;
        Ok(policy)
    }

    /// `packages` merged in (order kept, duplicates dropped) with `package_installation`
    /// forced on, as mellea's `python_tool(packages=…)` does.
    #[must_use]
    pub fn with_packages(mut self, packages: &[String]) -> Self {
        for p in packages {
            if !self.packages.contains(p) {
                self.packages.push(p.clone());
            }
        }
        if !self.packages.is_empty() {
            self.package_installation = true;
        }
        self
    }

    /// The wall-clock limit.
    pub fn timeout_duration(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.timeout.clamp(0.001, MAX_TIMEOUT_SECS))
    }

    /// Every rule a document must satisfy beyond its shape.
    pub fn validate(&self) -> Result<(), PolicyError> {
        let err = |path: String, expected: &str| {
            Err(PolicyError {
                path,
                expected: expected.to_string(),
            })
        };
        if !(self.timeout.is_finite() && self.timeout > 0.0 && self.timeout <= MAX_TIMEOUT_SECS) {
            return err(
                "timeout".into(),
                &format!(
                    "seconds, more than 0 and at most {MAX_TIMEOUT_SECS}, got {}",
                    self.timeout
                ),
            );
        }
        for (i, spec) in self.packages.iter().enumerate() {
            validate_package(spec).or_else(|e| err(format!("packages[{i}]"), &e))?;
        }
        if !self.packages.is_empty() && !self.package_installation {
            return err(
                "packages".into(),
                "packages need \"package_installation\": true",
            );
        }
        for (field, roots) in [
            ("filesystem_read_roots", &self.filesystem_read_roots),
            ("filesystem_write_roots", &self.filesystem_write_roots),
        ] {
            for (i, root) in roots.iter().flatten().enumerate() {
                if !is_normal_absolute(root) {
                    return err(
                        format!("{field}[{i}]"),
                        &format!(
                            "an absolute path other than / without \".\" or \"..\" components, got {:?}",
                            root.display().to_string()
                        ),
                    );
                }
            }
        }
        for (i, path) in self.artifact_export_paths.iter().enumerate() {
            if path.as_os_str().is_empty()
                || path
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir))
            {
                return err(
                    format!("artifact_export_paths[{i}]"),
                    "a non-empty path without \"..\" components",
                );
            }
        }
        for (i, name) in self.env.iter().enumerate() {
            if !is_env_name(name) {
                return err(
                    format!("env[{i}]"),
                    "a variable name ([A-Za-z_][A-Za-z0-9_]*)",
                );
            }
        }
        if !self.env.is_empty() && !self.env_var_access {
            return err(
                "env".into(),
                "passing variables needs \"env_var_access\": true",
            );
        }
        if self.memory_bytes.is_some_and(|m| m < 16 * 1024 * 1024) {
            return err("memory_bytes".into(), "at least 16777216 (16 MiB)");
        }
        if self.pids.is_some_and(|p| p < 4) {
            return err("pids".into(), "at least 4");
        }
        Ok(())
    }
}

/// mellea's specifier rule: non-empty, and not a flag (`-r file`, `--index-url …`).
pub fn validate_package(spec: &str) -> Result<(), String> {
    if spec.trim().is_empty() {
        return Err("package specifiers must be non-empty".into());
    }
    if spec.trim_start().starts_with('-') {
        return Err(format!(
            "flag-style package specifiers are not allowed, got {spec:?}"
        ));
    }
    if spec.contains('\0') || spec.contains('\n') {
        return Err("package specifiers are one line without NUL".into());
    }
    Ok(())
}

fn is_normal_absolute(path: &Path) -> bool {
    let Some(text) = path.to_str() else {
        return false;
    };
    let Some(rest) = text.strip_prefix('/') else {
        return false;
    };
    !rest.is_empty()
        && !text.contains('\0')
        && rest
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// serde_json's message without its trailing ` at line L column C`.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests;
