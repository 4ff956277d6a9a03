//! The Docker Engine API over its unix socket (Docker, or Podman's compatible service):
//! endpoint selection (`DOCKER_HOST`), API version negotiation, and the typed calls the backend
//! and `image build` use. Which engine answers, and whether its controls can be trusted, is
//! `engine_kind`.
//!
//! Negotiation: `GET /_ping` (or `GET /version`; both unversioned, answered by every engine)
//! gives the engine's API version; we use `min(engine, MAX_API)` and refuse engines older than
//! 1.41 (Docker 20.10, Debian 12's `docker.io`; Podman 4.3's compat API reports 1.41). Every later path carries that `/v1.NN` prefix, so request
//! semantics are pinned instead of following whatever the engine defaults to.
//!
//! Error answers are `{"message"}` (Docker) or `{"cause","message","response"}` (Podman); both
//! carry `message`, which is what [`EngineError::Api`] keeps.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use super::engine_kind::EngineKind;
use super::http::{self, Body, HttpError, Response};

/// Oldest supported engine API (Docker 20.10).
pub const MIN_API: (u32, u32) = (1, 41);
/// Newest API whose semantics we ask for.
pub const MAX_API: (u32, u32) = (1, 47);
/// Per-request bound for management calls (inspect, create, remove).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the engine cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("DOCKER_HOST {0:?} is not a unix:// socket (only local engines are supported)")]
    UnsupportedHost(String),
    #[error("engine unreachable: {0}")]
    Unreachable(#[from] HttpError),
    #[error("engine API {0} is older than 1.41")]
    TooOld(String),
    #[error("engine answered {status} to {what}: {message}")]
    Api {
        what: String,
        status: u16,
        message: String,
    },
    #[error("unexpected engine answer to {0}")]
    Shape(String),
}

/// A connected (negotiated) engine.
#[derive(Debug, Clone)]
pub struct Engine {
    socket: PathBuf,
    /// `/v1.NN`
    prefix: String,
    pub api_version: String,
    pub server_version: String,
    /// Docker or Podman, from the components `GET /version` lists.
    pub kind: EngineKind,
}

/// The socket named by `DOCKER_HOST` (`unix://PATH`), default `/var/run/docker.sock`.
pub fn socket_from_env() -> Result<PathBuf, EngineError> {
    socket_from_host(std::env::var("DOCKER_HOST").ok().as_deref())
}

/// The socket for a `DOCKER_HOST` value (unset or empty: the default socket).
pub fn socket_from_host(host: Option<&str>) -> Result<PathBuf, EngineError> {
    match host {
        Some(host) if !host.is_empty() => match host.strip_prefix("unix://") {
            Some(path) if !path.is_empty() => Ok(PathBuf::from(path)),
            _ => Err(EngineError::UnsupportedHost(host.to_string())),
        },
        _ => Ok(PathBuf::from("/var/run/docker.sock")),
    }
}

