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
