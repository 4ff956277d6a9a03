//! Persistent sessions: state kept between calls of one session and never shared between two,
//! the `local` policy still enforced, a timeout or idle expiry ending the session and leaving
//! nothing behind, `copy_in` / `copy_out` beneath the workspace only.

use std::time::{Duration, Instant};

use apizr_runtime::interpreter::{
    CapabilityPolicy, EnvironmentOptions, SessionError, SessionOptions,
};

use crate::interpreter_support::{Scope, alive, show, with_policy};

fn open(
    scope: &Scope,
    tier: &str,
    options: EnvironmentOptions,
) -> apizr_runtime::interpreter::Session {
    scope
        .env(tier, options)
        .session(SessionOptions::default())
        .unwrap()
}

#[test]
fn a_session_keeps_state_between_calls_and_two_sessions_share_none() {
    let scope = Scope::new("session-state");
    for tier in ["local", "local_unsafe"] {
        let one = open(&scope, tier, EnvironmentOptions::default());
        let two = open(&scope, tier, EnvironmentOptions::default());
        assert_ne!(one.workspace(), two.workspace());
        let r = one.execute("import json\nx = 41\nopen('state.txt', 'w').write('kept')");
        assert!(r.success, "{}", show(&r));
        assert_eq!(r.artifacts.len(), 1, "{}", show(&r));
        let r = one.execute("print(json.dumps(x + 1), open('state.txt').read())");
        assert_eq!(r.stdout.as_deref(), Some("42 kept"), "{}", show(&r));
        assert_eq!(r.working_directory.as_deref(), Some(one.workspace()));
        // Output of one call never leaks into the next; exit statuses are per call.
        let r = one.execute("import sys\nprint('before'); sys.exit(3)");
        assert_eq!(
            (r.exit_code, r.stdout.as_deref()),
            (Some(3), Some("before"))
        );
        let r = one.execute("raise ValueError('boom')");
        assert!(r.stderr.as_deref().unwrap().contains("ValueError: boom"));
        assert_eq!(one.execute("print(x)").stdout.as_deref(), Some("41"));
        // The other session sees neither the variable, the import nor the file.
        let r = two.execute(
            "import os\nprint('x' in globals(), 'json' in globals(), os.path.exists('state.txt'))",
        );
        assert_eq!(
            r.stdout.as_deref(),
            Some("False False False"),
            "{}",
            show(&r)
        );
        for s in [&one, &two] {
            let pid = s.process_id().unwrap();
            let workspace = s.workspace().to_path_buf();
            assert!(s.close().is_empty());
            assert!(!workspace.exists() && !alive(pid as i32));
            let r = s.execute("print(x)");
            assert!(r.skipped && r.skip_message.unwrap().contains("closed"));
        }
    }
    scope.assert_clean();
}

#[test]
fn a_host_secret_stays_unreadable_in_a_session() {
    let scope = Scope::new("session-secret");
    let secret = scope.path("private.key");
    std::fs::write(&secret, "root only").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let code = format!(
        "try:\n    print(open({:?}).read())\nexcept OSError as e:\n    print(type(e).__name__)\n",
        secret.to_str().unwrap()
    );
    // The attack works in an unrestricted session…
    let unsafe_session = open(&scope, "local_unsafe", EnvironmentOptions::default());
    assert_eq!(
        unsafe_session.execute(&code).stdout.as_deref(),
        Some("root only")
    );
    // …and is stopped in a `local` one, on the first call and on later ones.
    let session = open(&scope, "local", EnvironmentOptions::default());
    for _ in 0..2 {
        let r = session.execute(&code);
        assert_eq!(r.stdout.as_deref(), Some("PermissionError"), "{}", show(&r));
    }
    // The strict policy's subprocess denial holds for the session's lifetime.
    let strict = open(&scope, "local", with_policy(CapabilityPolicy::strict()));
    let spawn = "import subprocess\ntry:\n    subprocess.run(['true'])\n    print('ran')\nexcept OSError as e:\n    print(type(e).__name__)\n";
    assert_eq!(
        strict.execute(spawn).stdout.as_deref(),
        Some("PermissionError")
    );
    assert_eq!(
        strict.execute(spawn).stdout.as_deref(),
        Some("PermissionError")
    );
    drop((unsafe_session, session, strict));
    scope.assert_clean();
}

