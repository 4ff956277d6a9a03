//! apizr-codegen: the project generator behind `apizr generate rest|mcp`, as a library.
//!
//! Source bytes + selection + optional policy → every file of a deployable REST or MCP server
//! project, in memory ([`generate`] returns a [`FileTree`]); [`output::write_tree`] is the one
//! function that writes, into a checked output directory. The CLI only reads inputs and prints;
//! tests and the macro backend call the same functions.
//!
//! ```
//! use apizr_codegen::{Request, RuntimeDependency, Transport, generate};
//! use apizr_ir::SourceKind;
//!
//! let generated = generate(&Request {
//!     transport: Transport::Rest,
//!     source: b"def total(prices: list[float]) -> float:\n    return sum(prices)\n".to_vec(),
//!     kind: SourceKind::Python,
//!     module: "pricing".into(),
//!     selection: None,
//!     policy: None,
//!     runtime_image: None,
//!     runtime_platform: None,
//!     runtime_dependency: RuntimeDependency::version(),
//!     allow_conditional: false,
//!     readiness: apizr_ir::ReadinessPolicy::V1,
//!     autoscaling: Default::default(),
//!     package: None,
//! })
//! .unwrap();
//! assert!(generated.tree.contains_key("openapi.json"));
//! assert!(generated.tree.contains_key("src/main.rs"));
//! assert!(generated.tree.contains_key("source/pricing.py"));
//! ```
//!
//! Modules (each builds only on [`model`] and on the documents before it):
//! * [`model`] — the values: [`Request`], [`Planned`](model::Planned), [`Generated`],
//!   [`GenerateError`];
//! * [`generate`](mod@generate) — policy → inspection → selection → the file tree;
//! * `plan` — one source inspected and planned, or several modules of a package, each as alone;
//! * [`conditional`] — `--allow-conditional` selection (beyond the reference);
//! * [`openapi`], [`mcp`], [`manifest`] — the contract documents (byte parity with 0.4.6);
//!   `openapi.json`, `mcp-tools.json`, tool names and the project layout's file names are
//!   `apizr_ir::surface`, shared with the live servers and the bundle loader;
//! * [`project`] — the Rust crate around them, rendered from the workspace's
//!   `templates/generate/` (askama, text escaper);
//! * [`deploy`] — image reference, container command and autoscaling choice, shared by the
//!   templates and `apizr image build --project`;
//! * [`lockfile`] — the project's `Cargo.lock`, resolved offline by cargo in a scratch dir
//!   (the only module that starts a process);
//! * [`seccomp`] — governed v1: the container's seccomp profile (Docker's default plus the
//!   launcher's namespace and mount calls), from a Rust table;
//! * [`output`] — output-directory safety and the one place that writes (temp dir + rename);
//! * [`package`] — a module of a package directory (`DIR --select pkg.mod:func`): its import
//!   closure and its third-party requirements (read by `apizr_inspect::package::requirements`,
//!   the reader readiness v2 uses too).
//!
//! Why a crate of its own: the generator is reusable code (the macro backend, tests, other
//! front-ends), it needs the Python parser (through `apizr-inspect`) but not the runtime, and
//! the CLI should not be the only way to reach it.

pub mod conditional;
pub mod deploy;
pub mod generate;
pub mod lockfile;
pub mod manifest;
pub mod mcp;
pub mod model;
pub mod openapi;
pub mod output;
pub mod package;
mod plan;
pub mod project;
pub mod project_image;
mod pyjson;
pub mod seccomp;

pub use generate::generate;
pub use model::{
    FileTree, GenerateError, Generated, PackageModule, Request, RuntimeDependency, ServedPackage,
    Transport,
};
