//! Docker-tier sessions on the real engine: one container per session under the one-shot
//! tier's controls, state kept between calls, per-call artifacts, copies through the engine
//! that never follow a link, the end marker out of the code's reach, and no container left
//! after close, idle expiry or a killed host.

use std::time::{Duration, Instant};

use apizr_runtime::interpreter::{EnvironmentOptions, SessionError, SessionOptions};
use apizr_runtime::oci::Engine;
use apizr_runtime::owner::Owner;

use crate::interpreter_support::{Scope, show};
use crate::{assert_no_containers, interpreter};

/// Whether the engine still has the container `name` (polled up to 10 s for `false`).
fn gone(engine: &Engine, name: &str) -> bool {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        if !engine.container_exists(name).unwrap() {
            return true;
        }
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_docker_session_keeps_state_between_calls_in_one_container() {
    let scope = Scope::new("docker-session");
    let Some(interp) = interpreter(&scope) else {
        return;
    };
    let engine = Engine::from_env().unwrap();
    for (tier, uid) in [("docker", "65532"), ("docker_unsafe", "0")] {
        let env = interp
            .environment(tier, EnvironmentOptions::default())
            .unwrap();
        assert!(env.support().features["sessions"], "{tier}");
        let session = env.session(SessionOptions::default()).unwrap();
        let name = session.container().unwrap();
        let r = session.execute("import os\nx = 41\nprint(os.getuid())");
        assert!(r.success, "{}", show(&r));
        assert_eq!(r.stdout.as_deref(), Some(uid));
        assert_eq!(r.unsafe_tier, tier == "docker_unsafe");
        // State (a variable, an import) persists; `sys.exit` ends the call, not the session.
        let r = session.execute("print(x + 1, os.getpid())");
        assert_eq!(
            r.stdout.as_deref().map(|s| &s[..3]),
            Some("42 "),
            "{}",
            show(&r)
        );
        let r = session.execute("import sys; sys.exit(3)");
        assert_eq!((r.exit_code, r.success), (Some(3), false), "{}", show(&r));
        let r = session.execute("raise ValueError('boom')");
        assert!(r.stderr.as_deref().unwrap().contains("ValueError: boom"));
        assert_eq!(session.execute("print(x)").stdout.as_deref(), Some("41"));
        assert_eq!(
            session.container().as_deref(),
            Some(&*name),
            "one container"
        );
        // Artifacts of a call are the files that call created or changed, nothing older.
        let r = session.execute("open('a.txt', 'w').write('one')\nopen('b.png', 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + bytes(8))");
        let mut names: Vec<_> = r.artifacts.iter().map(|a| a.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["a.txt", "b.png"], "{}", show(&r));
        assert_eq!(
            r.artifacts
                .iter()
                .find(|a| a.name == "b.png")
                .unwrap()
                .content_type,
            Some("image/png")
        );
        assert_eq!(
            std::fs::read_to_string(&r.artifacts[0].path).unwrap(),
            "one"
        );
        let r = session.execute("open('b.png', 'ab').write(b'more')\nprint('ok')");
        let names: Vec<_> = r.artifacts.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["b.png"], "only the changed file: {}", show(&r));
        // Same size, same second, new content: still a change.
        let r = session.execute("open('a.txt', 'w').write('two')");
        let names: Vec<_> = r.artifacts.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["a.txt"], "{}", show(&r));
        assert!(session.execute("pass").artifacts.is_empty());
        // reset: a fresh container, no variable, an empty workspace.
        session.reset().unwrap();
        let fresh = session.container().unwrap();
        assert_ne!(fresh, name);
        assert!(gone(&engine, &name), "reset left the old container");
        let r = session.execute("import os\nprint('x' in globals(), os.listdir('.'))");
        assert_eq!(r.stdout.as_deref(), Some("False []"), "{}", show(&r));
        // close removes the container at once and later calls say why.
        assert!(session.close().is_empty());
        assert!(gone(&engine, &fresh));
        let r = session.execute("print(1)");
        assert!(r.skipped && r.skip_message.as_deref().unwrap().contains("closed"));
        assert!(!session.workspace().exists());
    }
    assert_no_containers();
}

