#[apizr_runtime::python(file = "py/calc.py")]
fn add(a: i64, b: Option<i64>) -> Result<i64, String>;

fn main() {
    let _ = add(1, None);
}
