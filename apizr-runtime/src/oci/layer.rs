//! One layer of files on a local base image, through the Engine API only (no Dockerfile, no
//! BuildKit, no registry): a stopped helper container of the base, `PUT /archive` of a tarball
//! at `/`, `POST /commit` with the image configuration, the helper removed. Worker images
//! ([`super::build`]) and generated projects (`apizr image build --project`) are both built
//! this way.

use std::time::Instant;

use serde_json::Value as Json;

use super::build::BuildError;
use super::bundle::random_hex;
use super::container::ContainerGuard;
use super::engine::{CALL_TIMEOUT, Engine, EngineError, json_ok};
use super::http::{Body, encode_query};
use super::image::full_image_id;

/// Create a stopped helper container `apizr-build-<hex>` of `image_id` with `config`; it is
/// removed when the guard drops.
pub fn create_helper(
    engine: &Engine,
    image_id: &str,
    config: &Json,
) -> Result<ContainerGuard, BuildError> {
    let name = format!("apizr-build-{}", random_hex()?);
    let guard = ContainerGuard::new(engine.clone(), name.clone());
    let mut create = config.clone();
    create["Image"] = Json::from(image_id);
    let path = format!("/containers/create?name={}", encode_query(&name));
    json_ok(
        engine.call(
            "POST",
            &path,
            Body::Json(&create),
            Instant::now() + CALL_TIMEOUT,
        )?,
        "POST /containers/create",
    )?;
    Ok(guard)
}

/// Unpack the tarball `archive` at `/` of `container`.
pub fn put_archive(engine: &Engine, container: &str, archive: &[u8]) -> Result<(), BuildError> {
    let path = format!("/containers/{}/archive?path=%2F", encode_query(container));
    json_ok(
        engine.call(
            "PUT",
            &path,
            Body::Bytes(archive, "application/x-tar"),
            Instant::now() + CALL_TIMEOUT,
        )?,
        "PUT /containers/{id}/archive",
    )?;
    Ok(())
}

/// Commit `container` as an image with `config`, tagged `tag` when given; the full image ID.
pub fn commit(
    engine: &Engine,
    container: &str,
    config: &Json,
    tag: Option<&str>,
) -> Result<String, BuildError> {
    commit_with(engine, container, config, &[], tag)
}

/// [`commit`] with Dockerfile instructions (`changes`) applied on top of `config`.
fn commit_with(
    engine: &Engine,
    container: &str,
    config: &Json,
    changes: &[String],
    tag: Option<&str>,
) -> Result<String, BuildError> {
    let mut query = format!("container={}&pause=0", encode_query(container));
    for change in changes {
        query.push_str(&format!("&changes={}", encode_query(change)));
    }
    if let Some((repo, tag)) = tag.map(split_tag) {
        query.push_str(&format!(
            "&repo={}&tag={}",
            encode_query(repo),
            encode_query(tag)
        ));
    }
    let committed = json_ok(
        engine.call(
            "POST",
            &format!("/commit?{query}"),
            Body::Json(config),
            Instant::now() + CALL_TIMEOUT,
        )?,
        "POST /commit",
    )?;
    committed
        .get("Id")
        .and_then(Json::as_str)
        .map(full_image_id)
        .ok_or_else(|| EngineError::Shape("POST /commit".into()).into())
}

/// `base` (an image the engine has; never pulled) plus the files of `archive`, committed with
/// `config` and tagged `tag`: the new image's full ID.
pub fn add_layer(
    engine: &Engine,
    base: &str,
    archive: &[u8],
    config: &Json,
    tag: Option<&str>,
) -> Result<String, BuildError> {
    layer(engine, base, archive, config, None, tag)
}

