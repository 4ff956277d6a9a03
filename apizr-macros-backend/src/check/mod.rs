//! The Rust signature of a `#[python]` binding against the capability's InvocationContract.
//!
//! Parameters are matched by name (Rust order is free; keyword-only parameters are ordinary
//! Rust parameters). Every Python parameter must be present and no other. A Python parameter
//! with a default may be `Option<T>` in Rust: `None` leaves the Python default in place. Types
//! follow [`types`]. The return type is `Result<T, E>` where `T` follows the same mapping and
//! `E: From<apizr_runtime::CallError>` (the compiler checks that on `E` itself).
//!
//! Every problem becomes an error on the offending token that names the Python side, e.g.
//! "parameter `a` is `int` in calc.py:3, found `String`"; all of them are reported at once.

pub mod suggest;
pub mod types;

use apizr_ir::interface::{ContractParameter, InvocationContract};
use apizr_ir::{Capability, TypeKind};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{GenericArgument, Ident, PathArguments, ReturnType, Type};

use self::types::{Mismatch, Side, check, type_text};
use crate::errors::Errors;
use crate::item::{Arg, FnItem};

/// One Rust argument bound to one Python parameter.
#[derive(Debug, Clone)]
pub struct BoundParam {
    pub ident: Ident,
    /// The Python parameter name (= the JSON key).
    pub python: String,
    pub ty: Type,
    /// `Option<T>` for a parameter with a Python default: `None` omits the argument.
    pub omit_if_none: bool,
}

/// A checked signature.
#[derive(Debug, Clone)]
pub struct Checked {
    pub params: Vec<BoundParam>,
    pub ok_ty: Type,
    pub err_ty: Type,
}

/// Where the Python side lives, for messages: `py/calc.py:3`.
pub struct Origin<'a> {
    pub file: &'a str,
    pub capability: &'a Capability,
}

impl Origin<'_> {
    fn at(&self) -> String {
        format!("{}:{}", self.file, self.capability.source.line)
    }

    /// The annotation of a Python parameter as written, for messages.
    fn declared(&self, name: &str) -> String {
        let param = self
            .capability
            .signature
            .parameters
            .iter()
            .find(|p| p.name == name);
        let annotation = param
            .and_then(|p| p.annotation.as_ref())
            .map_or_else(|| "unannotated".to_string(), |a| a.declared.clone());
        match param.and_then(|p| p.default.as_ref()) {
            Some(default) => format!("{annotation} = {}", default.declared),
            None => annotation,
        }
    }
}

/// Check `item` against `contract`; all errors go to `errors`.
pub fn signature(
    item: &FnItem,
    args: &[Arg],
    contract: &InvocationContract,
    origin: &Origin<'_>,
    errors: &mut Errors,
) -> Option<Checked> {
    let python = &contract.name;
    let at = origin.at();
    let mut params = Vec::new();
    let mut extra: Vec<&Arg> = Vec::new();
    for arg in args {
        match contract.parameters.iter().find(|p| p.name == arg.name) {
            Some(param) => {
                if let Some(bound) = parameter(arg, param, origin, errors) {
                    params.push(bound);
                }
            }
            None => extra.push(arg),
        }
    }
    let mut missing: Vec<&ContractParameter> = contract
        .parameters
        .iter()
        .filter(|p| !args.iter().any(|a| a.name == p.name))
        .collect();
    let names: Vec<&str> = contract
        .parameters
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    for arg in extra {
        let closest = missing
            .iter()
            .enumerate()
            .filter_map(|(i, p)| similar(&arg.name, &p.name).then_some(i))
            .next();
        let message = match closest {
            Some(i) => {
                let p = missing.remove(i);
                format!(
                    "`{}` is not a parameter of `{python}` in {at}; did you mean `{}`?",
                    arg.name, p.name
                )
            }
            None if names.is_empty() => {
                format!(
                    "`{}` is not a parameter of `{python}` in {at}, which takes none",
                    arg.name
                )
            }
            None => format!(
                "`{}` is not a parameter of `{python}` in {at}; its parameters are: {}",
                arg.name,
                names.join(", ")
            ),
        };
        errors.spanned(arg.ident.span(), message);
    }
    let list_span = item.sig.paren_token.span.join();
    for p in missing {
        let hint = suggest::rust_type(&p.type_spec, !p.required);
        errors.spanned(
            list_span,
            format!(
                "missing parameter `{}` of `{python}` in {at}: `{}: {}` (declare it as `{}: {hint}`)",
                p.name,
                p.name,
                origin.declared(&p.name),
                p.name
            ),
        );
    }
    let (ok_ty, err_ty) = result_types(item, errors)?;
    let returns = origin
        .capability
        .signature
        .returns
        .annotation
        .as_ref()
        .map_or_else(|| "unannotated".to_string(), |a| a.declared.clone());
    if let Err(m) = check(&ok_ty, &contract.returns, Side::Result) {
        errors.push(mismatch(
            &format!("`{python}` returns `{returns}` in {at}"),
            &ok_ty,
            &m,
        ));
    }
    Some(Checked {
        params,
        ok_ty,
        err_ty,
    })
}

