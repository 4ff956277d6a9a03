//! The error path: the compile errors *and* a stand-in for the item, so that callers of the
//! function (and registration lists naming it) do not produce a second wave of errors about
//! a missing item (PyO3 and thiserror do the same; rmcp drops the item and errors cascade).
//! The stand-in never runs: the crate does not compile while the errors stand.

use proc_macro2::TokenStream;
use quote::quote;

use crate::item::FnItem;
use crate::paths::Paths;
use crate::python::default_runtime;

/// Errors plus a body for the body-less binding (with the user's signature) and a stand-in
/// registration module.
pub fn python(attr: TokenStream, item: TokenStream, error: syn::Error) -> TokenStream {
    let errors = error.to_compile_error();
    let Ok(item) = syn::parse2::<FnItem>(item) else {
        return errors;
    };
    stub(&runtime_of(attr), &item, errors, "#[python] binding")
}

/// Errors plus the function unchanged (it is ordinary Rust) and a stand-in registration.
pub fn endpoint(attr: TokenStream, item: TokenStream, error: syn::Error) -> TokenStream {
    let errors = error.to_compile_error();
    let runtime = runtime_of(attr);
    let Ok(parsed) = syn::parse2::<FnItem>(item.clone()) else {
        return quote!(#errors #item);
    };
    if parsed.body.is_none() {
        return stub(&runtime, &parsed, errors, "#[endpoint]");
    }
    let registration = registration(&runtime, &parsed);
    quote!(#errors #item #registration)
}

/// The `crate = "…"` option if it can be read, else `::apizr_runtime` (best effort: the
/// options may be what failed).
fn runtime_of(attr: TokenStream) -> syn::Path {
    let parser = syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated;
    let metas = syn::parse::Parser::parse2(parser, attr).unwrap_or_default();
    metas
        .iter()
        .find_map(|meta| match meta {
            syn::Meta::NameValue(nv) if nv.path.is_ident("crate") => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => s.parse().ok(),
                _ => None,
            },
            _ => None,
        })
        .unwrap_or_else(default_runtime)
}

fn stub(runtime: &syn::Path, item: &FnItem, errors: TokenStream, what: &str) -> TokenStream {
    let FnItem {
        attrs, vis, sig, ..
    } = item;
    let message = format!("{what} `{}` did not compile", item.name());
    let registration = registration(runtime, item);
    quote! {
        #errors
        #registration
        #(#attrs)*
        #[allow(unused_variables, clippy::diverging_sub_expression)]
        #vis #sig {
            ::core::panic!(#message)
        }
    }
}

fn registration(runtime: &syn::Path, item: &FnItem) -> TokenStream {
    let p = Paths::new(runtime).private();
    let vis = &item.vis;
    let name = &item.sig.ident;
    if !item.sig.generics.params.is_empty() {
        return TokenStream::new();
    }
    quote! {
        #[doc(hidden)]
        #[allow(unreachable_pub)]
        #vis mod #name {
            /// Stand-in for a binding that did not compile.
            #[doc(hidden)]
            pub fn __apizr_capability() -> #p::Registration {
                ::core::unreachable!()
            }
        }
    }
}