/// Start the stopped helper `container` (its command is a build step, e.g. a package's
/// `install.sh`) and wait for it to exit by `deadline`; a non-zero exit is
/// [`BuildError::Step`] with the tail of its output, so the cause is in the error.
pub fn run_step(
    engine: &Engine,
    container: &str,
    what: &str,
    deadline: Instant,
) -> Result<(), BuildError> {
    let name = encode_query(container);
    json_ok(
        engine.call(
            "POST",
            &format!("/containers/{name}/start"),
            Body::None,
            Instant::now() + CALL_TIMEOUT,
        )?,
        "POST /containers/{id}/start",
    )?;
    let waited = json_ok(
        engine.call(
            "POST",
            &format!("/containers/{name}/wait?condition=not-running"),
            Body::None,
            deadline,
        )?,
        "POST /containers/{id}/wait",
    )?;
    let code = waited
        .get("StatusCode")
        .and_then(Json::as_i64)
        .unwrap_or(-1);
    if code == 0 {
        return Ok(());
    }
    let logs = engine
        .call(
            "GET",
            &format!("/containers/{name}/logs?stdout=1&stderr=1&tail=20"),
            Body::None,
            Instant::now() + CALL_TIMEOUT,
        )
        .map(|resp| demultiplex(&resp.body))
        .unwrap_or_default();
    Err(BuildError::Step {
        what: what.to_string(),
        code,
        output: logs.trim().to_string(),
    })
}

