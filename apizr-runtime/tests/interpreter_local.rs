//! The local tiers on real CPython through the real launcher: mellea's asserted behaviours
//! (result model, timeouts, truncation, artifacts, import allowlist) and the weaknesses it
//! has (grandchildren surviving a timeout, stale and symlinked artifacts, `__import__`,
//! undenied network), each shown to succeed without the control and to be stopped with it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "interpreter_local/endings.rs"]
mod endings;
mod interpreter_support;
#[path = "interpreter_local/prestart.rs"]
mod prestart;
#[path = "interpreter_local/session.rs"]
mod session;
#[path = "interpreter_local/session_lifecycle.rs"]
mod session_lifecycle;

use std::io::Read;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use apizr_runtime::interpreter::{CapabilityPolicy, EnvironmentOptions, Tier, enforcement::Status};
use interpreter_support::{Scope, alive, assert_process, in_dir, show, with_policy};

const LOCAL: [&str; 2] = ["local", "local_unsafe"];

#[test]
fn results_follow_mellea_for_success_and_failure() {
    let scope = Scope::new("basic");
    for tier in LOCAL {
        let env = scope.env(tier, EnvironmentOptions::default());
        let r = env.execute("print(1 + 1)");
        assert!(r.success && !r.skipped, "{}", show(&r));
        assert_eq!(r.stdout.as_deref(), Some("2"));
        assert_eq!((r.exit_code, r.timed_out), (Some(0), false));
        assert!(r.artifacts.is_empty());
        assert_eq!(r.execution_mode.name(), tier);
        assert_eq!(r.unsafe_tier, tier == "local_unsafe");
        assert!(env.execute("x = 1").success);
        let r = env.execute("raise ValueError('boom')");
        assert!(!r.success && !r.skipped, "{}", show(&r));
        assert!(r.stderr.as_deref().unwrap().contains("ValueError: boom"));
        assert_eq!(r.exit_code, Some(1));
        assert_eq!(env.execute("import sys; sys.exit(3)").exit_code, Some(3));
        // A syntax error runs and fails in the interpreter, as mellea's executing tiers do.
        let r = env.execute("def f(:\n");
        assert!(!r.skipped && r.stderr.as_deref().unwrap().contains("SyntaxError"));
    }
    scope.assert_clean();
}

#[test]
fn code_is_not_rewritten_future_imports_and_line_numbers_hold() {
    let scope = Scope::new("future");
    let env = scope.env("local", EnvironmentOptions::default());
    let code = "from __future__ import annotations\nimport os\ndef f(x: Undefined) -> int:\n    return x\nprint(os.environ['MPLBACKEND'])\nraise KeyError('line 6')\n";
    let r = env.execute(code);
    assert_eq!(r.stdout.as_deref(), Some("Agg"), "{}", show(&r));
    let stderr = r.stderr.unwrap();
    assert!(
        stderr.contains("File \"<code>\", line 6, in <module>"),
        "{stderr}"
    );
    assert!(stderr.contains("raise KeyError('line 6')"), "{stderr}");
}

#[test]
fn the_working_directory_is_the_cwd_and_is_echoed() {
    let scope = Scope::new("cwd");
    let dir = scope.path("work");
    for tier in LOCAL {
        let r = scope
            .env(tier, in_dir(&dir))
            .execute("import os; print(os.getcwd())");
        assert_eq!(
            r.stdout.as_deref(),
            Some(dir.to_str().unwrap()),
            "{}",
            show(&r)
        );
        assert_eq!(r.working_directory.as_deref(), Some(dir.as_path()));
    }
    let r = scope
        .env("local", EnvironmentOptions::default())
        .execute("print(1)");
    assert_eq!(r.working_directory, None);
}

