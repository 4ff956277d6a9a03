//! Packages from an offline wheelhouse (no index is needed): an isolated environment keyed by
//! the requirement set and shared, never the host interpreter, per-package failures, and a
//! retry once the cause is fixed; the same packages inside a container.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod interpreter_support;

use std::path::Path;
use std::process::Command;

use apizr_runtime::interpreter::{DockerConfig, EnvironmentOptions, Interpreter};
use interpreter_support::{Scope, show};

/// A pure-Python wheel `name-1.0-py3-none-any.whl` whose module prints `hello from <name>`.
fn make_wheel(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let script = r#"
import sys, zipfile, hashlib, base64
d, name = sys.argv[1], sys.argv[2]
files = {
    f"{name}/__init__.py": f"GREETING = 'hello from {name}'\n",
    f"{name}-1.0.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
    f"{name}-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: apizr-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
for path, text in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()
    record.append(f"{path},sha256={digest},{len(text.encode())}")
record.append(f"{name}-1.0.dist-info/RECORD,,")
files[f"{name}-1.0.dist-info/RECORD"] = "\n".join(record) + "\n"
with zipfile.ZipFile(f"{d}/{name}-1.0-py3-none-any.whl", "w") as z:
    for path, text in files.items():
        z.writestr(path, text)
"#;
    let status = Command::new("python3")
        .args(["-c", script, dir.to_str().unwrap(), name])
        .status()
        .unwrap();
    assert!(status.success());
}

fn interpreter(scope: &Scope, docker: bool) -> Option<Interpreter> {
    std::fs::create_dir_all(scope.path("tmp")).unwrap();
    let mut config = scope.config();
    config.wheelhouse = Some(scope.path("wheels"));
    if docker {
        config.docker = DockerConfig {
            image: Some(common::oci::image()?.clone()),
            ..DockerConfig::default()
        };
    }
    Some(Interpreter::new(config))
}

fn with(packages: &[&str]) -> EnvironmentOptions {
    EnvironmentOptions {
        packages: packages.iter().map(|s| s.to_string()).collect(),
        ..EnvironmentOptions::default()
    }
}

#[test]
fn packages_install_into_a_shared_isolated_environment() {
    let scope = Scope::new("pkg-local");
    make_wheel(&scope.path("wheels"), "apizrtestpkg");
    let interp = interpreter(&scope, false).unwrap();
    for tier in ["local", "local_unsafe"] {
        let env = interp.environment(tier, with(&["apizrtestpkg"])).unwrap();
        let r = env.execute("import apizrtestpkg\nprint(apizrtestpkg.GREETING)");
        assert_eq!(
            r.stdout.as_deref(),
            Some("hello from apizrtestpkg"),
            "{}",
            show(&r)
        );
        let report = r.packages.unwrap();
        assert_eq!(report.installed, ["apizrtestpkg"]);
        // The second tier (and every later run) reuses the environment of this set.
        assert_eq!(report.reused, tier == "local_unsafe");
    }
    // Never into the host interpreter.
    let host = Command::new("python3")
        .args(["-c", "import apizrtestpkg"])
        .output()
        .unwrap();
    assert!(!host.status.success());
    // A different set is a different environment; the same set in another order is not.
    let a = interp
        .environment("local", with(&["apizrtestpkg", "apizrtestpkg"]))
        .unwrap()
        .execute("pass");
    assert!(a.packages.unwrap().reused);
    let env = interp
        .environment("local", EnvironmentOptions::default())
        .unwrap();
    let r = env.execute("import apizrtestpkg");
    assert!(
        !r.success,
        "an environment without the package does not see it"
    );
}

#[test]
fn failures_are_reported_per_package_and_can_be_retried() {
    let scope = Scope::new("pkg-fail");
    make_wheel(&scope.path("wheels"), "apizrtestpkg");
    let interp = interpreter(&scope, false).unwrap();
    let env = interp
        .environment("local", with(&["apizrtestpkg", "apizrmissingpkg"]))
        .unwrap();
    let r = env.execute("print('ran')");
    assert!(
        r.skipped && !r.success && r.stdout.is_none(),
        "{}",
        show(&r)
    );
    assert_eq!(
        r.skip_message.as_deref(),
        Some("Package installation failed: apizrmissingpkg")
    );
    let failed = r.packages.unwrap().failed;
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].package, "apizrmissingpkg");
    assert!(!failed[0].error.is_empty());
    // The cause is fixed; a retry is allowed (at once after forget_failures).
    make_wheel(&scope.path("wheels"), "apizrmissingpkg");
    assert!(
        env.execute("pass").skipped,
        "failures are remembered for a while"
    );
    interp.packages().forget_failures();
    let r = env.execute("import apizrmissingpkg, apizrtestpkg\nprint(apizrmissingpkg.GREETING)");
    assert_eq!(
        r.stdout.as_deref(),
        Some("hello from apizrmissingpkg"),
        "{}",
        show(&r)
    );
}

