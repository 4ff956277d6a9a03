//! The container plan (`apizr.runtime/v2`) and the runtime image it pins: what a governed OCI
//! bundle records per capability, a parity artifact with the reference.
//!
//! Pure data, like the v1 [`RuntimePlan`](crate::plan::RuntimePlan) it wraps: the container
//! backend (`apizr-runtime`'s `oci/`) runs it, the generator writes it, and neither needs the
//! other for it. The plan wraps an unchanged v1 RuntimePlan (`worker`, whose v1 policy copies
//! only limits, environment and effects from the v2 policy) with the v2 policy and the runtime
//! image, and chains their digests: `policy_digest` = sha256 of the canonical v2 policy,
//! `worker_digest` = sha256 of the canonical worker plan. Under `subprocess.mode: deny` the
//! recorded policy keeps `deny` while the worker's v1 policy says `allow` (the container
//! enforces it).
//!
//! An image is named only by its full `sha256:` ID plus a platform: tags and short IDs are
//! rejected before anything runs (`invalid_input`), so what runs is exactly what was reviewed.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use crate::Digest;
use crate::json::{CanonicalError, Value, to_value};
use crate::plan::RuntimePlan;
use crate::policy_v2::PolicyV2;

/// The `provider` of every runtime image record.
pub const PROVIDER: &str = "apizr.docker-engine/v1";
/// `linux/amd64` or `linux/arm64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Platform {
    #[serde(rename = "linux/amd64")]
    LinuxAmd64,
    #[serde(rename = "linux/arm64")]
    LinuxArm64,
}

impl Platform {
    pub fn parse(text: &str) -> Option<Platform> {
        match text {
            "linux/amd64" => Some(Platform::LinuxAmd64),
            "linux/arm64" => Some(Platform::LinuxArm64),
            _ => None,
        }
    }

    /// From an image's `Os` and `Architecture`.
    pub fn from_image(os: &str, arch: &str) -> Option<Platform> {
        match (os, arch) {
            ("linux", "amd64") => Some(Platform::LinuxAmd64),
            ("linux", "arm64") => Some(Platform::LinuxArm64),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Platform::LinuxAmd64 => "linux/amd64",
            Platform::LinuxArm64 => "linux/arm64",
        }
    }

    pub fn architecture(self) -> &'static str {
        match self {
            Platform::LinuxAmd64 => "amd64",
            Platform::LinuxArm64 => "arm64",
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `{"image":"sha256:<64 hex>","platform":…,"provider":"apizr.docker-engine/v1"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuntimeImage {
    pub image: String,
    pub platform: Platform,
    pub provider: &'static str,
}

/// Why an image reference is not acceptable (`invalid_input`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageRefError {
    #[error("runtime image must be a full image ID sha256:<64 lowercase hex>, got {0:?}")]
    NotAnId(String),
    #[error("runtime platform must be linux/amd64 or linux/arm64, got {0:?}")]
    Platform(String),
}

impl RuntimeImage {
    pub fn parse(image: &str, platform: &str) -> Result<RuntimeImage, ImageRefError> {
        if !is_image_id(image) {
            return Err(ImageRefError::NotAnId(image.to_string()));
        }
        let platform =
            Platform::parse(platform).ok_or_else(|| ImageRefError::Platform(platform.into()))?;
        Ok(RuntimeImage {
            image: image.to_string(),
            platform,
            provider: PROVIDER,
        })
    }
}

/// `sha256:` + exactly 64 lowercase hex digits.
pub fn is_image_id(text: &str) -> bool {
    text.strip_prefix("sha256:")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

pub const RUNTIME_PLAN_V2_SCHEMA: &str = "apizr.runtime/v2";
pub const OCI_BACKEND_VERSION: &str = "apizr.oci-container/v1";

/// A container plan. The worker plan is held as its JSON value so that a recorded plan can be
/// re-encoded byte for byte.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerPlan {
    pub policy: PolicyV2,
    pub runtime: RuntimeImage,
    pub worker: Value,
}

impl ContainerPlan {
    /// Plan from a v1 worker plan built with `policy.worker_policy()`.
    pub fn new(
        worker: &RuntimePlan,
        policy: PolicyV2,
        runtime: RuntimeImage,
    ) -> Result<Self, CanonicalError> {
        Ok(ContainerPlan {
            policy,
            runtime,
            worker: to_value(worker)?,
        })
    }

    /// The plan document.
    pub fn to_value(&self) -> Result<Value, CanonicalError> {
        let mut map = BTreeMap::new();
        let mut put = |k: &str, v: Value| {
            map.insert(k.to_string(), v);
        };
        put("backend_version", Value::Str(OCI_BACKEND_VERSION.into()));
        put("policy", to_value(&self.policy)?);
        put("policy_digest", to_value(&self.policy.digest()?)?);
        put("runtime", to_value(&self.runtime)?);
        put("schema_version", Value::Str(RUNTIME_PLAN_V2_SCHEMA.into()));
        put("worker", self.worker.clone());
        put(
            "worker_digest",
            to_value(&Digest::sha256(&self.worker.canonical_bytes()?))?,
        );
        Ok(Value::Object(map))
    }

    /// Canonical bytes (document + `\n`).
    pub fn canonical_bytes(&self) -> Result<Vec<u8>, CanonicalError> {
        self.to_value()?.canonical_bytes()
    }

    /// The plan digest.
    pub fn digest(&self) -> Result<Digest, CanonicalError> {
        Ok(Digest::sha256(&self.canonical_bytes()?))
    }
}
