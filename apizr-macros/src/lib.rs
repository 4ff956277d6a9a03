//! apizr-macros: bind Python capabilities to typed Rust functions at compile time.
//!
//! The macros arrive with the macros issue; this crate exists so that the workspace layout and
//! dependency direction are fixed from the start.

use proc_macro::TokenStream;

/// Placeholder-free marker: re-emits its input unchanged. It is real code (and tested by the
/// compiler) so that downstream crates can already depend on `apizr-macros`.
#[proc_macro_attribute]
pub fn passthrough(_attr: TokenStream, item: TokenStream) -> TokenStream {
    let parsed: proc_macro2::TokenStream = item.into();
    quote::quote!(#parsed).into()
}
