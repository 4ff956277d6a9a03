//! apizr-runtime: governed execution of Python capabilities.
//!
//! This crate is the execution core (policies, worker protocol, backends). It currently only
//! re-exports the contract crate; the runtime issue fills it in.

pub use apizr_ir as ir;
