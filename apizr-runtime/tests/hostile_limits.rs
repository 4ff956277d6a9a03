//! Memory that `RLIMIT_AS` never sees: 1 GiB held in a `memfd` (and in System V shared
//! memory) under a 256 MiB limit is stopped by the call's memory cgroup, under the strict
//! policy and with only the memory limit; the report names the limit that was hit.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;

const MEMFD: &str = r#"import os
def f():
    fd = os.memfd_create('hoard')
    chunk = b'x' * (1 << 20)
    for _ in range(1024):
        os.write(fd, chunk)
    return os.fstat(fd).st_size
"#;

#[test]
fn a_memfd_beyond_the_memory_limit_is_killed() {
    let root = temp_root("memfd");
    let rt = runtime_in(&root);
    // Control: without a memory limit the hoard succeeds (and RLIMIT_AS alone would not see
    // it: the pages are never mapped).
    let free = run(&rt, MEMFD, "f", r#"{"limits":{"wall_time_ms":20000}}"#);
    assert_eq!(
        value(&free),
        serde_json::json!(1 << 30),
        "{:?}",
        free.report
    );
    for policy_text in [
        STRICT,
        r#"{"resources":{"memory_bytes":268435456},"limits":{"wall_time_ms":20000}}"#,
    ] {
        let out = run(&rt, MEMFD, "f", policy_text);
        if !enforced(&out, "memory") {
            continue;
        }
        assert_eq!(
            status(&out),
            "worker_failed",
            "{policy_text}: {:?}",
            out.report
        );
        assert!(
            out.report.limits_hit.contains(&"memory".to_string()),
            "{policy_text}: {:?}",
            out.report
        );
        assert_eq!(out.report.status_source, "supervisor");
    }
    // Nothing of the calls is left (a pool's idle workers go with the runtime).
    drop(rt);
    assert!(processes_of(&root, "").is_empty());
    cleanup(&root);
}
