use apizr_runtime::CallError;

#[apizr_runtime::python(file = "py/calc.py", function = "greet")]
async fn hello(nme: String, punct: Option<String>) -> Result<String, CallError>;

fn main() {
    let _ = hello("Ada".into(), None);
}
