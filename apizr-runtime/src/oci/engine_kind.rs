//! Which engine answers on the socket, and whether its container controls can be trusted.
//!
//! Two engines speak the Engine API here: Docker, and Podman's Docker-compatible service
//! (`podman system service`). Podman names itself in `GET /version` (`Components[].Name ==
//! "Podman Engine"`; `GET /_ping` carries `Libpod-Api-Version`), so the kind is detected, never
//! configured. It matters because Podman
//! diverges silently in ways the backend must know about: it ignores `HostConfig.Runtime`, it
//! reports the OCI runtime only in its own inspect (`/libpod/containers/{id}/json`), it lists
//! dropped capabilities one by one instead of `ALL`, and on cgroup v1 it does not set
//! `OOMKilled`.
//!
//! Capabilities: unlike the reference (which string-matches `name=seccomp,profile=builtin` and
//! therefore refuses Docker 20.10's `profile=default`), we require the controls themselves:
//! Linux engine, memory + swap limits, CFS quota/period, pids limit, seccomp present with any
//! profile, and an engine that can apply cgroup limits at all. A **rootless engine on cgroup
//! v1** cannot (there is no delegation on v1): rootless Podman accepts `Memory`, `PidsLimit` and
//! `CpuQuota` and silently drops them, so it is refused here. Rootless is read from the engine
//! itself (`SecurityOptions` `name=rootless`, and Podman's `host.security.rootless`), not
//! guessed from our own uid. The per-container check after create (`verify`) catches the same
//! drop again, should an engine lie here.

use serde::Serialize;
use serde_json::Value as Json;

use super::engine::{Engine, EngineError};
use super::http::{Body, Response};

/// The engine product behind the socket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    #[default]
    Docker,
    Podman,
}

impl EngineKind {
    /// From a `GET /version` document.
    pub fn from_version(doc: &Json) -> EngineKind {
        let podman = doc
            .get("Components")
            .and_then(Json::as_array)
            .is_some_and(|c| {
                c.iter()
                    .any(|c| c.get("Name").and_then(Json::as_str) == Some("Podman Engine"))
            });
        if podman {
            EngineKind::Podman
        } else {
            EngineKind::Docker
        }
    }

    /// From a `GET /_ping` answer: Podman adds `Libpod-Api-Version`.
    pub fn from_ping(resp: &Response) -> EngineKind {
        if resp.header("Libpod-Api-Version").is_some() {
            EngineKind::Podman
        } else {
            EngineKind::Docker
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Docker => "docker",
            EngineKind::Podman => "podman",
        }
    }

    /// Whether `State.OOMKilled` is worth polling. Podman on cgroup v1 leaves it false after a
    /// memory kill (exit 137); only the kernel log tells there (`oom`).
    pub fn reports_oom(self, cgroup_version: &str) -> bool {
        !(self == EngineKind::Podman && cgroup_version == "1")
    }
}

/// Host controls as reported by `GET /info` (and Podman's `/libpod/info`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct EngineCapabilities {
    pub engine: EngineKind,
    pub server_version: String,
    pub api_version: String,
    pub os_type: String,
    pub architecture: String,
    pub cgroup_version: String,
    /// The engine runs without root (its own word, not a guess).
    pub rootless: bool,
    pub memory_limit: bool,
    pub swap_limit: bool,
    pub cpu_cfs_quota: bool,
    pub cpu_cfs_period: bool,
    pub pids_limit: bool,
    /// The seccomp profile name (`default`, `builtin`, a path), when seccomp is enabled.
    pub seccomp_profile: Option<String>,
    pub security_options: Vec<String>,
    /// The OCI runtime containers get when none is named.
    pub default_runtime: String,
    /// OCI runtimes the engine lists (Podman lists every runtime it knows of, installed or not).
    pub runtimes: Vec<String>,
    /// Podman: the capabilities a container gets by default (its inspect lists each one it
    /// dropped instead of `ALL`). Empty for Docker.
    pub default_capabilities: Vec<String>,
    /// Controls that are missing; empty means usable.
    pub missing: Vec<&'static str>,
}

impl EngineCapabilities {
    pub fn usable(&self) -> bool {
        self.missing.is_empty()
    }

