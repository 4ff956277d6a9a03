//! Governed v2 serving: each call runs in a fresh container through [`crate::oci::OciRuntime`]
//! (`apizr.execution/v2`, contract 8.5).
//!
//! Why a separate backend type: start-up must probe the engine and the runtime image before the
//! server reports ready (a failed probe means no server), while argument validation happens
//! before any Docker work so that invalid input answers without starting a container. The
//! call itself is blocking (Engine API over a unix socket), so the invoker runs it on tokio's
//! blocking pool.

use apizr_ir::policy::PolicyV1;
use apizr_ir::policy_v2::PolicyV2;

use super::core::{CallResult, GOVERNED_INVALID_DETAIL, ServeError};
use crate::oci::image::check_image;
use crate::oci::{OciCall, OciConfig, OciRuntime, OciStatus, RuntimeImage};
use crate::request::CallRequest;
use crate::status::Status;

/// The container backend of one server: the runtime (engine probed once), the v2 policy, the
/// image and the derived v1 worker policy.
#[derive(Debug)]
pub struct OciBackend {
    runtime: OciRuntime,
    policy: PolicyV2,
    image: RuntimeImage,
    worker: PolicyV1,
}

impl OciBackend {
    pub fn new(policy: PolicyV2, image: RuntimeImage) -> Self {
        OciBackend {
            runtime: OciRuntime::new(OciConfig::default()),
            worker: policy.worker_policy(),
            policy,
            image,
        }
    }

    /// Connect to the engine, require its controls, and check the image (identity, platform,
    /// labels). Blocking.
    pub fn probe(&self) -> Result<(), ServeError> {
        let (engine, caps) = self
            .runtime
            .engine()
            .map_err(|e| ServeError::Backend(e.to_string()))?;
        if let Some(sweep) = self.runtime.sweep_report() {
            // What killed servers or calls left behind; a failed removal is said, never hidden.
            let removed = sweep.removed.len() + sweep.bundles_removed.len();
            if removed > 0 {
                eprintln!("apizr: start-up sweep removed {removed} leftover(s) of dead callers");
            }
            for failed in &sweep.failed {
                eprintln!(
                    "apizr: start-up sweep could not remove {}: {}",
                    failed.item, failed.reason
                );
            }
        }
        if !caps.usable() {
            return Err(ServeError::Backend(format!(
                "engine lacks {}",
                caps.missing.join(", ")
            )));
        }
        match check_image(engine, &self.image, self.policy.subprocess_deny()) {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(ServeError::Backend(e.to_string())),
            Err(e) => Err(ServeError::Backend(e.to_string())),
        }
    }

    /// The container's memory limit (counted by the server-wide governed gate).
    pub fn memory_bytes(&self) -> u64 {
        self.policy.resources.memory_bytes
    }

    /// The v1 policy the worker inside the container runs under.
    pub fn worker_policy(&self) -> PolicyV1 {
        self.worker.clone()
    }

    /// One call in a fresh container (blocking); the container is removed before this returns.
    pub fn execute(&self, request: &CallRequest) -> CallResult {
        let outcome = self.runtime.execute(OciCall {
            call: request,
            policy: &self.policy,
            image: &self.image,
            original: None,
        });
        if let Some(refused) = &outcome.report.refused {
            // The client only sees a failure; the operator is told which control did not hold.
            eprintln!("apizr: call refused: {refused}");
        }
        map_status(outcome.envelope.status, outcome.envelope.value)
    }
}

/// Contract 8.5: v2 statuses onto the transport-neutral result.
pub fn map_status(status: OciStatus, value: apizr_ir::Value) -> CallResult {
    match status {
        OciStatus::V1(Status::Success) => CallResult::Success(value),
        OciStatus::V1(Status::InvalidInput) => {
            CallResult::InvalidInput(GOVERNED_INVALID_DETAIL.into())
        }
        OciStatus::V1(Status::Timeout) => CallResult::Timeout,
        OciStatus::ResourceLimit => CallResult::ResourceLimit,
        OciStatus::V1(other) => CallResult::Failed(Some(other)),
        OciStatus::BackendUnavailable
        | OciStatus::RuntimeImageUnavailable
        | OciStatus::CleanupFailed => CallResult::Failed(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_as_contract_8_5() {
        let v = apizr_ir::Value::Null;
        assert_eq!(
            map_status(OciStatus::ResourceLimit, v.clone()),
            CallResult::ResourceLimit
        );
        assert_eq!(
            map_status(OciStatus::V1(Status::Timeout), v.clone()),
            CallResult::Timeout
        );
        assert_eq!(
            map_status(OciStatus::V1(Status::InvalidInput), v.clone()),
            CallResult::InvalidInput(GOVERNED_INVALID_DETAIL.into())
        );
        assert_eq!(
            map_status(OciStatus::BackendUnavailable, v.clone()),
            CallResult::Failed(None)
        );
        assert_eq!(
            map_status(OciStatus::V1(Status::Success), apizr_ir::Value::Int(3)),
            CallResult::Success(apizr_ir::Value::Int(3))
        );
    }
}
