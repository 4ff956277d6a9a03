//! `apizr inspect DIR --readiness v2 --blockers` end to end, on
//! `examples/blockers`: the text report (insta snapshot), the JSON document
//! (`apizr.blockers/v1`) agreeing with it, the exit status of `inspect DIR`, and precise usage
//! errors (exit 2, nothing on stdout) for v1, a single file, and `--explain` alongside.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "generate/support.rs"]
mod support;

use std::path::PathBuf;

use serde_json::Value;
use support::{apizr, workspace_root};

fn fixture() -> PathBuf {
    workspace_root().join("examples/blockers")
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = apizr(&fixture(), args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn blockers_text_and_json_rank_the_statements_at_fault() {
    // `inspect DIR`'s status: every assessment is ready or conditional, so 0.
    let (code, text, _) = run(&["inspect", ".", "--readiness", "v2", "--blockers"]);
    assert_eq!(code, 0, "{text}");
    insta::assert_snapshot!("blockers_text", text);
    let (code, json, _) = run(&[
        "inspect",
        ".",
        "--readiness",
        "v2",
        "--blockers",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["schema_version"], "apizr.blockers/v1");
    let culprits = doc["culprits"].as_array().unwrap();
    assert_eq!(culprits[0]["path"], "pkg/__init__.py");
    assert_eq!(culprits[0]["functions"], 4);
    assert_eq!(culprits[1]["path"], "pkg/config.py");
    // The text names the same first culprit, with its line and column.
    assert!(text.contains("pkg/__init__.py:6:1"), "{text}");
}

#[test]
fn blockers_refuses_what_it_cannot_summarise() {
    let cases: [(&[&str], &str); 3] = [
        (
            &["inspect", ".", "--blockers"],
            "`--blockers` needs `--readiness v2`",
        ),
        (
            &["inspect", "solo.py", "--readiness", "v2", "--blockers"],
            "`--blockers` summarises a directory, and solo.py is not one",
        ),
        (
            &[
                "inspect",
                ".",
                "--readiness",
                "v2",
                "--blockers",
                "--explain",
            ],
            "cannot be used with",
        ),
    ];
    for (args, message) in cases {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}
