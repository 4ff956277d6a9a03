use apizr_runtime::CallError;

struct Opaque;

// `echo` is unannotated (`Any`): any Rust type is allowed, but it must be serde.
#[apizr_runtime::python(file = "py/calc.py")]
fn echo(value: Opaque) -> Result<Opaque, CallError>;

fn main() {
    let _ = echo(Opaque);
}
