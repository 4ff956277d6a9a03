//! `apizr doctor` on this host, checked against what `apizr execute` actually does: every
//! control the doctor calls enforceable runs (`success`, with the same mechanism in the call's
//! report), every control it calls refused is answered `policy_refused`.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value as Json;

fn apizr() -> Command {
    Command::new(env!("CARGO_BIN_EXE_apizr"))
}

fn doctor_json() -> Json {
    let out = apizr()
        .args(["doctor", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn work(tag: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("doctor-{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mod.py"), "def f() -> int:\n    return 1\n").unwrap();
    std::fs::write(dir.join("args.json"), "{}").unwrap();
    dir
}

/// `apizr execute mod.py f` under `policy`: (status, the call's control report).
fn execute(dir: &Path, policy: &str, control: &str) -> (String, Json) {
    std::fs::write(dir.join("policy.json"), policy).unwrap();
    let out = apizr()
        .current_dir(dir)
        .args(["execute", "mod.py", "f", "--arguments", "args.json"])
        .args(["--policy", "policy.json", "--report"])
        .output()
        .unwrap();
    let envelope: Json = serde_json::from_slice(&out.stdout).unwrap();
    let report: Json = serde_json::from_slice(&out.stderr).unwrap();
    let entry = report["runtime"]["controls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["control"] == control)
        .cloned()
        .unwrap_or(Json::Null);
    (envelope["status"].as_str().unwrap().to_string(), entry)
}

#[test]
fn the_matrix_has_every_control_with_a_mechanism_or_a_reason() {
    let d = doctor_json();
    assert_eq!(d["schema_version"], "apizr.doctor/v1");
    // v1 servers' pre-started workers: the defaults, and who holds worker directories.
    assert_eq!(d["v1_pool"]["default_size"], 2);
    assert!(d["v1_pool"]["max_idle_secs"].as_u64().unwrap() >= 30);
    assert!(d["v1_pool"]["owners"].is_array());
    assert_eq!(d["interpreter_pool"]["default_size"], 2);
    assert_eq!(
        d["interpreter_pool"]["size_env"],
        "APIZR_INTERPRETER_PRESTART"
    );
    let preimport = d["v1_pool"]["preimport"].as_str().unwrap();
    assert!(preimport.contains("READY-004"), "{preimport}");
    let host = &d["host"];
    let python = host["python"].as_str().unwrap();
    assert!(Path::new(python).is_absolute(), "{python}");
    assert!(d["python_version"].as_str().unwrap().starts_with("3."));
    for key in [
        "user_namespace",
        "network_namespace",
        "pid_namespace",
        "landlock_fully_enforced",
        "seccomp_filter",
        "is_root",
    ] {
        assert!(host[key].is_boolean(), "{key}");
    }
    assert!(host["landlock_abi"].is_u64());
    assert!(d["docker"]["reachable"].is_boolean());
    let names: Vec<&str> = d["controls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["control"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "network",
            "filesystem",
            "subprocess",
            "memory",
            "pids",
            "cpu",
            "disk",
            "identity",
            "syscalls",
            "proc",
            "descendants",
            "lifetime"
        ]
    );
    for c in d["controls"].as_array().unwrap() {
        if c["enforced"] == true {
            assert!(c["mechanism"].is_string() && c["reason"].is_null(), "{c}");
        } else {
            assert_eq!(c["enforced"], false, "{c}");
            assert!(c["mechanism"].is_null() && c["reason"].is_string(), "{c}");
        }
    }
    // Facts and rows agree.
    let row = |name: &str| {
        d["controls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["control"] == name)
            .unwrap()
            .clone()
    };
    let has_launcher = host["launcher"].is_string();
    assert_eq!(
        row("network")["enforced"],
        has_launcher && host["network_namespace"] == true
    );
    assert_eq!(
        row("filesystem")["enforced"],
        has_launcher && host["mount_namespace"] == true && host["pid_namespace"] == true
    );
    assert_eq!(
        row("syscalls")["enforced"],
        has_launcher && host["seccomp_filter"] == true
    );
    if host["is_root"] == true {
        assert_eq!(
            row("identity")["enforced"],
            has_launcher && host["can_switch_ids"] == true
        );
    }
    assert_eq!(row("subprocess")["enforced"], host["seccomp_filter"]);
    assert_eq!(
        row("pids")["enforced"],
        has_launcher && host["cgroup_pids"].is_object()
    );
}

#[test]
fn what_the_doctor_promises_is_what_execute_does() {
    let d = doctor_json();
    let dir = work("consistency");
    for (control, policy) in [
        ("network", r#"{"network":{"mode":"deny"}}"#),
        ("filesystem", r#"{"filesystem":{"mode":"sandbox"}}"#),
        ("subprocess", r#"{"subprocess":{"mode":"deny"}}"#),
        ("memory", r#"{"resources":{"memory_bytes":268435456}}"#),
        ("pids", r#"{"resources":{"pids":64}}"#),
        ("cpu", r#"{"resources":{"cpu_millis":1000}}"#),
        (
            "disk",
            r#"{"filesystem":{"mode":"sandbox"},"resources":{"disk_bytes":67108864}}"#,
        ),
        ("identity", "{}"),
        ("syscalls", "{}"),
        ("proc", "{}"),
        ("descendants", "{}"),
        ("lifetime", "{}"),
    ] {
        let row = d["controls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["control"] == control)
            .unwrap();
        let (status, entry) = execute(&dir, policy, control);
        let always_on = ["identity", "syscalls", "proc", "descendants", "lifetime"];
        if row["enforced"] == true {
            assert_eq!(status, "success", "{control}: doctor says enforced");
            assert_eq!(entry["enforced"], true, "{control}");
            // The call's identity row also names the uid it got.
            let mechanism = entry["mechanism"].as_str().unwrap();
            assert!(
                mechanism.ends_with(row["mechanism"].as_str().unwrap()),
                "{control}: {mechanism} vs {}",
                row["mechanism"]
            );
        } else if always_on.contains(&control) {
            assert_eq!(status, "success", "{control}");
            assert_eq!(entry["enforced"], false, "{control}");
        } else {
            assert_eq!(status, "policy_refused", "{control}: doctor says refused");
        }
    }
}

#[test]
fn the_text_table_names_each_control_and_says_yes_or_no() {
    let d = doctor_json();
    let out = apizr().arg("doctor").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("CONTROL") && text.contains("ENFORCED"),
        "{text}"
    );
    for c in d["controls"].as_array().unwrap() {
        let name = c["control"].as_str().unwrap();
        let line = text
            .lines()
            .skip_while(|l| !l.contains("CONTROL"))
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row for {name}:\n{text}"));
        let expected = if c["enforced"] == true {
            " yes "
        } else {
            " no "
        };
        assert!(line.contains(expected), "{line}");
    }
    assert!(text.contains(d["host"]["python"].as_str().unwrap()));
}

/// The on-disk host cache: `doctor` writes it, `execute` reads it, and a cached interpreter
/// that no longer exists is never used (the shim is asked again and the entry repaired).
#[test]
fn a_stale_cached_interpreter_is_not_trusted() {
    let dir = work("cache");
    let cache = dir.join("cache");
    let out = apizr()
        .env("APIZR_CACHE_DIR", &cache)
        .args(["doctor", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let names: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().any(|n| n.starts_with("probe-")), "{names:?}");
    let Some(entry) = names.iter().find(|n| n.starts_with("python-")) else {
        return; // python3 on PATH is an ELF binary here: nothing is cached for it
    };
    let path = cache.join(entry);
    let text = std::fs::read_to_string(&path).unwrap();
    let (digest, cached) = text.split_once('\n').unwrap();
    assert!(Path::new(cached).is_absolute(), "{cached}");
    std::fs::write(&path, format!("{digest}\n/nonexistent/bin/python3")).unwrap();
    std::fs::write(dir.join("policy.json"), "{}").unwrap();
    let out = apizr()
        .current_dir(&dir)
        .env("APIZR_CACHE_DIR", &cache)
        .args(["execute", "mod.py", "f", "--arguments", "args.json"])
        .args(["--policy", "policy.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let repaired = std::fs::read_to_string(&path).unwrap();
    assert_eq!(repaired, text);
}
