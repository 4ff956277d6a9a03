//! apizr-ir: the apizr contract as pure data.
//!
//! * [`json`] — the JSON value model used for every hashed artifact, and the canonical encoder
//!   (sorted keys, compact separators, raw UTF-8, CPython-`repr` floats, one trailing newline).
//! * [`digest`] — `{"algorithm":"sha256","value":…}` digest objects.
//! * [`capability`] — the Capability IR (`apizr.capability/v1`).
//! * [`readiness`] — the readiness report (`apizr.readiness/v1`) and TypeSpec.
//! * [`inspection`] — the inspection envelope (`apizr.inspection/v1`).
//! * [`import_time`] — whether a served module may be imported before its call (from readiness).
//! * [`interface`] — the InvocationContract and its JSON Schema mapping.
//! * [`plan`] — BoundSource and the runtime plan v1 (`apizr.runtime/v1`).
//! * [`plan_v2`] — the container plan (`apizr.runtime/v2`) and the runtime image it pins.
//! * [`admission`] — JSON admission: lexical preflight and the value-graph budget.
//! * [`policy`] — execution policy v1 (`apizr.execution/v1`): strict parsing and canonical bytes;
//!   typed section modes; [`AnyPolicy`](policy::AnyPolicy), a policy of either version.
//! * [`policy_v2`] — execution policy v2 (`apizr.execution/v2`, OCI containers).
//! * [`surface`] — what servers publish about contracts: `openapi.json` and routes, MCP tool
//!   names and `mcp-tools.json` (one implementation for the generator and the live servers).
//!
//! No I/O, no async: everything here is a value and a pure function over values.

pub mod admission;
pub mod capability;
pub mod digest;
pub mod import_time;
pub mod inspection;
pub mod interface;
pub mod json;
pub mod plan;
pub mod plan_v2;
pub mod policy;
pub mod policy_v2;
pub mod readiness;
pub mod surface;
pub mod temporal;

pub use capability::*;
pub use digest::Digest;
pub use inspection::{INSPECTION_SCHEMA, Inspection};
pub use json::{CanonicalError, Value, canonical_bytes, to_value};
pub use readiness::*;
