//! One-shot `local` runs from pre-started processes (servers' pool): the same controls as a
//! cold run, measured from inside the process and compared, and nothing of one run visible
//! to the next.

use apizr_runtime::interpreter::{CapabilityPolicy, EnvironmentOptions, ExecutionResult};

use crate::interpreter_support::{Scope, assert_process_is, show, waiting_pool, with_policy};

/// What the process sees of its sandbox: identity, seccomp, no_new_privs, capabilities, PID
/// namespace, environment names, cwd and `/tmp` (its own paths masked), the root listing.
const PROBE: &str = r#"import os
status = dict(l.split(':\t', 1) for l in open('/proc/self/status').read().splitlines() if ':\t' in l)
print('uid', os.getuid() == 0, os.getuid() == os.geteuid())
for k in ('Seccomp', 'NoNewPrivs', 'CapEff', 'CapBnd'):
    print(k, status.get(k, '?').strip())
print('pid1', os.getpid() == 1 or os.getppid() == 1)
print('env', sorted(os.environ))
print('cwd', os.getcwd() == os.environ.get('HOME'))
print('root', sorted(os.listdir('/')))
print('tmp', os.listdir(os.environ.get('TMPDIR', '/tmp')))
try:
    import subprocess
    subprocess.run(['true'])
    print('subprocess ran')
except PermissionError:
    print('subprocess denied')
"#;

fn report_without_process(r: &ExecutionResult) -> serde_json::Value {
    let mut report = serde_json::to_value(r.enforcement.as_ref().unwrap()).unwrap();
    let map = report.as_object_mut().unwrap();
    map.remove("process");
    map.remove("cold_reason");
    report
}

#[test]
fn a_prestarted_run_is_enforced_exactly_as_a_cold_one() {
    let scope = Scope::new("prestart-same");
    let policy = CapabilityPolicy {
        subprocess_execution: false,
        memory_bytes: Some(256 << 20),
        pids: Some(32),
        ..CapabilityPolicy::strict()
    };
    let interpreter = scope.interpreter();
    let cold = interpreter
        .environment("local", with_policy(policy.clone()))
        .unwrap();
    let mut pooled = interpreter
        .environment("local", with_policy(policy))
        .unwrap();
    pooled.start_prestart(waiting_pool()).unwrap();
    let a = cold.execute(PROBE);
    let b = pooled.execute(PROBE);
    assert!(a.success && b.success, "{}\n{}", show(&a), show(&b));
    assert_process_is(&a, false);
    assert_process_is(&b, true);
    assert_eq!(report_without_process(&a), report_without_process(&b));
    // The same controls, seen from inside the process.
    assert_eq!(a.stdout, b.stdout, "{}\n{}", show(&a), show(&b));
    assert!(
        b.stdout.as_deref().unwrap().contains("subprocess denied"),
        "{}",
        show(&b)
    );
    let stats = pooled.prestart_stats().unwrap();
    assert!(stats.hits >= 1, "{stats:?}");
    drop((cold, pooled, interpreter));
    // The pool's idle process and its fresh workspace are gone with the interpreter.
    scope.assert_clean();
}

#[test]
fn nothing_of_a_prestarted_run_is_visible_to_the_next() {
    let scope = Scope::new("prestart-fresh");
    let interpreter = scope.interpreter();
    let mut env = interpreter
        .environment("local", EnvironmentOptions::default())
        .unwrap();
    env.start_prestart(waiting_pool()).unwrap();
    let write = "import os, tempfile\nopen(os.path.join(tempfile.gettempdir(), 'left'), 'w').write('x')\nopen('left-in-cwd', 'w').write('x')\nimport json\njson.LEFT = 1\nos.environ['LEFT'] = '1'\nprint(os.getpid())";
    let check = "import os, tempfile, json\nprint(os.path.exists(os.path.join(tempfile.gettempdir(), 'left')), os.path.exists('left-in-cwd'), hasattr(json, 'LEFT'), 'LEFT' in os.environ, 'LEFT' in globals())";
    for _ in 0..2 {
        let first = env.execute(write);
        assert!(first.success, "{}", show(&first));
        assert_process_is(&first, true);
        let next = env.execute(check);
        assert_process_is(&next, true);
        assert_eq!(
            next.stdout.as_deref(),
            Some("False False False False False"),
            "{}",
            show(&next)
        );
        // The written file was the first run's artifact, in its own kept workspace.
        let kept = first.working_directory.clone().unwrap();
        assert!(kept.join("left-in-cwd").is_file());
        std::fs::remove_dir_all(kept).unwrap();
    }
    let stats = env.prestart_stats().unwrap();
    assert_eq!((stats.hits, stats.misses), (4, 0), "{stats:?}");
    drop((env, interpreter));
    scope.assert_clean();
}
