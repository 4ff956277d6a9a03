use apizr_runtime::CallError;

#[apizr_runtime::python(file = "py/calc.py")]
fn subtract(a: i64, b: i64) -> Result<i64, CallError>;

#[apizr_runtime::python(file = "py/calc.py", function = "sum")]
fn total(values: Vec<i64>) -> Result<i64, CallError>;

fn main() {
    let _ = subtract(1, 2);
    let _ = total(vec![]);
}
