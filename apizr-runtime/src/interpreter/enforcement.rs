//! Enforcement is measured, not declared: for each tier, which policy capabilities this host
//! can actually enforce (and by what mechanism), computed from the runtime's own probes — the
//! local backend's enforcement plan for `local`, the engine's capabilities for `docker`. Then,
//! per run, what the policy asked for and whether it is enforced, accepted as declared only,
//! or refused.
//!
//! mellea keeps class constants (`ENFORCED_network_access = False`, the same for every tier);
//! here the answer differs per tier and per host, and a restriction is never reported as
//! enforced because a constant says so.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::policy::CapabilityPolicy;
use super::tier::Tier;
use crate::local::prestart::{ColdReason, ProcessSource};

/// A policy field, by its JSON name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    FilesystemReadRoots,
    FilesystemWriteRoots,
    NetworkAccess,
    PackageInstallation,
    SubprocessExecution,
    EnvVarAccess,
    Timeout,
    StdoutMaxBytes,
    StderrMaxBytes,
    ArtifactExportPaths,
    Packages,
    MemoryBytes,
    Pids,
}

impl Capability {
    pub const ALL: [Capability; 13] = [
        Capability::FilesystemReadRoots,
        Capability::FilesystemWriteRoots,
        Capability::NetworkAccess,
        Capability::PackageInstallation,
        Capability::SubprocessExecution,
        Capability::EnvVarAccess,
        Capability::Timeout,
        Capability::StdoutMaxBytes,
        Capability::StderrMaxBytes,
        Capability::ArtifactExportPaths,
        Capability::Packages,
        Capability::MemoryBytes,
        Capability::Pids,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Capability::FilesystemReadRoots => "filesystem_read_roots",
            Capability::FilesystemWriteRoots => "filesystem_write_roots",
            Capability::NetworkAccess => "network_access",
            Capability::PackageInstallation => "package_installation",
            Capability::SubprocessExecution => "subprocess_execution",
            Capability::EnvVarAccess => "env_var_access",
            Capability::Timeout => "timeout",
            Capability::StdoutMaxBytes => "stdout_max_bytes",
            Capability::StderrMaxBytes => "stderr_max_bytes",
            Capability::ArtifactExportPaths => "artifact_export_paths",
            Capability::Packages => "packages",
            Capability::MemoryBytes => "memory_bytes",
            Capability::Pids => "pids",
        }
    }

    /// Whether `policy`'s value restricts the code (as opposed to a protection a tier may add,
    /// such as a fresh environment when `env_var_access` is true).
    pub fn restricts(self, policy: &CapabilityPolicy) -> bool {
        !(self == Capability::EnvVarAccess && policy.env_var_access)
    }

    /// What `policy` asks for, as text (`None`: nothing to enforce — unrestricted or unset).
    pub fn requested(self, policy: &CapabilityPolicy) -> Option<String> {
        let roots = |r: &Option<Vec<std::path::PathBuf>>| {
            r.as_ref().map(|r| {
                let names: Vec<String> = r.iter().map(|p| p.display().to_string()).collect();
                format!("only [{}]", names.join(", "))
            })
        };
        match self {
            Capability::FilesystemReadRoots => roots(&policy.filesystem_read_roots),
            Capability::FilesystemWriteRoots => roots(&policy.filesystem_write_roots),
            Capability::NetworkAccess => (!policy.network_access).then(|| "denied".into()),
            Capability::PackageInstallation => {
                (!policy.package_installation).then(|| "denied".into())
            }
            Capability::SubprocessExecution => {
                (!policy.subprocess_execution).then(|| "denied".into())
            }
            Capability::EnvVarAccess => Some(if policy.env_var_access {
                format!("fixed environment + [{}]", policy.env.join(", "))
            } else {
                "empty environment".into()
            }),
            Capability::Timeout => Some(format!("{} s", policy.timeout)),
            Capability::StdoutMaxBytes => policy.stdout_max_bytes.map(|b| format!("{b} bytes")),
            Capability::StderrMaxBytes => policy.stderr_max_bytes.map(|b| format!("{b} bytes")),
            Capability::ArtifactExportPaths => Some(format!(
                "new or changed files, at most {} files / {} bytes",
                policy.artifact_max_count, policy.artifact_max_bytes
            )),
            Capability::Packages => {
                (!policy.packages.is_empty()).then(|| format!("[{}]", policy.packages.join(", ")))
            }
            Capability::MemoryBytes => policy.memory_bytes.map(|b| format!("{b} bytes")),
            Capability::Pids => policy.pids.map(|p| p.to_string()),
        }
    }
}

