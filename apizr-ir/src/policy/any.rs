//! [`AnyPolicy`]: a policy document of either version, parsed in one place.
//!
//! Why one entry: `apizr execute`, `apizr serve`, bundles and generated projects all read a
//! policy file and then branch on its version. The rule that decides the version (the
//! document's `schema_version` is `apizr.execution/v2`; anything else is read as v1, so a bad
//! `schema_version` gets v1's precise error) lives here and nowhere else.

use serde_json::Value as Json;

use super::{EffectsPolicy, Limits, POLICY_V1_SCHEMA, PolicyError, PolicyV1};
use crate::digest::Digest;
use crate::json::CanonicalError;
use crate::policy_v2::{POLICY_V2_SCHEMA, PolicyV2, V2Refusal};

/// An execution policy: v1 (`local-process`) or v2 (`oci-container`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnyPolicy {
    V1(PolicyV1),
    V2(PolicyV2),
}

impl AnyPolicy {
    /// Parse a decoded document with the strictness of its version.
    ///
    /// ```
    /// use apizr_ir::policy::AnyPolicy;
    ///
    /// let v1 = AnyPolicy::from_slice(br#"{"limits":{"wall_time_ms":100}}"#).unwrap();
    /// assert_eq!(v1.schema_version(), "apizr.execution/v1");
    /// let v2 = AnyPolicy::from_slice(br#"{"schema_version":"apizr.execution/v2"}"#).unwrap();
    /// assert_eq!(v2.worker_policy().limits.wall_time_ms, 5000);
    /// assert!(AnyPolicy::from_slice(br#"{"network":{"mode":"none"}}"#).is_err());
    /// ```
    pub fn from_json(doc: &Json) -> Result<Self, PolicyError> {
        if AnyPolicy::is_v2_document(doc) {
            PolicyV2::from_json(doc).map(AnyPolicy::V2)
        } else {
            PolicyV1::from_json(doc).map(AnyPolicy::V1)
        }
    }

    /// Whether a decoded document is read as v2 (for callers that check other inputs, such as
    /// the runtime image flags, before the document itself).
    pub fn is_v2_document(doc: &Json) -> bool {
        doc.get("schema_version").and_then(Json::as_str) == Some(POLICY_V2_SCHEMA)
    }

    /// Parse JSON bytes (a syntax error is reported at `$`).
    pub fn from_slice(bytes: &[u8]) -> Result<Self, PolicyError> {
        let doc: Json = serde_json::from_slice(bytes).map_err(|e| PolicyError {
            path: "$".into(),
            expected: format!("valid JSON: {e}"),
        })?;
        AnyPolicy::from_json(&doc)
    }

    /// `apizr.execution/v1` or `apizr.execution/v2`.
    pub fn schema_version(&self) -> &'static str {
        match self {
            AnyPolicy::V1(_) => POLICY_V1_SCHEMA,
            AnyPolicy::V2(_) => POLICY_V2_SCHEMA,
        }
    }

    /// Whether this is a v2 (container) policy.
    pub fn is_v2(&self) -> bool {
        matches!(self, AnyPolicy::V2(_))
    }

    /// Canonical bytes (document + `\n`) of the parsed policy.
    pub fn canonical_bytes(&self) -> Result<Vec<u8>, CanonicalError> {
        match self {
            AnyPolicy::V1(p) => p.canonical_bytes(),
            AnyPolicy::V2(p) => p.canonical_bytes(),
        }
    }

    /// `policy_digest`.
    pub fn digest(&self) -> Result<Digest, CanonicalError> {
        match self {
            AnyPolicy::V1(p) => p.digest(),
            AnyPolicy::V2(p) => p.digest(),
        }
    }

    pub fn limits(&self) -> &Limits {
        match self {
            AnyPolicy::V1(p) => &p.limits,
            AnyPolicy::V2(p) => &p.limits,
        }
    }

    pub fn effects(&self) -> &EffectsPolicy {
        match self {
            AnyPolicy::V1(p) => &p.effects,
            AnyPolicy::V2(p) => &p.effects,
        }
    }

    /// The memory limit of one call, in bytes: v1's optional `resources.memory_bytes`, v2's
    /// (always set, it has a default). Servers add these up for their governed memory budget.
    pub fn memory_bytes(&self) -> Option<u64> {
        match self {
            AnyPolicy::V1(p) => p.resources.as_ref().and_then(|r| r.memory_bytes),
            AnyPolicy::V2(p) => Some(p.resources.memory_bytes),
        }
    }

    /// The v1 policy the Python worker runs under: the policy itself, or a v2 policy's derived
    /// worker policy (limits, environment and effects; the container enforces the rest).
    pub fn worker_policy(&self) -> PolicyV1 {
        match self {
            AnyPolicy::V1(p) => p.clone(),
            AnyPolicy::V2(p) => p.worker_policy(),
        }
    }

    /// Why a valid policy cannot be honoured before anything runs (v2 only; v1 refusals depend
    /// on the host and are planned by the runtime).
    pub fn refusal(&self) -> Option<V2Refusal> {
        match self {
            AnyPolicy::V1(_) => None,
            AnyPolicy::V2(p) => p.refusal(),
        }
    }
}

impl From<PolicyV1> for AnyPolicy {
    fn from(policy: PolicyV1) -> Self {
        AnyPolicy::V1(policy)
    }
}

impl From<PolicyV2> for AnyPolicy {
    fn from(policy: PolicyV2) -> Self {
        AnyPolicy::V2(policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_bytes_is_optional_in_v1_and_defaulted_in_v2() {
        let v1 = AnyPolicy::from_slice(b"{}").unwrap();
        assert_eq!(v1.memory_bytes(), None);
        let v1 = AnyPolicy::from_slice(br#"{"resources":{"memory_bytes":268435456}}"#).unwrap();
        assert_eq!(v1.memory_bytes(), Some(268_435_456));
        let v2 = AnyPolicy::from_slice(br#"{"schema_version":"apizr.execution/v2"}"#).unwrap();
        assert_eq!(
            v2.memory_bytes(),
            Some(PolicyV2::default().resources.memory_bytes)
        );
    }

    #[test]
    fn the_version_decides_the_parser() {
        let v2 = AnyPolicy::from_slice(br#"{"schema_version":"apizr.execution/v2"}"#).unwrap();
        assert!(v2.is_v2());
        assert_eq!(v2.digest().unwrap(), PolicyV2::default().digest().unwrap());
        let v1 = AnyPolicy::from_slice(b"{}").unwrap();
        assert_eq!(v1, AnyPolicy::V1(PolicyV1::default()));
        // Anything but v2 is read as v1, whose error names the field.
        let err = AnyPolicy::from_slice(br#"{"schema_version":"apizr.execution/v3"}"#).unwrap_err();
        assert_eq!(err.path, "schema_version");
        assert_eq!(AnyPolicy::from_slice(b"{").unwrap_err().path, "$");
        let refused =
            AnyPolicy::from_slice(br#"{"schema_version":"apizr.execution/v2","network":{}}"#)
                .unwrap();
        assert_eq!(refused.refusal(), Some(V2Refusal::NetworkInherit));
    }
}
