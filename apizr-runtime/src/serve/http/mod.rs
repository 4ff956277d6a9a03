//! The HTTP/1.1 server under both transports: our own accept loop around hyper, so that every
//! connection and every request body is bounded in time and memory.
//!
//! * [`conn`] — the accept loop and one task per connection: idle and header timeouts
//!   (Go's `IdleTimeout` / `ReadHeaderTimeout` semantics), graceful shutdown;
//! * [`body`] — reading one request body: the per-route size limit (413), the body timeout
//!   (408), malformed framing such as bad chunked encoding (400), and a server-wide bound on
//!   the bytes of all bodies being held at once (503).
//!
//! Why not `axum::serve`: it sets no timer, so a client that sends half a request head (or
//! nothing at all) holds a connection and a task forever, and it has no way to bound request
//! memory across connections. The routers stay axum's.

pub mod body;
pub mod conn;

pub use body::{BodyBudget, BodyError, BodyLease, read_body};
pub use conn::serve;

/// Resolves on SIGINT or SIGTERM (the shutdown signal of both transports).
pub async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = interrupt => {},
                    _ = term.recv() => {},
                }
            }
            Err(_) => {
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}
