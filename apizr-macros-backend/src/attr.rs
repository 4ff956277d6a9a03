//! The options of both attributes. Unknown, repeated or ill-typed options are errors on the
//! option's own token, and parsing carries on so that every bad option is reported at once.

use proc_macro2::{Span, TokenStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, LitInt, LitStr, Meta, Token};

use crate::errors::Errors;

/// How a bound Python function runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Under a policy (v1: a fresh governed process per call; v2: a fresh container).
    Governed,
    /// The warm pool of persistent, ungoverned workers (`mode = "direct"`).
    Direct,
}

/// `#[python(...)]`.
pub struct PythonArgs {
    /// Relative to the crate's manifest directory.
    pub file: LitStr,
    /// The Python function; defaults to the Rust function's name.
    pub function: Option<LitStr>,
    /// The logical module name; defaults to the file stem.
    pub module: Option<LitStr>,
    /// A v1 or v2 policy file, relative to the manifest directory.
    pub policy: Option<LitStr>,
    pub mode: Mode,
    /// The `mode = "…"` literal, for errors about the mode.
    pub mode_span: Option<Span>,
    /// Bind a `conditional` capability (the flag's span, for errors).
    pub allow_conditional: Option<Span>,
    /// v2 policies: the worker image (`sha256:<64 hex>`) and platform.
    pub runtime_image: Option<LitStr>,
    pub runtime_platform: Option<LitStr>,
    /// `crate = "…"`: the path of the runtime crate when it was renamed.
    pub krate: Option<syn::Path>,
}

pub const PYTHON_OPTIONS: &str = "file, function, module, policy, mode, allow_conditional, runtime_image, runtime_platform, crate";

/// The limits `#[endpoint(...)]` accepts, with their inclusive ranges (the same bounds as the
/// policy's limits; concurrency bounded like the serving options).
pub const ENDPOINT_LIMITS: [(&str, u64, u64); 3] = [
    ("wall_time_ms", 1, 3_600_000),
    ("max_input_bytes", 1, 16_777_216),
    ("concurrency", 1, 4096),
];

/// `#[endpoint(...)]`.
#[derive(Default)]
pub struct EndpointArgs {
    pub wall_time_ms: Option<u64>,
    pub max_input_bytes: Option<u64>,
    pub concurrency: Option<u64>,
    pub krate: Option<syn::Path>,
}

/// One `key = value` or bare `key` option.
struct Option_ {
    key: String,
    key_span: Span,
    value: Option<Expr>,
}

fn options(attr: TokenStream, errors: &mut Errors) -> Vec<Option_> {
    let parser = Punctuated::<Meta, Token![,]>::parse_terminated;
    let metas = match syn::parse::Parser::parse2(parser, attr) {
        Ok(metas) => metas,
        Err(error) => {
            errors.push(error);
            return Vec::new();
        }
    };
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for meta in metas {
        let (path, value) = match meta {
            Meta::Path(path) => (path, None),
            Meta::NameValue(nv) => (nv.path, Some(nv.value)),
            Meta::List(list) => {
                errors.spanned(
                    list.delimiter.span().open(),
                    "expected `key = value` or `key`",
                );
                continue;
            }
        };
        let key = match path.get_ident() {
            Some(ident) => ident.to_string(),
            // `crate` is a keyword: it parses as a path segment, not an identifier.
            None if path.is_ident("crate") || quote::quote!(#path).to_string() == "crate" => {
                "crate".to_string()
            }
            None => {
                errors.spanned(path.span(), "expected an option name");
                continue;
            }
        };
        if seen.contains(&key) {
            errors.spanned(path.span(), format!("`{key}` is given more than once"));
            continue;
        }
        seen.push(key.clone());
        out.push(Option_ {
            key,
            key_span: path.span(),
            value,
        });
    }
    out
}

fn string(option: &Option_, errors: &mut Errors) -> Option<LitStr> {
    match &option.value {
        Some(Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        })) => Some(lit.clone()),
        Some(other) => {
            errors.spanned(
                other.span(),
                format!("`{}` takes a string literal", option.key),
            );
            None
        }
        None => {
            let key = &option.key;
            errors.spanned(
                option.key_span,
                format!("`{key}` takes a value: `{key} = \"…\"`"),
            );
            None
        }
    }
}

fn flag(option: &Option_, errors: &mut Errors) -> Option<bool> {
    match &option.value {
        None => Some(true),
        Some(Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        })) => Some(b.value),
        Some(other) => {
            errors.spanned(
                other.span(),
                format!("`{}` is a flag (or `= true`/`= false`)", option.key),
            );
            None
        }
    }
}

fn crate_path(option: &Option_, errors: &mut Errors) -> Option<syn::Path> {
    let lit = string(option, errors)?;
    errors.take(lit.parse::<syn::Path>())
}

