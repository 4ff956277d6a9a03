//! The docker tiers on the real engine (the worker image from scripts/ci-docker-setup):
//! mellea's Docker assertions, a timeout that really stops the code (llm-sandbox leaves it
//! running and mellea reports `timed_out: false`), artifacts copied out through the engine
//! API with content types, and nothing left behind.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod interpreter_support;
#[path = "interpreter_docker/sessions.rs"]
mod sessions;

use std::time::{Duration, Instant};

use apizr_runtime::interpreter::{CapabilityPolicy, DockerConfig, EnvironmentOptions, Interpreter};
use apizr_runtime::oci::Engine;
use apizr_runtime::owner::Owner;
use interpreter_support::{Scope, show};

fn interpreter(scope: &Scope) -> Option<Interpreter> {
    let image = common::oci::image()?;
    std::fs::create_dir_all(scope.path("tmp")).unwrap();
    let mut config = scope.config();
    config.docker = DockerConfig {
        image: Some(image.clone()),
        ..DockerConfig::default()
    };
    Some(Interpreter::new(config))
}

/// No container of this test process is left on the engine (the engine removes a finished
/// run's container on its own, just after the result: allowed 10 s).
fn assert_no_containers() {
    let engine = Engine::from_env().unwrap();
    let owner = Owner::current().unwrap().encode();
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let left = engine
            .containers_with_label(&format!("org.apizr.owner={owner}"))
            .unwrap();
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < until, "containers left behind: {left:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn containers_run_code_with_mellea_results_and_their_own_identity() {
    let scope = Scope::new("docker-basic");
    let Some(interp) = interpreter(&scope) else {
        return;
    };
    for (tier, uid) in [("docker", "65532"), ("docker_unsafe", "0")] {
        let env = interp
            .environment(tier, EnvironmentOptions::default())
            .unwrap();
        let r = env.execute("import os\nprint(1 + 1)\nprint(os.getuid())");
        assert!(r.success && !r.skipped, "{}", show(&r));
        assert_eq!(r.stdout.as_deref(), Some(&*format!("2\n{uid}")));
        assert_eq!(
            (r.exit_code, r.unsafe_tier),
            (Some(0), tier == "docker_unsafe")
        );
        assert_eq!(r.execution_mode.name(), tier);
        let r = env.execute("raise ValueError('boom')");
        assert!(
            !r.success && !r.skipped && r.stderr.as_deref().unwrap().contains("ValueError: boom")
        );
        assert_eq!(r.exit_code, Some(1));
        // Whatever the code does with its own process, the run's status is the code's.
        assert_eq!(env.execute("import os; os._exit(7)").exit_code, Some(7));
    }
    // Only the fixed environment reaches the code in the `docker` tier.
    let env = interp
        .environment("docker", EnvironmentOptions::default())
        .unwrap();
    let r = env.execute("import os; print(sorted(os.environ))");
    assert_eq!(
        r.stdout.as_deref(),
        Some("['HOME', 'LANG', 'MPLBACKEND', 'MPLCONFIGDIR', 'PATH', 'TMPDIR']"),
        "{}",
        show(&r)
    );
    assert_no_containers();
}

#[test]
fn a_timeout_stops_the_container_and_reports_timed_out() {
    let scope = Scope::new("docker-timeout");
    let Some(interp) = interpreter(&scope) else {
        return;
    };
    for tier in ["docker", "docker_unsafe"] {
        let policy = CapabilityPolicy {
            timeout: 2.0,
            ..CapabilityPolicy::docker()
        };
        let policy = if tier == "docker" { Some(policy) } else { None };
        let options = EnvironmentOptions {
            policy,
            ..EnvironmentOptions::default()
        };
        let env = interp.environment(tier, options).unwrap();
        let code = if tier == "docker" {
            "print('started', flush=True)\nopen('partial.txt', 'w').write('x')\nwhile True: pass"
        } else {
            // No policy: the built-in 60 s applies; keep the test short with a finite loop.
            "print('quick')"
        };
        let started = Instant::now();
        let r = env.execute(code);
        if tier == "docker" {
            assert!(r.timed_out && r.skipped && !r.success, "{}", show(&r));
            assert_eq!(r.stdout.as_deref(), Some("started"));
            assert!(r.artifacts.is_empty());
            assert_eq!((r.exit_code, r.exit_signal), (None, Some(9)));
            assert!(started.elapsed() < Duration::from_secs(20));
        } else {
            assert!(r.success);
        }
    }
    assert_no_containers();
}

