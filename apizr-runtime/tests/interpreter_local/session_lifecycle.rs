//! Sessions, continued: `copy_in` of a directory (links refused on both sides), `reset`, the
//! start-up sweep of a dead host's workspaces, and the per-run audit record.

use std::sync::Arc;

use apizr_runtime::audit::FileAuditSink;
use apizr_runtime::interpreter::{EnvironmentOptions, SessionError, SessionOptions};
use apizr_runtime::owner::Owner;

use crate::interpreter_support::{Scope, show};

#[test]
fn copy_in_of_a_directory_copies_the_tree_and_never_a_link() {
    let scope = Scope::new("session-copy-dir");
    let session = scope
        .env("local", EnvironmentOptions::default())
        .session(SessionOptions::default())
        .unwrap();
    let tree = scope.path("tree");
    std::fs::create_dir_all(tree.join("sub/deeper")).unwrap();
    std::fs::write(tree.join("a.txt"), "aa").unwrap();
    std::fs::write(tree.join("sub/deeper/b.txt"), "bbb").unwrap();
    let copied = session.copy_in_tree(&tree, "data").unwrap();
    assert_eq!((copied.files, copied.bytes), (2, 5));
    // The code (its own uid under `local`) reads and writes what was copied in.
    let r = session.execute(
        "print(open('data/a.txt').read() + open('data/sub/deeper/b.txt').read())\nopen('data/sub/c.txt', 'w').write('c')",
    );
    assert_eq!(r.stdout.as_deref(), Some("aabbb"), "{}", show(&r));
    // The attack: a link in the host tree leads to a private host file; a copy that follows
    // links (as `std::fs::copy` does) would carry it into the sandbox.
    let secret = scope.path("secret.txt");
    std::fs::write(&secret, "host secret").unwrap();
    let linked = scope.path("linked");
    std::fs::create_dir_all(&linked).unwrap();
    std::fs::write(linked.join("fine.txt"), "fine").unwrap();
    std::os::unix::fs::symlink(&secret, linked.join("z-secret")).unwrap();
    assert_eq!(
        std::fs::read_to_string(linked.join("z-secret")).unwrap(),
        "host secret",
        "the link leads out"
    );
    let err = session.copy_in_tree(&linked, "linked").unwrap_err();
    assert!(
        matches!(&err, SessionError::Path { path, reason } if path.ends_with("z-secret") && reason.contains("symbolic link")),
        "{err}"
    );
    // Refused before anything was written.
    let r = session.execute("import os\nprint(os.path.exists('linked'))");
    assert_eq!(r.stdout.as_deref(), Some("False"), "{}", show(&r));
    // Links the code planted in the workspace never redirect a directory copy to the host.
    let outside = scope.path("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let code = format!(
        "import os\nos.symlink({0:?}, 'planted')\nos.makedirs('real')\nos.symlink({0:?}, 'real/sub')",
        outside.to_str().unwrap()
    );
    assert!(session.execute(&code).success);
    for destination in ["planted", "planted/x", "real", "../escape", "/abs"] {
        assert!(
            session.copy_in_tree(&tree, destination).is_err(),
            "{destination}"
        );
    }
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    assert!(!scope.path("escape").exists());
    assert!(session.close().is_empty());
    scope.assert_clean();
}

#[test]
fn reset_starts_a_fresh_process_with_an_empty_workspace() {
    let scope = Scope::new("session-reset");
    let session = scope
        .env("local", EnvironmentOptions::default())
        .session(SessionOptions::default())
        .unwrap();
    let r = session.execute("x = 41\nopen('kept.txt', 'w').write('x')");
    assert!(r.success, "{}", show(&r));
    let before = session.process_id().unwrap();
    session.reset().unwrap();
    let after = session.process_id().unwrap();
    assert_ne!(before, after);
    assert!(
        !crate::interpreter_support::alive(i32::try_from(before).unwrap()),
        "the old process is gone"
    );
    let r = session.execute("import os\nprint('x' in globals(), os.listdir('.'))");
    assert_eq!(r.stdout.as_deref(), Some("False []"), "{}", show(&r));
    assert!(session.close().is_empty());
    assert!(matches!(session.reset(), Err(SessionError::Closed(_))));
    scope.assert_clean();
}

