use apizr_runtime::CallError;

#[apizr_runtime::python(file = "py/calc.py")]
fn add(a: String, b: Option<f64>) -> Result<bool, CallError>;

#[apizr_runtime::python(file = "py/calc.py")]
fn pair(x: (i64, i64)) -> Result<(String, i64), CallError>;

fn main() {
    let _ = add(String::new(), None);
    let _ = pair((1, 2));
}
