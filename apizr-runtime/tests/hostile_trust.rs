//! The worker's word is not the supervisor's: a payload that writes its own response frame
//! (claiming a status only the supervisor may decide) is overruled and recorded as such, and
//! it cannot append to the audit trail.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use apizr_runtime::audit::FileAuditSink;
use common::*;

/// Writes a forged `timeout` envelope on the worker's private response descriptor, then
/// tries to append a forged record to the audit file, then exits before the real worker
/// answers.
const FORGE: &str = r#"import os, sys
def f(audit):
    try:
        with open(audit, 'a') as fh:
            fh.write('{"status":"success","forged":true}\n')
    except OSError:
        pass
    body = b'{"schema_version":"apizr.execution-result/v1","status":"timeout","value":null}\n'
    out = sys.modules['__main__']._OUT
    os.write(out, len(body).to_bytes(8, 'big') + body)
    os._exit(0)
"#;

#[test]
fn a_forged_status_and_audit_record_are_not_trusted() {
    let root = temp_root("forge");
    let audit = root.join("audit.jsonl");
    let sink = Arc::new(FileAuditSink::open(&audit).unwrap());
    let rt = runtime_in(&root).with_audit(sink);
    for policy_text in [DEFAULT, STRICT] {
        std::fs::write(&audit, "").unwrap();
        let mut c = call(
            FORGE,
            "f",
            vec![param(
                "audit",
                apizr_runtime::ir::ParameterKind::PositionalOrKeyword,
                true,
                ts(apizr_runtime::ir::TypeKind::Str),
            )],
            &[(
                "audit",
                apizr_runtime::ir::json::Value::Str(audit.to_string_lossy().into()),
            )],
        );
        c.policy = policy(policy_text);
        let out = exec(&rt, &c);
        assert_eq!(
            status(&out),
            "worker_failed",
            "{policy_text}: {:?}",
            out.report
        );
        assert_eq!(out.report.worker_status, Some("timeout"));
        assert_eq!(out.report.status_source, "supervisor");
        assert!(out.report.limits_hit.is_empty(), "no deadline was hit");
        let lines = std::fs::read_to_string(&audit).unwrap();
        if enforced(&out, "identity") {
            assert_eq!(lines.lines().count(), 1, "{policy_text}: {lines}");
        }
        let record: serde_json::Value =
            serde_json::from_str(lines.lines().last().unwrap()).unwrap();
        assert_eq!(record["status"], "worker_failed");
        assert_eq!(record["status_source"], "supervisor");
        assert_eq!(record["worker_status"], "timeout");
    }
    cleanup(&root);
}

#[test]
fn a_worker_claim_is_labelled_as_such() {
    let root = temp_root("claim");
    let rt = runtime_in(&root);
    let out = run(&rt, "def f():\n    return 1\n", "f", DEFAULT);
    assert_eq!(status(&out), "success");
    assert_eq!(out.report.status_source, "worker");
    assert_eq!(out.report.worker_status, Some("success"));
    let refused = run(
        &rt,
        "def f():\n    return 1\n",
        "f",
        r#"{"resources":{"disk_bytes":1048576}}"#,
    );
    assert_eq!(refused.report.status_source, "supervisor");
    assert_eq!(refused.report.worker_status, None);
    cleanup(&root);
}
