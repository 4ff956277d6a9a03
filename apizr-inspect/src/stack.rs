//! [`on_inspect_stack`]: run inspection and planning on a thread with a large stack.
//!
//! Why every caller needs it: the parser, the budget checks and the `ast.unparse` port recurse
//! over the syntax tree, and a deeply nested (but admitted) source must be refused by the
//! budgets, never by a stack overflow that aborts the process. A main thread has 8 MiB and a
//! tokio or test thread 2 MiB; inspection gets [`INSPECT_STACK_BYTES`] wherever it runs
//! (`apizr inspect`, `execute`, `serve`, `generate`, the macro backend).

use crate::project::INSPECT_STACK_BYTES;

/// Why the inspection thread could not run the work.
#[derive(Debug, thiserror::Error)]
#[error("could not start an inspection thread: {0}")]
pub struct StackError(#[from] pub std::io::Error);

/// Run `work` on a scoped thread with [`INSPECT_STACK_BYTES`] of stack and return its result.
/// A panic in `work` is resumed on the calling thread.
///
/// ```
/// use apizr_inspect::{InspectOptions, on_inspect_stack};
/// use apizr_ir::SourceKind;
///
/// let source = b"def total(prices: list[float]) -> float:\n    return sum(prices)\n";
/// let outcome = on_inspect_stack(|| {
///     apizr_inspect::inspect_bytes(source, SourceKind::Python, "pricing", InspectOptions::default())
/// })
/// .unwrap()
/// .unwrap();
/// assert_eq!(outcome.inspection.capability_ir.capabilities.len(), 1);
/// ```
pub fn on_inspect_stack<T, F>(work: F) -> Result<T, StackError>
where
    T: Send,
    F: FnOnce() -> T + Send,
{
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("apizr-inspect".into())
            .stack_size(INSPECT_STACK_BYTES)
            .spawn_scoped(scope, work)?;
        match handle.join() {
            Ok(value) => Ok(value),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_recursion_fits_on_the_inspection_stack() {
        fn depth(n: u64) -> u64 {
            // A frame the optimiser cannot shrink: 512 bytes that outlive the recursive call.
            let pad = std::hint::black_box([n; 64]);
            if n == 0 {
                0
            } else {
                1 + depth(n - 1) + pad[63] - n
            }
        }
        // ~100k frames of > 512 bytes: far past a 2 MiB test-thread stack.
        assert_eq!(on_inspect_stack(|| depth(100_000)).unwrap(), 100_000);
    }
}
