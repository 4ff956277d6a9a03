//! The expansion of a checked `#[python]` binding:
//!
//! ```text
//! #[doc(hidden)] <vis> mod <name> {          // same name, type namespace (as PyO3 does)
//!     pub static __APIZR_BINDING: PythonBinding = …;   // what runs, and its digest chain
//!     pub fn __apizr_capability() -> Registration;     // for explicit registration lists
//! }
//! <attrs> <vis> [async] fn <name>(<args>) -> Result<T, E> {
//!     convert_error::<T, E>(call_sync::<T>(&<name>::__APIZR_BINDING, &[Argument::required::<A>("a", &a), …]))
//! }
//! ```
//!
//! The source is embedded with `include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/", file))`
//! (and the policy file, when given, included the same way into an unused constant): cargo
//! then rebuilds (and the macro re-checks) when either file changes, the binary carries the
//! bytes it runs, and no absolute path of the build machine appears in the expansion. Calls
//! that need a trait of a user type (`Serialize` for arguments, `DeserializeOwned` for the
//! result, `From<CallError>` for the error) are spanned on that type, so the compiler's error
//! points at it and not at the attribute.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::check::option_inner;
use crate::paths::Paths;
use crate::policy::Governance;
use crate::python::{Digests, PythonBinding};

/// The binding's items.
pub fn expand(b: &PythonBinding) -> TokenStream {
    let paths = Paths::new(&b.runtime);
    let p = paths.private();
    let item = &b.item;
    let attrs = &item.attrs;
    let vis = &item.vis;
    let sig = &item.sig;
    let name = &sig.ident;
    let data = binding_data(b, &p);
    // The policy file is read by the macro; including its bytes makes cargo rebuild (and the
    // macro re-read it) when it changes, as for the source. The bytes themselves are unused:
    // the canonical policy is embedded.
    let policy_tracked = b.policy_file.as_ref().map(|policy| {
        let file = policy.value();
        quote_spanned!(policy.span()=>
            const _: &[u8] = ::core::include_bytes!(
                ::core::concat!(::core::env!("CARGO_MANIFEST_DIR"), "/", #file)
            );
        )
    });
    let args = b.checked.params.iter().map(|param| {
        let ident = &param.ident;
        let key = &param.python;
        let ty = &param.ty;
        if param.omit_if_none {
            let inner = option_inner(ty).unwrap_or(ty);
            quote_spanned!(ty.span()=> #p::Argument::optional::<#inner>(#key, &#ident))
        } else {
            quote_spanned!(ty.span()=> #p::Argument::required::<#ty>(#key, &#ident))
        }
    });
    let ok_ty = &b.checked.ok_ty;
    let err_ty = &b.checked.err_ty;
    let call = if item.is_async() {
        quote_spanned!(ok_ty.span()=> #p::call_async::<#ok_ty>(&#name::__APIZR_BINDING, &[#(#args),*]).await)
    } else {
        quote_spanned!(ok_ty.span()=> #p::call_sync::<#ok_ty>(&#name::__APIZR_BINDING, &[#(#args),*]))
    };
    // `E: From<CallError>` is required by a helper whose type argument carries `E`'s span, so
    // a missing impl is one error, on `E`.
    let convert = quote_spanned!(err_ty.span()=> #p::convert_error::<#ok_ty, #err_ty>(#call));
    quote! {
        #[doc(hidden)]
        #[allow(unreachable_pub)]
        #vis mod #name {
            /// The embedded binding: source bytes, contract, policy and digest chain.
            #[doc(hidden)]
            pub static __APIZR_BINDING: #p::PythonBinding = #data;

            #policy_tracked

            /// This binding, for an explicit registration list.
            #[doc(hidden)]
            pub fn __apizr_capability() -> #p::Registration {
                #p::Registration::Python(&__APIZR_BINDING)
            }
        }

        #(#attrs)*
        #vis #sig {
            #convert
        }
    }
}

fn binding_data(b: &PythonBinding, p: &TokenStream) -> TokenStream {
    let file = b.file.value();
    let include = quote_spanned!(b.file.span()=>
        ::core::include_bytes!(::core::concat!(::core::env!("CARGO_MANIFEST_DIR"), "/", #file))
    );
    let executable = match &b.notebook_executable {
        None => quote!(::core::option::Option::None),
        Some(bytes) => {
            let lit = syn::LitByteStr::new(bytes, proc_macro2::Span::call_site());
            quote!(::core::option::Option::Some(#lit))
        }
    };
    let kind = match b.kind {
        apizr_ir::SourceKind::Python => quote!(#p::SourceKind::Python),
        apizr_ir::SourceKind::Notebook => quote!(#p::SourceKind::Notebook),
    };
    let rust_name = b.item.name();
    let module = &b.module;
    let function = &b.function;
    let capability_id = &b.capability_id;
    let contract = &b.contract;
    let governance = match &b.governance {
        Governance::Direct => quote!(#p::Governance::Direct),
        Governance::V1 { canonical, .. } => {
            let policy = canonical.trim_end();
            quote!(#p::Governance::V1 { policy: #policy })
        }
        Governance::V2 {
            canonical,
            image,
            platform,
            ..
        } => {
            let policy = canonical.trim_end();
            quote!(#p::Governance::V2 { policy: #policy, image: #image, platform: #platform })
        }
    };
    let conditional = b.conditional;
    let digests = digests(&b.digests, p);
    quote! {
        #p::PythonBinding {
            rust_name: #rust_name,
            file: #file,
            source: #include,
            kind: #kind,
            notebook_executable: #executable,
            module: #module,
            function: #function,
            capability_id: #capability_id,
            contract: #contract,
            governance: #governance,
            conditional: #conditional,
            digests: #digests,
        }
    }
}

fn digests(d: &Digests, p: &TokenStream) -> TokenStream {
    let text = |digest: &apizr_ir::Digest| digest.prefixed();
    let optional = |digest: &Option<apizr_ir::Digest>| match digest {
        Some(digest) => {
            let text = digest.prefixed();
            quote!(::core::option::Option::Some(#text))
        }
        None => quote!(::core::option::Option::None),
    };
    let (source, executable, ir, readiness, interface) = (
        text(&d.source),
        text(&d.executable),
        text(&d.ir),
        text(&d.readiness),
        text(&d.interface),
    );
    let (policy, plan) = (optional(&d.policy), optional(&d.plan));
    quote! {
        #p::Digests {
            source: #source,
            executable: #executable,
            ir: #ir,
            readiness: #readiness,
            interface: #interface,
            policy: #policy,
            plan: #plan,
        }
    }
}
