use apizr_runtime::CallError;

#[apizr_runtime::python(file = "py/calc.py", function = "scale")]
fn scale(values: Vec<f64>) -> Result<std::collections::HashMap<String, f64>, CallError>;

fn main() {
    let _ = scale(vec![1.0]);
}
