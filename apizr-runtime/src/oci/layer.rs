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
    let mut query = format!("container={}&pause=0", encode_query(container));
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
    let doc = engine
        .image_inspect(base)?
        .ok_or_else(|| BuildError::BaseAbsent(base.to_string()))?;
    let base_id = doc
        .get("Id")
        .and_then(Json::as_str)
        .ok_or_else(|| EngineError::Shape("GET /images/{name}/json".into()))?;
    let mut helper = create_helper(engine, base_id, config)?;
    put_archive(engine, helper.name(), archive)?;
    let id = commit(engine, helper.name(), config, tag)?;
    let _ = helper.remove();
    Ok(id)
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
}