#[test]
fn artifacts_are_copied_out_through_the_engine() {
    let scope = Scope::new("docker-artifacts");
    let Some(interp) = interpreter(&scope) else {
        return;
    };
    let dir = scope.path("exported");
    let options = EnvironmentOptions {
        working_directory: Some(dir.clone()),
        ..EnvironmentOptions::default()
    };
    let env = interp.environment("docker", options).unwrap();
    let r = env.execute("import os\nopen('out.txt','w').write('hello from the container')\nos.makedirs('plots')\nopen('plots/p.png','wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + bytes(8))\nos.symlink('/etc/passwd', 'leak')\n");
    assert!(r.success, "{}", show(&r));
    let names: Vec<&str> = r.artifacts.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["out.txt", "plots/p.png"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("out.txt")).unwrap(),
        "hello from the container"
    );
    assert_eq!(r.artifacts[0].content_type, Some("text/plain"));
    assert_eq!(r.artifacts[1].content_type, Some("image/png"));
    assert_eq!(r.artifacts[0].path, dir.join("out.txt"));
    // A failed run exports nothing and leaves the directory as it was.
    let failed_dir = scope.path("failed");
    let options = EnvironmentOptions {
        working_directory: Some(failed_dir.clone()),
        ..EnvironmentOptions::default()
    };
    let r = interp
        .environment("docker", options)
        .unwrap()
        .execute("open('x.txt','w').write('x')\nraise SystemExit(1)");
    assert!(
        r.artifacts.is_empty() && !failed_dir.join("x.txt").exists(),
        "{}",
        show(&r)
    );
    // Without a directory: a fresh private one, only when there is something in it.
    let r = interp
        .environment("docker", EnvironmentOptions::default())
        .unwrap()
        .execute("open('/workspace/a.csv','w').write('a,b\\n')");
    let a = &r.artifacts[0];
    assert_eq!(a.content_type, Some("text/csv"));
    std::fs::remove_dir_all(r.working_directory.unwrap()).unwrap();
    assert!(
        interp
            .environment("docker", EnvironmentOptions::default())
            .unwrap()
            .execute("pass")
            .working_directory
            .is_none()
    );
    scope.assert_clean();
    assert_no_containers();
}

#[test]
fn restrictions_hold_inside_the_container() {
    let scope = Scope::new("docker-restrict");
    let Some(interp) = interpreter(&scope) else {
        return;
    };
    // The baseline: without a policy (docker_unsafe) the same subprocess call succeeds.
    let unsafe_env = interp
        .environment("docker_unsafe", EnvironmentOptions::default())
        .unwrap();
    let r = unsafe_env.execute("import subprocess\nprint(subprocess.run(['true']).returncode)");
    assert_eq!(
        r.stdout.as_deref(),
        Some("0"),
        "the attack works without the control: {}",
        show(&r)
    );
    let policy = CapabilityPolicy {
        subprocess_execution: false,
        env_var_access: false,
        ..CapabilityPolicy::docker()
    };
    let env = interp
        .environment(
            "docker",
            EnvironmentOptions {
                policy: Some(policy),
                ..EnvironmentOptions::default()
            },
        )
        .unwrap();
    let r = env.execute("import socket, os\nprint([n for _, n in socket.if_nameindex()])\nprint(sorted(os.environ))\nimport subprocess\nsubprocess.run(['true'])");
    assert!(!r.success, "{}", show(&r));
    assert_eq!(
        r.stdout.as_deref(),
        Some("['lo']\n['MPLBACKEND', 'MPLCONFIGDIR']")
    );
    assert!(r.stderr.unwrap().contains("PermissionError"));
    let report = r.enforcement.unwrap();
    assert!(
        report
            .capabilities
            .iter()
            .all(|c| c.status == apizr_runtime::interpreter::enforcement::Status::Enforced)
    );
    // The allowlist and its guard work in containers too.
    let options = EnvironmentOptions {
        allowed_imports: Some(vec!["json".into()]),
        ..EnvironmentOptions::default()
    };
    let env = interp.environment("docker", options).unwrap();
    assert!(
        env.execute("import socket")
            .skip_message
            .unwrap()
            .starts_with("Unauthorized imports")
    );
    let r = env.execute("getattr(__builtins__, '__imp' + 'ort__')('socket')");
    assert!(
        r.stderr
            .unwrap()
            .contains("import of 'socket' is not allowed")
    );
    assert_no_containers();
}

/// The attack: the code runs as the same uid as PID 1 (the bootstrap that holds the end
/// marker's nonce), reads PID 1's memory through `/proc/1/mem`, finds the marker and writes a
/// forged `<marker>:0:0:0:0` line, so the run would be reported as a success with exit 0
/// (and the host would stop reading early). PID 1 makes itself non-dumpable before it reads
/// the marker, so its memory is closed to the code (no `CAP_SYS_PTRACE` in the container).
#[test]
fn the_code_cannot_read_the_end_marker_from_pid_1() {
    let scope = Scope::new("docker-forge");
    let Some(interp) = interpreter(&scope) else {
        return;
    };
    let env = interp
        .environment("docker", EnvironmentOptions::default())
        .unwrap();
    let code = r#"
import re, sys, time
time.sleep(0.3)  # PID 1 has read the marker by now
pattern = re.compile(b'\n@@apizr-' + b'done:[0-9a-f]{16,}')
found = None
try:
    with open('/proc/1/maps') as maps, open('/proc/1/mem', 'rb') as mem:
        for line in maps:
            fields = line.split()
            if 'r' not in fields[1]:
                continue
            a, b = (int(x, 16) for x in fields[0].split('-'))
            try:
                mem.seek(a)
                m = pattern.search(mem.read(b - a))
            except (OSError, OverflowError, ValueError):
                continue
            if m:
                found = m.group(0)
                break
    print('searched', flush=True)
except OSError as e:
    print('denied', type(e).__name__, flush=True)
if found:
    forged = found + b':0:0:0:0\n'
    sys.stdout.buffer.write(forged); sys.stdout.flush()
    sys.stderr.buffer.write(forged); sys.stderr.flush()
    time.sleep(1)
sys.exit(7)
"#;
    let r = env.execute(code);
    assert_eq!(
        r.exit_code,
        Some(7),
        "a forged end marker was believed: {}",
        show(&r)
    );
    assert_eq!(
        r.stdout.as_deref(),
        Some("denied PermissionError"),
        "{}",
        show(&r)
    );
}