fn parameter(
    arg: &Arg,
    param: &ContractParameter,
    origin: &Origin<'_>,
    errors: &mut Errors,
) -> Option<BoundParam> {
    let what = format!(
        "parameter `{}` is `{}` in {}",
        param.name,
        origin.declared(&param.name),
        origin.at()
    );
    let option_inner = option_inner(&arg.ty);
    let (checked_ty, omit_if_none) = match option_inner {
        Some(inner) if !param.required => (inner, true),
        Some(_) if !accepts_none(param) => {
            let hint = suggest::rust_type(&param.type_spec, false);
            errors.spanned(
                arg.ty.span(),
                format!(
                    "{what} and has no default, found `{}`; use `{hint}`, or give the Python parameter a default",
                    type_text(&arg.ty)
                ),
            );
            return None;
        }
        _ => (&arg.ty, false),
    };
    match check(checked_ty, &param.type_spec, Side::Argument) {
        Ok(()) => Some(BoundParam {
            ident: arg.ident.clone(),
            python: param.name.clone(),
            ty: arg.ty.clone(),
            omit_if_none,
        }),
        Err(m) => {
            errors.push(mismatch(&what, &arg.ty, &m));
            None
        }
    }
}

fn accepts_none(param: &ContractParameter) -> bool {
    let spec = &param.type_spec;
    match spec.kind {
        TypeKind::Any | TypeKind::Null => true,
        TypeKind::Union => spec.items.iter().any(|i| i.kind == TypeKind::Null),
        TypeKind::Literal => spec
            .values
            .iter()
            .any(|v| matches!(v, apizr_ir::Value::Null)),
        _ => false,
    }
}

/// "<what>, found `<whole>`; expected …" on the innermost offending type.
fn mismatch(what: &str, whole: &Type, m: &Mismatch) -> syn::Error {
    let found = type_text(whole);
    let message = if found == m.found {
        format!("{what}, found `{found}`; expected {}", m.expected)
    } else {
        format!(
            "{what}, found `{found}`: `{}` should be {}",
            m.found, m.expected
        )
    };
    syn::Error::new(m.span, message)
}

/// `T` of `Option<T>` (by the last path segment).
pub fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    match &last.arguments {
        PathArguments::AngleBracketed(a) if a.args.len() == 1 => match a.args.first() {
            Some(GenericArgument::Type(t)) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

/// `(T, E)` of the `Result<T, E>` return type.
fn result_types(item: &FnItem, errors: &mut Errors) -> Option<(Type, Type)> {
    let message = "a #[python] binding returns `Result<T, apizr_runtime::CallError>` (or any `Result<T, E>` where `E: From<CallError>`): a call can fail (`timeout`, `policy_refused`, …)";
    let ty = match &item.sig.output {
        ReturnType::Default => {
            errors.spanned(item.sig.paren_token.span.close(), message);
            return None;
        }
        ReturnType::Type(_, ty) => ty,
    };
    let pair = match &**ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().and_then(|last| {
            if last.ident != "Result" {
                return None;
            }
            match &last.arguments {
                PathArguments::AngleBracketed(a) if a.args.len() == 2 => {
                    let mut types = a.args.iter().filter_map(|g| match g {
                        GenericArgument::Type(t) => Some(t.clone()),
                        _ => None,
                    });
                    Some((types.next()?, types.next()?))
                }
                _ => None,
            }
        }),
        _ => None,
    };
    if pair.is_none() {
        errors.spanned(ty.span(), message);
    }
    pair
}

/// A likely misspelling: edit distance at most 2, and at most a third of the longer name.
fn similar(a: &str, b: &str) -> bool {
    let distance = levenshtein(a, b);
    let longest = a.chars().count().max(b.chars().count());
    distance <= 2 && distance * 3 <= longest.max(3)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

/// The span of the binding's name (for errors about the whole binding).
pub fn name_span(item: &FnItem) -> Span {
    item.sig.ident.span()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspellings() {
        assert!(similar("taxx", "tax") && similar("price", "prices") && similar("a", "b"));
        assert!(!similar("name", "prices") && !similar("ab", "xy"));
        assert_eq!(levenshtein("kitten", "sitting"), 3);
    }
}
