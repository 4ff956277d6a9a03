//! Helpers shared by the test suites of the apizr crates (a dev-dependency only).
//!
//! The rule they enforce: a test that cannot run on this host (no Docker engine, no official
//! MCP client, no Chromium, a kernel without a control) may skip on a developer's machine, but
//! under CI it fails. A skipped test in CI is a control nobody checked. [`in_ci`] is the one
//! place that decides what "under CI" means; every test asks it.

use std::fmt::Display;
use std::path::{Path, PathBuf};

/// Whether this run is CI: `CI` is set to anything but empty, `0` or `false` (GitHub Actions,
/// GitLab and `.ci/run` set `CI=true`).
pub fn in_ci() -> bool {
    std::env::var("CI")
        .is_ok_and(|v| !matches!(v.trim().to_ascii_lowercase().as_str(), "" | "0" | "false"))
}

/// A test cannot run here because of `why`. Under CI this fails the test; elsewhere it says
/// `skipped: <why>` on stderr and returns, and the caller returns early.
///
/// ```
/// # fn docker_available() -> bool { true }
/// fn a_container_test() {
///     if !docker_available() {
///         apizr_test_support::skip("no docker engine");
///         return;
///     }
///     // … the test itself …
/// }
/// a_container_test();
/// ```
#[track_caller]
pub fn skip(why: impl Display) {
    assert!(!in_ci(), "{why} (CI=true: this test must not skip)");
    eprintln!("skipped: {why}");
}

/// The workspace root (the parent of every crate folder).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// An external tool a test drives: `$variable` if set, else `default` under the workspace
/// root. `None` (after [`skip`], so never under CI) when it does not exist.
pub fn external_tool(variable: &str, default: &str, what: &str) -> Option<PathBuf> {
    let candidate = std::env::var_os(variable)
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(default));
    if candidate.exists() {
        return Some(candidate);
    }
    skip(format!("{what} is required ({})", candidate.display()));
    None
}

/// The Python with the official `mcp` package (`MCP_CLIENT_PYTHON`, else the venv `.ci/run`
/// builds).
pub fn mcp_client_python() -> Option<PathBuf> {
    external_tool(
        "MCP_CLIENT_PYTHON",
        "target/mcp-client-venv/bin/python",
        "the official MCP client (a Python with the `mcp` package)",
    )
}

/// The Python with `openapi-spec-validator` (`OPENAPI_VALIDATOR_PYTHON`, else the venv
/// `.ci/run` builds).
pub fn openapi_validator_python() -> Option<PathBuf> {
    external_tool(
        "OPENAPI_VALIDATOR_PYTHON",
        "target/openapi-venv/bin/python",
        "openapi-spec-validator",
    )
}

/// The Python with `kubernetes-validate` (`KUBERNETES_VALIDATE_PYTHON`, else the venv `.ci/run`
/// builds); run as `python -m kubernetes_validate`.
pub fn kubernetes_validate_python() -> Option<PathBuf> {
    external_tool(
        "KUBERNETES_VALIDATE_PYTHON",
        "target/kubernetes-validate-venv/bin/python",
        "kubernetes-validate",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_root_holds_the_crates() {
        assert!(workspace_root().join("apizr-runtime/Cargo.toml").is_file());
    }
}