#[test]
fn docker_session_copies_go_through_the_engine_and_never_follow_a_link() {
    let scope = Scope::new("docker-session-copy");
    let Some(interp) = interpreter(&scope) else {
        return;
    };
    let env = interp
        .environment("docker", EnvironmentOptions::default())
        .unwrap();
    let session = env.session(SessionOptions::default()).unwrap();
    let tree = scope.path("tree");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    std::fs::write(tree.join("a.txt"), "aa").unwrap();
    std::fs::write(tree.join("sub/b.txt"), "bbb").unwrap();
    let copied = session.copy_in_tree(&tree, "data").unwrap();
    assert_eq!((copied.files, copied.bytes), (2, 5));
    assert_eq!(session.copy_in(&tree.join("a.txt"), "top.txt").unwrap(), 2);
    // Copied in is not an artifact; the code reads and writes it as its own.
    let r = session.execute(
        "print(open('data/a.txt').read() + open('data/sub/b.txt').read())\nopen('data/new.txt', 'w').write('n')",
    );
    assert_eq!(r.stdout.as_deref(), Some("aabbb"), "{}", show(&r));
    let names: Vec<_> = r.artifacts.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["data/new.txt"], "{}", show(&r));
    let out = scope.path("out.txt");
    assert_eq!(session.copy_out("data/sub/b.txt", &out).unwrap(), 3);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "bbb");
    // Nothing the caller had is overwritten.
    assert!(session.copy_out("data/a.txt", &out).is_err());
    // The attack: links the code planted. Without the no-follow rule, a copy into
    // `planted/x.py` would be written where the link points (`/tmp`, outside the workspace),
    // and `copy_out('secret')` would read `/etc/passwd`.
    let r = session.execute(
        "import os\nos.symlink('/tmp', 'planted')\nos.symlink('/etc/passwd', 'secret')\nos.mkfifo('fifo')",
    );
    assert!(r.success, "{}", show(&r));
    for destination in ["planted/x.py", "planted", "fifo", "../escape", "/abs"] {
        let err = session
            .copy_in(&tree.join("a.txt"), destination)
            .unwrap_err();
        assert!(
            matches!(err, SessionError::Path { .. }),
            "{destination}: {err}"
        );
    }
    let r =
        session.execute("import os\nprint(os.path.exists('/tmp/x.py'), os.path.islink('planted'))");
    assert_eq!(r.stdout.as_deref(), Some("False True"), "{}", show(&r));
    let err = session
        .copy_out("secret", &scope.path("secret"))
        .unwrap_err();
    assert!(
        err.to_string().contains("links are never followed"),
        "{err}"
    );
    assert!(!scope.path("secret").exists());
    drop(session);
    assert_no_containers();
}

