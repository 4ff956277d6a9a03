//! How a generated project is deployed, in one place for its templates (`Dockerfile`,
//! `k8s/`, `README.md`) and for `apizr image build --project` ([`crate::project_image`]): the
//! image reference, the container's command line, user and health check, and the Kubernetes
//! autoscaling choice.
//!
//! Rules:
//! * the image **name** follows the execution mode (`<package>`, `<package>-governed`,
//!   `<package>-governed-oci`): a governed build never replaces a direct one of the same
//!   module on an engine or in a registry;
//! * the image **tag** is the first [`TAG_HEX`] hex digits of the sha256 of the transport
//!   manifest, which holds the digest of every file the server verifies: the tag changes
//!   exactly when the served bundle changes, so applying new manifests rolls the pods, and an
//!   old tag never names new content (`:latest` did both wrong).

use serde_json::{Value as Json, json};

use crate::model::Transport;

/// Where the bundle lives in the image (the server's `--bundle`).
pub const BUNDLE_DIR: &str = "/srv/apizr";
/// Non-root and numeric, so that the base image needs no passwd entry.
pub const USER: &str = "65532:65532";
/// A package's third-party requirements: the virtual environment the image installs them
/// into (never the system interpreter), and where the project's `python/` is copied for it.
pub const VENV_DIR: &str = "/opt/apizr/venv";
pub const PYTHON_DIR: &str = "/opt/apizr/python";
/// The interpreter the workers run (`APIZR_PYTHON`): the virtual environment's when the
/// package has requirements (they are installed there only), else the image's `python3`.
pub fn worker_python(has_requirements: bool) -> String {
    if has_requirements {
        format!("{VENV_DIR}/bin/python")
    } else {
        "python3".into()
    }
}
/// The project's `python/install.sh`, as the image runs it (as root, before switching users).
pub fn install_script() -> String {
    format!("{PYTHON_DIR}/install.sh")
}
/// The port the container listens on.
pub const PORT: u16 = 8000;
/// Hex digits of the bundle digest in the image tag (as short git hashes: unique enough
/// among one project's builds, short enough to read).
pub const TAG_HEX: usize = 12;
/// Image label holding the full bundle digest (`sha256:<hex>`).
pub const BUNDLE_LABEL: &str = "org.apizr.bundle.digest";
/// The health check's interval, timeout, start period (seconds) and retries.
pub const HEALTH: (u64, u64, u64, u64) = (10, 3, 10, 3);

/// The execution mode as far as deployment is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecutionKind {
    Direct,
    /// Governed v1: a sandboxed worker process per call.
    Governed,
    /// Governed v2: a container per call.
    GovernedOci,
}

impl ExecutionKind {
    fn image_suffix(self) -> &'static str {
        match self {
            ExecutionKind::Direct => "",
            ExecutionKind::Governed => "-governed",
            ExecutionKind::GovernedOci => "-governed-oci",
        }
    }
}

/// What `k8s/` scales the server with; never both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Autoscaling {
    /// A Deployment, a Service and a HorizontalPodAutoscaler.
    #[default]
    Hpa,
    /// A Knative Service that scales to zero when idle (replaces all three).
    ScaleToZero,
}

/// `<package>[-governed[-oci]]`.
pub fn image_name(package: &str, kind: ExecutionKind) -> String {
    format!("{package}{}", kind.image_suffix())
}

/// The first [`TAG_HEX`] hex digits of the sha256 of the transport manifest's bytes.
pub fn image_tag(manifest: &[u8]) -> String {
    let mut hex = apizr_ir::Digest::sha256(manifest).value;
    hex.truncate(TAG_HEX);
    hex
}

/// `<name>:<tag>`.
pub fn image_reference(package: &str, kind: ExecutionKind, manifest: &[u8]) -> String {
    format!("{}:{}", image_name(package, kind), image_tag(manifest))
}

/// The container's entrypoint: the server on all interfaces (so it needs `APIZR_TOKEN`), the
/// MCP server over Streamable HTTP.
pub fn entrypoint(package: &str, transport: Transport) -> Vec<String> {
    let mut argv: Vec<String> = [
        format!("/usr/local/bin/{package}").as_str(),
        "--bundle",
        BUNDLE_DIR,
        "--host",
        "0.0.0.0",
        "--port",
        &PORT.to_string(),
    ]
    .map(str::to_string)
    .to_vec();
    if transport == Transport::Mcp {
        argv.push("--http".into());
    }
    argv
}

/// The health check command (exec form, the image's own python3): `/readyz` for REST, a TCP
/// connect for MCP (its HTTP endpoint is a session protocol).
pub fn healthcheck(transport: Transport) -> Vec<String> {
    let probe = match transport {
        Transport::Rest => format!(
            "import urllib.request; urllib.request.urlopen('http://127.0.0.1:{PORT}/readyz', timeout=2)"
        ),
        Transport::Mcp => format!(
            "import socket; socket.create_connection(('127.0.0.1', {PORT}), timeout=2).close()"
        ),
    };
    vec!["python3".into(), "-c".into(), probe]
}

/// A JSON array in Dockerfile exec form (`["a", "b"]`).
pub fn exec_form(argv: &[String]) -> String {
    let items: Vec<String> = argv
        .iter()
        .map(|a| Json::from(a.as_str()).to_string())
        .collect();
    format!("[{}]", items.join(", "))
}

/// The Engine API image configuration equal to what the generated `Dockerfile` sets; `python`
/// is [`worker_python`].
pub fn image_config(
    package: &str,
    transport: Transport,
    bundle_digest: &str,
    python: &str,
) -> Json {
    let (interval, timeout, start, retries) = HEALTH;
    let seconds = |s: u64| s * 1_000_000_000;
    let mut test = vec!["CMD".to_string()];
    test.extend(healthcheck(transport));
    json!({
        "User": USER,
        "WorkingDir": BUNDLE_DIR,
        "Entrypoint": entrypoint(package, transport),
        "Cmd": null,
        "Env": [format!("APIZR_PYTHON={python}")],
        "ExposedPorts": {format!("{PORT}/tcp"): {}},
        "Healthcheck": {
            "Test": test,
            "Interval": seconds(interval),
            "Timeout": seconds(timeout),
            "StartPeriod": seconds(start),
            "Retries": retries,
        },
        "Labels": {BUNDLE_LABEL: bundle_digest},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_mode_and_tags_the_manifest() {
        assert_eq!(
            image_name("apizr-rest-p", ExecutionKind::Direct),
            "apizr-rest-p"
        );
        assert_eq!(
            image_name("apizr-rest-p", ExecutionKind::Governed),
            "apizr-rest-p-governed"
        );
        assert_eq!(
            image_name("apizr-rest-p", ExecutionKind::GovernedOci),
            "apizr-rest-p-governed-oci"
        );
        // sha256("") = e3b0c44298fc…
        assert_eq!(image_tag(b""), "e3b0c44298fc");
        assert_ne!(image_tag(b"{}"), image_tag(b"{ }"));
    }

    #[test]
    fn mcp_serves_http_in_the_container() {
        let argv = entrypoint("apizr-mcp-p", Transport::Mcp);
        assert_eq!(
            argv.first().map(String::as_str),
            Some("/usr/local/bin/apizr-mcp-p")
        );
        assert_eq!(argv.last().map(String::as_str), Some("--http"));
        assert_eq!(exec_form(&["a\"b".into(), "c".into()]), r#"["a\"b", "c"]"#);
    }
}