#[test]
fn a_timeout_kills_the_whole_tree_and_keeps_partial_output() {
    let scope = Scope::new("timeout");
    for tier in LOCAL {
        let dir = scope.path(&format!("work-{tier}"));
        let marker = scope.path(&format!("grandchild-{tier}"));
        // A detached grandchild (new session, parent gone) that would write a file after 2 s.
        let code = format!(
            "import os, sys, time\n\
             print('started', flush=True)\n\
             open('partial.txt', 'w').write('x')\n\
             if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        \
             print('grandchild', os.getpid(), file=sys.stderr, flush=True)\n        \
             time.sleep(2)\n        open({marker:?}, 'w').write('survived')\n        os._exit(0)\n    os._exit(0)\n\
             time.sleep(999)\n",
            marker = marker.to_str().unwrap()
        );
        // A policy whose only restriction is the timeout (local_unsafe enforces no other).
        let policy = CapabilityPolicy {
            timeout: 1.0,
            network_access: true,
            package_installation: true,
            ..CapabilityPolicy::local()
        };
        let options = EnvironmentOptions {
            policy: Some(policy),
            working_directory: Some(dir.clone()),
            ..EnvironmentOptions::default()
        };
        let started = Instant::now();
        let r = scope.env(tier, options).execute(&code);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{tier}: took {:?}",
            started.elapsed()
        );
        assert!(r.timed_out && r.skipped && !r.success, "{}", show(&r));
        assert_eq!((r.exit_code, r.exit_signal), (None, Some(9)), "{tier}");
        assert_eq!(
            r.stdout.as_deref(),
            Some("started"),
            "partial output is kept"
        );
        assert!(r.artifacts.is_empty(), "a timed-out run exports nothing");
        assert!(r.skip_message.as_deref().unwrap().contains("timed out"));
        std::thread::sleep(Duration::from_millis(2500));
        assert!(
            !marker.exists(),
            "{tier}: the detached grandchild survived the timeout"
        );
    }
}

#[test]
fn grandchildren_outlive_a_plain_subprocess_timeout() {
    // The attack the control stops: without the PID namespace, a setsid'd grandchild of a
    // timed-out `python` (killed like mellea kills it: the child only) keeps running.
    let scope = Scope::new("baseline");
    let marker = scope.path("survivor");
    let ready = scope.path("ready");
    // The grandchild says when it is detached, so the kill below cannot race its fork on a
    // loaded machine; it writes the marker a second after its parent is gone.
    let code = format!(
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    open({:?}, 'w').write('x')\n    time.sleep(1)\n    open({:?}, 'w').write('x')\n    os._exit(0)\ntime.sleep(999)\n",
        ready.to_str().unwrap(),
        marker.to_str().unwrap()
    );
    let mut child = std::process::Command::new("python3")
        .args(["-c", &code])
        .spawn()
        .unwrap();
    assert!(
        wait_for(&ready, Duration::from_secs(20)),
        "the grandchild never started"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        wait_for(&marker, Duration::from_secs(20)),
        "the baseline attack must work for the test above to mean anything"
    );
}

/// Polls for `path` to exist, up to `limit`.
fn wait_for(path: &std::path::Path, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if path.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    path.exists()
}

#[test]
fn output_is_truncated_within_the_budget_with_mellea_marker() {
    let scope = Scope::new("trunc");
    let policy = CapabilityPolicy {
        stdout_max_bytes: Some(30),
        stderr_max_bytes: Some(30),
        ..CapabilityPolicy::local()
    };
    let r = scope
        .env("local", with_policy(policy))
        .execute("import sys\nprint('a' * 100)\nprint('b' * 100, file=sys.stderr)");
    for (text, flag) in [
        (r.stdout.as_deref().unwrap(), r.stdout_truncated),
        (r.stderr.as_deref().unwrap(), r.stderr_truncated),
    ] {
        assert!(
            text.ends_with("... [truncated]") && text.len() <= 30 && flag,
            "{text:?}"
        );
    }
    assert_eq!(r.stdout_bytes, 101);
    // Without a budget the host still holds only a bounded head (the pipe keeps draining).
    let r = scope
        .env("local", EnvironmentOptions::default())
        .execute("import sys\nsys.stdout.write('x' * (20 * 1024 * 1024))");
    assert!(r.success && r.stdout_truncated, "{}", r.stdout_bytes);
    assert_eq!(r.stdout_bytes, 20 * 1024 * 1024);
    assert_eq!(r.stdout.unwrap().len(), 8 * 1024 * 1024);
}

