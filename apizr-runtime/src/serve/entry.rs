//! The entry points of a server: [`bundle_main`], the whole `main` of a generated project
//! (after `launcher::run_if_requested()`), and [`serve_blocking`] / [`serve`], which start a
//! transport for a [`ServeSpec`] (also used by `apizr serve`).
//!
//! `bundle_main` parses the flags by hand (no CLI crate in every
//! generated binary), loads and verifies the bundle, starts the tokio runtime and serves.
//!
//! Flags: `--bundle DIR` (default: `APIZR_BUNDLE`, else the nearest ancestor of the binary
//! holding `capability-ir.json`, else the working directory when it holds one, else the
//! directory given to [`bundle_main_in`]), `--host` (127.0.0.1), `--port` (8000),
//! `--token T` / `APIZR_TOKEN`, `--insecure`, `--workers N`, `--timeout-ms N` (direct mode),
//! `--concurrency N`, `--queue N`, `--governed-workers N`, `--governed-memory-mb MIB`,
//! `--oci-pool N` (v2: containers prepared ahead of calls; 0: a fresh one per call),
//! `--idle-timeout-ms N`, `--header-timeout-ms N`, `--body-timeout-ms N`, `--body-memory-mb MIB`,
//! and for MCP `--stdio` (default) | `--http`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use super::error::ServeError;
use super::options::{ServeOptions, SpecOverrides, Transport};
use super::spec::ServeSpec;

struct Parsed {
    bundle: Option<PathBuf>,
    options: ServeOptions,
    overrides: SpecOverrides,
}

fn value<T: std::str::FromStr>(
    args: &mut impl Iterator<Item = String>,
    flag: &str,
) -> Result<T, String> {
    args.next()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("{flag} needs a valid value"))
}

/// A positive duration in milliseconds (a zero timeout would close every connection).
fn millis(args: &mut impl Iterator<Item = String>, flag: &str) -> Result<Duration, String> {
    let ms: u64 = value(args, flag)?;
    if ms == 0 {
        return Err(format!("{flag} must be at least 1"));
    }
    Ok(Duration::from_millis(ms))
}