#[test]
fn signals_and_oom_kills_are_reported_from_the_container() {
    let scope = Scope::new("docker-endings");
    let Some(interp) = interpreter(&scope) else {
        return;
    };
    let env = interp
        .environment("docker", EnvironmentOptions::default())
        .unwrap();
    // A real signal: the code's process dies of SIGSEGV (not PID 1: the bootstrap is).
    let r = env.execute("import ctypes\nprint('before', flush=True)\nctypes.string_at(0)");
    assert_eq!(
        (r.exit_code, r.exit_signal, r.oom_killed, r.success),
        (Some(139), Some(11), false, false),
        "{}",
        show(&r)
    );
    assert_eq!(r.stdout.as_deref(), Some("before"));
    // The same status chosen by the code is an exit, not a signal.
    let r = env.execute("raise SystemExit(137)");
    assert_eq!(
        (r.exit_code, r.exit_signal, r.oom_killed),
        (Some(137), None, false)
    );
    // A real OOM kill at a small memory limit; the same code within the limit is not one.
    let policy = CapabilityPolicy {
        memory_bytes: Some(48 * 1024 * 1024),
        ..CapabilityPolicy::docker()
    };
    let env = interp
        .environment("docker", interpreter_support::with_policy(policy))
        .unwrap();
    let r = env.execute("b = []\nwhile True:\n    b.append(bytearray(4 << 20))");
    assert_eq!(
        (r.exit_code, r.exit_signal, r.oom_killed),
        (Some(137), Some(9), true),
        "{}",
        show(&r)
    );
    let r = env.execute("b = bytearray(4 << 20)\nprint(len(b))");
    assert!(
        r.success && !r.oom_killed && r.exit_signal.is_none(),
        "{}",
        show(&r)
    );
    assert_no_containers();
}

/// Not a test on its own: the host process that `a_killed_host_leaves_no_container_running`
/// starts and kills with SIGKILL in the middle of a run.
#[test]
#[ignore = "the host process of a_killed_host_leaves_no_container_running"]
fn host_process_killed_mid_run() {
    let scope = Scope::new("docker-crash-host");
    let interp = interpreter(&scope).unwrap();
    let env = interp
        .environment("docker", EnvironmentOptions::default())
        .unwrap();
    let r = env.execute("while True: pass");
    panic!("the host should have been killed: {}", show(&r));
}

#[test]
fn a_killed_host_leaves_no_container_running() {
    let scope = Scope::new("docker-crash");
    if interpreter(&scope).is_none() {
        return;
    }
    let mut host = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "host_process_killed_mid_run",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let owner = Owner::of_pid(host.id()).unwrap().encode();
    let label = format!("org.apizr.owner={owner}");
    let engine = Engine::from_env().unwrap();
    let running = |engine: &Engine| {
        engine
            .containers_with_label(&label)
            .unwrap()
            .iter()
            .any(|name| {
                engine
                    .container_inspect(name, Duration::from_secs(5))
                    .ok()
                    .flatten()
                    .is_some_and(|d| d["State"]["Running"] == true)
            })
    };
    let until = Instant::now() + Duration::from_secs(60);
    while !running(&engine) {
        assert!(
            Instant::now() < until,
            "the host never started its container"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    host.kill().unwrap();
    host.wait().unwrap();
    // The code loops forever and the host that would have enforced the 60 s timeout is gone:
    // the bootstrap sees its stdin close, ends the container, and the engine removes it.
    assert_dead_hosts_containers_go(&engine, &label, host.id());
}

/// The killed host `pid`'s containers (`label`) are gone within 15 s; its test directory is
/// removed.
fn assert_dead_hosts_containers_go(engine: &Engine, label: &str, pid: u32) {
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        let left = engine.containers_with_label(label).unwrap();
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < until,
            "a dead host's container is left: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let prefix = format!("apizr-interp-test-{pid}-");
    for entry in std::fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            std::fs::remove_dir_all(entry.path()).unwrap();
        }
    }
}