/// The one-shot attacks that make sense for a session: the code cannot read PID 1's end
/// marker from its memory, a printed marker does not end the call, a stale answer on the
/// worker's pipe does not end the next call, the network is denied, and a timeout ends the
/// session and its container.
#[test]
fn a_docker_session_call_cannot_forge_its_end_and_the_controls_hold() {
    let scope = Scope::new("docker-session-attacks");
    let Some(interp) = interpreter(&scope) else {
        return;
    };
    let engine = Engine::from_env().unwrap();
    let env = interp
        .environment("docker", EnvironmentOptions::default())
        .unwrap();
    let session = env.session(SessionOptions::default()).unwrap();
    let r = session.execute(
        "try:\n    open('/proc/1/mem', 'rb').read(1)\n    print('read')\nexcept OSError as e:\n    print('denied', type(e).__name__)",
    );
    assert_eq!(
        r.stdout.as_deref(),
        Some("denied PermissionError"),
        "{}",
        show(&r)
    );
    // A marker-shaped line printed by the code does not end the call.
    let r = session.execute(
        "import sys\nfor s in (sys.stdout, sys.stderr):\n    s.write('\\n@@apizr-done:' + '0' * 32 + ':0:0:0:0:0\\n'); s.flush()\nimport time; time.sleep(0.3)\nprint('after')\nsys.exit(7)",
    );
    assert_eq!(r.exit_code, Some(7), "{}", show(&r));
    assert!(
        r.stdout.as_deref().unwrap().ends_with("after"),
        "{}",
        show(&r)
    );
    // Stale answers written on every descriptor the worker holds do not end the next call.
    let r = session.execute(
        "import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'0' * 32 + b':0\\n')\n    except OSError:\n        pass",
    );
    assert!(r.success, "{}", show(&r));
    let r = session.execute("import time; time.sleep(0.5); print('slept'); raise SystemExit(5)");
    assert_eq!(
        (r.exit_code, r.stdout.as_deref()),
        (Some(5), Some("slept")),
        "{}",
        show(&r)
    );
    // No network under `docker`.
    let r = session.execute(
        "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\n    print('connected')\nexcept OSError as e:\n    print('denied')",
    );
    assert_eq!(r.stdout.as_deref(), Some("denied"), "{}", show(&r));
    // A worker that dies ends the session and its container, with its status.
    let name = session.container().unwrap();
    let r = session.execute("import os; os._exit(9)");
    assert_eq!(r.exit_code, Some(9), "{}", show(&r));
    assert!(!session.is_live());
    assert!(gone(&engine, &name));
    // A timeout kills the container and ends the session.
    let policy = apizr_runtime::interpreter::CapabilityPolicy {
        timeout: 2.0,
        ..apizr_runtime::interpreter::CapabilityPolicy::docker()
    };
    let env = interp
        .environment("docker", crate::interpreter_support::with_policy(policy))
        .unwrap();
    let session = env.session(SessionOptions::default()).unwrap();
    let name = session.container().unwrap();
    let r = session.execute("print('partial', flush=True)\nwhile True: pass");
    assert!(
        r.timed_out && r.stdout.as_deref() == Some("partial"),
        "{}",
        show(&r)
    );
    assert!(!session.is_live());
    assert!(gone(&engine, &name));
    assert_no_containers();
}

#[test]
fn an_idle_docker_session_expires_and_its_container_goes() {
    let scope = Scope::new("docker-session-idle");
    let Some(interp) = interpreter(&scope) else {
        return;
    };
    let engine = Engine::from_env().unwrap();
    let env = interp
        .environment("docker", EnvironmentOptions::default())
        .unwrap();
    let session = env
        .session(SessionOptions {
            idle_timeout: Duration::from_secs(1),
        })
        .unwrap();
    let name = session.container().unwrap();
    assert!(session.execute("x = 1").success);
    let until = Instant::now() + Duration::from_secs(10);
    while session.is_live() {
        assert!(Instant::now() < until, "the session never expired");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(gone(&engine, &name));
    let r = session.execute("print(x)");
    assert!(
        r.skip_message.as_deref().unwrap().contains("expired"),
        "{}",
        show(&r)
    );
}

/// Not a test on its own: the host that `a_killed_hosts_session_container_goes` kills.
#[test]
#[ignore = "the host process of a_killed_hosts_session_container_goes"]
fn host_process_with_an_open_docker_session() {
    let scope = Scope::new("docker-session-crash-host");
    let interp = interpreter(&scope).unwrap();
    let env = interp
        .environment("docker", EnvironmentOptions::default())
        .unwrap();
    let session = env.session(SessionOptions::default()).unwrap();
    assert!(
        session
            .execute(
                "import threading, time\nthreading.Thread(target=lambda: time.sleep(3600)).start()"
            )
            .success
    );
    std::thread::sleep(Duration::from_secs(3600));
}

#[test]
fn a_killed_hosts_session_container_goes() {
    let scope = Scope::new("docker-session-crash");
    if interpreter(&scope).is_none() {
        return;
    }
    let mut host = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "sessions::host_process_with_an_open_docker_session",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let label = format!(
        "org.apizr.owner={}",
        Owner::of_pid(host.id()).unwrap().encode()
    );
    let engine = Engine::from_env().unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while engine.containers_with_label(&label).unwrap().is_empty() {
        assert!(Instant::now() < until, "the host never opened its session");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(2));
    host.kill().unwrap();
    host.wait().unwrap();
    // Nobody closes the session: PID 1 sees the attach stream close and ends the container.
    crate::assert_dead_hosts_containers_go(&engine, &label, host.id());
}
