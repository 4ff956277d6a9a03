//! The expansion of an `#[endpoint]`: the function unchanged, plus
//!
//! ```text
//! #[doc(hidden)] <vis> mod <name> {
//!     use super::*;                       // the argument and result types, as the user names them
//!     #[derive(Deserialize, JsonSchema)] #[serde(deny_unknown_fields)]
//!     struct __ApizrArguments { <args> }  // the request schema and decoder
//!     pub fn __apizr_capability() -> Registration;   // name, description, limits, schemas, handler
//! }
//! ```
//!
//! Sync functions get a `Handler::Sync` (the server runs them off the async executor), async
//! ones a `Handler::Async`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::endpoint::{Endpoint, Output};
use crate::paths::Paths;

fn optional_u64(value: Option<u64>) -> TokenStream {
    match value {
        Some(n) => quote!(::core::option::Option::Some(#n)),
        None => quote!(::core::option::Option::None),
    }
}

pub fn expand(e: &Endpoint) -> TokenStream {
    let paths = Paths::new(&e.runtime);
    let p = paths.private();
    let serde_crate = paths.private_str("serde");
    let schemars_crate = paths.private_str("schemars");
    let item = &e.item;
    let vis = &item.vis;
    let name = &item.sig.ident;
    let rust_name = item.name();
    let idents: Vec<_> = e.args.iter().map(|a| &a.ident).collect();
    let fields = e.args.iter().map(|a| {
        let ident = &a.ident;
        let ty = &a.ty;
        quote!(#ident: #ty)
    });
    let description = match &e.description {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    };
    let (wall, input, concurrency) = (
        optional_u64(e.limits.wall_time_ms),
        optional_u64(e.limits.max_input_bytes),
        optional_u64(e.limits.concurrency),
    );
    let await_ = item.is_async().then(|| quote!(.await));
    let invoke = quote!(super::#name(#(#idents),*) #await_);
    let (output_ty, encode) = match &e.output {
        Output::Unit => (quote!(()), quote!(#p::encode_output(&{ #invoke; }))),
        Output::Plain(ty) => (
            quote!(#ty),
            quote_spanned!(ty.span()=> #p::encode_output::<#ty>(&#invoke)),
        ),
        Output::Fallible(ty) => (
            quote!(#ty),
            quote_spanned!(ty.span()=> #p::encode_result::<#ty, _>(#invoke)),
        ),
    };
    let body = quote! {
        let __ApizrArguments { #(#idents),* } =
            #p::decode_arguments::<__ApizrArguments>(__apizr_input)?;
        #encode
    };
    let handler = if item.is_async() {
        quote!(#p::Handler::Async(|__apizr_input| #p::boxed(async move { #body })))
    } else {
        quote!(#p::Handler::Sync(|__apizr_input| { #body }))
    };
    quote! {
        #item

        #[doc(hidden)]
        #[allow(unreachable_pub, non_snake_case, unused_imports)]
        #vis mod #name {
            use super::*;

            #[derive(#p::serde::Deserialize, #p::schemars::JsonSchema)]
            #[serde(crate = #serde_crate, deny_unknown_fields)]
            #[schemars(crate = #schemars_crate)]
            struct __ApizrArguments {
                #(#fields,)*
            }

            /// This endpoint, for an explicit registration list.
            #[doc(hidden)]
            pub fn __apizr_capability() -> #p::Registration {
                #p::Registration::Native(#p::NativeEndpoint {
                    name: #rust_name,
                    description: #description,
                    limits: #p::Limits {
                        wall_time_ms: #wall,
                        max_input_bytes: #input,
                        concurrency: #concurrency,
                    },
                    input_schema: #p::input_schema_for::<__ApizrArguments>,
                    output_schema: #p::output_schema_for::<#output_ty>,
                    handler: #handler,
                })
            }
        }
    }
}
