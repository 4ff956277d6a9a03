//! The inspection envelope (`apizr.inspection/v1`): IR + readiness with both digests.

use serde::Serialize;

use crate::capability::CapabilityIr;
use crate::digest::Digest;
use crate::readiness::ReadinessReport;

pub const INSPECTION_SCHEMA: &str = "apizr.inspection/v1";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inspection {
    pub capability_ir: CapabilityIr,
    pub ir_digest: Digest,
    pub readiness: ReadinessReport,
    pub readiness_digest: Digest,
    pub schema_version: &'static str,
}
