//! Hostile payloads against the worker's identity, under the strict policy and under the
//! default `{}`: no capability works (each attack is first shown to work for a root process
//! without the sandbox), and no host process — the supervisor included — is visible.

#![allow(clippy::unwrap_used, clippy::expect_used)]
#![cfg(target_arch = "x86_64")]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use apizr_runtime::ir::json::Value;
use apizr_runtime::ir::{ParameterKind, TypeKind};
use common::*;

const CAPABILITIES: &str = include_str!("hostile/capabilities.py");
const EPERM: i64 = 1;

fn attack(root: &std::path::Path, policy_text: &str, target: &str) -> apizr_runtime::CallOutcome {
    let rt = runtime_in(root);
    let mut c = call(
        CAPABILITIES,
        "f",
        vec![param(
            "target",
            ParameterKind::PositionalOrKeyword,
            true,
            ts(TypeKind::Str),
        )],
        &[("target", Value::Str(target.into()))],
    );
    c.policy = policy(policy_text);
    exec(&rt, &c)
}

/// The same payload run directly by this (root) test process: what the sandbox must stop
/// really works without it.
fn control_run(dir: &std::path::Path, target: &str) -> serde_json::Value {
    let script = format!(
        "{CAPABILITIES}\nimport json, sys\nsys.stdout.write(json.dumps(run({target:?}, True)))\n"
    );
    let out = Command::new("python3")
        .args(["-I", "-S", "-c", &script])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn no_capability_works_in_any_worker() {
    let root = temp_root("caps");
    let rt = runtime_in(&root);
    if !require(
        rt.host_capabilities().is_root,
        "the root path (CI runs as root)",
    ) {
        cleanup(&root);
        return;
    }
    let target = root.join("host-file");
    std::fs::write(&target, "host").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
    let target = target.to_string_lossy().to_string();
    let control = control_run(&root, &target);
    for name in [
        "chown_host_file",
        "chmod_host_file",
        "mknod_char_device",
        "chattr_immutable",
        "bpf",
        "io_uring_setup",
        "open_by_handle_at",
        "userns",
    ] {
        assert_ne!(
            control[name],
            serde_json::json!(EPERM),
            "{name} as root: {control}"
        );
    }
    assert_eq!(control["chown_host_file"], "ok");
    assert_eq!(control["mknod_char_device"], "ok");
    assert_eq!(control["bpf"], "ok");
    assert_eq!(control["io_uring_setup"], "ok");
    // Restore what the control run changed.
    let _ = std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644));
    let _ = nix::unistd::chown(
        target.as_str(),
        Some(nix::unistd::Uid::from_raw(0)),
        Some(nix::unistd::Gid::from_raw(0)),
    );
    for policy_text in [DEFAULT, STRICT] {
        let out = attack(&root, policy_text, &target);
        if !enforced(&out, "identity") || !enforced(&out, "syscalls") {
            continue;
        }
        assert_eq!(status(&out), "success", "{policy_text}: {:?}", out.report);
        let got = value(&out);
        for (name, result) in got.as_object().unwrap() {
            assert_ne!(
                result, "ok",
                "{policy_text}: {name} worked in the worker: {got}"
            );
        }
        // The syscall filter answers EPERM before the kernel looks at the (dummy) arguments.
        for name in [
            "bpf",
            "io_uring_setup",
            "perf_event_open",
            "open_by_handle_at",
            "userns",
            "mount_tmpfs",
            "ptrace_traceme",
            "keyctl",
            "userfaultfd",
            "process_vm_readv",
            "sethostname",
            "mknod_char_device",
        ] {
            assert_eq!(
                got[name],
                serde_json::json!(EPERM),
                "{policy_text}: {name}: {got}"
            );
        }
        let meta = std::fs::metadata(&target).unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            (meta.uid(), meta.mode() & 0o777),
            (0, 0o644),
            "{policy_text}"
        );
        let identity = out
            .report
            .controls
            .iter()
            .find(|c| c.control == "identity")
            .unwrap();
        assert!(
            identity
                .mechanism
                .as_deref()
                .unwrap_or("")
                .starts_with("uid "),
            "the report names the uid: {identity:?}"
        );
    }
    cleanup(&root);
}

const SPY: &str = r#"import os
def f(victim):
    seen = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
    leaked = []
    for pid in [victim] + seen:
        for what in ('environ', 'cmdline'):
            try:
                with open('/proc/%d/%s' % (pid, what), 'rb') as fh:
                    data = fh.read()
                if b'apizr-secret-6071' in data:
                    leaked.append('%d/%s' % (pid, what))
            except OSError:
                pass
    return {'pids': seen, 'leaked': leaked}
"#;

#[test]
fn host_processes_and_their_secrets_are_invisible() {
    let root = temp_root("proc");
    let rt = runtime_in(&root);
    // A host process with a secret in its environment and on its command line.
    let victim = Victim(
        Command::new("sleep")
            .arg("30")
            .env("APIZR_SECRET", "apizr-secret-6071")
            .arg0_secret()
            .spawn()
            .unwrap(),
    );
    let pid = victim.0.id() as i64;
    // Control: once it has exec'd, the secret is readable from the host.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        if String::from_utf8_lossy(&environ).contains("apizr-secret-6071") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "control: the secret is not readable"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    for policy_text in [DEFAULT, STRICT] {
        let mut c = call(
            SPY,
            "f",
            vec![param(
                "victim",
                ParameterKind::PositionalOrKeyword,
                true,
                ts(TypeKind::Int),
            )],
            &[("victim", Value::Int(pid))],
        );
        c.policy = policy(policy_text);
        let out = exec(&rt, &c);
        if !enforced(&out, "proc") {
            continue;
        }
        assert_eq!(status(&out), "success", "{:?}", out.report);
        let got = value(&out);
        assert_eq!(got["leaked"], serde_json::json!([]), "{policy_text}: {got}");
        assert_eq!(
            got["pids"],
            serde_json::json!([1]),
            "{policy_text}: only the worker"
        );
    }
    drop(victim);
    cleanup(&root);
}

/// The victim process, killed whatever happens.
struct Victim(std::process::Child);

impl Drop for Victim {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

trait SecretArg {
    fn arg0_secret(&mut self) -> &mut Self;
}

impl SecretArg for Command {
    /// Also put the secret on the command line (`sleep 30 apizr-secret-6071` would fail, so
    /// it goes in argv[0]).
    fn arg0_secret(&mut self) -> &mut Self {
        use std::os::unix::process::CommandExt;
        self.arg0("apizr-secret-6071")
    }
}
