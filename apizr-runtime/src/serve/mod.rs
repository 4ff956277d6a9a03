//! Serving capabilities over REST (feature `rest`) and MCP (feature `mcp`).
//!
//! Layers, each depending only on the ones above it:
//! * [`spec`] — what is served ([`ServeSpec`], [`ExecutionMode`], [`Gates`]); plain data;
//! * [`error`] — [`ServeError`] and [`BundleError`];
//! * [`decode`], [`bundle`] — a generated project's directory, verified, into a [`ServeSpec`]
//!   (`bundle_modules`: a bundle of several modules of a package, one spec per module);
//! * [`reply`] — the one mapping of an outcome to REST and MCP answers ([`Rejected`] calls
//!   included);
//! * `gate` — the per-capability and server-wide admission gates (drop guards);
//! * [`invoker`] — [`Invoker`]: the call API ([`crate::call`]) behind the gates, on one
//!   executor (one Python source, one execution mode);
//! * [`native`] — native endpoints (`#[endpoint]` functions) and their limits;
//! * [`service`] — [`Service`]: every served name routed to an invoker or a native endpoint;
//!   the one thing both transports call ([`ServicePlan`]: what it serves);
//! * [`metrics`] — Prometheus counters;
//! * [`options`] — listen address, token, transport, tuning flags, and the [`HttpLimits`] of
//!   both transports;
//! * `http` — our hyper accept loop (idle/header/body timeouts, body memory bound);
//! * `rest` — the axum REST server; `mcp` — the MCP server;
//! * [`entry`] — [`bundle_main`] (a generated project's `main`) and [`serve_blocking`].
//! * [`args`] — the server flags (clap), shared by `apizr serve` and generated binaries;
//!
//! The warm pool behind direct mode lives in [`crate::pool`].

pub mod args;
pub mod bundle;
mod bundle_modules;
pub mod decode;
pub mod entry;
pub mod error;
mod gate;
#[cfg(feature = "http")]
pub mod http;
pub mod invoker;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod metrics;
pub mod native;
pub mod openapi;
pub mod options;
pub mod reply;
#[cfg(feature = "rest")]
pub mod rest;
#[cfg(feature = "rest")]
mod rest_docs;
pub mod service;
pub mod spec;

pub use self::args::{BundleArgs, ServerArgs};
pub use self::entry::{
    bundle_main, bundle_main_in, serve, serve_blocking, serve_plan, serve_plan_blocking,
};
pub use self::error::{BundleError, ServeError};
pub use self::invoker::Invoker;
pub use self::options::{HttpLimits, ServeOptions, SpecOverrides, Transport};
pub use self::reply::{Answer, HttpReply, McpReply, Rejected, http_reply, mcp_reply};
pub use self::service::{Service, ServicePlan};
pub use self::spec::{
    CancelGuard, CancelOnDrop, DEFAULT_OCI_POOL, ExecutionMode, Gates, ServeSource, ServeSpec,
    ServedCapability,
};
