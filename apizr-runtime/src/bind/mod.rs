//! Bindings made by `apizr-macros` (cargo feature `macros`): what the generated code links.
//!
//! * [`CallError`] — why a bound Python call failed; its status names the envelope status.
//! * [`init`] — call first in `main`: a governed call may re-execute the binary as its
//!   launcher, and that process must become the launcher before anything else runs.
//! * [`Registration`] and [`capabilities!`](crate::capabilities) — explicit registration of
//!   bound Python functions and native endpoints for a server (no life-before-main).
//! * [`serve`] — serving a registration list over REST and MCP with the server of
//!   `apizr serve` ([`serve::serve_main`]).
//! * [`project`] — the `main` of a generated project: its bindings and compiled-in contract
//!   files, verified against each other at start-up ([`project::project_main`]).
//! * `__private` (hidden) — the types and functions expansions name; not a public API.

mod error;
pub mod private;
pub mod project;
mod run;
pub mod serve;

pub use error::CallError;
pub use private::Registration;
pub use project::{ProjectFiles, project_main};
pub use serve::serve_main;

/// Run the launcher if this process was started as one (then never returns); otherwise do
/// nothing. Call it first in `main` of every program that uses governed `#[python]` bindings.
pub fn init() {
    crate::launcher::run_if_requested();
    run::mark_initialized();
}

/// The registrations of `#[python]` bindings and `#[endpoint]` functions, by path:
/// `apizr_runtime::capabilities![total, pricing::quote]` → `Vec<Registration>`.
#[macro_export]
macro_rules! capabilities {
    ($($($segment:ident)::+),* $(,)?) => {
        ::std::vec![$($($segment)::+ :: __apizr_capability()),*]
    };
}
