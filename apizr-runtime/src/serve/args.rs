//! The server's command-line flags (clap), shared by `apizr serve` (flattened into its own
//! arguments) and by every generated binary ([`BundleArgs`]), so that both take the same flags
//! with the same descriptions in `--help`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser};

use super::options::{HttpLimits, ServeOptions, SpecOverrides};

/// Where to listen, the token, the HTTP limits and the tuning flags of a server.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// Address to listen on (a non-loopback address needs --token or --insecure)
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on (REST, and MCP with --http)
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Bearer token required on every route but /health and /readyz [env: APIZR_TOKEN]
    #[arg(long)]
    pub token: Option<String>,
    /// Allow a non-loopback address without a token
    #[arg(long)]
    pub insecure: bool,
    /// Direct mode: persistent workers (default: cores, at least 2)
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Direct mode: per-call deadline; the worker is killed and replaced past it
    #[arg(long, value_name = "MS")]
    pub timeout_ms: Option<u64>,
    /// Calls running at once per capability
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,
    /// Calls waiting per capability before 429
    #[arg(long, value_name = "N")]
    pub queue: Option<usize>,
    /// Governed modes: workers (or containers) running at once, server-wide (default: 4 per
    /// core, at least 4)
    #[arg(long, value_name = "N")]
    pub governed_workers: Option<usize>,
    /// Governed modes: the most the running workers' memory limits may add up to, in MiB
    /// (default: half the host's memory); a call whose own limit exceeds it gets 503
    #[arg(long, value_name = "MIB")]
    pub governed_memory_mb: Option<u64>,
    /// v2 policies: containers prepared (created, checked, started) ahead of calls, each used
    /// for one call only; 0 creates a fresh container per call [default: 2]
    #[arg(long, value_name = "N")]
    pub oci_pool: Option<usize>,
    /// v1 policies: workers started ahead of calls through the same sandbox (own uid, /tmp,
    /// cgroups, namespaces), each used for one call only; 0 starts every call's worker when
    /// the call arrives [env: APIZR_V1_PRESTART] [default: 2]
    #[arg(long, value_name = "N")]
    pub v1_prestart: Option<usize>,
    /// Governed modes: append one audit record (JSON line) per call, refusals included, to
    /// FILE [env: APIZR_AUDIT]
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,
    /// HTTP: close a connection idle this long, with no request in progress [default: 30000]
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout_ms: Option<u64>,
    /// HTTP: a request head must arrive within this long of its first byte [default: 10000]
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout_ms: Option<u64>,
    /// HTTP: a request body must arrive within this long of its head (else 408) [default: 30000]
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub body_timeout_ms: Option<u64>,
    /// HTTP: request bodies held at once, all connections together, in MiB (else 503)
    /// [default: 256]
    #[arg(long, value_name = "MIB")]
    pub body_memory_mb: Option<u64>,
    /// MCP: serve over stdio (the default)
    #[arg(long, conflicts_with = "http")]
    pub stdio: bool,
    /// MCP: serve Streamable HTTP at /mcp
    #[arg(long)]
    pub http: bool,
}

impl ServerArgs {
    /// The transport options; the token falls back to a non-empty `APIZR_TOKEN`.
    pub fn options(&self) -> ServeOptions {
        let mut http = HttpLimits::default();
        if let Some(ms) = self.idle_timeout_ms {
            http.idle_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = self.header_timeout_ms {
            http.header_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = self.body_timeout_ms {
            http.body_timeout = Duration::from_millis(ms);
        }
        if let Some(mib) = self.body_memory_mb {
            http.body_memory_bytes = mib.saturating_mul(1 << 20);
        }
        ServeOptions {
            host: self.host.clone(),
            port: self.port,
            token: self
                .token
                .clone()
                .or_else(|| std::env::var("APIZR_TOKEN").ok())
                .filter(|t| !t.is_empty()),
            insecure: self.insecure,
            mcp_http: self.http,
            http,
        }
    }

    /// The flags that change the spec.
    pub fn overrides(&self) -> SpecOverrides {
        SpecOverrides {
            workers: self.workers,
            timeout_ms: self.timeout_ms,
            concurrency: self.concurrency,
            queue: self.queue,
            governed_workers: self.governed_workers,
            governed_memory_mb: self.governed_memory_mb,
            oci_pool: self.oci_pool,
            v1_prestart: self.v1_prestart.or_else(|| {
                std::env::var(crate::local::prestart::SIZE_ENV)
                    .ok()
                    .and_then(|v| v.trim().parse().ok())
            }),
            audit: self.audit.clone().or_else(|| {
                std::env::var_os("APIZR_AUDIT")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            }),
        }
    }
}

/// The command line of a generated server.
#[derive(Debug, Clone, Parser)]
#[command(
    about = "Serve the capabilities of this generated apizr project (REST or MCP).",
    long_about = "Serve the capabilities of this generated apizr project (REST or MCP).\n\n\
        At start-up the server verifies every digest in the project's manifest \
        (apizr-rest.json / apizr-mcp.json) and refuses to start on a mismatch.",
    disable_version_flag = true
)]
pub struct BundleArgs {
    /// The project directory with the contract files [env: APIZR_BUNDLE] (default: the
    /// nearest ancestor of this binary holding capability-ir.json, else the working
    /// directory when it holds one, else the project this binary was built from)
    #[arg(long, value_name = "DIR")]
    pub bundle: Option<PathBuf>,
    #[command(flatten)]
    pub server: ServerArgs,
}

