//! The backend runs inside the compiler: it may depend on the inspector, the IR and the syn
//! family, never on the runtime, an async runtime, templating or the CLI (which would put
//! them into every build of every crate that uses the macros, and make the compile-time half
//! depend on the run-time half). Checked on the real dependency graph with `cargo tree`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

#[test]
fn the_backend_does_not_depend_on_runtime_async_templating_or_cli_crates() {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-p",
            "apizr-macros",
            "-e",
            "normal,build",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8(output.stdout).unwrap();
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert!(
        names.contains(&"apizr-macros-backend") && names.contains(&"apizr-inspect"),
        "{tree}"
    );
    for forbidden in [
        "apizr-runtime",
        "apizr-cli",
        "tokio",
        "askama",
        "clap",
        "axum",
        "rmcp",
    ] {
        assert!(
            !names.contains(&forbidden),
            "apizr-macros depends on {forbidden}:\n{tree}"
        );
    }
}
