use super::*;
use crate::local::host::CgroupPids;

fn policy(text: &str) -> PolicyV1 {
    PolicyV1::from_json(&serde_json::from_str(text).unwrap()).unwrap()
}

const STRICT: &str = r#"{"network":{"mode":"deny"},"filesystem":{"mode":"sandbox"},"subprocess":{"mode":"deny"},"resources":{"memory_bytes":268435456,"pids":8,"cpu_millis":1500}}"#;

fn capable_root() -> HostCapabilities {
    HostCapabilities {
        launcher: Some("/x".into()),
        is_root: true,
        can_switch_ids: true,
        network_namespace: true,
        pid_namespace: true,
        ipc_uts_namespace: true,
        mount_namespace: true,
        fresh_proc: true,
        landlock_abi: 7,
        landlock_fully_enforced: true,
        seccomp_filter: true,
        python_prefixes: vec!["/usr".into()],
        cgroup_pids: Some(CgroupPids {
            version: "v1",
            base: "/sys/fs/cgroup/pids".into(),
        }),
        cgroup_memory: Some(CgroupPids {
            version: "v1",
            base: "/sys/fs/cgroup/memory".into(),
        }),
        ..HostCapabilities::default()
    }
}

#[test]
fn without_a_launcher_every_linux_control_is_refused() {
    let host = HostCapabilities::default();
    let p = plan(
        &policy(
            r#"{"network":{"mode":"deny"},"filesystem":{"mode":"sandbox"},"subprocess":{"mode":"deny"},"resources":{"memory_bytes":268435456,"pids":8,"cpu_millis":1000}}"#,
        ),
        &host,
    );
    assert_eq!(
        p.refused,
        vec![
            "network",
            "filesystem",
            "subprocess",
            "memory",
            "pids",
            "cpu"
        ]
    );
    let default = plan(&policy("{}"), &host);
    assert!(default.refused.is_empty());
    // Always-on controls are reported, not claimed.
    for control in ["syscalls", "proc", "descendants", "lifetime"] {
        let row = default
            .controls
            .iter()
            .find(|c| c.control == control)
            .unwrap();
        assert!(!row.enforced, "{control}");
        assert!(row.mechanism.is_some(), "{control} must say why");
    }
}

#[test]
fn a_capable_root_host_enforces_everything_by_name() {
    let p = plan(&policy(STRICT), &capable_root());
    assert!(p.refused.is_empty());
    assert!(p.controls.iter().all(|c| c.enforced), "{:?}", p.controls);
    assert_eq!(p.rlimit_cpu_secs, Some(2));
    assert_eq!(p.identity, IdentityPlan::PerCallIds);
    assert_eq!(p.view, Some(ViewPlan::Sandbox));
    assert_eq!(p.disk_bytes, Some(DEFAULT_DISK_BYTES));
    assert!(p.net_ns && p.pid_ns && p.landlock && p.seccomp && p.baseline && !p.user_ns);
    for control in ["identity", "syscalls", "proc", "disk", "lifetime", "memory"] {
        assert!(p.controls.iter().any(|c| c.control == control), "{control}");
    }
}

#[test]
fn the_default_policy_still_drops_privileges_and_filters_syscalls() {
    let p = plan(&policy("{}"), &capable_root());
    assert!(p.refused.is_empty());
    assert_eq!(p.identity, IdentityPlan::PerCallIds);
    assert_eq!(p.view, Some(ViewPlan::Host));
    assert!(p.baseline && !p.network_deny && p.disk_bytes.is_none());
}

#[test]
fn honest_refusals() {
    let host = capable_root();
    // A disk cap under the host filesystem would limit one directory only.
    let p = plan(&policy(r#"{"resources":{"disk_bytes":1048576}}"#), &host);
    assert_eq!(p.refused, vec!["disk"]);
    // Memory without a memory cgroup: RLIMIT_AS alone does not count memfd pages.
    let no_memcg = HostCapabilities {
        cgroup_memory: None,
        ..capable_root()
    };
    let p = plan(
        &policy(r#"{"resources":{"memory_bytes":268435456}}"#),
        &no_memcg,
    );
    assert_eq!(p.refused, vec!["memory"]);
    // Root without the capabilities to switch ids: reported, never claimed.
    let weak = HostCapabilities {
        can_switch_ids: false,
        ..capable_root()
    };
    let p = plan(&policy("{}"), &weak);
    let identity = p.controls.iter().find(|c| c.control == "identity").unwrap();
    assert!(!identity.enforced);
    assert_eq!(p.identity, IdentityPlan::Unchanged);
}

#[test]
fn a_non_root_host_uses_its_user_namespace() {
    let host = HostCapabilities {
        is_root: false,
        can_switch_ids: false,
        user_namespace: true,
        ..capable_root()
    };
    let p = plan(&policy(STRICT), &host);
    assert!(p.refused.is_empty());
    assert_eq!(p.identity, IdentityPlan::NamespaceRoot);
    assert!(p.user_ns);
}

/// Inside Docker with the generated seccomp profile: namespaces work, a fresh /proc does not
/// (the engine masks /proc paths), cgroups are not delegated. Network deny and subprocess deny
/// are enforced; the filesystem sandbox, disk and cgroup limits are refused with the reason,
/// and the call's /proc is reported as not private.
#[test]
fn a_container_without_a_fresh_proc_refuses_the_view_and_keeps_the_namespaces() {
    let host = HostCapabilities {
        is_root: false,
        can_switch_ids: false,
        fresh_proc: false,
        cgroup_pids: None,
        cgroup_memory: None,
        user_namespace: true,
        ..capable_root()
    };
    let p = plan(&policy(STRICT), &host);
    assert_eq!(p.refused, vec!["filesystem", "memory", "pids"]);
    assert_eq!(p.view, None);
    assert!(p.net_ns && p.pid_ns && p.seccomp);
    let proc = p.controls.iter().find(|c| c.control == "proc").unwrap();
    assert!(!proc.enforced);
    assert!(
        proc.mechanism
            .as_deref()
            .unwrap()
            .starts_with("a fresh /proc cannot be mounted"),
        "{proc:?}"
    );
    let reasons = unenforceable(&policy(STRICT), &host);
    let filesystem = reasons.iter().find(|u| u.control == "filesystem").unwrap();
    assert!(
        filesystem
            .reason
            .contains("container engines mask parts of /proc"),
        "{filesystem}"
    );
    // Network deny alone can be served there.
    assert!(unenforceable(&policy(r#"{"network":{"mode":"deny"}}"#), &host).is_empty());
}
