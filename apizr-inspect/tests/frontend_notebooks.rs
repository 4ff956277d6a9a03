#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Notebook parity: every vector's expected text comes from nbconvert 7.17.2's PythonExporter
//! and the reference CLI's result (`scripts/gen-notebook-vectors.py`).

use apizr_inspect::{InspectError, InspectOptions, inspect_bytes, notebook};
use apizr_ir::SourceKind;

fn vectors() -> Vec<serde_json::Value> {
    let raw = include_str!("data/frontend/notebook-vectors.json");
    serde_json::from_str(raw).unwrap()
}

#[test]
fn export_matches_nbconvert_and_the_oracle() {
    let vectors = vectors();
    assert!(vectors.len() >= 45);
    let mut failures = Vec::new();
    let mut matched = 0;
    for v in &vectors {
        let name = v["name"].as_str().unwrap();
        let bytes = v["notebook"].as_str().unwrap().as_bytes();
        let outcome = inspect_bytes(bytes, SourceKind::Notebook, "nb", InspectOptions::default());
        match (
            v.get("oracle_transformed").and_then(|d| d.as_str()),
            &outcome,
        ) {
            (Some(expected), Ok(out)) => {
                let got = out
                    .inspection
                    .capability_ir
                    .source
                    .transformed_digest
                    .as_ref()
                    .unwrap();
                if got.value != expected {
                    let ours = notebook::export(bytes, false)
                        .map(|e| e.text)
                        .unwrap_or_default();
                    failures.push(format!(
                        "{name}: digest differs; ours {ours:?} vs {:?}",
                        v["text"]
                    ));
                } else {
                    matched += 1;
                }
            }
            (None, Err(_)) => {}
            (Some(_), Err(e)) => failures.push(format!("{name}: oracle accepts, we refuse: {e}")),
            (None, Ok(_)) => failures.push(format!(
                "{name}: oracle refuses ({}), we accept",
                v["oracle_error"]
            )),
        }
        // The exported text itself equals nbconvert's wherever nbconvert produced one and we
        // do not refuse IPython syntax or prompts.
        if let (Some(text), Ok(export)) = (v["text"].as_str(), notebook::export(bytes, false))
            && export.text != text
        {
            failures.push(format!(
                "{name}: text {:?} != nbconvert {text:?}",
                export.text
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(matched >= 28, "only {matched} digests matched");
}

#[test]
fn magics_are_refused_with_a_position() {
    let nb = |src: &str| {
        serde_json::json!({"cells": [
            {"cell_type": "markdown", "metadata": {}, "source": "intro"},
            {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": src}
        ], "metadata": {}, "nbformat": 4, "nbformat_minor": 4})
        .to_string()
    };
    // Header (2 lines) + markdown (2) + prompt block (4) = the cell starts on line 9.
    for (src, line) in [
        ("%matplotlib inline\nx = 1", 9),
        ("x = 1\n!ls", 10),
        ("x = 1\nfiles = !ls", 10),
        ("len?", 9),
        ("?len", 9),
        ("%%time\nx = 1", 9),
        ("if True:\n    %time f()", 10),
    ] {
        let err = notebook::export(nb(src).as_bytes(), false).err().unwrap();
        match err {
            InspectError::NotebookMagics { position: Some(p) } => assert_eq!(p.line, line, "{src}"),
            other => panic!("{src}: {other}"),
        }
    }
}

#[test]
fn strip_magics_comments_them_out() {
    let src = "%matplotlib inline\nimport math\nif True:\n    %time f()\n    y = 1\nfiles = !ls\n";
    let nb = serde_json::json!({"cells": [
        {"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [], "source": src}
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 4})
    .to_string();
    let export = notebook::export(nb.as_bytes(), true).unwrap();
    assert_eq!(
        export.text,
        "#!/usr/bin/env python\n# coding: utf-8\n\n# In[3]:\n\n\n# %matplotlib inline\nimport math\n\
         if True:\n    pass  # %time f()\n    y = 1\n# files = !ls\n\n"
    );
    let lines: Vec<u32> = export
        .notes
        .iter()
        .map(|n| n.position.unwrap().line)
        .collect();
    assert_eq!(lines, vec![7, 10, 12]);
    let out = inspect_bytes(
        nb.as_bytes(),
        SourceKind::Notebook,
        "nb",
        InspectOptions {
            strip_magics: true,
            ..InspectOptions::default()
        },
    )
    .unwrap();
    assert_eq!(out.notes.len(), 3);
}

#[test]
fn user_written_get_ipython_is_refused() {
    let nb = serde_json::json!({"cells": [
        {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "def f():\n    return get_ipython()\n"}
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 4})
    .to_string();
    let err = inspect_bytes(
        nb.as_bytes(),
        SourceKind::Notebook,
        "nb",
        InspectOptions::default(),
    )
    .err()
    .unwrap();
    assert!(
        matches!(err, InspectError::NotebookMagics { position: Some(p) } if p.line == 8),
        "{err}"
    );
}

#[test]
fn json_budget_boundaries() {
    let deep = |n: usize| {
        format!(
            "{{\"cells\": [], \"metadata\": {{\"a\": {}{}}}, \"nbformat\": 4, \"nbformat_minor\": 4}}",
            "[".repeat(n),
            "]".repeat(n)
        )
    };
    assert!(notebook::export(deep(62).as_bytes(), false).is_ok());
    let err = notebook::export(deep(63).as_bytes(), false).err().unwrap();
    assert!(err.to_string().contains("json_structure_limit"), "{err}");
    let err = notebook::lexical_budget("]").unwrap_err();
    assert!(err.to_string().contains("json_structure_invalid"), "{err}");
    let many = format!("[{}1]", "1,".repeat(100_000));
    assert!(notebook::lexical_budget(&many).is_err());
    let many = format!("[{}1]", "1,".repeat(99_998));
    assert!(notebook::lexical_budget(&many).is_ok());
}

#[test]
fn notebook_errors_are_precise() {
    let cases: [(&[u8], &str); 5] = [
        (b"[1, 2]", "must be an object, not an array"),
        (b"{\"cells\": [,]}", "line 1, column 12"),
        (b"{\"a\": \"\xff\"}", "not valid UTF-8 (line 1, column 8)"),
        (
            b"{\"metadata\": {}, \"nbformat\": 4, \"nbformat_minor\": 4}",
            "missing required field 'cells'",
        ),
        (
            b"{\"cells\": [], \"metadata\": {}, \"nbformat\": \"4\", \"nbformat_minor\": 4}",
            "Unsupported nbformat version",
        ),
    ];
    for (bytes, needle) in cases {
        let err = notebook::export(bytes, false).err().unwrap();
        assert!(matches!(err, InspectError::Notebook { .. }), "{err}");
        assert!(err.to_string().contains(needle), "{err} lacks {needle}");
    }
}
