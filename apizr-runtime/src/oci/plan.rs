//! The ContainerPlan (`apizr.runtime/v2`, contract 7.2): what a governed OCI bundle records
//! per capability, and a parity artifact with the reference.
//!
//! It wraps an unchanged v1 RuntimePlan (`worker`, whose v1 policy copies only limits,
//! environment and effects from the v2 policy) with the v2 policy and the runtime image, and
//! chains their digests: `policy_digest` = sha256 of the canonical v2 policy, `worker_digest`
//! = sha256 of the canonical worker plan. Under `subprocess.mode: deny` the recorded policy
//! keeps `deny` while the worker's v1 policy says `allow` (the container enforces it).

use std::collections::BTreeMap;

use apizr_ir::Digest;
use apizr_ir::json::{CanonicalError, Value, to_value};
use apizr_ir::plan::RuntimePlan;
use apizr_ir::policy_v2::PolicyV2;

use super::image::RuntimeImage;

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
