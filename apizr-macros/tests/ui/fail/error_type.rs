// The error type must be constructible from `CallError`. A local type keeps the diagnostic
// independent of which other crates add `From` impls to std types.
#[derive(Debug)]
pub struct PricingError;

#[apizr_runtime::python(file = "py/calc.py")]
fn add(a: i64, b: Option<i64>) -> Result<i64, PricingError>;

fn main() {
    let _ = add(1, None);
}