#[test]
fn artifacts_are_new_or_changed_files_with_sniffed_types() {
    let scope = Scope::new("artifacts");
    let dir = scope.path("out");
    let env = scope.env("local", in_dir(&dir));
    let r = env.execute(
        "import json, os\nopen('data.csv','w').write('a,b\\n1,2\\n')\nos.makedirs('sub')\njson.dump({'x': 1}, open('sub/r.json','w'))\nopen('blob.xyz','wb').write(bytes(range(256)))\nopen('plot.png','wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + bytes(32))\n",
    );
    assert!(r.success, "{}", show(&r));
    let by_name = |n: &str| {
        r.artifacts
            .iter()
            .find(|a| a.name == n)
            .unwrap_or_else(|| panic!("{n}: {}", show(&r)))
    };
    assert_eq!(r.artifacts.len(), 4);
    assert_eq!(by_name("data.csv").content_type, Some("text/csv"));
    assert_eq!(by_name("data.csv").path, dir.join("data.csv"));
    assert_eq!(by_name("sub/r.json").content_type, Some("application/json"));
    assert_eq!(by_name("sub/r.json").size_bytes, 8);
    assert_eq!(by_name("blob.xyz").content_type, None);
    assert_eq!(by_name("plot.png").content_type, Some("image/png"));
    assert_eq!(by_name("data.csv").sha256.len(), 64);
    // Run 2 writes one new file: run 1's files are not reported again.
    let r = env.execute("open('second.txt','w').write('2')");
    let names: Vec<&str> = r.artifacts.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["second.txt"]);
    // A changed file is reported again; an untouched one is not.
    let r = env.execute("open('data.csv','a').write('3,4\\n')");
    assert_eq!(
        r.artifacts
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>(),
        ["data.csv"]
    );
    // A failed run after a successful one exports nothing and is not skipped.
    let r = env.execute("open('late.txt','w').write('x')\nraise SystemExit(2)");
    assert!(!r.skipped && r.artifacts.is_empty());
    assert!(env.execute("pass").artifacts.is_empty());
}

#[test]
fn symlinks_out_of_the_workspace_are_never_exported() {
    let scope = Scope::new("symlink");
    let dir = scope.path("out");
    let secret = scope.path("secret.txt");
    std::fs::write(&secret, "host secret").unwrap();
    let code = format!(
        "import os\nos.symlink({s:?}, 'leak.txt')\nos.symlink({d:?}, 'leakdir')\nopen('ok.txt','w').write('ok')\n",
        s = secret.to_str().unwrap(),
        d = scope.root.to_str().unwrap()
    );
    for tier in LOCAL {
        let dir = dir.join(tier);
        let r = scope.env(tier, in_dir(&dir)).execute(&code);
        let names: Vec<&str> = r.artifacts.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["ok.txt"], "{}", show(&r));
    }
}