fn parse_api(v: &str) -> Option<(u32, u32)> {
    let (major, minor) = v.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

impl Engine {
    /// Connect through `DOCKER_HOST` and negotiate the API version.
    pub fn from_env() -> Result<Engine, EngineError> {
        Engine::connect(&socket_from_env()?)
    }

    /// Connect to `socket` and negotiate the API version: `GET /_ping` (its `Api-Version`,
    /// `Server` and, from Podman, `Libpod-Api-Version` headers), else `GET /version`. Podman
    /// answers `/version` only after running its runtime and conmon (about 0.5 s here), so the
    /// ping saves that on every start.
    pub fn connect(socket: &Path) -> Result<Engine, EngineError> {
        let deadline = Instant::now() + CALL_TIMEOUT;
        let ping = http::request(socket, "GET", "/_ping", Body::None, deadline)?;
        let pinged = ping
            .is_success()
            .then(|| ping.header("Api-Version").map(str::to_string))
            .flatten();
        let (api, version, kind) = match pinged {
            Some(api) => {
                let server = ping.header("Server").unwrap_or_default();
                let version = server
                    .split_once('/')
                    .map(|(_, v)| v.split(' ').next().unwrap_or_default())
                    .unwrap_or_default()
                    .to_string();
                (api, version, EngineKind::from_ping(&ping))
            }
            None => {
                let resp = http::request(socket, "GET", "/version", Body::None, deadline)?;
                let doc = json_ok(resp, "GET /version")?;
                let text = |k: &str| doc.get(k).and_then(Json::as_str).map(str::to_string);
                let api =
                    text("ApiVersion").ok_or_else(|| EngineError::Shape("GET /version".into()))?;
                (
                    api,
                    text("Version").unwrap_or_default(),
                    EngineKind::from_version(&doc),
                )
            }
        };
        let server = parse_api(&api).ok_or_else(|| EngineError::Shape("ApiVersion".into()))?;
        if server < MIN_API {
            return Err(EngineError::TooOld(api));
        }
        let (major, minor) = server.min(MAX_API);
        Ok(Engine {
            socket: socket.to_path_buf(),
            prefix: format!("/v{major}.{minor}"),
            api_version: format!("{major}.{minor}"),
            server_version: version,
            kind,
        })
    }

    /// An engine value that never connected (pure tests of what depends on the kind).
    #[cfg(test)]
    pub(crate) fn for_tests(kind: EngineKind) -> Engine {
        Engine {
            socket: PathBuf::from("/nonexistent"),
            prefix: "/v1.41".into(),
            api_version: "1.41".into(),
            server_version: "test".into(),
            kind,
        }
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// `/v1.NN` + `path`.
    pub fn path(&self, path: &str) -> String {
        format!("{}{path}", self.prefix)
    }

    /// One versioned request.
    pub fn call(
        &self,
        method: &str,
        path: &str,
        body: Body<'_>,
        deadline: Instant,
    ) -> Result<Response, HttpError> {
        http::request(&self.socket, method, &self.path(path), body, deadline)
    }

    /// One versioned request bounded by [`CALL_TIMEOUT`], decoded as JSON on 2xx.
    pub fn json(&self, method: &str, path: &str, body: Body<'_>) -> Result<Json, EngineError> {
        let resp = self.call(method, path, body, Instant::now() + CALL_TIMEOUT)?;
        json_ok(resp, &format!("{method} {path}"))
    }

    /// `GET /images/{name}/json`; `Ok(None)` when the engine does not have it (never pulls).
    pub fn image_inspect(&self, name: &str) -> Result<Option<Json>, EngineError> {
        let path = format!("/images/{}/json", http::encode_query(name));
        let resp = self.call("GET", &path, Body::None, Instant::now() + CALL_TIMEOUT)?;
        if resp.status == 404 {
            return Ok(None);
        }
        json_ok(resp, "GET /images/{id}/json").map(Some)
    }

    /// `GET /containers/{id}/json`; `Ok(None)` when it does not exist.
    pub fn container_inspect(
        &self,
        id: &str,
        timeout: Duration,
    ) -> Result<Option<Json>, EngineError> {
        let path = format!("/containers/{}/json", http::encode_query(id));
        let resp = self.call("GET", &path, Body::None, Instant::now() + timeout)?;
        if resp.is_missing() {
            return Ok(None);
        }
        json_ok(resp, "GET /containers/{id}/json").map(Some)
    }

    /// `DELETE /containers/{id}?force=1&v=1`; a missing container counts as removed.
    pub fn remove_container(&self, id: &str) -> Result<(), EngineError> {
        let path = format!("/containers/{}?force=1&v=1", http::encode_query(id));
        let resp = self.call("DELETE", &path, Body::None, Instant::now() + CALL_TIMEOUT)?;
        if resp.is_success() || resp.is_missing() {
            return Ok(());
        }
        Err(EngineError::Api {
            what: "DELETE /containers/{id}".into(),
            status: resp.status,
            message: resp.message(),
        })
    }

    /// The exit code of container `name` once it stopped, within `deadline`. Docker:
    /// `POST /containers/{id}/wait?condition=not-running`. Podman: its own wait polling every
    /// 20 ms for `stopped` (its compat wait only answers once the clean-up process conmon
    /// starts has run, about 0.6 s later).
    pub fn wait_exit(&self, name: &str, deadline: Instant) -> Option<i64> {
        self.begin_wait(name, deadline).ok()?.exit_code(deadline)
    }

    /// Send the wait request of [`Engine::wait_exit`] now and read its answer later: opened
    /// before the container is told to finish, it answers as soon as the engine records the
    /// exit, without a connection and a request on the call's path.
    pub fn begin_wait(&self, name: &str, deadline: Instant) -> Result<PendingWait, HttpError> {
        let id = http::encode_query(name);
        let path = match self.kind {
            EngineKind::Docker => format!("/containers/{id}/wait?condition=not-running"),
            EngineKind::Podman => format!(
                "/libpod/containers/{id}/wait?condition=stopped&condition=exited&interval=20ms"
            ),
        };
        http::send(
            &self.socket,
            "POST",
            &self.path(&path),
            Body::None,
            deadline,
        )
        .map(PendingWait)
    }

    /// Names of all containers (any state) carrying `label` (`key` or `key=value`).
    pub fn containers_with_label(&self, label: &str) -> Result<Vec<String>, EngineError> {
        let filters = serde_json::json!({ "label": [label] }).to_string();
        let path = format!(
            "/containers/json?all=1&filters={}",
            http::encode_query(&filters)
        );
        let list = self.json("GET", &path, Body::None)?;
        Ok(list
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|c| c.get("Names")?.get(0)?.as_str())
                    .map(|n| n.trim_start_matches('/').to_string())
                    .collect()
            })
            .unwrap_or_default())
    }

    /// Whether a container with exactly this name (or ID) exists. An inspect, not a name
    /// filter: Docker matches filters against `/name`, Podman against `name`.
    pub fn container_exists(&self, name: &str) -> Result<bool, EngineError> {
        Ok(self.container_inspect(name, CALL_TIMEOUT)?.is_some())
    }
}

