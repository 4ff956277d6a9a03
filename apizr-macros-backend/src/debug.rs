//! `APIZR_MACROS_DEBUG=1` prints every expansion to stderr while compiling (a debugging aid
//! like axum's `AXUM_MACROS_DEBUG`; it changes no output, so cargo need not track it).

use proc_macro2::TokenStream;

pub fn print(what: &str, tokens: &TokenStream) {
    if std::env::var_os("APIZR_MACROS_DEBUG").is_some_and(|v| v == "1") {
        let text = syn::parse2::<syn::File>(tokens.clone())
            .map_or_else(|_| tokens.to_string(), |file| format_file(&file));
        eprintln!("---- #[{what}] expansion ----\n{text}");
    }
}

fn format_file(file: &syn::File) -> String {
    quote::ToTokens::to_token_stream(file).to_string()
}