    /// Compute `missing` from the facts.
    fn check(&mut self) {
        let seccomp = self
            .seccomp_profile
            .as_deref()
            .is_some_and(|p| p != "unconfined");
        let cgroup_limits = !(self.rootless && self.cgroup_version == "1");
        for (ok, name) in [
            (self.os_type == "linux", "linux"),
            (self.memory_limit, "memory_limit"),
            (self.swap_limit, "swap_limit"),
            (self.cpu_cfs_quota, "cpu_cfs_quota"),
            (self.cpu_cfs_period, "cpu_cfs_period"),
            (self.pids_limit, "pids_limit"),
            (seccomp, "seccomp"),
            (
                cgroup_limits,
                "cgroup_limits (rootless engine on cgroup v1)",
            ),
        ] {
            if !ok {
                self.missing.push(name);
            }
        }
    }
}

impl Engine {
    /// `GET /info` (and for Podman `GET /libpod/info`) checked against the controls the
    /// container plan needs.
    pub fn capabilities(&self) -> Result<EngineCapabilities, EngineError> {
        // Podman takes about 0.25 s for each of the two; ask in parallel.
        let (info, libpod) = std::thread::scope(|scope| {
            let libpod = (self.kind == EngineKind::Podman)
                .then(|| scope.spawn(|| self.json("GET", "/libpod/info", Body::None)));
            let info = self.json("GET", "/info", Body::None);
            let libpod = libpod.map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(EngineError::Shape("GET /libpod/info".into())))
            });
            (info, libpod)
        });
        Ok(capabilities_from(
            self,
            &info?,
            libpod.transpose()?.as_ref(),
        ))
    }
}

