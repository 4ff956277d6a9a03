//! The embedded Python worker (`worker.py`, stdlib only) and the interpreter command line.
//!
//! The source is passed with `-c`, so nothing is written to disk and no `.pyc` exists; `-I`
//! isolates from the user's environment and site directory, `-S` skips `site` (the worker
//! and READY capabilities need only the standard library), which halves start-up time.

/// The worker source, byte for byte as shipped in the crate.
pub const WORKER_SOURCE: &str = include_str!("worker.py");

/// Interpreter arguments that run the worker.
pub fn python_args() -> Vec<String> {
    vec![
        "-I".into(),
        "-S".into(),
        "-c".into(),
        WORKER_SOURCE.to_string(),
    ]
}
