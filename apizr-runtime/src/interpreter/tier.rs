//! The five execution tiers, selected by name (mellea's names, so agents and tests can rely
//! on them), and the one factory-side question each answers: does it execute, does it apply a
//! policy, is it unsafe.

use serde::Serialize;

/// Where and how code runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Parse and import check only; never executes.
    Static,
    /// A subprocess of the host interpreter with the host environment; no policy. Unsafe.
    LocalUnsafe,
    /// A subprocess in the local sandbox (the `local-process` backend's launcher), under a
    /// [`CapabilityPolicy`](super::CapabilityPolicy) whose restrictions are enforced or refused.
    Local,
    /// A container with the engine's defaults (root in the container, engine network); no
    /// policy. Unsafe.
    DockerUnsafe,
    /// A hardened container (the `oci-container` backend's controls) under a policy.
    Docker,
}

/// A tier name that is not one of the five.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown execution tier {name:?}; expected one of: static, local_unsafe, local, docker_unsafe, docker"
)]
pub struct UnknownTier {
    pub name: String,
}

impl Tier {
    pub const ALL: [Tier; 5] = [
        Tier::Static,
        Tier::LocalUnsafe,
        Tier::Local,
        Tier::DockerUnsafe,
        Tier::Docker,
    ];

    /// The tier's name (`execution_mode` in results).
    pub fn name(self) -> &'static str {
        match self {
            Tier::Static => "static",
            Tier::LocalUnsafe => "local_unsafe",
            Tier::Local => "local",
            Tier::DockerUnsafe => "docker_unsafe",
            Tier::Docker => "docker",
        }
    }

    /// The tier named `name` (exact, lower case).
    pub fn parse(name: &str) -> Result<Tier, UnknownTier> {
        Tier::ALL
            .into_iter()
            .find(|t| t.name() == name)
            .ok_or_else(|| UnknownTier { name: name.into() })
    }

    /// Runs code with no enforced policy (labelled so in every result).
    pub fn is_unsafe(self) -> bool {
        matches!(self, Tier::LocalUnsafe | Tier::DockerUnsafe)
    }

    pub fn executes(self) -> bool {
        self != Tier::Static
    }

    /// Applies a capability policy by default (mellea's `policy_applied`).
    pub fn applies_policy(self) -> bool {
        matches!(self, Tier::Local | Tier::Docker)
    }

    /// Runs in a container engine.
    pub fn is_docker(self) -> bool {
        matches!(self, Tier::DockerUnsafe | Tier::Docker)
    }
}

impl std::fmt::Display for Tier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Tier {
    type Err = UnknownTier;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Tier::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_tiers() {
        for tier in Tier::ALL {
            assert_eq!(Tier::parse(tier.name()), Ok(tier));
        }
        let err = Tier::parse("sandbox").unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown execution tier \"sandbox\"; expected one of: static, local_unsafe, local, docker_unsafe, docker"
        );
        assert!(Tier::parse("Local").is_err());
        let unsafe_tiers: Vec<_> = Tier::ALL.into_iter().filter(|t| t.is_unsafe()).collect();
        assert_eq!(unsafe_tiers, [Tier::LocalUnsafe, Tier::DockerUnsafe]);
        let with_policy: Vec<_> = Tier::ALL
            .into_iter()
            .filter(|t| t.applies_policy())
            .collect();
        assert_eq!(with_policy, [Tier::Local, Tier::Docker]);
    }
}
