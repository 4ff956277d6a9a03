//! The example runs: a strict v1 call answers, a network attempt that succeeds without the
//! policy (ungoverned pool) is stopped under it and never reaches the listener, and the
//! container (v2) call answers from the pinned worker image (under `CI=true` a build without
//! a worker image fails instead of skipping).

use std::net::TcpListener;
use std::process::Command;
use std::time::Duration;

#[test]
fn strict_policy_stops_the_network_and_the_container_call_answers() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let out = Command::new(env!("CARGO_BIN_EXE_call-python"))
        .arg(port.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "total: 21.6", "{stdout}");
    assert_eq!(lines[1], "ungoverned fetch_rate: connected", "{stdout}");
    assert_eq!(lines[2], "strict fetch_rate: execution_failed", "{stdout}");
    // Exactly one connection arrived: the ungoverned one.
    listener.set_nonblocking(true).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let mut accepted = 0;
    while listener.accept().is_ok() {
        accepted += 1;
    }
    assert_eq!(accepted, 1, "connections that reached the listener");
    if lines[3].starts_with("container total: skipped") {
        apizr_test_support::skip(lines[3]);
        return;
    }
    assert_eq!(lines[3], "container total: 21.6", "{stdout}");
}

/// An edit of the Python file (or of the policy file) is seen by the next build: the binding's
/// expansion includes both files' bytes, so rustc lists them in the crate's dep-info, which is
/// what cargo compares with the files' modification times to decide that the crate (and with
/// it the macro's check) must run again. Read from the dep-info cargo wrote for this binary.
#[test]
fn the_python_and_policy_files_are_build_inputs() {
    use std::os::unix::fs::MetadataExt;
    // The binary is a hard link of `deps/call_python-<hash>`, whose dep-info is beside it.
    let exe = std::path::PathBuf::from(env!("CARGO_BIN_EXE_call-python"));
    let inode = std::fs::metadata(&exe).unwrap().ino();
    let deps = exe.parent().unwrap().join("deps");
    let linked = std::fs::read_dir(&deps)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("call_python-"))
                && std::fs::metadata(p).is_ok_and(|m| m.ino() == inode)
        })
        .unwrap_or_else(|| panic!("no deps/call_python-* linked to {}", exe.display()));
    let dep_info = linked.with_extension("d");
    let text = std::fs::read_to_string(&dep_info)
        .unwrap_or_else(|e| panic!("{}: {e}", dep_info.display()));
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // `exe: input input …` (spaces in paths escaped as `\ `).
    let inputs: Vec<std::path::PathBuf> = text
        .replace("\\ ", "\u{0}")
        .split_whitespace()
        .skip(1)
        .map(|p| std::path::PathBuf::from(p.replace('\u{0}', " ")))
        .collect();
    for file in ["py/pricing.py", "policies/strict.json"] {
        let expected = manifest.join(file).canonicalize().unwrap();
        assert!(
            inputs
                .iter()
                .any(|p| p.canonicalize().is_ok_and(|p| p == expected)),
            "{file} is not an input of the build:\n{text}"
        );
    }
}