#[test]
fn idle_expiry_and_timeouts_end_the_session_and_leave_nothing() {
    let scope = Scope::new("session-expiry");
    let session = scope
        .env("local", EnvironmentOptions::default())
        .session(SessionOptions {
            idle_timeout: Duration::from_millis(300),
        })
        .unwrap();
    assert!(session.execute("open('f', 'w').write('x')").success);
    let (workspace, pid) = (
        session.workspace().to_path_buf(),
        session.process_id().unwrap(),
    );
    let until = Instant::now() + Duration::from_secs(10);
    while session.is_live() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!session.is_live(), "the session did not expire");
    assert!(!workspace.exists() && !alive(pid as i32));
    let r = session.execute("print(1)");
    assert!(r.skip_message.unwrap().contains("expired"));
    // A call that times out kills the tree and ends the session; its output is kept.
    let policy = CapabilityPolicy {
        timeout: 1.0,
        ..CapabilityPolicy::local()
    };
    let session = open(&scope, "local", with_policy(policy));
    let r = session.execute("print('started', flush=True)\nimport time\ntime.sleep(30)");
    assert!(r.timed_out && !r.success, "{}", show(&r));
    assert_eq!(r.stdout.as_deref(), Some("started"));
    assert!(!session.is_live());
    scope.assert_clean();
}

#[test]
fn copy_in_and_copy_out_stay_beneath_the_workspace() {
    let scope = Scope::new("session-copy");
    let session = open(&scope, "local", EnvironmentOptions::default());
    let input = scope.path("input.csv");
    std::fs::write(&input, "a,b\n1,2\n").unwrap();
    assert_eq!(session.copy_in(&input, "data.csv").unwrap(), 8);
    let r = session.execute(
        "rows = open('data.csv').read().split()\nopen('out.txt', 'w').write(str(len(rows)))",
    );
    assert!(r.success, "{}", show(&r));
    let out = scope.path("out.txt");
    assert_eq!(session.copy_out("out.txt", &out).unwrap(), 1);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "2");
    // Nothing the caller had is overwritten.
    assert!(session.copy_out("out.txt", &out).is_err());
    // Links made by the code never lead a copy out of the workspace, either way.
    let outside = scope.path("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("host.txt"), "host").unwrap();
    let code = format!(
        "import os\nos.symlink({0:?}, 'dir')\nos.symlink({1:?}, 'leak')",
        outside.to_str().unwrap(),
        outside.join("host.txt").to_str().unwrap()
    );
    assert!(session.execute(&code).success);
    for name in ["leak", "dir/host.txt", "../input.csv", "/etc/passwd"] {
        let err = session.copy_out(name, &scope.path("stolen")).unwrap_err();
        assert!(matches!(err, SessionError::Path { .. }), "{name}: {err}");
        assert!(!scope.path("stolen").exists());
    }
    for name in ["dir/evil", "leak", "../evil"] {
        assert!(session.copy_in(&input, name).is_err(), "{name}");
    }
    assert!(!outside.join("evil").exists() && !scope.path("evil").exists());
    assert_eq!(
        std::fs::read_to_string(outside.join("host.txt")).unwrap(),
        "host"
    );
    assert!(session.close().is_empty());
    assert!(matches!(
        session.copy_in(&input, "x"),
        Err(SessionError::Closed(_))
    ));
    // The static tier, docker tiers without an image, and caller directories are refused
    // with a precise error.
    let err = scope
        .env("static", EnvironmentOptions::default())
        .session(SessionOptions::default())
        .unwrap_err();
    assert!(matches!(err, SessionError::Tier(_)), "{err}");
    for tier in ["docker", "docker_unsafe"] {
        let env = scope.env(tier, EnvironmentOptions::default());
        let err = env.session(SessionOptions::default()).unwrap_err();
        assert!(
            matches!(&err, SessionError::Refused(r) if r.skip_message.as_deref().is_some_and(|m| m.contains("no container image"))),
            "{tier}: {err}"
        );
    }
    let given = crate::interpreter_support::in_dir(&scope.path("work"));
    let err = scope
        .env("local", given)
        .session(SessionOptions::default())
        .unwrap_err();
    assert!(matches!(err, SessionError::WorkingDirectory));
    scope.assert_clean();
}