fn parse(args: impl IntoIterator<Item = String>) -> Result<Parsed, String> {
    let mut parsed = Parsed {
        bundle: std::env::var_os("APIZR_BUNDLE").map(PathBuf::from),
        options: ServeOptions::default(),
        overrides: SpecOverrides {
            audit: std::env::var_os("APIZR_AUDIT").map(PathBuf::from),
            ..SpecOverrides::default()
        },
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut rest = inline.into_iter().chain(&mut args);
        match flag.as_str() {
            "--bundle" => parsed.bundle = Some(value::<PathBuf>(&mut rest, "--bundle")?),
            "--host" => parsed.options.host = value(&mut rest, "--host")?,
            "--port" => parsed.options.port = value(&mut rest, "--port")?,
            "--token" => parsed.options.token = Some(value(&mut rest, "--token")?),
            "--insecure" => parsed.options.insecure = true,
            "--workers" => parsed.overrides.workers = Some(value(&mut rest, "--workers")?),
            "--timeout-ms" => parsed.overrides.timeout_ms = Some(value(&mut rest, "--timeout-ms")?),
            "--concurrency" => {
                parsed.overrides.concurrency = Some(value(&mut rest, "--concurrency")?)
            }
            "--queue" => parsed.overrides.queue = Some(value(&mut rest, "--queue")?),
            "--governed-workers" => {
                parsed.overrides.governed_workers = Some(value(&mut rest, "--governed-workers")?)
            }
            "--governed-memory-mb" => {
                parsed.overrides.governed_memory_mb =
                    Some(value(&mut rest, "--governed-memory-mb")?)
            }
            "--audit" => parsed.overrides.audit = Some(value::<PathBuf>(&mut rest, "--audit")?),
            "--oci-pool" => parsed.overrides.oci_pool = Some(value(&mut rest, "--oci-pool")?),
            "--idle-timeout-ms" => {
                parsed.options.http.idle_timeout = millis(&mut rest, "--idle-timeout-ms")?
            }
            "--header-timeout-ms" => {
                parsed.options.http.header_timeout = millis(&mut rest, "--header-timeout-ms")?
            }
            "--body-timeout-ms" => {
                parsed.options.http.body_timeout = millis(&mut rest, "--body-timeout-ms")?
            }
            "--body-memory-mb" => {
                let mib: u64 = value(&mut rest, "--body-memory-mb")?;
                parsed.options.http.body_memory_bytes = mib.saturating_mul(1 << 20);
            }
            "--stdio" => parsed.options.mcp_http = false,
            "--http" => parsed.options.mcp_http = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(parsed)
}

const USAGE: &str = "usage: [--bundle DIR] [--host H] [--port P] [--token T] [--insecure] \
[--workers N] [--timeout-ms N] [--concurrency N] [--queue N] [--governed-workers N] \
[--governed-memory-mb MIB] [--oci-pool N] [--audit FILE] [--idle-timeout-ms N] [--header-timeout-ms N] [--body-timeout-ms N] \
[--body-memory-mb MIB] [--stdio|--http]";

/// The nearest ancestor of the running binary holding `capability-ir.json`, else the working
/// directory when it holds one.
fn find_bundle(fallback: Option<&Path>) -> Option<PathBuf> {
    let marker = "capability-ir.json";
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe.ancestors().skip(1) {
            if dir.join(marker).is_file() {
                return Some(dir.to_path_buf());
            }
        }
    }
    if let Ok(cwd) = std::env::current_dir()
        && cwd.join(marker).is_file()
    {
        return Some(cwd);
    }
    fallback.map(Path::to_path_buf)
}

/// The whole `main` of a generated project.
pub fn bundle_main(transport: Transport) -> ExitCode {
    bundle_main_in(transport, None)
}

/// As [`bundle_main`], with a last-resort bundle directory (a generated `main.rs` may pass
/// `Some(Path::new(env!("CARGO_MANIFEST_DIR")))`).
pub fn bundle_main_in(transport: Transport, default_dir: Option<&Path>) -> ExitCode {
    let parsed = match parse(std::env::args().skip(1)) {
        Ok(p) => p,
        Err(message) => {
            if message.is_empty() {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let Some(dir) = parsed.bundle.clone().or_else(|| find_bundle(default_dir)) else {
        eprintln!("error: no bundle found; pass --bundle DIR");
        return ExitCode::from(2);
    };
    let result = ServeSpec::from_bundle_dir(&dir).and_then(|mut spec| {
        parsed.overrides.apply(&mut spec);
        serve_blocking(transport, spec, parsed.options)
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// Build the tokio runtime and serve until interrupted.
pub fn serve_blocking(
    transport: Transport,
    spec: ServeSpec,
    options: ServeOptions,
) -> Result<(), ServeError> {
    options.check_exposure()?;
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        // Half the cores: the other half runs the Python workers, and fewer I/O threads mean
        // fewer cross-thread wake-ups per call (measured: +10-15% req/s on 2 cores).
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        builder.worker_threads((cores / 2).max(1));
    }
    let runtime = builder
        .enable_all()
        .build()
        .map_err(|source| ServeError::Server {
            what: "tokio",
            source,
        })?;
    runtime.block_on(serve(transport, spec, options))
}

/// Serve on the current tokio runtime.
pub async fn serve(
    transport: Transport,
    spec: ServeSpec,
    options: ServeOptions,
) -> Result<(), ServeError> {
    match transport {
        #[cfg(feature = "rest")]
        Transport::Rest => super::rest::run_rest(spec, options).await,
        #[cfg(feature = "mcp")]
        Transport::Mcp => super::mcp::run_mcp(spec, options).await,
        #[allow(unreachable_patterns)]
        other => {
            let _ = (spec, options);
            Err(ServeError::MissingTransport(other.label()))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::serve::options::HttpLimits;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn flags_parse_in_both_spellings() {
        let p = parse(args(&[
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
            "--idle-timeout-ms=1500",
            "--header-timeout-ms",
            "2000",
            "--body-timeout-ms",
            "2500",
            "--body-memory-mb",
            "3",
            "--http",
        ]))
        .unwrap();
        assert_eq!(p.bundle, Some(PathBuf::from("/b")));
        assert_eq!((p.options.host.as_str(), p.options.port), ("0.0.0.0", 9));
        assert_eq!(p.options.token.as_deref(), Some("t"));
        assert!(p.options.insecure && p.options.mcp_http);
        assert_eq!(p.overrides.workers, Some(3));
        assert_eq!(p.overrides.timeout_ms, Some(250));
        assert_eq!(
            (p.overrides.concurrency, p.overrides.queue),
            (Some(2), Some(0))
        );
        assert_eq!(
            (p.overrides.governed_workers, p.overrides.governed_memory_mb),
            (Some(3), Some(512))
        );
        assert_eq!(p.overrides.oci_pool, Some(0));
        assert_eq!(
            p.options.http,
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
        assert!(parse(args(&["--port", "http"])).is_err());
        assert!(parse(args(&["--port"])).is_err());
        assert!(parse(args(&["--frobnicate"])).is_err());
        assert!(parse(args(&["--idle-timeout-ms", "0"])).is_err());
        assert_eq!(parse(args(&["--help"])).err(), Some(String::new()));
    }
}
