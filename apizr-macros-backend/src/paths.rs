//! Every path the expansions use. Generated code names nothing the user could shadow: only
//! `::core::…`, `::std::…` and the runtime's hidden support module (`::apizr_runtime` unless
//! `crate = "…"` renames it).

use proc_macro2::TokenStream;
use quote::quote;

/// The runtime crate and its `__private` support module.
pub struct Paths {
    pub runtime: syn::Path,
}

impl Paths {
    pub fn new(runtime: &syn::Path) -> Self {
        Paths {
            runtime: runtime.clone(),
        }
    }

    /// `::apizr_runtime::__private`.
    pub fn private(&self) -> TokenStream {
        let rt = &self.runtime;
        quote!(#rt::__private)
    }

    /// `::apizr_runtime::CallError`.
    pub fn call_error(&self) -> TokenStream {
        let rt = &self.runtime;
        quote!(#rt::CallError)
    }

    /// The path as a string literal, for `#[serde(crate = "…")]`-style attributes.
    pub fn private_str(&self, module: &str) -> String {
        let text = self.private().to_string().replace(' ', "");
        format!("{text}::{module}")
    }
}
