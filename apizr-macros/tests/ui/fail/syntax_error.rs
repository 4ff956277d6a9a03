use apizr_runtime::CallError;

#[apizr_runtime::python(file = "py/broken.py")]
fn ok(a: i64) -> Result<i64, CallError>;

fn main() {
    let _ = ok(1);
}
