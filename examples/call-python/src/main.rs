//! Python functions called from Rust as typed functions, checked against the Python source at
//! compile time and run through apizr's runtime:
//!
//! * `total` under a strict v1 policy: a fresh sandboxed CPython process per call;
//! * `fetch_rate` (a network attempt) under the same policy, where the connection is stopped,
//!   and through the warm pool of ungoverned workers (`mode = "direct"`), where it succeeds;
//! * `total` in a container of the pinned worker image (a v2 policy), when this example was
//!   built on a machine with a worker image (see `build.rs`).
//!
//! `call-python [PORT]`: PORT is a TCP port on 127.0.0.1 that accepts connections (the
//! `fetch_rate` calls are made only with it). Exit 1 when a call fails unexpectedly.

use std::process::ExitCode;

use apizr_runtime::CallError;

/// The sum of the prices, taxed, in a fresh sandboxed process per call.
#[apizr_runtime::python(file = "py/pricing.py", policy = "policies/strict.json")]
fn total(prices: Vec<f64>, tax: Option<f64>) -> Result<f64, CallError>;

/// A connection to a rate server, under `network: deny` (it is stopped).
#[apizr_runtime::python(
    file = "py/pricing.py",
    policy = "policies/strict.json",
    allow_conditional
)]
fn fetch_rate(port: u16) -> Result<String, CallError>;

/// The same function without a policy: the warm pool of ungoverned workers.
#[apizr_runtime::python(
    file = "py/pricing.py",
    function = "fetch_rate",
    mode = "direct",
    allow_conditional
)]
fn fetch_rate_ungoverned(port: u16) -> Result<String, CallError>;

/// The signature of `total` (of the container binding, when there is one).
type Total = fn(Vec<f64>, Option<f64>) -> Result<f64, CallError>;

// `total_in_container` and `CONTAINER`, written by build.rs.
include!(concat!(env!("OUT_DIR"), "/container.rs"));

fn main() -> ExitCode {
    // First: governed calls re-execute this binary as their sandbox launcher.
    apizr_runtime::init();
    let port = std::env::args().nth(1).and_then(|a| a.parse::<u16>().ok());
    match run(port) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("call-python: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(port: Option<u16>) -> Result<(), CallError> {
    println!("total: {}", total(vec![10.0, 8.0], Some(0.2))?);
    if let Some(port) = port {
        println!("ungoverned fetch_rate: {}", fetch_rate_ungoverned(port)?);
        match fetch_rate(port) {
            Ok(answer) => println!("strict fetch_rate: {answer}"),
            Err(error) => println!("strict fetch_rate: {}", error.status()),
        }
    }
    match CONTAINER {
        Some(call) => println!("container total: {}", call(vec![10.0, 8.0], Some(0.2))?),
        None => println!("container total: skipped (no worker image when this was built)"),
    }
    Ok(())
}
