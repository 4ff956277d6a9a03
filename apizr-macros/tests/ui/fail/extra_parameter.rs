use apizr_runtime::CallError;

#[apizr_runtime::python(file = "py/calc.py")]
fn add(a: i64, b: Option<i64>, verbose: bool) -> Result<i64, CallError>;

fn main() {
    let _ = add(1, None, true);
}