#[test]
fn packages_reach_containers_without_network_or_pip() {
    let scope = Scope::new("pkg-docker");
    make_wheel(&scope.path("wheels"), "apizrtestpkg");
    let Some(interp) = interpreter(&scope, true) else {
        return;
    };
    for tier in ["docker", "docker_unsafe"] {
        let env = interp.environment(tier, with(&["apizrtestpkg"])).unwrap();
        let r = env.execute("import apizrtestpkg\nprint(apizrtestpkg.GREETING)");
        assert_eq!(
            r.stdout.as_deref(),
            Some("hello from apizrtestpkg"),
            "{tier}: {}",
            show(&r)
        );
    }
}

/// Plot capture with a real matplotlib, installed by the interpreter's own package mechanism
/// from the wheelhouse `.ci/run` downloads (into an environment cached under target/tmp, so
/// a warm run installs nothing). Figures the code leaves open — whether or not it calls
/// `plt.show()` — become `image/png` artifacts, within the caps; the code is not rewritten
/// (`from __future__` stays first); nothing happens without pyplot. Three matplotlib
/// imports in all (about a second each on a quiet machine).
#[test]
fn matplotlib_figures_become_png_artifacts() {
    let Some(wheels) = apizr_test_support::external_tool(
        "APIZR_TEST_MATPLOTLIB_WHEELS",
        "target/matplotlib-wheels",
        "a wheelhouse with matplotlib (.ci/run downloads it)",
    ) else {
        return;
    };
    let scope = Scope::new("plots");
    std::fs::create_dir_all(scope.path("tmp")).unwrap();
    let mut config = scope.config();
    config.wheelhouse = Some(wheels);
    config.package_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("interpreter-plot-packages");
    let interp = Interpreter::new(config);
    // A generous deadline: importing matplotlib (and building its font cache in a fresh
    // home) takes about a second on a quiet machine but over 30 s on a loaded CI host; the
    // test is about the artifacts, not the speed.
    let patient = apizr_runtime::interpreter::CapabilityPolicy {
        timeout: 300.0,
        packages: vec!["matplotlib".into()],
        ..apizr_runtime::interpreter::CapabilityPolicy::local()
    };
    let env = interp
        .environment("local", interpreter_support::with_policy(patient.clone()))
        .unwrap();
    let code = "from __future__ import annotations\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()\nfig = plt.figure()\nfig.gca().bar([1], [2])\nimport matplotlib\nprint(matplotlib.get_backend().lower())";
    let r = env.execute(code);
    assert!(r.success, "{}", show(&r));
    assert_eq!(r.stdout.as_deref(), Some("agg"));
    let mut names: Vec<_> = r.artifacts.iter().map(|a| a.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["figure-1.png", "figure-2.png"], "{}", show(&r));
    for a in &r.artifacts {
        assert_eq!(a.content_type, Some("image/png"));
        let bytes = std::fs::read(&a.path).unwrap();
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 1000);
    }
    // Counted against the caps.
    let capped = apizr_runtime::interpreter::CapabilityPolicy {
        artifact_max_count: 1,
        ..patient
    };
    let env_capped = interp
        .environment("local", interpreter_support::with_policy(capped))
        .unwrap();
    let r = env_capped.execute(
        "import matplotlib.pyplot as plt\nfor i in range(3):\n    plt.figure().gca().plot([i])",
    );
    assert!(r.success, "{}", show(&r));
    assert_eq!(
        (r.artifacts.len(), r.artifacts_truncated),
        (1, true),
        "{}",
        show(&r)
    );
    // A session: each call reports the figures it drew, once; a name never overwrites.
    let session = env
        .session(apizr_runtime::interpreter::SessionOptions::default())
        .unwrap();
    let r = session.execute("import matplotlib.pyplot as plt\nplt.plot([1, 2])");
    let names: Vec<_> = r.artifacts.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["figure-1.png"], "{}", show(&r));
    assert!(session.execute("x = 1").artifacts.is_empty());
    let r = session.execute("plt.plot([3, 4])");
    let names: Vec<_> = r.artifacts.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["figure-1-2.png"], "{}", show(&r));
    session.close();
    // Without pyplot the bootstrap imports nothing of matplotlib.
    let r =
        env.execute("import sys\nprint([m for m in sys.modules if m.startswith('matplotlib')])");
    assert_eq!(r.stdout.as_deref(), Some("[]"), "{}", show(&r));
    assert!(r.artifacts.is_empty());
}
