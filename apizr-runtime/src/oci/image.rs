//! The pre-flight image check and the labels worker images carry. The image identity itself
//! ([`RuntimeImage`]: a full `sha256:` ID plus a platform) is pure data in
//! [`apizr_ir::plan_v2`], re-exported here. The check never pulls: an image the engine does
//! not have is `runtime_image_unavailable`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value as Json;

pub use apizr_ir::plan_v2::{ImageRefError, PROVIDER, Platform, RuntimeImage, is_image_id};

use super::engine::{Engine, EngineError};

/// Label every worker image carries (same as the reference).
pub const WORKER_LABEL: (&str, &str) = ("org.apizr.worker.protocol", "apizr.runtime/v1");
/// Label required for the strict subprocess-deny profile.
pub const SUBPROCESS_DENY_LABEL: (&str, &str) = (
    "org.apizr.subprocess-deny.protocol",
    "apizr.subprocess-deny/v1",
);
/// Digest of the worker source baked into images built by `apizr image build` (informational:
/// the runtime always sends its own worker).
pub const WORKER_DIGEST_LABEL: &str = "org.apizr.worker.digest";

/// An image ID as engines answer it, in the `sha256:` form: Podman's `/commit` answers the
/// bare 64 hex digits where Docker answers `sha256:…`.
pub fn full_image_id(id: &str) -> String {
    let bare = id.len() == 64 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if bare {
        format!("sha256:{id}")
    } else {
        id.to_string()
    }
}

/// Why a present-or-absent image cannot run the call (`runtime_image_unavailable`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error("image {0} is not present on the engine (apizr never pulls)")]
    Absent(String),
    #[error("engine resolved {requested} to {found}")]
    IdMismatch { requested: String, found: String },
    #[error("image platform is {found}, requested {requested}")]
    Platform { requested: String, found: String },
    #[error("image declares volumes")]
    Volumes,
    #[error("image lacks label {0}")]
    Label(String),
    /// A package with requirements, served under v2, and an image without that set.
    #[error(
        "image {image} carries {has} but the package requires {required}: build a worker \
         image with them (apizr image build --base IMG --package DIR --wheelhouse DIR) and \
         serve with its ID"
    )]
    Requirements {
        image: String,
        has: String,
        required: String,
    },
}

/// What the check learned about the image (for reports).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImageFacts {
    pub id: String,
    pub platform: String,
    pub labels: BTreeMap<String, String>,
}

/// Inspect `image` and require identity, platform, no volumes and the worker label(s).
pub fn check_image(
    engine: &Engine,
    image: &RuntimeImage,
    strict_deny: bool,
) -> Result<Result<ImageFacts, ImageError>, EngineError> {
    let Some(doc) = engine.image_inspect(&image.image)? else {
        return Ok(Err(ImageError::Absent(image.image.clone())));
    };
    Ok(facts_ok(&doc, image, strict_deny))
}

/// The pure half of [`check_image`].
pub fn facts_ok(
    doc: &Json,
    image: &RuntimeImage,
    strict_deny: bool,
) -> Result<ImageFacts, ImageError> {
    let text = |k: &str| doc.get(k).and_then(Json::as_str).unwrap_or_default();
    let id = text("Id");
    if id != image.image {
        return Err(ImageError::IdMismatch {
            requested: image.image.clone(),
            found: id.to_string(),
        });
    }
    let platform = format!("{}/{}", text("Os"), text("Architecture"));
    if Platform::from_image(text("Os"), text("Architecture")) != Some(image.platform) {
        return Err(ImageError::Platform {
            requested: image.platform.to_string(),
            found: platform,
        });
    }
    let config = doc.get("Config").unwrap_or(&Json::Null);
    if config
        .get("Volumes")
        .and_then(Json::as_object)
        .is_some_and(|v| !v.is_empty())
    {
        return Err(ImageError::Volumes);
    }
    let labels: BTreeMap<String, String> = config
        .get("Labels")
        .and_then(Json::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    let mut required = vec![WORKER_LABEL];
    if strict_deny {
        required.push(SUBPROCESS_DENY_LABEL);
    }
    for (key, value) in required {
        if labels.get(key).map(String::as_str) != Some(value) {
            return Err(ImageError::Label(format!("{key}={value}")));
        }
    }
    Ok(ImageFacts {
        id: id.to_string(),
        platform,
        labels,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const ID: &str = "sha256:e7f29bb3e6e439ed758b8081c8d344c70b385288aceb6ff864db6a0ba7eba8bd";

    #[test]
    fn only_full_ids_and_known_platforms() {
        let hex = "a".repeat(64);
        assert_eq!(full_image_id(&hex), format!("sha256:{hex}"));
        assert_eq!(
            full_image_id(&format!("sha256:{hex}")),
            format!("sha256:{hex}")
        );
        assert_eq!(full_image_id("abc"), "abc");
        assert!(RuntimeImage::parse(ID, "linux/amd64").is_ok());
        for bad in [
            "python:3.11",
            "e7f29bb3e6e4",
            "sha256:e7f29bb3e6e4",
            &ID.to_uppercase(),
            &format!("{ID}0"),
        ] {
            assert!(
                matches!(
                    RuntimeImage::parse(bad, "linux/amd64"),
                    Err(ImageRefError::NotAnId(_))
                ),
                "{bad}"
            );
        }
        assert!(RuntimeImage::parse(ID, "linux/386").is_err());
        let json = serde_json::to_string(&RuntimeImage::parse(ID, "linux/arm64").unwrap()).unwrap();
        assert_eq!(
            json,
            format!(
                r#"{{"image":"{ID}","platform":"linux/arm64","provider":"apizr.docker-engine/v1"}}"#
            )
        );
    }

    #[test]
    fn facts_require_platform_labels_and_no_volumes() {
        let image = RuntimeImage::parse(ID, "linux/amd64").unwrap();
        let doc = |arch: &str, labels: Json, volumes: Json| {
            serde_json::json!({"Id": ID, "Os": "linux", "Architecture": arch,
                "Config": {"Labels": labels, "Volumes": volumes}})
        };
        let good = serde_json::json!({"org.apizr.worker.protocol": "apizr.runtime/v1"});
        assert!(facts_ok(&doc("amd64", good.clone(), Json::Null), &image, false).is_ok());
        assert_eq!(
            facts_ok(&doc("amd64", good.clone(), Json::Null), &image, true),
            Err(ImageError::Label(
                "org.apizr.subprocess-deny.protocol=apizr.subprocess-deny/v1".into()
            ))
        );
        assert!(matches!(
            facts_ok(&doc("arm64", good.clone(), Json::Null), &image, false),
            Err(ImageError::Platform { .. })
        ));
        assert_eq!(
            facts_ok(
                &doc("amd64", good, serde_json::json!({"/data": {}})),
                &image,
                false
            ),
            Err(ImageError::Volumes)
        );
        assert!(matches!(
            facts_ok(&doc("amd64", Json::Null, Json::Null), &image, false),
            Err(ImageError::Label(_))
        ));
    }
}