/// Parse `#[python(...)]`. `file` is required.
pub fn python(attr: TokenStream) -> syn::Result<PythonArgs> {
    let mut errors = Errors::new();
    let call_site = Span::call_site();
    let mut file = None;
    let mut args = PythonArgs {
        file: LitStr::new("", call_site),
        function: None,
        module: None,
        policy: None,
        mode: Mode::Governed,
        mode_span: None,
        allow_conditional: None,
        runtime_image: None,
        runtime_platform: None,
        krate: None,
    };
    for option in options(attr, &mut errors) {
        match option.key.as_str() {
            "file" => file = string(&option, &mut errors),
            "function" => args.function = string(&option, &mut errors),
            "module" => args.module = string(&option, &mut errors),
            "policy" => args.policy = string(&option, &mut errors),
            "runtime_image" => args.runtime_image = string(&option, &mut errors),
            "runtime_platform" => args.runtime_platform = string(&option, &mut errors),
            "crate" => args.krate = crate_path(&option, &mut errors),
            "allow_conditional" => {
                if flag(&option, &mut errors) == Some(true) {
                    args.allow_conditional = Some(option.key_span);
                }
            }
            "mode" => {
                if let Some(lit) = string(&option, &mut errors) {
                    args.mode_span = Some(lit.span());
                    match lit.value().as_str() {
                        "direct" => args.mode = Mode::Direct,
                        "governed" => args.mode = Mode::Governed,
                        other => errors.spanned(
                            lit.span(),
                            format!("unknown mode `{other}`; expected \"governed\" (the default) or \"direct\""),
                        ),
                    }
                }
            }
            other => errors.spanned(
                option.key_span,
                format!("unknown option `{other}`; expected one of: {PYTHON_OPTIONS}"),
            ),
        }
    }
    match file {
        Some(lit) => args.file = lit,
        None if errors.is_empty() => errors.spanned(
            call_site,
            "missing `file = \"…\"`: the Python file, relative to the crate's manifest directory",
        ),
        None => {}
    }
    errors.finish(args)
}

fn integer(option: &Option_, min: u64, max: u64, errors: &mut Errors) -> Option<u64> {
    let key = &option.key;
    let lit: &LitInt = match &option.value {
        Some(Expr::Lit(ExprLit {
            lit: Lit::Int(lit), ..
        })) => lit,
        Some(other) => {
            errors.spanned(other.span(), format!("`{key}` takes an integer literal"));
            return None;
        }
        None => {
            errors.spanned(
                option.key_span,
                format!("`{key}` takes a value: `{key} = N`"),
            );
            return None;
        }
    };
    match lit.base10_parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Some(n),
        _ => {
            errors.spanned(
                lit.span(),
                format!(
                    "`{key}` must be between {min} and {max}, found {}",
                    lit.base10_digits()
                ),
            );
            None
        }
    }
}

/// Parse `#[endpoint(...)]`: every key must be a known limit (or `crate`).
pub fn endpoint(attr: TokenStream) -> syn::Result<EndpointArgs> {
    let mut errors = Errors::new();
    let mut args = EndpointArgs::default();
    for option in options(attr, &mut errors) {
        if option.key == "crate" {
            args.krate = crate_path(&option, &mut errors);
            continue;
        }
        let Some(&(_, min, max)) = ENDPOINT_LIMITS.iter().find(|(k, _, _)| *k == option.key) else {
            let known: Vec<&str> = ENDPOINT_LIMITS.iter().map(|(k, _, _)| *k).collect();
            errors.spanned(
                option.key_span,
                format!(
                    "unknown limit `{}`; expected one of: {} (or `crate`)",
                    option.key,
                    known.join(", ")
                ),
            );
            continue;
        };
        let value = integer(&option, min, max, &mut errors);
        match option.key.as_str() {
            "wall_time_ms" => args.wall_time_ms = value,
            "max_input_bytes" => args.max_input_bytes = value,
            _ => args.concurrency = value,
        }
    }
    errors.finish(args)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use quote::quote;

    use super::*;

    fn messages(error: syn::Error) -> Vec<String> {
        error.into_iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn python_options() {
        let args = python(quote!(
            file = "py/a.py",
            function = "f",
            mode = "direct",
            allow_conditional,
            crate = "rt"
        ))
        .unwrap();
        assert_eq!(args.file.value(), "py/a.py");
        assert_eq!(args.function.unwrap().value(), "f");
        assert_eq!(args.mode, Mode::Direct);
        assert!(args.allow_conditional.is_some());
        let krate = args.krate.unwrap();
        assert_eq!(quote!(#krate).to_string(), "rt");
    }

    #[test]
    fn every_bad_option_is_reported() {
        let error = python(quote!(
            file = 3,
            colour = "red",
            mode = "fast",
            file = "x.py"
        ))
        .err();
        assert_eq!(
            messages(error.unwrap()),
            [
                "`file` is given more than once",
                "`file` takes a string literal",
                "unknown option `colour`; expected one of: file, function, module, policy, mode, allow_conditional, runtime_image, runtime_platform, crate",
                "unknown mode `fast`; expected \"governed\" (the default) or \"direct\"",
            ]
        );
        assert_eq!(
            messages(python(quote!()).err().unwrap()),
            ["missing `file = \"…\"`: the Python file, relative to the crate's manifest directory"]
        );
    }

    #[test]
    fn endpoint_limits() {
        let args = endpoint(quote!(wall_time_ms = 2000, concurrency = 4)).unwrap();
        assert_eq!(
            (args.wall_time_ms, args.max_input_bytes, args.concurrency),
            (Some(2000), None, Some(4))
        );
        let error = endpoint(quote!(
            wall_time = 1,
            max_input_bytes = 0,
            concurrency = "4"
        ))
        .err();
        assert_eq!(
            messages(error.unwrap()),
            [
                "unknown limit `wall_time`; expected one of: wall_time_ms, max_input_bytes, concurrency (or `crate`)",
                "`max_input_bytes` must be between 1 and 16777216, found 0",
                "`concurrency` takes an integer literal",
            ]
        );
    }
}
