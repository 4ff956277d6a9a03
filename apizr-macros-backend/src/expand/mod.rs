//! Code generation: [`python`] bindings, [`endpoint`] registrations, and the [`fallback`]
//! emitted with compile errors.

pub mod endpoint;
pub mod fallback;
pub mod python;
