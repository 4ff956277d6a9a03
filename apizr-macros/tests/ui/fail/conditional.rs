use apizr_runtime::CallError;

#[apizr_runtime::python(file = "py/cond.py")]
fn fetch(url: String) -> Result<i64, CallError>;

fn main() {
    let _ = fetch(String::new());
}
