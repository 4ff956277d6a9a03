//! BoundSource and the runtime plan v1 (`apizr.runtime/v1`).
//!
//! A plan binds one capability's interface contract to the exact inspected bytes and one
//! policy; its canonical bytes are hashed into `plan_digest`, the last link of the digest chain
//! source → IR → readiness → interface → policy → plan. The plan carries no paths, PIDs,
//! timestamps or environment values, so the same inputs give the same digest on every host
//! (the reference writes these bytes as `execution/plans/<name>.json`).

use serde::Serialize;

use crate::capability::SourceRecord;
use crate::digest::Digest;
use crate::inspection::Inspection;
use crate::interface::InvocationContract;
use crate::json::CanonicalError;
use crate::policy::PolicyV1;

pub const RUNTIME_PLAN_SCHEMA: &str = "apizr.runtime/v1";
pub const LOCAL_BACKEND_VERSION: &str = "apizr.local-process/v1";

/// The source binding reused by every generated artifact.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoundSource {
    pub source: SourceRecord,
    /// sha256 of the executable Python text (`transformed_digest` or `digest`).
    pub executable_digest: Digest,
    /// `source/<module path>.py`
    pub executable_path: String,
    pub ir_digest: Digest,
    pub readiness_digest: Digest,
}

impl BoundSource {
    /// The binding of an inspection: the executable is the source itself for `.py` files and
    /// the exported text for notebooks.
    pub fn of(inspection: &Inspection) -> Self {
        let source = inspection.capability_ir.source.clone();
        let executable_digest = source
            .transformed_digest
            .clone()
            .unwrap_or_else(|| source.digest.clone());
        let executable_path = executable_path(&source.module);
        BoundSource {
            source,
            executable_digest,
            executable_path,
            ir_digest: inspection.ir_digest.clone(),
            readiness_digest: inspection.readiness_digest.clone(),
        }
    }
}

/// `source/` + the module with dots as slashes + `.py`.
pub fn executable_path(module: &str) -> String {
    format!("source/{}.py", module.replace('.', "/"))
}

/// The runtime plan v1. Field names are wire literals; keys are sorted by the encoder.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuntimePlan {
    pub backend_version: &'static str,
    pub capability_id: String,
    pub executable_digest: Digest,
    pub executable_path: String,
    pub inspection: Inspection,
    pub interface: InvocationContract,
    pub interface_digest: Digest,
    pub ir_digest: Digest,
    pub policy: PolicyV1,
    pub policy_digest: Digest,
    pub readiness_digest: Digest,
    pub schema_version: &'static str,
    pub source: SourceRecord,
}

impl RuntimePlan {
    /// Assemble a plan; fails only if a digest cannot be computed (non-finite floats).
    pub fn new(
        inspection: &Inspection,
        interface: InvocationContract,
        policy: PolicyV1,
    ) -> Result<Self, CanonicalError> {
        let bound = BoundSource::of(inspection);
        Ok(RuntimePlan {
            backend_version: LOCAL_BACKEND_VERSION,
            capability_id: interface.capability_id.clone(),
            executable_digest: bound.executable_digest,
            executable_path: bound.executable_path,
            inspection: inspection.clone(),
            interface_digest: interface.digest()?,
            interface,
            ir_digest: bound.ir_digest,
            policy_digest: policy.digest()?,
            policy,
            readiness_digest: bound.readiness_digest,
            schema_version: RUNTIME_PLAN_SCHEMA,
            source: bound.source,
        })
    }

    /// Canonical bytes (document + `\n`).
    pub fn canonical_bytes(&self) -> Result<Vec<u8>, CanonicalError> {
        crate::json::canonical_bytes(self)
    }

    /// `plan_digest`.
    pub fn digest(&self) -> Result<Digest, CanonicalError> {
        Ok(Digest::sha256(&self.canonical_bytes()?))
    }

    /// The BoundSource view of this plan.
    pub fn bound_source(&self) -> BoundSource {
        BoundSource {
            source: self.source.clone(),
            executable_digest: self.executable_digest.clone(),
            executable_path: self.executable_path.clone(),
            ir_digest: self.ir_digest.clone(),
            readiness_digest: self.readiness_digest.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executable_path_uses_slashes() {
        assert_eq!(executable_path("pkg.sub.mod"), "source/pkg/sub/mod.py");
        assert_eq!(executable_path("pricing"), "source/pricing.py");
    }
}
