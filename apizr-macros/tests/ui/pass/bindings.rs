//! Bindings and endpoints compile, carry their data, and register by name.
#![deny(warnings, missing_docs)]

use apizr_runtime::CallError;
use apizr_runtime::__private::{Handler, Registration};

/// Add two integers.
#[apizr_runtime::python(file = "py/calc.py")]
pub fn add(a: i64, b: Option<i64>) -> Result<i64, CallError>;

/// Greet asynchronously, under a strict policy.
#[apizr_runtime::python(file = "py/calc.py", function = "greet", policy = "policies/strict.json")]
pub async fn hello(punct: Option<String>, name: &str) -> Result<String, CallError>;

/// Keyword-only parameters are ordinary parameters; direct mode.
#[apizr_runtime::python(file = "py/calc.py", mode = "direct")]
pub fn scale(
    values: &[f64],
    factor: f64,
    label: Option<String>,
) -> Result<std::collections::BTreeMap<String, f64>, CallError>;

/// A conditional capability, bound on purpose.
#[apizr_runtime::python(file = "py/cond.py", allow_conditional)]
pub fn fetch(url: &str) -> Result<u64, CallError>;

/// Twice a number.
#[apizr_runtime::endpoint(wall_time_ms = 2000, concurrency = 4)]
pub fn double(n: i64) -> i64 {
    n * 2
}

fn main() {
    let registrations = apizr_runtime::capabilities![add, hello, scale, fetch, double];
    let names: Vec<&str> = registrations.iter().map(Registration::name).collect();
    assert_eq!(names, ["add", "hello", "scale", "fetch", "double"]);
    for registration in &registrations {
        match registration {
            Registration::Python(binding) => binding.verify().unwrap(),
            Registration::Native(endpoint) => {
                assert_eq!(endpoint.description, Some("Twice a number."));
                let Handler::Sync(handler) = endpoint.handler else { panic!("sync") };
                assert_eq!(handler(serde_json::json!({"n": 21})).unwrap(), serde_json::json!(42));
                let schema = (endpoint.input_schema)();
                assert_eq!(schema["additionalProperties"], serde_json::json!(false));
            }
        }
    }
    // The async binding is a real future of the declared type.
    let _future: std::pin::Pin<Box<dyn std::future::Future<Output = Result<String, CallError>>>> =
        Box::pin(hello(None, "Ada"));
}
