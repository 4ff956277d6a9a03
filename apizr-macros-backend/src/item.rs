//! The annotated function. `#[python]` takes a body-less `fn name(...) -> ...;` (the Python
//! function is the body); `#[endpoint]` takes an ordinary function. Both are parsed into the
//! same shape so that the fallback can re-emit either.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Block, FnArg, Ident, Pat, Signature, Token, Type, Visibility};

use crate::errors::Errors;

/// `attrs vis sig (; | { … })`.
#[derive(Clone)]
pub struct FnItem {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub sig: Signature,
    pub body: Option<Block>,
    pub semi: Option<Token![;]>,
}

impl Parse for FnItem {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let sig: Signature = input.parse()?;
        let (body, semi) = if input.peek(Token![;]) {
            (None, Some(input.parse()?))
        } else {
            (Some(input.parse()?), None)
        };
        Ok(FnItem {
            attrs,
            vis,
            sig,
            body,
            semi,
        })
    }
}

impl ToTokens for FnItem {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        for attr in &self.attrs {
            attr.to_tokens(tokens);
        }
        self.vis.to_tokens(tokens);
        self.sig.to_tokens(tokens);
        match &self.body {
            Some(body) => body.to_tokens(tokens),
            None => self.semi.unwrap_or_default().to_tokens(tokens),
        }
    }
}

/// One `name: Type` argument.
#[derive(Clone)]
pub struct Arg {
    pub ident: Ident,
    /// The name without `r#`: the Python / JSON name.
    pub name: String,
    pub ty: Type,
}

impl FnItem {
    /// The function's name without `r#`.
    pub fn name(&self) -> String {
        unraw(&self.sig.ident)
    }

    pub fn is_async(&self) -> bool {
        self.sig.asyncness.is_some()
    }

    /// The `name: Type` arguments; receivers, patterns, variadics, generics, `const`/`unsafe`/
    /// `extern` functions are errors on their own token (`what` names the attribute).
    pub fn plain_args(&self, what: &str, errors: &mut Errors) -> Vec<Arg> {
        let sig = &self.sig;
        if let Some(lt) = &sig.generics.lt_token {
            errors.spanned(lt.span, format!("{what} functions cannot be generic"));
        }
        if let Some(c) = &sig.constness {
            errors.spanned(c.span, format!("{what} functions cannot be `const`"));
        }
        if let syn::Safety::Unsafe(u) = &sig.safety {
            errors.spanned(u.span, format!("{what} functions cannot be `unsafe`"));
        }
        if let Some(abi) = &sig.abi {
            errors.spanned(
                abi.extern_token.span,
                format!("{what} functions use the Rust ABI"),
            );
        }
        if let Some(v) = &sig.variadic {
            errors.spanned(
                v.dots.spans[0],
                format!("{what} functions cannot be variadic"),
            );
        }
        let mut out = Vec::new();
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(r) => errors.spanned(
                    r.self_token.span,
                    format!("{what} functions are free functions: no `self`"),
                ),
                FnArg::Typed(typed) => match &*typed.pat {
                    Pat::Ident(p) if p.subpat.is_none() && p.by_ref.is_none() => out.push(Arg {
                        ident: p.ident.clone(),
                        name: unraw(&p.ident),
                        ty: (*typed.ty).clone(),
                    }),
                    other => errors.spanned(
                        syn::spanned::Spanned::span(other),
                        "expected a plain parameter name: arguments are passed by name",
                    ),
                },
            }
        }
        out
    }
}

/// `r#type` → `type`.
pub fn unraw(ident: &Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_string).unwrap_or(text)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use quote::quote;

    use super::*;

    #[test]
    fn bodyless_and_ordinary_functions() {
        let item: FnItem = syn::parse2(quote!(
            /// Doc.
            pub async fn total(prices: Vec<f64>, r#type: Option<f64>) -> Result<f64, E>;
        ))
        .unwrap();
        assert!(item.body.is_none() && item.is_async());
        let mut errors = Errors::new();
        let args = item.plain_args("#[python]", &mut errors);
        assert!(errors.is_empty());
        assert_eq!(
            args.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
            ["prices", "type"]
        );
        let round_trip: FnItem = syn::parse2(item.to_token_stream()).unwrap();
        assert_eq!(round_trip.sig, item.sig);
        assert_eq!(round_trip.attrs, item.attrs);
        assert!(round_trip.body.is_none());
        let item: FnItem = syn::parse2(quote!(
            fn f<T>(&self, (a, b): (i32, i32)) {}
        ))
        .unwrap();
        let mut errors = Errors::new();
        item.plain_args("#[endpoint]", &mut errors);
        let messages: Vec<String> = errors
            .finish(())
            .unwrap_err()
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(
            messages,
            [
                "#[endpoint] functions cannot be generic",
                "#[endpoint] functions are free functions: no `self`",
                "expected a plain parameter name: arguments are passed by name",
            ]
        );
    }
}
