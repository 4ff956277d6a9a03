//! Serving capabilities over REST (feature `rest`) and MCP (feature `mcp`).
//!
//! * [`core`] — what is served and how calls run ([`ServeSpec`], [`Invoker`], [`CallResult`]),
//!   shared by both transports;
//! * [`invoker`] — [`Invoker`]: admission, validation, pool or governed runtime;
//! * `gate` — the per-capability and server-wide admission gates (drop guards);
//! * [`oci`] — governed v2: a fresh container per call (engine and image probed at start-up);
//! * [`bundle`], [`decode`] — loading and verifying a generated project directory;
//! * [`metrics`] — Prometheus counters;
//! * [`options`] — the command line of a generated project ([`bundle_main`]) and the
//!   [`HttpLimits`] of both transports;
//! * `http` — our hyper accept loop (idle/header/body timeouts, body memory bound);
//! * `rest` — the axum REST server; `mcp` — the MCP server.
//!
//! The warm pool behind direct mode lives in [`crate::pool`].

pub mod bundle;
pub mod core;
pub mod decode;
mod gate;
#[cfg(feature = "http")]
pub mod http;
pub mod invoker;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod metrics;
pub mod oci;
#[cfg(feature = "rest")]
pub mod openapi;
pub mod options;
#[cfg(feature = "rest")]
pub mod rest;
#[cfg(feature = "rest")]
mod rest_docs;

pub use self::core::{
    CallResult, CancelGuard, CancelOnDrop, ExecutionMode, Gates, Invoker, ServeError, ServeSource,
    ServeSpec, ServedCapability,
};
pub use self::options::{HttpLimits, ServeOptions, Transport, bundle_main, bundle_main_in};