/// Whether a tier can enforce one capability on this host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Support {
    Enforced { mechanism: String },
    Unavailable { reason: String },
}

impl Support {
    pub fn enforced(mechanism: impl Into<String>) -> Support {
        Support::Enforced {
            mechanism: mechanism.into(),
        }
    }

    pub fn unavailable(reason: impl Into<String>) -> Support {
        Support::Unavailable {
            reason: reason.into(),
        }
    }

    pub fn is_enforced(&self) -> bool {
        matches!(self, Support::Enforced { .. })
    }
}

/// What one tier can do on this host: per capability, and mellea's matrix features.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TierSupport {
    pub tier: Tier,
    pub capabilities: BTreeMap<Capability, Support>,
    /// mellea's `COMPATIBILITY_MATRIX` row plus measured features (`process_tree_kill`,
    /// `network_isolation`, `filesystem_isolation`).
    pub features: BTreeMap<&'static str, bool>,
}

impl TierSupport {
    /// Capability names this tier enforces on this host.
    pub fn enforced_capabilities(&self) -> Vec<&'static str> {
        self.names(true)
    }

    /// Capability names this tier cannot enforce on this host (declared only, at best).
    pub fn unenforced_capabilities(&self) -> Vec<&'static str> {
        self.names(false)
    }

    fn names(&self, enforced: bool) -> Vec<&'static str> {
        self.capabilities
            .iter()
            .filter(|(_, s)| s.is_enforced() == enforced)
            .map(|(c, _)| c.name())
            .collect()
    }

    /// Every capability unavailable, for a tier that cannot run here at all (`reason`).
    pub fn unavailable(tier: Tier, reason: &str, features: BTreeMap<&'static str, bool>) -> Self {
        TierSupport {
            tier,
            capabilities: Capability::ALL
                .into_iter()
                .map(|c| (c, Support::unavailable(reason)))
                .collect(),
            features,
        }
    }
}

/// mellea's matrix features for `tier`. `sessions`, `copy_in` and `copy_out` are true for
/// every executing tier: each has a [`super::Session`] behind it (tested on real CPython and
/// the real engine); a docker tier whose engine or image is missing says false.
pub fn base_features(tier: Tier) -> BTreeMap<&'static str, bool> {
    let executes = tier.executes();
    BTreeMap::from([
        ("execute_code", executes),
        ("timeout_enforcement", executes),
        ("import_allowlist", true),
        ("policy_applied", tier.applies_policy()),
        ("sessions", executes),
        ("copy_in", executes),
        ("copy_out", executes),
        ("package_installation", executes),
        ("docker_isolation", tier.is_docker()),
    ])
}

/// How one requested capability is handled in one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The tier enforces it (the mechanism says how).
    Enforced,
    /// Not enforceable here; the caller accepted it as a declaration.
    DeclaredOnly,
    /// Not enforceable here and not accepted: the run was refused.
    Refused,
}

/// One line of a run's enforcement report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    pub capability: Capability,
    pub requested: String,
    pub status: Status,
    /// The mechanism (enforced) or why it cannot be enforced.
    pub detail: String,
}

/// The `enforcement` object of a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnforcementReport {
    pub tier: Tier,
    /// Unsafe tiers apply no restriction of their own.
    #[serde(rename = "unsafe")]
    pub unsafe_tier: bool,
    pub policy_applied: bool,
    pub capabilities: Vec<Row>,
    /// Capabilities that made the run refused (empty when it ran).
    pub refused: Vec<Capability>,
    /// `local` tiers: how the process was obtained (`cold`: started for this run or session;
    /// `prestarted`: by a server's pool, through the same implementation), as in a v1 call
    /// report; absent when no local process ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessSource>,
    /// Why the run went cold although the server keeps pre-started processes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cold_reason: Option<ColdReason>,
}

