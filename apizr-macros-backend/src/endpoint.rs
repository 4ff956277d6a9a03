//! `#[endpoint]`: an ordinary Rust function served next to bound Python functions.
//!
//! Arguments and the result are serde types; the request schema is derived from a struct of
//! the arguments (schemars, draft 2020-12, `deny_unknown_fields` → `additionalProperties:
//! false`), the response schema from the result type, the description from the doc comments.
//! Limits are checked here, at compile time, so a typo is an error on the key.

use proc_macro2::TokenStream;
use syn::spanned::Spanned;
use syn::{GenericArgument, PathArguments, ReturnType, Type};

use crate::attr::{self, EndpointArgs};
use crate::errors::Errors;
use crate::item::{Arg, FnItem};
use crate::python::default_runtime;

/// What the function returns.
pub enum Output {
    /// No return type: the response is `null`.
    Unit,
    /// `T`: always succeeds.
    Plain(Type),
    /// `Result<T, E>` with `E: Display`: `Err` becomes an error answer with `E`'s message.
    Fallible(Type),
}

/// A checked endpoint.
pub struct Endpoint {
    pub item: FnItem,
    pub runtime: syn::Path,
    pub args: Vec<Arg>,
    pub limits: EndpointArgs,
    /// The doc comments, one leading space per line removed, trimmed; `None` when empty.
    pub description: Option<String>,
    pub output: Output,
}

pub fn analyze(attr: TokenStream, item: TokenStream) -> syn::Result<Endpoint> {
    let mut errors = Errors::new();
    let limits = errors.take(attr::endpoint(attr));
    let item = syn::parse2::<FnItem>(item);
    let item = match item {
        Ok(item) => item,
        Err(error) => {
            errors.push(error);
            return errors.fail();
        }
    };
    if item.body.is_none() {
        errors.spanned(
            item.sig.ident.span(),
            "#[endpoint] goes on an ordinary function with a body (to bind a Python function, use #[python])",
        );
    }
    let args = item.plain_args("#[endpoint]", &mut errors);
    for arg in &args {
        owned(&arg.ty, &mut errors);
    }
    let output = output(&item.sig.output);
    let description = description(&item.attrs);
    let Some(limits) = limits else {
        return errors.fail();
    };
    let runtime = limits.krate.clone().unwrap_or_else(default_runtime);
    errors.finish(Endpoint {
        item,
        runtime,
        args,
        limits,
        description,
        output,
    })
}

/// Arguments are decoded from JSON: borrowed and opaque types cannot be.
fn owned(ty: &Type, errors: &mut Errors) {
    match ty {
        Type::Reference(r) => errors.spanned(
            r.and_token.span,
            "endpoint arguments are decoded from JSON: use an owned type (`String`, not `&str`)",
        ),
        Type::ImplTrait(_)
        | Type::TraitObject(_)
        | Type::FnPtr(_)
        | Type::Infer(_)
        | Type::Never(_) => errors.spanned(
            ty.span(),
            "endpoint arguments are decoded from JSON: use a concrete serde type",
        ),
        _ => {}
    }
}

fn output(ret: &ReturnType) -> Output {
    let ReturnType::Type(_, ty) = ret else {
        return Output::Unit;
    };
    if let Type::Path(p) = &**ty
        && p.qself.is_none()
        && let Some(last) = p.path.segments.last()
        && last.ident == "Result"
        && let PathArguments::AngleBracketed(a) = &last.arguments
        && a.args.len() == 2
        && let Some(GenericArgument::Type(ok)) = a.args.first()
    {
        return Output::Fallible(ok.clone());
    }
    Output::Plain((**ty).clone())
}

/// `/// text` lines → the description (rustdoc's convention: one leading space is markup).
pub fn description(attrs: &[syn::Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .flat_map(|text| text.split('\n').map(str::to_string).collect::<Vec<_>>())
        .map(|line| line.strip_prefix(' ').map(str::to_string).unwrap_or(line))
        .collect();
    let text = lines.join("\n").trim().to_string();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use quote::quote;

    use super::*;

    #[test]
    fn descriptions_and_outputs() {
        let item: FnItem = syn::parse2(quote!(
            /// Quote a price.
            ///
            ///   Indented.
            fn quote(sku: String) -> Result<Quote, MyError> {
                todo()
            }
        ))
        .unwrap();
        assert_eq!(
            description(&item.attrs).unwrap(),
            "Quote a price.\n\n  Indented."
        );
        assert!(matches!(output(&item.sig.output), Output::Fallible(_)));
        assert!(matches!(
            output(&syn::parse_quote!(-> u32)),
            Output::Plain(_)
        ));
        assert!(matches!(output(&ReturnType::Default), Output::Unit));
    }

    #[test]
    fn borrowed_arguments_and_bad_limits_are_all_reported() {
        let error = analyze(
            quote!(wall_time = 5),
            quote!(
                fn f(name: &str, n: impl Copy) {}
            ),
        )
        .err()
        .unwrap();
        let messages: Vec<String> = error.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(
            messages,
            [
                "unknown limit `wall_time`; expected one of: wall_time_ms, max_input_bytes, concurrency (or `crate`)",
                "endpoint arguments are decoded from JSON: use an owned type (`String`, not `&str`)",
                "endpoint arguments are decoded from JSON: use a concrete serde type",
            ]
        );
    }
}
