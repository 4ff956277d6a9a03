//! The options shared by `apizr serve` and generated projects: where to listen, the token,
//! the HTTP limits, the transport, and the tuning flags that change a [`ServeSpec`].
//!
//! Plain data used by both transports; the entry points that read a command line and start a
//! transport are in `entry.rs` (which depends on the transports, never the other way round).

use std::net::IpAddr;
use std::time::Duration;

use super::error::ServeError;
use super::spec::{ExecutionMode, ServeSpec};

/// Which transport a server speaks (one definition with the generator's projects).
pub use apizr_ir::surface::Transport;

/// Options shared by `apizr serve` and generated projects.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub host: String,
    pub port: u16,
    /// Bearer token; required for a non-loopback bind unless `insecure`.
    pub token: Option<String>,
    pub insecure: bool,
    /// MCP only: serve Streamable HTTP at `/mcp` instead of stdio.
    pub mcp_http: bool,
    /// Timeouts and the request-body memory bound of the HTTP server.
    pub http: HttpLimits,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            host: "127.0.0.1".into(),
            port: 8000,
            token: std::env::var("APIZR_TOKEN").ok().filter(|t| !t.is_empty()),
            insecure: false,
            mcp_http: false,
            http: HttpLimits::default(),
        }
    }
}

/// What one HTTP client may hold of the server, in time and memory.
///
/// * `idle_timeout` — a connection with no request in progress and no byte of the next one is
///   closed after this long (from accept, or from the end of the previous response);
/// * `header_timeout` — from the first byte of a request head to its end; past it the
///   connection is closed;
/// * `body_timeout` — from the end of the head to the end of the body; past it the answer is
///   408 and the connection is closed;
/// * `body_memory_bytes` — the request bodies held at once, all connections together; a body
///   that does not fit is answered 503 with `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    pub idle_timeout: Duration,
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub body_memory_bytes: u64,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            idle_timeout: Duration::from_secs(30),
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            body_memory_bytes: 256 << 20,
        }
    }
}

impl ServeOptions {
    /// Bind the listening socket and say where it listens on stderr: `apizr: {what}
    /// listening on http://{addr}{suffix}` (the address is the bound one, so port 0 shows
    /// the port the system chose).
    #[cfg(any(feature = "rest", feature = "mcp"))]
    pub(crate) async fn listen(
        &self,
        what: &str,
        suffix: &str,
    ) -> Result<tokio::net::TcpListener, ServeError> {
        let listener = tokio::net::TcpListener::bind((self.host.as_str(), self.port))
            .await
            .map_err(|source| ServeError::Bind {
                address: format!("{}:{}", self.host, self.port),
                source,
            })?;
        if let Ok(addr) = listener.local_addr() {
            eprintln!("apizr: {what} listening on http://{addr}{suffix}");
        }
        Ok(listener)
    }

    /// Refuse a non-loopback bind without a token unless `--insecure`.
    pub fn check_exposure(&self) -> Result<(), ServeError> {
        let loopback = self.host == "localhost"
            || self.host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
        if !loopback && self.token.is_none() && !self.insecure {
            return Err(ServeError::Exposure {
                host: self.host.clone(),
            });
        }
        Ok(())
    }
}

/// Tuning flags that change the spec (not the transport).
#[derive(Debug, Clone, Default)]
pub struct SpecOverrides {
    pub workers: Option<usize>,
    pub timeout_ms: Option<u64>,
    pub concurrency: Option<usize>,
    pub queue: Option<usize>,
    pub governed_workers: Option<usize>,
    pub governed_memory_mb: Option<u64>,
    /// v2: prepared containers kept ready (0: a fresh container per call).
    pub oci_pool: Option<usize>,
    /// v1: pre-started single-use workers per served module (0: every worker starts cold).
    pub v1_prestart: Option<usize>,
    /// Governed modes: the audit file (one JSON line per call).
    pub audit: Option<std::path::PathBuf>,
}

impl SpecOverrides {
    pub fn apply(&self, spec: &mut ServeSpec) {
        if let ExecutionMode::Direct { workers, timeout } = &mut spec.mode {
            if let Some(n) = self.workers {
                *workers = n.max(1);
            }
            if let Some(ms) = self.timeout_ms {
                *timeout = Some(Duration::from_millis(ms));
            }
        }
        if let Some(n) = self.concurrency {
            spec.gates.concurrency = n.max(1);
        }
        if let Some(n) = self.queue {
            spec.gates.queue = n;
        }
        if let Some(n) = self.governed_workers {
            spec.gates.workers = n.max(1);
        }
        if let Some(mib) = self.governed_memory_mb {
            spec.gates.memory_bytes = mib.saturating_mul(1 << 20);
        }
        if let Some(n) = self.oci_pool {
            spec.oci_pool = n;
        }
        if let Some(n) = self.v1_prestart {
            spec.v1_prestart = n;
        }
        if let Some(path) = &self.audit {
            spec.audit = Some(path.clone());
        }
    }
}
