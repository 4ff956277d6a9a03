//! Readiness assessment. OWNER: readiness helper.
use apizr_ir::{CapabilityIr, Digest, READINESS_POLICY, ReadinessReport};

use crate::module::ParsedModule;

pub fn assess(_parsed: &ParsedModule, ir: &CapabilityIr, ir_digest: Digest) -> ReadinessReport {
    ReadinessReport {
        assessments: vec![],
        ir_digest,
        policy_version: READINESS_POLICY,
        source: ir.source.clone(),
        structured_types: vec![],
    }
}