impl BundleArgs {
    /// `--bundle`, else a non-empty `APIZR_BUNDLE`.
    pub fn bundle_dir(&self) -> Option<PathBuf> {
        self.bundle.clone().or_else(|| {
            std::env::var_os("APIZR_BUNDLE")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(list: &[&str]) -> Result<BundleArgs, clap::Error> {
        BundleArgs::try_parse_from(std::iter::once("server").chain(list.iter().copied()))
    }

    #[test]
    fn flags_parse_in_both_spellings() {
        let p = parse(&[
            "--bundle",
            "/b",
            "--host=0.0.0.0",
            "--port",
            "9",
            "--token",
            "t",
            "--insecure",
            "--workers=3",
            "--timeout-ms",
            "250",
            "--concurrency",
            "2",
            "--queue",
            "0",
            "--governed-workers=3",
            "--governed-memory-mb",
            "512",
            "--oci-pool=0",
            "--audit",
            "/a.jsonl",
            "--idle-timeout-ms=1500",
            "--header-timeout-ms",
            "2000",
            "--body-timeout-ms",
            "2500",
            "--body-memory-mb",
            "3",
            "--http",
        ])
        .unwrap();
        assert_eq!(p.bundle_dir(), Some(PathBuf::from("/b")));
        let (options, overrides) = (p.server.options(), p.server.overrides());
        assert_eq!((options.host.as_str(), options.port), ("0.0.0.0", 9));
        assert_eq!(options.token.as_deref(), Some("t"));
        assert!(options.insecure && options.mcp_http);
        assert_eq!(overrides.workers, Some(3));
        assert_eq!(overrides.timeout_ms, Some(250));
        assert_eq!((overrides.concurrency, overrides.queue), (Some(2), Some(0)));
        assert_eq!(
            (overrides.governed_workers, overrides.governed_memory_mb),
            (Some(3), Some(512))
        );
        assert_eq!(overrides.oci_pool, Some(0));
        assert_eq!(overrides.audit, Some(PathBuf::from("/a.jsonl")));
        assert_eq!(
            options.http,
            HttpLimits {
                idle_timeout: Duration::from_millis(1500),
                header_timeout: Duration::from_millis(2000),
                body_timeout: Duration::from_millis(2500),
                body_memory_bytes: 3 << 20,
            }
        );
    }

    #[test]
    fn bad_flags_are_usage_errors() {
        for bad in [
            &["--port", "http"][..],
            &["--port"],
            &["--frobnicate"],
            &["--idle-timeout-ms", "0"],
            &["--stdio", "--http"],
        ] {
            let error = parse(bad).unwrap_err();
            assert_eq!(error.exit_code(), 2, "{bad:?}");
        }
        assert_eq!(parse(&["--help"]).unwrap_err().exit_code(), 0);
    }

    /// Every flag of the generated binary's `--help` has a description.
    #[test]
    fn help_describes_every_flag() {
        let command = BundleArgs::command();
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str();
            assert!(
                arg.get_help().is_some_and(|h| !h.to_string().is_empty()),
                "--{id} has no description"
            );
        }
        let help = BundleArgs::command().render_long_help().to_string();
        assert!(help.contains("verifies every digest"), "{help}");
        assert!(help.contains("Bearer token required"), "{help}");
    }
}
