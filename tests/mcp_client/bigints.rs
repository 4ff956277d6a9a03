//! The check of `fixtures/mcp_tools_demo.bigints.json` driven by `drive.py`, shared by the
//! stdio (`apizr-cli/tests/mcp_stdio.rs`) and HTTP (`apizr-runtime/tests/serve_mcp.rs`) tests:
//! integers beyond 64 bits reach the function exactly and come back exact, both in
//! `structuredContent` and in the text content. The transcript is read with exact integers.

/// Panics unless every call of the transcript answered its exact expected value.
pub fn check_big_integers(transcript: &[u8]) {
    use apizr_ir::Value;
    let doc = apizr_ir::admission::parse_permissive(transcript).unwrap();
    let Some(Value::Array(calls)) = doc.get("calls") else {
        panic!("no calls in {}", String::from_utf8_lossy(transcript));
    };
    let want = [
        r#"{"result":123456789012345678901234567891}"#,
        r#"{"result":-18446744073709551617}"#,
        r#"{"result":[9007199254740993,9007199254740994]}"#,
        r#"{"n":[340282366920938463463374607431768211456,-1]}"#,
    ];
    assert_eq!(calls.len(), want.len());
    for (call, want) in calls.iter().zip(want) {
        let result = call.get("result").unwrap();
        let structured = result.get("structuredContent").unwrap();
        assert_eq!(structured.canonical_string().unwrap(), want, "{call:?}");
        let Some(Value::Array(content)) = result.get("content") else {
            panic!("{call:?}");
        };
        assert_eq!(content[0].get("text"), Some(&Value::Str(want.into())));
    }
}
