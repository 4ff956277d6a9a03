//! Hostile payloads against the filesystem and sockets, under the strict policy and under the
//! default `{}`: host unix sockets (path and abstract) are out of reach, two concurrent calls
//! cannot read each other's working directory, and the sandbox's disk is capped.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::ErrorKind;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{SocketAddr, UnixListener};

use apizr_runtime::ir::json::Value;
use apizr_runtime::ir::{ParameterKind, TypeKind};
use common::*;

const CONNECT: &str = r#"import socket
def f(path, abstract):
    out = {}
    for name, address in (('path', path), ('abstract', '\0' + abstract)):
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(2)
            s.connect(address)
            s.sendall(b'hello')
            out[name] = 'connected'
        except OSError as e:
            out[name] = e.errno
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect('/var/run/docker.sock')
        out['docker'] = 'connected'
    except OSError as e:
        out['docker'] = e.errno
    return out
"#;

#[test]
fn host_unix_sockets_are_unreachable() {
    let root = temp_root("unix");
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let rt = runtime_in(&root);
    let path = root.join("host.sock");
    let listener = UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let abstract_name = format!("apizr-test-{}", std::process::id());
    let abstract_listener =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(&abstract_name).unwrap()).unwrap();
    abstract_listener.set_nonblocking(true).unwrap();
    let host_policy = DEFAULT;
    let deny_on_host = r#"{"network":{"mode":"deny"}}"#;
    for (policy_text, socket_mode) in [
        // Like /var/run/docker.sock: owned by root, group-only.
        (host_policy, 0o660),
        // Anyone may connect: only the sandbox stands in the way.
        (deny_on_host, 0o777),
        (STRICT, 0o777),
    ] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(socket_mode)).unwrap();
        let mut c = call(
            CONNECT,
            "f",
            vec![
                param(
                    "path",
                    ParameterKind::PositionalOrKeyword,
                    true,
                    ts(TypeKind::Str),
                ),
                param(
                    "abstract",
                    ParameterKind::PositionalOrKeyword,
                    true,
                    ts(TypeKind::Str),
                ),
            ],
            &[
                ("path", Value::Str(path.to_string_lossy().into())),
                ("abstract", Value::Str(abstract_name.clone())),
            ],
        );
        c.policy = policy(policy_text);
        let out = exec(&rt, &c);
        if !enforced(&out, "identity") || !enforced(&out, "syscalls") {
            continue;
        }
        assert_eq!(status(&out), "success", "{policy_text}: {:?}", out.report);
        let got = value(&out);
        for name in ["path", "abstract", "docker"] {
            assert_ne!(got[name], "connected", "{policy_text}: {name}: {got}");
        }
        for l in [&listener, &abstract_listener] {
            assert_eq!(
                l.accept().map(|_| ()).map_err(|e| e.kind()),
                Err(ErrorKind::WouldBlock),
                "{policy_text}: a connection reached the host listener"
            );
        }
    }
    // Control: the same payload from a host process of another uid reaches a 0777 socket.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
    let script = format!(
        "{CONNECT}\nimport json, sys\nsys.stdout.write(json.dumps(f({:?}, {abstract_name:?})))\n",
        path.to_string_lossy()
    );
    // (The system interpreter: an unprivileged uid cannot reach one under /root.)
    let control = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(["/usr/bin/python3", "-I", "-S", "-c"])
        .arg(&script)
        .output();
    if require(
        control.as_ref().is_ok_and(|c| c.status.success()),
        "a control run as uid 65534 (setpriv and /usr/bin/python3)",
    ) {
        let control = control.unwrap();
        let got: serde_json::Value = serde_json::from_slice(&control.stdout).unwrap();
        assert_eq!(got["path"], "connected", "control: {got}");
        assert_eq!(got["abstract"], "connected", "control: {got}");
        // Drain what the control connected.
        while listener.accept().is_ok() {}
    }
    drop(listener);
    cleanup(&root);
}

const SPY: &str = r#"import glob, os, time
def f(root, role):
    if role == 'victim':
        with open('secret.txt', 'w') as fh:
            fh.write('apizr-secret-6072')
        try:
            # A shared, world-writable host directory (only visible under `host`).
            with open(root + '/shared/secret.txt', 'w') as fh:
                fh.write('apizr-secret-6072')
        except OSError:
            pass
        time.sleep(2.5)
        return 'done'
    found, stolen = [], []
    deadline = time.time() + 2
    while time.time() < deadline:
        found = [d for d in glob.glob(root + '/apizr-execute-*') if os.path.realpath(d) != os.getcwd()]
        for d in found:
            for p in (d + '/secret.txt', d + '/tmp/secret.txt', root + '/shared/secret.txt'):
                try:
                    with open(p) as fh:
                        stolen.append(fh.read())
                except OSError:
                    pass
            try:
                stolen.extend(os.listdir(d))
            except OSError:
                pass
        if found:
            break
        time.sleep(0.05)
    return {'found': len(found), 'stolen': stolen}