/// A wait request sent by [`Engine::begin_wait`].
#[derive(Debug)]
pub struct PendingWait(http::Sent);

impl PendingWait {
    /// The exit code, once the engine answers (by `deadline`); `None` if it cannot say.
    pub fn exit_code(self, deadline: Instant) -> Option<i64> {
        let resp = self.0.response(deadline).ok()?;
        if !resp.is_success() {
            return None;
        }
        let doc: Json = serde_json::from_slice(&resp.body).ok()?;
        // Docker: {"StatusCode": n}; Podman's own endpoint: a bare integer.
        doc.get("StatusCode")
            .and_then(Json::as_i64)
            .or_else(|| doc.as_i64())
    }
}

/// Decode a 2xx JSON answer, or describe the error answer.
pub fn json_ok(resp: Response, what: &str) -> Result<Json, EngineError> {
    if !resp.is_success() {
        return Err(EngineError::Api {
            what: what.to_string(),
            status: resp.status,
            message: resp.message(),
        });
    }
    if resp.body.is_empty() {
        return Ok(Json::Null);
    }
    serde_json::from_slice(&resp.body).map_err(|_| EngineError::Shape(what.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_host_values() {
        let sock = |h| socket_from_host(h).map_err(|e| e.to_string());
        assert_eq!(sock(None), Ok(PathBuf::from("/var/run/docker.sock")));
        assert_eq!(sock(Some("")), Ok(PathBuf::from("/var/run/docker.sock")));
        assert_eq!(
            sock(Some("unix:///nonexistent")),
            Ok(PathBuf::from("/nonexistent"))
        );
        assert!(sock(Some("tcp://1.2.3.4:2375")).is_err());
        assert!(sock(Some("unix://")).is_err());
        assert!(Engine::connect(Path::new("/nonexistent")).is_err());
    }

    #[test]
    fn api_versions_parse_and_order() {
        assert_eq!(parse_api("1.41"), Some((1, 41)));
        assert_eq!(parse_api("1.9"), Some((1, 9)));
        assert!(parse_api("1.9") < Some(MIN_API));
        assert!(parse_api("1.53").map(|v| v.min(MAX_API)) == Some(MAX_API));
        assert_eq!(parse_api("x"), None);
    }
}
