use apizr_runtime::CallError;

#[apizr_runtime::python(file = "py/calc.py", policy = "policies/bad.json")]
fn add(a: i64, b: Option<i64>) -> Result<i64, CallError>;

#[apizr_runtime::python(file = "py/calc.py", function = "add", policy = "policies/none.json")]
fn add_again(a: i64, b: Option<i64>) -> Result<i64, CallError>;

fn main() {
    let _ = add(1, None);
    let _ = add_again(1, None);
}
