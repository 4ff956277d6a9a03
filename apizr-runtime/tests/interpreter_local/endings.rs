//! How a local run ended, in the result: `exit_signal` for a real signal and `oom_killed` for a
//! real kill at the run's memory limit (the run's own memory cgroup record), told apart from
//! the same exit status chosen by the code.

use apizr_runtime::interpreter::{CapabilityPolicy, EnvironmentOptions};

use crate::interpreter_support::{Scope, show, with_policy};

#[test]
fn signals_and_oom_kills_are_reported_in_the_local_tiers() {
    let scope = Scope::new("endings");
    for tier in crate::LOCAL {
        let env = scope.env(tier, EnvironmentOptions::default());
        // A real signal: SIGSEGV from a fault (delivered even to a namespace's PID 1).
        let r = env.execute("import ctypes\nprint('before', flush=True)\nctypes.string_at(0)");
        assert_eq!(
            (r.exit_code, r.exit_signal, r.oom_killed, r.success),
            (Some(139), Some(11), false, false),
            "{tier}: {}",
            show(&r)
        );
        assert_eq!(r.stdout.as_deref(), Some("before"), "{tier}");
        let r = env.execute("print(1)");
        assert_eq!((r.exit_code, r.exit_signal), (Some(0), None), "{tier}");
    }
    // A real OOM kill at a small memory limit: pages in a memfd (which RLIMIT_AS never sees,
    // so the interpreter cannot answer with a MemoryError) are charged to the run's cgroup.
    let policy = CapabilityPolicy {
        memory_bytes: Some(64 * 1024 * 1024),
        ..CapabilityPolicy::strict()
    };
    let env = scope.env("local", with_policy(policy));
    let hoard = "import os\nfd = os.memfd_create('hoard')\nchunk = b'x' * (1 << 20)\nfor _ in range(512):\n    os.write(fd, chunk)\nprint('not killed')";
    let r = env.execute(hoard);
    assert_eq!(
        (r.exit_code, r.exit_signal, r.oom_killed),
        (Some(137), Some(9), true),
        "{}",
        show(&r)
    );
    // The status an OOM kill has, chosen by the code: the cgroup recorded no kill.
    let r = env.execute("raise SystemExit(137)");
    assert_eq!(
        (r.exit_code, r.oom_killed),
        (Some(137), false),
        "{}",
        show(&r)
    );
    // Within the limit: no kill.
    let r = env.execute("b = bytearray(4 << 20)\nprint(len(b))");
    assert!(
        r.success && !r.oom_killed && r.exit_signal.is_none(),
        "{}",
        show(&r)
    );
    scope.assert_clean();
}