/// The text of a non-TTY log stream: frames of an 8-byte header (stream, 0, 0, 0, big-endian
/// length) and that many bytes; stdout and stderr interleaved as written.
fn demultiplex(stream: &[u8]) -> String {
    let mut text = Vec::new();
    let mut rest = stream;
    while rest.len() >= 8 {
        let len = u32::from_be_bytes([rest[4], rest[5], rest[6], rest[7]]) as usize;
        let end = (8 + len).min(rest.len());
        text.extend_from_slice(&rest[8..end]);
        rest = &rest[end..];
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// A command run once in the new layer before it is committed (a Dockerfile `RUN`): as
/// `user`, without a network (offline by construction), within `timeout`.
#[derive(Debug, Clone)]
pub struct Step<'a> {
    pub argv: Vec<String>,
    pub user: &'a str,
    /// Named in errors (`python/install.sh exited with status 1: …`).
    pub what: &'a str,
    pub timeout: std::time::Duration,
}

/// [`add_layer`] with `step` run after the files are in place: the committed image holds what
/// the step wrote, with `config` (not the step's command, user or network) as its
/// configuration.
pub fn add_layer_with_step(
    engine: &Engine,
    base: &str,
    archive: &[u8],
    config: &Json,
    step: &Step<'_>,
    tag: Option<&str>,
) -> Result<String, BuildError> {
    layer(engine, base, archive, config, Some(step), tag)
}

fn layer(
    engine: &Engine,
    base: &str,
    archive: &[u8],
    config: &Json,
    step: Option<&Step<'_>>,
    tag: Option<&str>,
) -> Result<String, BuildError> {
    let doc = engine
        .image_inspect(base)?
        .ok_or_else(|| BuildError::BaseAbsent(base.to_string()))?;
    let base_id = doc
        .get("Id")
        .and_then(Json::as_str)
        .ok_or_else(|| EngineError::Shape("GET /images/{name}/json".into()))?;
    let config = &with_base_env(&doc, config);
    let mut create = config.clone();
    if let Some(step) = step {
        create["User"] = Json::from(step.user);
        create["Entrypoint"] = Json::from(step.argv.clone());
        create["Cmd"] = Json::Null;
        create["NetworkDisabled"] = Json::Bool(true);
        create["HostConfig"] = serde_json::json!({"NetworkMode": "none"});
    }
    let mut helper = create_helper(engine, base_id, &create)?;
    put_archive(engine, helper.name(), archive)?;
    if let Some(step) = step {
        run_step(
            engine,
            helper.name(),
            step.what,
            Instant::now() + step.timeout,
        )?;
    }
    // The helper ran the step as its user with its command; the image gets the config's.
    // Podman's commit ignores the configuration in the body and keeps the container's, so
    // what the step changed is restated as instructions, which both engines apply.
    let changes = match step {
        Some(_) => step_changes(config),
        None => Vec::new(),
    };
    let id = commit_with(engine, helper.name(), config, &changes, tag)?;
    let _ = helper.remove();
    Ok(id)
}

/// `USER`, `ENTRYPOINT` and `CMD` of `config` as Dockerfile instructions (a missing
/// entrypoint or command is the empty list).
fn step_changes(config: &Json) -> Vec<String> {
    let list = |key: &str| match config.get(key) {
        Some(Json::Array(items)) => Json::Array(items.clone()).to_string(),
        _ => "[]".to_string(),
    };
    let mut changes = Vec::new();
    if let Some(user) = config.get("User").and_then(Json::as_str) {
        changes.push(format!("USER {user}"));
    }
    changes.push(format!("ENTRYPOINT {}", list("Entrypoint")));
    changes.push(format!("CMD {}", list("Cmd")));
    changes
}

/// The `PATH` a Dockerfile build gives an image whose base sets none (Docker's default; a base
/// imported from a root filesystem, like the offline CI base, has no environment at all).
pub const DEFAULT_PATH: &str = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// `config` with the base image's environment kept, as a Dockerfile build keeps it: the
/// base's variables in order (one `config` sets takes its value there; [`DEFAULT_PATH`] when
/// the base has no `PATH`), then `config`'s new ones. The engine's commit does not do this: an
/// `Env` in the commit replaces the base's, and the image would have no `PATH`.
fn with_base_env(base: &Json, config: &Json) -> Json {
    let ours: Vec<&str> = config
        .get("Env")
        .and_then(Json::as_array)
        .map(|e| e.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    let key = |entry: &str| entry.split_once('=').map_or(entry, |(k, _)| k).to_string();
    let mut env: Vec<String> = Vec::new();
    let mut inherited: Vec<&str> = base
        .pointer("/Config/Env")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    if !inherited.iter().any(|e| key(e) == "PATH") {
        inherited.insert(0, DEFAULT_PATH);
    }
    for entry in inherited {
        let replaced = ours.iter().find(|o| key(o) == key(entry));
        env.push(replaced.map_or(entry, |o| *o).to_string());
    }
    for entry in &ours {
        if !env.iter().any(|e| key(e) == key(entry)) {
            env.push((*entry).to_string());
        }
    }
    let mut config = config.clone();
    config["Env"] = Json::from(env);
    config
}

/// `repo:tag` (a colon after the last `/`), or `repo` with tag `latest`.
pub fn split_tag(reference: &str) -> (&str, &str) {
    match reference.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => (repo, tag),
        _ => (reference, "latest"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_split_after_the_last_slash() {
        assert_eq!(split_tag("apizr-ci/worker:dev"), ("apizr-ci/worker", "dev"));
        assert_eq!(
            split_tag("localhost:5000/w"),
            ("localhost:5000/w", "latest")
        );
        assert_eq!(split_tag("w"), ("w", "latest"));
    }

    #[test]
    fn the_base_environment_is_kept_as_a_dockerfile_env_keeps_it() {
        let base = serde_json::json!({"Config": {"Env": ["PATH=/bin", "LANG=C"]}});
        let config = serde_json::json!({"Env": ["LANG=C.UTF-8", "APIZR_PYTHON=python3"]});
        assert_eq!(
            with_base_env(&base, &config)["Env"],
            serde_json::json!(["PATH=/bin", "LANG=C.UTF-8", "APIZR_PYTHON=python3"])
        );
        let bare = with_base_env(&serde_json::json!({}), &config);
        assert_eq!(
            bare["Env"],
            serde_json::json!([DEFAULT_PATH, "LANG=C.UTF-8", "APIZR_PYTHON=python3"])
        );
    }

    #[test]
    fn what_a_step_changed_is_restated_for_the_commit() {
        let config = serde_json::json!({"User": "65532:65532", "Entrypoint": null,
            "Cmd": ["/usr/local/bin/python", "-I"]});
        assert_eq!(
            step_changes(&config),
            [
                "USER 65532:65532",
                "ENTRYPOINT []",
                r#"CMD ["/usr/local/bin/python","-I"]"#
            ]
        );
    }

    #[test]
    fn log_frames_are_joined_in_order() {
        let mut stream = vec![2, 0, 0, 0, 0, 0, 0, 4];
        stream.extend_from_slice(b"err\n");
        stream.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 3]);
        stream.extend_from_slice(b"out");
        assert_eq!(demultiplex(&stream), "err\nout");
        // A truncated last frame keeps what arrived.
        assert_eq!(demultiplex(&[1, 0, 0, 0, 0, 0, 0, 9, b'x']), "x");
    }
}