"#;

#[test]
fn concurrent_calls_cannot_read_each_other() {
    let root = temp_root("spy");
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let rt = std::sync::Arc::new(runtime_in(&root));
    let shared = root.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let root_text = root.to_string_lossy().to_string();
    let make = |role: &str, policy_text: &str| {
        let mut c = call(
            SPY,
            "f",
            vec![
                param(
                    "root",
                    ParameterKind::PositionalOrKeyword,
                    true,
                    ts(TypeKind::Str),
                ),
                param(
                    "role",
                    ParameterKind::PositionalOrKeyword,
                    true,
                    ts(TypeKind::Str),
                ),
            ],
            &[
                ("root", Value::Str(root_text.clone())),
                ("role", Value::Str(role.into())),
            ],
        );
        c.policy = policy(policy_text);
        c
    };
    for policy_text in [DEFAULT, STRICT] {
        let _ = std::fs::remove_file(shared.join("secret.txt"));
        let victim = make("victim", policy_text);
        let rt2 = rt.clone();
        let handle = std::thread::spawn(move || exec(&rt2, &victim));
        std::thread::sleep(std::time::Duration::from_millis(400));
        let spy = exec(&rt, &make("spy", policy_text));
        let victim = handle.join().unwrap();
        assert_eq!(status(&victim), "success", "{:?}", victim.report);
        if !enforced(&spy, "identity") {
            continue;
        }
        assert_eq!(status(&spy), "success", "{:?}", spy.report);
        let got = value(&spy);
        assert_eq!(got["stolen"], serde_json::json!([]), "{policy_text}: {got}");
        if policy_text == DEFAULT {
            // The host filesystem is visible: the victim's directory was found, and only its
            // owner's permissions kept the secret (a root worker would have read it).
            assert!(got["found"].as_i64().unwrap() >= 1, "{got}");
        } else {
            assert_eq!(
                got["found"], 0,
                "the sandbox shows no host directory: {got}"
            );
        }
    }
    cleanup(&root);
}

const FILL: &str = r#"import os
def f(megabytes):
    chunk = b'x' * (1 << 20)
    written = 0
    try:
        with open('fill.bin', 'wb') as fh:
            for _ in range(megabytes):
                fh.write(chunk)
                fh.flush()
                written += 1
    except OSError as e:
        return {'written': written, 'errno': e.errno}
    return {'written': written, 'errno': 0}
"#;

#[test]
fn the_sandbox_disk_is_capped() {
    let root = temp_root("disk");
    let rt = runtime_in(&root);
    let fill = |policy_text: &str, megabytes: i64| {
        let mut c = call(
            FILL,
            "f",
            vec![param(
                "megabytes",
                ParameterKind::PositionalOrKeyword,
                true,
                ts(TypeKind::Int),
            )],
            &[("megabytes", Value::Int(megabytes))],
        );
        c.policy = policy(policy_text);
        exec(&rt, &c)
    };
    // 1.5 GB into the default cap (64 MiB), and 16 MiB into an 8 MiB cap.
    for (policy_text, megabytes, cap) in [
        (STRICT, 1536, 64),
        (
            r#"{"filesystem":{"mode":"sandbox"},"resources":{"disk_bytes":8388608}}"#,
            16,
            8,
        ),
    ] {
        let out = fill(policy_text, megabytes);
        if !enforced(&out, "disk") {
            continue;
        }
        assert_eq!(status(&out), "success", "{:?}", out.report);
        let got = value(&out);
        assert_eq!(got["errno"], 28, "ENOSPC: {got}");
        assert!(got["written"].as_i64().unwrap() <= cap, "{got}");
    }
    // Under the host filesystem a cap would limit one directory only: refused.
    let out = fill(r#"{"resources":{"disk_bytes":8388608}}"#, 1);
    assert_eq!(status(&out), "policy_refused");
    assert_eq!(out.report.refused, vec!["disk"]);
    // Nothing of the calls is left on the host (a pool's idle workers go with the runtime).
    drop(rt);
    let left: Vec<_> = std::fs::read_dir(&root).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
    cleanup(&root);
}