#[test]
fn a_dead_hosts_session_workspaces_are_swept_and_live_ones_kept() {
    let scope = Scope::new("session-sweep");
    let tmp = scope.path("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    // A host process that had a session open and died.
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let dead = Owner::of_pid(child.id()).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    let name = |o: &Owner| {
        format!(
            "apizr-session-{}-1-2-0000abcd",
            o.encode().replace('/', "_")
        )
    };
    let left = tmp.join(name(&dead));
    std::fs::create_dir_all(left.join("sub")).unwrap();
    std::fs::write(left.join("sub/file"), "left").unwrap();
    // A live owner's (this process's) and an owner of another boot (cannot be judged).
    let live = tmp.join(name(Owner::current().unwrap()));
    let mut other = Owner::current().unwrap().clone();
    other.boot_id = "00000000-0000-0000-0000-000000000000".into();
    let foreign = tmp.join(name(&other));
    for d in [&live, &foreign] {
        std::fs::create_dir_all(d).unwrap();
    }
    let session = scope
        .env("local", EnvironmentOptions::default())
        .session(SessionOptions::default())
        .unwrap();
    assert!(!left.exists(), "the dead owner's workspace was swept");
    assert!(live.exists() && foreign.exists());
    assert!(session.close().is_empty());
    for d in [&live, &foreign] {
        std::fs::remove_dir(d).unwrap();
    }
    scope.assert_clean();
}

/// A host killed in the middle of a one-shot run leaves its fresh workspace (or a docker
/// run's `/bundle` directory), named after its owner: an interpreter's first run removes it
/// once that owner is dead; a live owner's run directory and a workspace kept for its
/// artifacts stay.
#[test]
fn a_dead_hosts_run_directories_are_swept_and_kept_workspaces_stay() {
    let scope = Scope::new("run-sweep");
    let tmp = scope.path("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let dead = Owner::of_pid(child.id()).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    let name =
        |prefix: &str, o: &Owner| format!("{prefix}-{}-1-2-0000abcd", o.encode().replace('/', "_"));
    let left = tmp.join(name("apizr-run", &dead));
    std::fs::create_dir_all(left.join("sub")).unwrap();
    std::fs::write(left.join("sub/file"), "left").unwrap();
    let live = tmp.join(name("apizr-run", Owner::current().unwrap()));
    let kept_dead = tmp.join(name("apizr-kept", &dead));
    for d in [&live, &kept_dead] {
        std::fs::create_dir_all(d).unwrap();
    }
    let env = scope.env("local", EnvironmentOptions::default());
    // A run that keeps its workspace (an artifact) renames it out of the sweep's reach.
    let r = env.execute("open('a.txt', 'w').write('a')");
    let kept = r.working_directory.clone().unwrap();
    assert!(
        kept.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("apizr-kept-"),
        "{}",
        show(&r)
    );
    assert_eq!(std::fs::read_to_string(&r.artifacts[0].path).unwrap(), "a");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while left.exists() {
        assert!(
            std::time::Instant::now() < until,
            "the dead host's run directory is left"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(live.exists() && kept_dead.exists() && kept.exists());
    for d in [&live, &kept_dead, &kept] {
        std::fs::remove_dir_all(d).unwrap();
    }
    scope.assert_clean();
}

#[test]
fn every_run_and_session_call_leaves_one_audit_record() {
    let scope = Scope::new("audit");
    let trail = scope.path("audit.jsonl");
    let sink = Arc::new(FileAuditSink::open(&trail).unwrap());
    let env = scope
        .env("local", EnvironmentOptions::default())
        .with_audit(sink);
    assert!(env.execute("print('do not log me')").success);
    assert_eq!(env.execute("raise SystemExit(3)").exit_code, Some(3));
    let session = env.session(SessionOptions::default()).unwrap();
    assert!(session.execute("y = 1").success);
    assert!(session.close().is_empty());
    let text = std::fs::read_to_string(&trail).unwrap();
    assert!(!text.contains("do not log me"), "never the code: {text}");
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary: Vec<_> = records
        .iter()
        .map(|r| {
            (
                r["capability_id"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
                r["exit"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("interpreter.local", "success", "exit 0"),
            ("interpreter.local", "failed", "exit 3"),
            ("interpreter.local", "success", "exit 0"),
        ]
    );
    assert_eq!(records[0]["schema_version"], "apizr.audit/v1");
    assert_eq!(
        records[0]["executable_digest"],
        apizr_ir::Digest::sha256(b"print('do not log me')").prefixed()
    );
    assert!(
        records[0]["policy_digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    std::fs::remove_file(&trail).unwrap();
    scope.assert_clean();
}
