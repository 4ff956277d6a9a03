use apizr_runtime::CallError;

#[apizr_runtime::python(file = "py/nowhere.py")]
fn add(a: i64, b: Option<i64>) -> Result<i64, CallError>;

fn main() {
    // No cascade: the stub keeps `add` callable.
    let _ = add(1, None);
}
