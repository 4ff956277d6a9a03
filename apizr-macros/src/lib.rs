//! Procedural macros of apizr. Use them through `apizr-runtime` with its `macros` feature:
//! `apizr_runtime::python` and `apizr_runtime::endpoint`.
//!
//! A `proc-macro` crate may export nothing but macros, so this crate only forwards token
//! streams to `apizr-macros-backend`, where parsing, checking and expansion live (and are
//! unit-tested without a compiler).
//!
//! # Build settings for users
//!
//! `#[python]` parses and analyses Python inside the compiler. Cargo builds proc macros and
//! their dependencies with the `build-override` profile, unoptimized by default; set
//!
//! ```toml
//! [profile.dev.package.ruff_python_parser]
//! opt-level = 3
//! [profile.dev.package.ruff_python_ast]
//! opt-level = 3
//! ```
//!
//! in the workspace's `Cargo.toml` so that the parser runs at full speed during `cargo check`
//! and `cargo build` (apizr's own workspace does). A named package override wins over
//! `build-override`, so only the parser is optimized, not syn and every derive macro.

use proc_macro::TokenStream;

/// Bind a Python function to a body-less Rust function, checked at compile time.
///
/// ```no_run
/// # use apizr_runtime::CallError;
/// /// Add two integers (the Python function `add` of `calc.py`).
/// #[apizr_runtime::python(file = "tests/fixtures/py/calc.py")]
/// fn add(a: i64, b: Option<i64>) -> Result<i64, CallError>;
///
/// #[apizr_runtime::python(file = "tests/fixtures/py/calc.py", function = "greet",
///                         policy = "tests/fixtures/policies/strict.json")]
/// async fn hello(name: String, punct: Option<String>) -> Result<String, CallError>;
///
/// fn main() -> Result<(), CallError> {
///     apizr_runtime::init();
///     assert_eq!(add(1, None)?, 3);
///     Ok(())
/// }
/// ```
///
/// | option | meaning |
/// | --- | --- |
/// | `file = "py/pricing.py"` | the `.py` file or `.ipynb` notebook, relative to the crate's manifest directory (required) |
/// | `function = "name"` | the Python function (default: the Rust function's name) |
/// | `module = "pkg.pricing"` | the logical module name (default: the file stem) |
/// | `policy = "policies/strict.json"` | an `apizr.execution/v1` or `/v2` policy file (default: the v1 policy `{}`: a fresh governed process per call) |
/// | `runtime_image = "sha256:…"`, `runtime_platform = "linux/amd64"` | the worker image for a v2 (container) policy |
/// | `mode = "direct"` | run in the warm pool of ungoverned workers instead (no policy) |
/// | `allow_conditional` | bind a capability whose readiness is `conditional` |
/// | `crate = "path"` | the path of `apizr_runtime` if it was renamed |
///
/// **Checks** (each failure is a compile error on the offending token): the file exists and
/// parses (syntax errors show `file:line:col`); it defines the function; its readiness allows
/// a binding; every Python parameter is a Rust parameter of the same name (order is free) and
/// there are no others; a Python parameter with a default may be `Option<T>` (`None` keeps the
/// Python default); types follow the mapping below; the return type is `Result<T, E>` with
/// `E: From<CallError>`; the policy file is a valid policy that can run.
///
/// | Python | Rust |
/// | --- | --- |
/// | `int` | any integer type |
/// | `float` | `f64` |
/// | `str` | `String` (arguments also `&str`) |
/// | `bool` / `None` | `bool` / `()` |
/// | `list[T]`, `tuple[T, ...]`, `set[T]` | `Vec<T>` (sets also `HashSet<T>`, `BTreeSet<T>`) |
/// | `tuple[A, B]` | `(A, B)` |
/// | `dict[str, T]` | `HashMap<String, T>`, `BTreeMap<String, T>` |
/// | `Optional[T]` | `Option<T>` |
/// | a TypedDict, a union, mixed `Literal` | a serde struct / enum of yours, or `serde_json::Value` |
/// | `Any`, unannotated | any serde type |
///
/// **What it generates**: the function with a body that encodes the arguments, runs the
/// Python function through the runtime (the same path as `apizr execute`: statuses,
/// enforcement, audit) and decodes the result; the file's bytes (`include_bytes!`, so editing
/// the file rebuilds and re-checks), the contract, the policy and the digest chain (source →
/// IR → readiness → interface → policy → plan) are embedded, so the binary carries what it
/// runs. A hidden module of the same name registers the binding for a server.
#[proc_macro_attribute]
pub fn python(attr: TokenStream, item: TokenStream) -> TokenStream {
    apizr_macros_backend::python(attr.into(), item.into()).into()
}

/// Declare an ordinary Rust function as an endpoint, served next to bound Python functions.
///
/// ```
/// # #[derive(serde::Serialize, schemars::JsonSchema)] struct Quote { total: f64 }
/// /// Quote a price.
/// #[apizr_runtime::endpoint(wall_time_ms = 2000, max_input_bytes = 65536, concurrency = 4)]
/// async fn quote(sku: String, qty: u32) -> Result<Quote, std::io::Error> {
///     Ok(Quote { total: 2.5 * f64::from(qty) })
/// }
/// # fn main() {}
/// ```
///
/// Arguments and the result are serde types; the request schema (JSON Schema 2020-12, closed
/// objects) and the response schema come from the types (`schemars::JsonSchema`), the
/// description from the doc comments. `Result<T, E>` answers `E`'s `Display` on error.
///
/// | limit | range | meaning |
/// | --- | --- | --- |
/// | `wall_time_ms` | 1 – 3,600,000 | answer `timeout` after this long |
/// | `max_input_bytes` | 1 – 16,777,216 | refuse larger requests |
/// | `concurrency` | 1 – 4096 | calls running at once |
///
/// Any other key is a compile error on the key. Registration is explicit: the function's
/// hidden module of the same name provides it to a server's list.
#[proc_macro_attribute]
pub fn endpoint(attr: TokenStream, item: TokenStream) -> TokenStream {
    apizr_macros_backend::endpoint(attr.into(), item.into()).into()
}