#[test]
fn without_a_working_directory_artifacts_stay_readable_and_empty_runs_leave_nothing() {
    let scope = Scope::new("fresh");
    let env = scope.env("local", EnvironmentOptions::default());
    assert!(env.execute("print(1)").working_directory.is_none());
    scope.assert_clean();
    let r = env.execute("open('out.txt','w').write('kept')");
    let a = &r.artifacts[0];
    assert_eq!(std::fs::read_to_string(&a.path).unwrap(), "kept");
    let dir = r.working_directory.unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_import_allowlist_is_checked_before_and_while_running() {
    let scope = Scope::new("imports");
    let allowed = |names: &[&str]| EnvironmentOptions {
        allowed_imports: Some(names.iter().map(|s| s.to_string()).collect()),
        ..EnvironmentOptions::default()
    };
    for tier in ["static", "local", "local_unsafe"] {
        let env = scope.env(tier, allowed(&["os", "sys"]));
        for code in [
            "import subprocess",
            "import socket",
            "from urllib.request import urlopen",
            "__import__('socket')",
            "from . import subprocess as sp",
        ] {
            let r = env.execute(code);
            assert!(r.skipped && !r.success, "{tier} {code}: {}", show(&r));
            assert!(
                r.skip_message
                    .as_deref()
                    .unwrap()
                    .starts_with("Unauthorized imports detected: ")
            );
            assert_eq!(r.stdout, None);
        }
        let env = scope.env(tier, allowed(&["os", "sys", "pathlib"]));
        let r = env.execute("import os, sys, pathlib");
        assert!(r.success, "{tier}: {}", show(&r));
    }
    // What the static check cannot see, the in-worker guard stops.
    let env = scope.env("local", allowed(&["json"]));
    for code in [
        "getattr(__builtins__, '__imp' + 'ort__')('socket')",
        "exec(''.join(['imp', 'ort socket']))",
        "import json\nimport importlib as il\n",
    ] {
        let r = env.execute(code);
        assert!(!r.success, "{code}: {}", show(&r));
    }
    let r = env.execute("getattr(__builtins__, '__imp' + 'ort__')('socket')");
    assert!(
        r.stderr
            .unwrap()
            .contains("import of 'socket' is not allowed")
    );
    // Libraries' own imports and the interpreter's implicit ones still work.
    let r = scope
        .env("local", allowed(&["json", "time"]))
        .execute("import json, time\nprint(json.dumps(time.strptime('2020', '%Y').tm_year))");
    assert_eq!(r.stdout.as_deref(), Some("2020"), "{}", show(&r));
    // The static tier never runs the code and reports the parse.
    let r = scope
        .env("static", EnvironmentOptions::default())
        .execute("while True: pass");
    assert!(r.success && r.skipped && r.exit_code.is_none());
    let r = scope
        .env("static", EnvironmentOptions::default())
        .execute("def f(:\n");
    assert!(!r.success && r.skipped);
    assert_eq!(r.skip_message.as_deref(), Some("Parse failed."));
    assert_eq!(r.analysis_result.unwrap()["syntax_error"]["line"], 1);
}

#[test]
fn the_network_is_denied_in_local_and_open_in_local_unsafe() {
    let scope = Scope::new("net");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let code = format!(
        "import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=2)\ns.sendall(b'reached')\ns.close()\nprint('connected')"
    );
    let r = scope
        .env("local", EnvironmentOptions::default())
        .execute(&code);
    assert!(!r.success, "local must not reach the host: {}", show(&r));
    assert_process(&r);
    let network = r
        .enforcement
        .as_ref()
        .unwrap()
        .capabilities
        .iter()
        .find(|c| c.capability.name() == "network_access")
        .unwrap();
    assert_eq!(network.status, Status::Enforced);
    assert!(
        accepted(&listener).is_none(),
        "nothing reached the host listener"
    );
    let r = scope
        .env("local_unsafe", EnvironmentOptions::default())
        .execute(&code);
    assert_eq!(
        r.stdout.as_deref(),
        Some("connected"),
        "the attack works without the control: {}",
        show(&r)
    );
    assert_eq!(accepted(&listener).as_deref(), Some("reached"));
}

fn accepted(listener: &TcpListener) -> Option<String> {
    let deadline = Instant::now() + Duration::from_millis(500);
    while Instant::now() < deadline {
        if let Ok((mut s, _)) = listener.accept() {
            s.set_nonblocking(false).unwrap();
            let mut text = String::new();
            s.read_to_string(&mut text).unwrap();
            return Some(text);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[test]
fn subprocesses_are_denied_when_the_policy_says_so() {
    let scope = Scope::new("subprocess");
    let code = "import subprocess\nprint(subprocess.run(['true']).returncode)";
    let allowed = scope
        .env("local", EnvironmentOptions::default())
        .execute(code);
    assert_eq!(allowed.stdout.as_deref(), Some("0"), "{}", show(&allowed));
    assert_process(&allowed);
    let policy = CapabilityPolicy {
        subprocess_execution: false,
        ..CapabilityPolicy::local()
    };
    let r = scope.env("local", with_policy(policy)).execute(code);
    assert!(!r.success, "{}", show(&r));
    assert_process(&r);
    assert!(r.stderr.unwrap().contains("PermissionError"));
}

#[test]
fn a_host_secret_in_the_environment_is_not_visible_in_local() {
    // Cargo sets CARGO_MANIFEST_DIR for this test process: the host's environment.
    let scope = Scope::new("env");
    let code = "import os\nprint(os.environ.get('CARGO_MANIFEST_DIR'))";
    let r = scope
        .env("local", EnvironmentOptions::default())
        .execute(code);
    assert_eq!(r.stdout.as_deref(), Some("None"), "{}", show(&r));
    assert_process(&r);
    let r = scope
        .env("local_unsafe", EnvironmentOptions::default())
        .execute(code);
    assert_eq!(
        r.stdout.as_deref(),
        Some(env!("CARGO_MANIFEST_DIR")),
        "the attack works without the control: {}",
        show(&r)
    );
}

#[test]
fn unenforceable_restrictions_are_refused_unless_declared_only() {
    let scope = Scope::new("refused");
    // local_unsafe applies no restriction: a policy that restricts the network is refused...
    let policy = CapabilityPolicy::local();
    let r = scope
        .env("local_unsafe", with_policy(policy.clone()))
        .execute("print('ran')");
    assert!(
        r.skipped && !r.success && r.stdout.is_none(),
        "{}",
        show(&r)
    );
    assert!(
        r.skip_message
            .as_deref()
            .unwrap()
            .starts_with("Policy refused: network_access")
    );
    let report = r.enforcement.unwrap();
    assert!(report.refused.iter().any(|c| c.name() == "network_access"));
    // ...and runs when the caller accepts it as declared only, reported as such.
    let accepted = CapabilityPolicy {
        declared_only: report.refused.clone(),
        ..policy
    };
    let r = scope
        .env("local_unsafe", with_policy(accepted))
        .execute("print('ran')");
    assert_eq!(r.stdout.as_deref(), Some("ran"), "{}", show(&r));
    let report = r.enforcement.unwrap();
    let network = report
        .capabilities
        .iter()
        .find(|c| c.capability.name() == "network_access")
        .unwrap();
    assert_eq!(network.status, Status::DeclaredOnly);
    assert!(report.unsafe_tier && r.unsafe_tier);
}

#[test]
fn the_compatibility_matrix_is_measured_per_tier() {
    let scope = Scope::new("matrix");
    let interpreter = scope.interpreter();
    let matrix = interpreter.compatibility_matrix();
    assert_eq!(matrix.iter().map(|t| t.tier).collect::<Vec<_>>(), Tier::ALL);
    for support in &matrix {
        let (yes, no) = (
            support.enforced_capabilities(),
            support.unenforced_capabilities(),
        );
        assert!(yes.iter().all(|c| !no.contains(c)), "{:?}", support.tier);
        assert_eq!(
            support.features["policy_applied"],
            support.tier.applies_policy()
        );
        // Sessions (and with them copy in/out) exist wherever code runs: the local tiers
        // here; the docker tiers once an engine and image are there (no image here).
        let sessions = matches!(support.tier, Tier::Local | Tier::LocalUnsafe);
        assert_eq!(
            sessions, support.features["execute_code"],
            "{:?}",
            support.tier
        );
        for f in ["sessions", "copy_in", "copy_out"] {
            assert_eq!(support.features[f], sessions, "{f} {:?}", support.tier);
        }
    }
    // No image configured: the docker tiers say they cannot run, and why.
    assert!(!matrix[4].features["execute_code"]);
    assert!(matrix[4].unenforced_capabilities().contains(&"timeout"));
    let local = &matrix[2];
    assert!(local.enforced_capabilities().contains(&"network_access"));
    assert!(local.enforced_capabilities().contains(&"timeout"));
    let unsafe_local = &matrix[1];
    assert!(
        unsafe_local
            .unenforced_capabilities()
            .contains(&"network_access")
    );
    assert!(unsafe_local.features["process_tree_kill"]);
}

#[test]
fn the_factory_refuses_bad_input_precisely() {
    let scope = Scope::new("factory");
    let interpreter = scope.interpreter();
    let err = interpreter
        .environment("sandbox", EnvironmentOptions::default())
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("expected one of: static, local_unsafe, local, docker_unsafe, docker")
    );
    for (spec, fragment) in [
        ("", "non-empty"),
        ("   ", "non-empty"),
        ("-r", "flag-style"),
        ("--index-url", "flag-style"),
    ] {
        let options = EnvironmentOptions {
            packages: vec!["numpy".into(), spec.into()],
            ..EnvironmentOptions::default()
        };
        let err = interpreter.environment("local", options).unwrap_err();
        assert!(
            err.to_string().starts_with("packages[1]") && err.to_string().contains(fragment),
            "{err}"
        );
    }
    // Tier defaults: mellea's presets; unsafe tiers have no policy; static drops a policy.
    assert_eq!(
        interpreter
            .environment("local", EnvironmentOptions::default())
            .unwrap()
            .policy(),
        Some(&CapabilityPolicy::local())
    );
    assert_eq!(
        interpreter
            .environment("docker", EnvironmentOptions::default())
            .unwrap()
            .policy(),
        Some(&CapabilityPolicy::docker())
    );
    assert_eq!(
        interpreter
            .environment("local_unsafe", EnvironmentOptions::default())
            .unwrap()
            .policy(),
        None
    );
    assert_eq!(
        interpreter
            .environment("static", with_policy(CapabilityPolicy::local()))
            .unwrap()
            .policy(),
        None
    );
    // Packages on a policy tier merge into its policy and force installation on.
    let options = EnvironmentOptions {
        packages: vec!["cowsay".into()],
        ..EnvironmentOptions::default()
    };
    let env = interpreter.environment("local", options).unwrap();
    assert!(env.policy().unwrap().package_installation);
    assert_eq!(env.policy().unwrap().packages, ["cowsay"]);
    let env = interpreter
        .environment(
            "local_unsafe",
            EnvironmentOptions {
                packages: vec!["cowsay".into()],
                ..EnvironmentOptions::default()
            },
        )
        .unwrap();
    assert_eq!(env.policy(), None);
    let _ = alive(1);
}

#[test]
fn host_files_are_out_of_reach_unless_granted() {
    let scope = Scope::new("fs");
    let data = scope.path("data");
    let out = scope.path("out");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(data.join("input.csv"), "a,b\n").unwrap();
    // A secret only its owner may read, and one anybody may read.
    let private = scope.path("private.key");
    std::fs::write(&private, "root only").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    let public = scope.path("public.txt");
    std::fs::write(&public, "world readable").unwrap();
    let read = |p: &std::path::Path| {
        format!(
            "try:\n    print(open({:?}).read())\nexcept OSError as e:\n    print(type(e).__name__)\n",
            p.to_str().unwrap()
        )
    };
    // The default `local` policy: the code runs as an unprivileged identity.
    let r = scope
        .env("local", EnvironmentOptions::default())
        .execute(&read(&private));
    assert_eq!(r.stdout.as_deref(), Some("PermissionError"), "{}", show(&r));
    assert_process(&r);
    let r = scope
        .env("local_unsafe", EnvironmentOptions::default())
        .execute(&read(&private));
    assert_eq!(
        r.stdout.as_deref(),
        Some("root only"),
        "the attack works without the control"
    );
    // Read roots: only they (and the interpreter) exist; write roots: only they are writable.
    let policy = CapabilityPolicy {
        filesystem_read_roots: Some(vec![data.clone()]),
        filesystem_write_roots: Some(vec![out.clone()]),
        ..CapabilityPolicy::strict()
    };
    let env = scope.env("local", with_policy(policy));
    let code = format!(
        "{}{}{}open({out:?} + '/result.txt', 'w').write('ok')\ntry:\n    open({data:?} + '/x', 'w')\nexcept OSError as e:\n    print(type(e).__name__)\nopen('local.txt', 'w').write('in the workspace')\n",
        read(&public),
        read(&private),
        read(&data.join("input.csv")),
        out = out.to_str().unwrap(),
        data = data.to_str().unwrap(),
    );
    let r = env.execute(&code);
    assert!(r.success, "{}", show(&r));
    assert_eq!(
        r.stdout.as_deref(),
        Some("FileNotFoundError\nFileNotFoundError\na,b\n\nOSError"),
        "{}",
        show(&r)
    );
    assert_eq!(
        std::fs::read_to_string(out.join("result.txt")).unwrap(),
        "ok"
    );
    let report = r.enforcement.unwrap();
    for c in [
        "filesystem_read_roots",
        "filesystem_write_roots",
        "network_access",
        "subprocess_execution",
        "memory_bytes",
        "pids",
    ] {
        let row = report
            .capabilities
            .iter()
            .find(|r| r.capability.name() == c)
            .unwrap_or_else(|| panic!("{c}"));
        assert_eq!(row.status, Status::Enforced, "{c}: {}", row.detail);
    }
    assert_eq!(
        r.artifacts
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>(),
        ["local.txt"]
    );
    // The workspace's files belong to the caller again after the run.
    use std::os::unix::fs::MetadataExt;
    let dir = r.working_directory.unwrap();
    assert_eq!(
        std::fs::metadata(dir.join("local.txt")).unwrap().uid(),
        nix::unistd::geteuid().as_raw()
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn every_result_reports_the_probed_enforcement() {
    // Runs that end before the code starts (too big, refused imports, the static tier, a
    // refused policy) report the tier's measured enforcement like runs that execute.
    let scope = Scope::new("report");
    let allowlist = |tier: &str| {
        scope.env(
            tier,
            EnvironmentOptions {
                allowed_imports: Some(vec!["json".into()]),
                ..EnvironmentOptions::default()
            },
        )
    };
    let network_refused = CapabilityPolicy {
        network_access: false,
        ..CapabilityPolicy::local()
    };
    let timed = CapabilityPolicy {
        timeout: 0.5,
        ..CapabilityPolicy::local()
    };
    let results = [
        (
            Tier::Static,
            scope
                .env("static", EnvironmentOptions::default())
                .execute("print(1)"),
        ),
        (
            Tier::Static,
            scope
                .env("static", EnvironmentOptions::default())
                .execute("def f(:"),
        ),
        (Tier::Local, allowlist("local").execute("import socket")),
        (
            Tier::LocalUnsafe,
            allowlist("local_unsafe").execute("import os"),
        ),
        (
            Tier::Local,
            scope
                .env("local", EnvironmentOptions::default())
                .execute(&"#".repeat(apizr_runtime::interpreter::environment::MAX_CODE_BYTES + 1)),
        ),
        (
            Tier::Local,
            scope
                .env("local", EnvironmentOptions::default())
                .execute("print(1)"),
        ),
        (
            Tier::Local,
            scope
                .env("local", with_policy(timed))
                .execute("while True: pass"),
        ),
        (
            Tier::LocalUnsafe,
            scope
                .env("local_unsafe", EnvironmentOptions::default())
                .execute("print(1)"),
        ),
        (
            Tier::LocalUnsafe,
            scope
                .env("local_unsafe", with_policy(network_refused))
                .execute("print(1)"),
        ),
    ];
    for (i, (tier, r)) in results.iter().enumerate() {
        let report = r
            .enforcement
            .as_ref()
            .unwrap_or_else(|| panic!("result {i} has no enforcement report: {}", show(r)));
        assert_eq!(
            (report.tier, r.execution_mode),
            (*tier, *tier),
            "result {i}"
        );
        assert_eq!(report.unsafe_tier, tier.is_unsafe(), "result {i}");
        let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert!(
            json["enforcement"]["capabilities"].is_array(),
            "result {i}: {json}"
        );
    }
    // The unsafe tier restricts nothing: the network restriction was refused, not pretended.
    let refused = &results[8].1;
    assert!(refused.skipped && !refused.success, "{}", show(refused));
    assert!(
        refused
            .enforcement
            .as_ref()
            .unwrap()
            .refused
            .iter()
            .any(|c| c.name() == "network_access")
    );
    // The timeout that ended the run is reported as enforced.
    let timeout = &results[6].1;
    assert!(timeout.timed_out, "{}", show(timeout));
    let row = timeout
        .enforcement
        .as_ref()
        .unwrap()
        .capabilities
        .iter()
        .find(|c| c.capability.name() == "timeout")
        .unwrap();
    assert_eq!(row.status, Status::Enforced, "{}", row.detail);
}