impl EnforcementReport {
    /// Compare what `policy` asks with what `support` offers.
    pub fn assess(support: &TierSupport, policy: Option<&CapabilityPolicy>) -> Self {
        let tier = support.tier;
        let mut report = EnforcementReport {
            tier,
            unsafe_tier: tier.is_unsafe(),
            policy_applied: policy.is_some(),
            capabilities: Vec::new(),
            refused: Vec::new(),
            process: None,
            cold_reason: None,
        };
        let Some(policy) = policy else {
            // No policy (unsafe tiers by default): only the built-in timeout applies.
            if let Some(s @ Support::Enforced { .. }) =
                support.capabilities.get(&Capability::Timeout)
            {
                report.capabilities.push(row(
                    Capability::Timeout,
                    "built-in default".into(),
                    s,
                    false,
                ));
            }
            return report;
        };
        for capability in Capability::ALL {
            let Some(requested) = capability.requested(policy) else {
                continue;
            };
            let support = support
                .capabilities
                .get(&capability)
                .cloned()
                .unwrap_or_else(|| Support::unavailable("not measured for this tier"));
            if !capability.restricts(policy) && !support.is_enforced() {
                // Nothing is restricted (an unsafe tier gives the host's environment).
                continue;
            }
            let accepted = policy.declared_only.contains(&capability);
            let line = row(capability, requested, &support, accepted);
            if line.status == Status::Refused {
                report.refused.push(capability);
            }
            report.capabilities.push(line);
        }
        report
    }
}

fn row(capability: Capability, requested: String, support: &Support, accepted: bool) -> Row {
    let (status, detail) = match support {
        Support::Enforced { mechanism } => (Status::Enforced, mechanism.clone()),
        Support::Unavailable { reason } if accepted => (Status::DeclaredOnly, reason.clone()),
        Support::Unavailable { reason } => (Status::Refused, reason.clone()),
    };
    Row {
        capability,
        requested,
        status,
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn support(enforced: &[Capability]) -> TierSupport {
        TierSupport {
            tier: Tier::Local,
            capabilities: Capability::ALL
                .into_iter()
                .map(|c| {
                    let s = if enforced.contains(&c) {
                        Support::enforced("m")
                    } else {
                        Support::unavailable("no")
                    };
                    (c, s)
                })
                .collect(),
            features: base_features(Tier::Local),
        }
    }

    #[test]
    fn lists_are_disjoint_and_cover_every_capability() {
        let s = support(&[Capability::Timeout, Capability::NetworkAccess]);
        let (yes, no) = (s.enforced_capabilities(), s.unenforced_capabilities());
        assert_eq!(yes, ["network_access", "timeout"]);
        assert!(yes.iter().all(|c| !no.contains(c)));
        assert_eq!(yes.len() + no.len(), Capability::ALL.len());
    }

    #[test]
    fn an_unenforceable_restriction_is_refused_unless_accepted() {
        let s = support(&[
            Capability::Timeout,
            Capability::EnvVarAccess,
            Capability::ArtifactExportPaths,
        ]);
        let policy = CapabilityPolicy::default();
        let report = EnforcementReport::assess(&s, Some(&policy));
        assert_eq!(
            report.refused,
            [
                Capability::NetworkAccess,
                Capability::PackageInstallation,
                Capability::SubprocessExecution
            ]
        );
        let accepted = CapabilityPolicy {
            declared_only: vec![
                Capability::NetworkAccess,
                Capability::PackageInstallation,
                Capability::SubprocessExecution,
            ],
            ..CapabilityPolicy::default()
        };
        let report = EnforcementReport::assess(&s, Some(&accepted));
        assert!(report.refused.is_empty());
        let network = report
            .capabilities
            .iter()
            .find(|r| r.capability == Capability::NetworkAccess)
            .unwrap();
        assert_eq!(network.status, Status::DeclaredOnly);
        // Unrestricted fields ask for nothing, so nothing is refused for them.
        assert!(
            report
                .capabilities
                .iter()
                .all(|r| r.capability != Capability::FilesystemReadRoots)
        );
    }

    #[test]
    fn no_policy_reports_only_the_builtin_timeout() {
        let report = EnforcementReport::assess(&support(&[Capability::Timeout]), None);
        assert!(!report.policy_applied);
        assert_eq!(report.capabilities.len(), 1);
        assert_eq!(report.capabilities[0].capability, Capability::Timeout);
    }
}
