//! Expansion snapshots (insta + prettyplease) and error snapshots of the backend, against the
//! fixtures that the UI tests use (`apizr-macros/tests/fixtures`). Error snapshots record the
//! `line:column` of the token each error is spanned on (within the item or attribute text).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use apizr_macros_backend::{ManifestDir, endpoint, python_in, try_endpoint, try_python_in};
use proc_macro2::TokenStream;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../apizr-macros/tests/fixtures")
}

fn tokens(text: &str) -> TokenStream {
    text.parse().unwrap()
}

fn pretty(tokens: TokenStream) -> String {
    prettyplease::unparse(&syn::parse2::<syn::File>(tokens).unwrap())
}

fn expand(attr: &str, item: &str) -> String {
    let dir = ManifestDir::at(fixtures());
    pretty(try_python_in(tokens(attr), tokens(item), &dir).unwrap())
}

/// Every error as `line:column: message` (the position of the token it is spanned on).
fn errors(attr: &str, item: &str) -> String {
    let dir = ManifestDir::at(fixtures());
    let error = try_python_in(tokens(attr), tokens(item), &dir)
        .err()
        .unwrap();
    render(error)
}

fn render(error: syn::Error) -> String {
    error
        .into_iter()
        .map(|e| {
            let start = e.span().start();
            format!("{}:{}: {e}\n", start.line, start.column + 1)
        })
        .collect()
}

#[test]
fn sync_binding_with_a_default_policy() {
    let text = expand(
        r#"file = "py/calc.py""#,
        "/// Add two integers.\npub fn add(a: i64, b: Option<i64>) -> Result<i64, apizr_runtime::CallError>;",
    );
    assert!(
        !text.contains(&*fixtures().to_string_lossy()),
        "absolute path in the expansion"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn async_binding_under_a_policy_file() {
    insta::assert_snapshot!(expand(
        r#"file = "py/calc.py", function = "greet", policy = "policies/strict.json""#,
        "async fn hello(punct: Option<String>, name: &str) -> Result<String, MyError>;",
    ));
}

#[test]
fn direct_mode_and_keyword_only_parameters() {
    insta::assert_snapshot!(expand(
        r#"file = "py/calc.py", mode = "direct", crate = "rt""#,
        "fn scale(values: &[f64], factor: f64, label: Option<String>) -> Result<std::collections::BTreeMap<String, f64>, rt::CallError>;",
    ));
}

#[test]
fn every_signature_problem_at_once() {
    insta::assert_snapshot!(errors(
        r#"file = "py/calc.py", function = "scale""#,
        "fn scale(values: Vec<String>, factr: f64, extra: bool, label: Option<f32>) -> Result<Vec<f64>, E>;",
    ));
}

#[test]
fn required_parameters_are_not_options_and_results_are_results() {
    insta::assert_snapshot!(errors(
        r#"file = "py/calc.py""#,
        "fn add(a: Option<i64>, b: i64) -> i64;",
    ));
}

#[test]
fn file_function_readiness_policy_and_syntax_errors() {
    let cases = [
        (
            r#"file = "py/missing.py""#,
            "fn add(a: i64) -> Result<i64, E>;",
        ),
        (
            r#"file = "/abs/calc.py""#,
            "fn add(a: i64) -> Result<i64, E>;",
        ),
        (
            r#"file = "py/calc.py""#,
            "fn subtract(a: i64) -> Result<i64, E>;",
        ),
        (
            r#"file = "py/cond.py""#,
            "fn fetch(url: String) -> Result<i64, E>;",
        ),
        (
            r#"file = "py/broken.py""#,
            "fn ok(a: i64) -> Result<i64, E>;",
        ),
        (
            r#"file = "py/calc.py", policy = "policies/bad.json""#,
            "fn add(a: i64, b: i64) -> Result<i64, E>;",
        ),
        (
            r#"file = "py/calc.py", policy = "policies/strict.json", mode = "direct""#,
            "fn add(a: i64, b: i64) -> Result<i64, E>;",
        ),
        (
            r#"file = "py/calc.py", colour = "red""#,
            "fn add(a: i64, b: i64) -> Result<i64, E> { 1 }",
        ),
    ];
    let mut all = String::new();
    for (attr, item) in cases {
        all.push_str(&format!(
            "#[python({attr})] {item}\n{}\n",
            errors(attr, item)
        ));
    }
    insta::assert_snapshot!(all);
}

#[test]
fn conditional_capabilities_bind_with_allow_conditional() {
    let text = expand(
        r#"file = "py/cond.py", allow_conditional"#,
        "fn fetch(url: &str) -> Result<u64, E>;",
    );
    assert!(text.contains("conditional: true"), "{text}");
}

#[test]
fn the_fallback_keeps_the_item_and_its_registration() {
    let dir = ManifestDir::at(fixtures());
    let out = python_in(
        tokens(r#"file = "py/calc.py", crate = "rt""#),
        tokens("pub fn add(a: String) -> Result<i64, rt::CallError>;"),
        &dir,
    );
    insta::assert_snapshot!(pretty(out));
}

#[test]
fn endpoint_expansion() {
    let item = "/// Quote a price.\n///\n/// Per unit.\npub async fn quote(sku: String, qty: u32) -> Result<Quote, MyError> { todo!() }";
    let out = try_endpoint(
        tokens("wall_time_ms = 2000, max_input_bytes = 65536, concurrency = 4"),
        tokens(item),
    )
    .unwrap();
    insta::assert_snapshot!(pretty(out));
    let sync = try_endpoint(tokens(""), tokens("fn ping() {}")).unwrap();
    insta::assert_snapshot!("endpoint_sync_unit", pretty(sync));
}

#[test]
fn endpoint_errors_and_fallback() {
    let error = try_endpoint(
        tokens("wall_time = 1, concurrency = 0, max_input_bytes = 1"),
        tokens("fn f(name: &str) -> u32 { 1 }"),
    )
    .err()
    .unwrap();
    insta::assert_snapshot!(render(error));
    let out = endpoint(
        tokens("wall_time = 1"),
        tokens("fn f(name: String) -> u32 { 1 }"),
    );
    let text = out.to_string();
    assert!(
        text.contains("compile_error") && text.contains("fn f (name : String) -> u32 { 1 }"),
        "{text}"
    );
}