/// The pure half of [`Engine::capabilities`].
pub fn capabilities_from(
    engine: &Engine,
    info: &Json,
    libpod: Option<&Json>,
) -> EngineCapabilities {
    let flag = |k: &str| info.get(k).and_then(Json::as_bool).unwrap_or(false);
    let text = |k: &str| {
        info.get(k)
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let security_options: Vec<String> = info
        .get("SecurityOptions")
        .and_then(Json::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let option = |name: &str| {
        security_options.iter().find_map(|opt| {
            let mut fields = opt.split(',');
            (fields.next() == Some(name)).then(|| fields.map(str::to_string).collect::<Vec<_>>())
        })
    };
    let seccomp_profile = option("name=seccomp").map(|fields| {
        fields
            .iter()
            .find_map(|f| f.strip_prefix("profile="))
            .unwrap_or("default")
            .to_string()
    });
    let security = libpod.and_then(|l| l.pointer("/host/security"));
    let rootless = option("name=rootless").is_some()
        || security
            .and_then(|s| s.get("rootless"))
            .and_then(Json::as_bool)
            .unwrap_or(false);
    // Docker: "1"/"2"; Podman's /libpod/info: "v1"/"v2".
    let cgroup_version = libpod
        .and_then(|l| l.pointer("/host/cgroupVersion"))
        .and_then(Json::as_str)
        .map(|v| v.trim_start_matches('v').to_string())
        .unwrap_or_else(|| text("CgroupVersion"));
    let mut runtimes: Vec<String> = info
        .get("Runtimes")
        .and_then(Json::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    runtimes.sort();
    let default_capabilities = security
        .and_then(|s| s.get("capabilities"))
        .and_then(Json::as_str)
        .map(|c| {
            c.split(',')
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let mut caps = EngineCapabilities {
        engine: engine.kind,
        server_version: engine.server_version.clone(),
        api_version: engine.api_version.clone(),
        os_type: text("OSType"),
        architecture: text("Architecture"),
        cgroup_version,
        rootless,
        memory_limit: flag("MemoryLimit"),
        swap_limit: flag("SwapLimit"),
        cpu_cfs_quota: flag("CpuCfsQuota"),
        cpu_cfs_period: flag("CpuCfsPeriod"),
        pids_limit: flag("PidsLimit"),
        seccomp_profile,
        security_options,
        default_runtime: text("DefaultRuntime"),
        runtimes,
        default_capabilities,
        missing: Vec::new(),
    };
    caps.check();
    caps
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn engine(kind: EngineKind) -> Engine {
        Engine::for_tests(kind)
    }

    fn info(cgroup: &str, security: &[&str]) -> Json {
        json!({"OSType": "linux", "Architecture": "x86_64", "CgroupVersion": cgroup,
               "MemoryLimit": true, "SwapLimit": true, "CpuCfsQuota": true, "CpuCfsPeriod": true,
               "PidsLimit": true, "SecurityOptions": security, "DefaultRuntime": "runc",
               "Runtimes": {"runsc": {}, "runc": {}}})
    }

    #[test]
    fn podman_is_named_in_its_ping_headers() {
        let ping = |headers: &[(&str, &str)]| Response {
            status: 200,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: b"OK".to_vec(),
        };
        let podman = ping(&[("Api-Version", "1.41"), ("Libpod-Api-Version", "4.3.1")]);
        assert_eq!(EngineKind::from_ping(&podman), EngineKind::Podman);
        assert_eq!(
            EngineKind::from_ping(&ping(&[("Api-Version", "1.41")])),
            EngineKind::Docker
        );
    }

    #[test]
    fn podman_is_named_in_version_components() {
        let podman = json!({"Components": [{"Name": "Podman Engine", "Version": "4.3.1"}]});
        let docker = json!({"Components": [{"Name": "Engine"}, {"Name": "containerd"}]});
        assert_eq!(EngineKind::from_version(&podman), EngineKind::Podman);
        assert_eq!(EngineKind::from_version(&docker), EngineKind::Docker);
        assert_eq!(EngineKind::from_version(&json!({})), EngineKind::Docker);
    }

    #[test]
    fn rootful_engines_are_usable_on_cgroup_v1() {
        let caps = capabilities_from(
            &engine(EngineKind::Docker),
            &info("1", &["name=seccomp,profile=default"]),
            None,
        );
        assert!(caps.usable(), "{:?}", caps.missing);
        assert_eq!(caps.seccomp_profile.as_deref(), Some("default"));
        assert_eq!(caps.runtimes, ["runc", "runsc"]);
    }

    /// Rootless is the engine's own statement (Docker: a security option; Podman: its libpod
    /// info), and on cgroup v1 it means limits are dropped: refused.
    #[test]
    fn rootless_on_cgroup_v1_is_refused_and_on_v2_is_not() {
        let seccomp = "name=seccomp,profile=default";
        let docker = capabilities_from(
            &engine(EngineKind::Docker),
            &info("1", &[seccomp, "name=rootless"]),
            None,
        );
        assert!(docker.rootless);
        assert_eq!(
            docker.missing,
            ["cgroup_limits (rootless engine on cgroup v1)"]
        );
        let libpod = |rootless: bool, v: &str| {
            json!({"host": {"cgroupVersion": v, "security": {"rootless": rootless,
                   "capabilities": "CAP_CHOWN,CAP_KILL"}}})
        };
        let podman = engine(EngineKind::Podman);
        let rootless_v1 =
            capabilities_from(&podman, &info("1", &[seccomp]), Some(&libpod(true, "v1")));
        assert!(rootless_v1.rootless && !rootless_v1.usable());
        let rootless_v2 =
            capabilities_from(&podman, &info("2", &[seccomp]), Some(&libpod(true, "v2")));
        assert!(rootless_v2.usable(), "{:?}", rootless_v2.missing);
        let rootful =
            capabilities_from(&podman, &info("1", &[seccomp]), Some(&libpod(false, "v1")));
        assert!(rootful.usable());
        assert_eq!(rootful.default_capabilities, ["CAP_CHOWN", "CAP_KILL"]);
        let unconfined = capabilities_from(
            &podman,
            &info("1", &["name=seccomp,profile=unconfined"]),
            Some(&libpod(false, "v1")),
        );
        assert_eq!(unconfined.missing, ["seccomp"]);
    }

    #[test]
    fn oom_reporting_by_engine() {
        assert!(EngineKind::Docker.reports_oom("1"));
        assert!(!EngineKind::Podman.reports_oom("1"));
        assert!(EngineKind::Podman.reports_oom("2"));
    }
}
