//! The ContainerPlan (`apizr.runtime/v2`) lives in [`apizr_ir::plan_v2`] (pure data, shared with
//! the generator); re-exported here under its old path.

pub use apizr_ir::plan_v2::{ContainerPlan, OCI_BACKEND_VERSION, RUNTIME_PLAN_V2_SCHEMA};
