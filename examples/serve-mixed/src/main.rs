//! One router serving a bound Python function and native Rust endpoints side by side, over
//! REST (`serve-mixed rest --port N`) or MCP (`serve-mixed mcp`, stdio; `--http` for
//! Streamable HTTP): the same `/capabilities/<name>`, `/openapi.json`, `/docs`, `/metrics` and
//! `/readyz`, and one `tools/list`.
//!
//! * `total` — Python (`py/pricing.py`), checked against this signature at compile time, run in
//!   a fresh sandboxed process per call under the default v1 policy;
//! * `quote` — a native `async fn` with its limits (input size, wall time, concurrency);
//! * `nap` — a native sync `fn` that sleeps, to show the wall-time and concurrency limits.
//!
//! With `--audit FILE` every governed Python call and every native call appends one audit line.

use std::process::ExitCode;

use apizr_runtime::CallError;
use serde::Serialize;

/// The sum of the prices, taxed.
#[apizr_runtime::python(file = "py/pricing.py")]
fn total(prices: Vec<f64>, tax: Option<f64>) -> Result<f64, CallError>;

/// A price quote.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Quote {
    pub sku: String,
    pub qty: u32,
    pub unit_price: f64,
    pub total: f64,
}

/// Why a quote failed.
#[derive(Debug)]
pub struct UnknownSku(String);

impl std::fmt::Display for UnknownSku {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown sku {}", self.0)
    }
}

/// Quote a price for a quantity of one SKU.
#[apizr_runtime::endpoint(wall_time_ms = 2000, max_input_bytes = 1024, concurrency = 4)]
async fn quote(sku: String, qty: u32) -> Result<Quote, UnknownSku> {
    let unit_price = match sku.as_str() {
        "A1" => 2.5,
        "B2" => 10.0,
        _ => return Err(UnknownSku(sku)),
    };
    Ok(Quote {
        total: unit_price * f64::from(qty),
        sku,
        qty,
        unit_price,
    })
}

/// Sleep for `ms` milliseconds and answer them (at most one call at a time, 300 ms at most).
#[apizr_runtime::endpoint(wall_time_ms = 300, concurrency = 1)]
fn nap(ms: u64) -> u64 {
    std::thread::sleep(std::time::Duration::from_millis(ms));
    ms
}

fn main() -> ExitCode {
    // First: governed calls re-execute this binary as their sandbox launcher.
    apizr_runtime::init();
    apizr_runtime::bind::serve_main(apizr_runtime::capabilities![total, quote, nap])
}
