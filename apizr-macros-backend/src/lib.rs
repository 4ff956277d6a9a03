//! apizr-macros-backend: everything behind `#[apizr_runtime::python]` and
//! `#[apizr_runtime::endpoint]`, as an ordinary library.
//!
//! A `proc-macro` crate may export nothing but macros and can only be exercised by a compiler,
//! so (like PyO3's `pyo3-macros-backend`) the thin `apizr-macros` crate only forwards token
//! streams here, and this crate is tested with plain unit tests and expansion snapshots.
//!
//! The passes, for both attributes:
//!
//! 1. [`attr`] — the attribute's options (every bad option reported, each on its own token);
//! 2. [`item`] — the annotated function;
//! 3. [`source`] and [`policy`] — read and inspect the Python file (never run it; on a big-stack
//!    thread, panics caught, results cached by content digest) and read the policy file;
//! 4. [`check`] — the Rust signature against the planned InvocationContract, by name, with the
//!    documented type mapping ([`check::types`]);
//! 5. [`expand`] — the binding (or endpoint) code, and [`expand::fallback`] for the error path:
//!    the compile errors *plus* a stub of the item, so that no error cascades from its absence.
//!
//! Every generated path is absolute and comes from [`paths`]. The public entry points never
//! fail; the `try_` twins return the errors (for tests).

pub mod attr;
pub mod bindings;
pub mod check;
mod debug;
pub mod endpoint;
pub mod errors;
pub mod expand;
pub mod item;
pub mod paths;
pub mod policy;
pub mod python;
pub mod source;

use proc_macro2::TokenStream;

pub use python::{PythonBinding, analyze_binding};

pub use source::ManifestDir;

/// `#[python(...)]`: the binding, or compile errors plus a stub of the item. Paths resolve
/// against `CARGO_MANIFEST_DIR`.
pub fn python(attr: TokenStream, item: TokenStream) -> TokenStream {
    python_in(attr, item, &ManifestDir::from_env())
}

/// [`python`] with paths resolved against `dir`.
pub fn python_in(attr: TokenStream, item: TokenStream, dir: &ManifestDir) -> TokenStream {
    let expanded = match try_python_in(attr.clone(), item.clone(), dir) {
        Ok(tokens) => tokens,
        Err(error) => expand::fallback::python(attr, item, error),
    };
    debug::print("python", &expanded);
    expanded
}

/// [`python_in`] that returns the combined errors instead of emitting them.
pub fn try_python_in(
    attr: TokenStream,
    item: TokenStream,
    dir: &ManifestDir,
) -> syn::Result<TokenStream> {
    let binding = analyze_binding(attr, item, dir)?;
    Ok(expand::python::expand(&binding))
}

/// `#[endpoint(...)]`: the function unchanged plus its registration, or compile errors plus
/// the function.
pub fn endpoint(attr: TokenStream, item: TokenStream) -> TokenStream {
    let expanded = match try_endpoint(attr.clone(), item.clone()) {
        Ok(tokens) => tokens,
        Err(error) => expand::fallback::endpoint(attr, item, error),
    };
    debug::print("endpoint", &expanded);
    expanded
}

/// [`endpoint`] that returns the combined errors instead of emitting them.
pub fn try_endpoint(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let endpoint = endpoint::analyze(attr, item)?;
    Ok(expand::endpoint::expand(&endpoint))
}
