//! The embedded Python worker (`worker.py`, stdlib only) and the interpreter command line.
//!
//! The source is passed with `-c`, so nothing is written to disk; `-I` isolates from the
//! user's environment and site directory, `-S` skips `site` (the worker and READY
//! capabilities need only the standard library), which halves start-up time.
//!
//! Compiling the 700-line worker costs about as much as starting the interpreter, so when the
//! host has it, the local backend sends the worker already compiled: [`BOOT_SOURCE`] reads a
//! `marshal` blob (framed like every message: u64 big-endian length, then the bytes) from
//! stdin and runs it; the request frame follows on the same pipe. The blob is made once per
//! interpreter by [`COMPILE_SOURCE`] and cached on disk (see `local::host`).

/// The worker source, byte for byte as shipped in the crate.
pub const WORKER_SOURCE: &str = include_str!("worker.py");

/// Reads one framed `marshal` blob from stdin and runs it as `__main__` (the worker then
/// reads its request frame from the same stdin).
pub const BOOT_SOURCE: &str = "import marshal,os\n\
def _boot_read(n):\n    \
b=b''\n    \
while len(b)<n:\n        \
c=os.read(0,n-len(b))\n        \
if not c:\n            \
os._exit(1)\n        \
b+=c\n    \
return b\n\
exec(marshal.loads(_boot_read(int.from_bytes(_boot_read(8),'big'))))\n";

/// Compiles stdin (the worker source) into a `marshal` blob on stdout, exactly as `-c` would
/// compile it (same file name in tracebacks).
pub const COMPILE_SOURCE: &str = "import marshal,sys\n\
sys.stdout.buffer.write(marshal.dumps(compile(sys.stdin.buffer.read(),'<string>','exec',dont_inherit=True)))\n";

/// Interpreter arguments that run the worker from source.
pub fn python_args() -> Vec<String> {
    vec![
        "-I".into(),
        "-S".into(),
        "-c".into(),
        WORKER_SOURCE.to_string(),
    ]
}

/// Interpreter arguments that run a compiled worker sent on stdin.
pub fn python_args_compiled() -> Vec<String> {
    vec![
        "-I".into(),
        "-S".into(),
        "-c".into(),
        BOOT_SOURCE.to_string(),
    ]
}
