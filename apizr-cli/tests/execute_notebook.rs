#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `apizr execute` runs a notebook's exported text exactly as it was hashed into
//! `transformed_digest`, also when cell sources use CRLF line endings (a regression: the
//! newline-translated parser text used to be sent instead and failed with `source_mismatch`).

use std::process::Command;

fn run(tag: &str, notebook_source: &str) -> (String, Option<i32>) {
    let dir = std::env::temp_dir().join(format!("apizr-exec-nb-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let nb = serde_json::json!({
        "cells": [{"cell_type": "code", "execution_count": null, "id": "c1", "metadata": {},
                   "outputs": [], "source": notebook_source}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5
    });
    let path = dir.join("crlf.ipynb");
    std::fs::write(&path, serde_json::to_vec(&nb).unwrap()).unwrap();
    std::fs::write(dir.join("args.json"), br#"{"a": 2, "b": 3}"#).unwrap();
    std::fs::write(dir.join("policy.json"), b"{}").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_apizr"))
        .args(["execute"])
        .arg(&path)
        .arg("add")
        .arg("--arguments")
        .arg(dir.join("args.json"))
        .arg("--policy")
        .arg(dir.join("policy.json"))
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (String::from_utf8(out.stdout).unwrap(), out.status.code())
}

#[test]
fn crlf_notebook_cells_execute() {
    let (stdout, code) = run(
        "crlf",
        "def add(a: int, b: int) -> int:\r\n    return a + b\r\n",
    );
    assert_eq!(
        stdout.trim(),
        r#"{"schema_version":"apizr.execution-result/v1","status":"success","value":5}"#
    );
    assert_eq!(code, Some(0));
}

#[test]
fn lf_notebook_cells_execute() {
    let (stdout, code) = run("lf", "def add(a: int, b: int) -> int:\n    return a + b\n");
    assert!(
        stdout.contains(r#""status":"success","value":5"#),
        "{stdout}"
    );
    assert_eq!(code, Some(0));
}
