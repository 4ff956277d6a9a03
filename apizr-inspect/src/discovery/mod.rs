//! Discovery and IR building. OWNER: discovery helper.
use apizr_ir::{CAPABILITY_SCHEMA, CapabilityIr, SourceRecord};

use crate::module::ParsedModule;

pub fn build_ir(_parsed: &ParsedModule, source: SourceRecord) -> CapabilityIr {
    CapabilityIr {
        schema_version: CAPABILITY_SCHEMA,
        source,
        capabilities: vec![],
        diagnostics: vec![],
    }
}
