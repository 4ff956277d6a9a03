//! The blockers summary and the v2 explanations it is built from, on
//! `examples/blockers` (the README runs it): a parent `__init__` culprit (`pkg/__init__.py` reads the
//! environment), a culprit two modules share (`pkg/config.py` reads a file; `a` and `b`
//! import it), a function blocked by the parent only (`pkg.e`), one with an input type
//! reason besides (`pkg.b.age`), one with type reasons only (`solo.stamp`) and a ready one
//! (`pkg.helpers`, served alone).
//!
//! The ranking is checked against the verdict itself, not against a second model: proving a
//! culprit is simulated by rewriting its statement into a literal assignment in a copy of the
//! fixture and inspecting again. A culprit blocks exactly the functions that become ready
//! when every culprit is proved but not when every culprit except it is.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use apizr_inspect::InspectOptions;
use apizr_inspect::project::blockers::Blockers;
use apizr_inspect::project::{ProjectInspection, ProjectOptions, inspect_dir};
use apizr_ir::ReadinessPolicy;
use serde_json::Value;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/blockers");

/// The fixture's culprits and the proved statement each is rewritten to.
const PROOFS: [(&str, &str, &str); 2] = [
    (
        "pkg/__init__.py",
        "MODE = os.environ[\"PKG_MODE\"]",
        "MODE = \"production\"",
    ),
    (
        "pkg/config.py",
        "SETTINGS = open(__file__).read()",
        "SETTINGS = \"\"",
    ),
];

fn inspect(dir: &Path, policy: ReadinessPolicy) -> ProjectInspection {
    let options = ProjectOptions {
        inspect: InspectOptions {
            explain: true,
            readiness: policy,
            ..InspectOptions::default()
        },
        threads: Some(2),
        keep_envelopes: false,
    };
    inspect_dir(dir, &options).unwrap()
}

fn pretty(bytes: &[u8]) -> String {
    let value: Value = serde_json::from_slice(bytes).unwrap();
    serde_json::to_string_pretty(&value).unwrap()
}

/// The explanations of `modules`, pretty.
fn explanations(project: &ProjectInspection, modules: &[&str]) -> String {
    let doc: Value = serde_json::from_slice(&project.explanation_bytes().unwrap()).unwrap();
    let picked: Vec<&Value> = doc["modules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| modules.contains(&m["module"].as_str().unwrap()))
        .collect();
    serde_json::to_string_pretty(&picked).unwrap()
}

#[test]
fn blockers_summary_of_the_fixture() {
    let project = inspect(Path::new(DIR), ReadinessPolicy::V2);
    let blockers = Blockers::of(&project);
    insta::assert_snapshot!(
        "blockers_summary",
        pretty(&blockers.canonical_bytes().unwrap())
    );
    // The parent's culprit blocks a, b and e; config's only a and b.
    let first = &blockers.culprits[0];
    assert_eq!(
        (first.path.as_str(), first.functions),
        ("pkg/__init__.py", 4)
    );
    assert_eq!(blockers.culprits[1].path, "pkg/config.py");
    assert_eq!(blockers.culprits[1].functions, 3);
    assert_eq!(blockers.functions.own_reasons_only, 1, "solo.stamp");
    assert_eq!(blockers.functions.blocked_by_both, 1, "pkg.b.age");
}

/// A module without functions names its own culprits under v2; a culprit about another module
/// names the modules it runs and leads to the statement at fault, through the chain.
#[test]
fn v2_explanations_lead_to_the_statement_at_fault() {
    let project = inspect(Path::new(DIR), ReadinessPolicy::V2);
    let shown = explanations(&project, &["pkg", "pkg.b"]);
    insta::assert_snapshot!("blockers_explanations", shown);
    let doc: Value = serde_json::from_slice(&project.explanation_bytes().unwrap()).unwrap();
    let module = |name: &str| {
        doc["modules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["module"] == name)
            .unwrap()["explanation"]
            .clone()
    };
    let pkg = module("pkg");
    assert_eq!(pkg["capabilities"].as_array().unwrap().len(), 0);
    assert_eq!(pkg["module_reasons"][0]["line"], 6, "{pkg}");
    // `from .config import SETTINGS` leads to config's statement; the parent to `__init__`.
    let b = module("pkg.b");
    let notes: Vec<&str> = b["module_reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["culprits"][0]["note"].as_str().unwrap_or(""))
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.ends_with("at fault: pkg/__init__.py:6:1 `MODE = os.environ[\"PKG_MODE\"]`")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.ends_with("at fault: pkg/config.py:2:1 `SETTINGS = open(__file__).read()`")),
        "{notes:?}"
    );
}

/// v1 explanations keep the reference's shape: no `runs`/`leads_to`, and a module without
/// capabilities lists no module reasons.
#[test]
fn v1_explanations_are_unchanged() {
    let project = inspect(Path::new(DIR), ReadinessPolicy::V1);
    let bytes = String::from_utf8(project.explanation_bytes().unwrap()).unwrap();
    assert!(!bytes.contains("\"runs\"") && !bytes.contains("\"leads_to\""));
    let doc: Value = serde_json::from_str(&bytes).unwrap();
    let pkg = doc["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["module"] == "pkg")
        .unwrap();
    assert_eq!(pkg["explanation"]["module_reasons"], Value::Array(vec![]));
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Ready functions of the fixture with the culprits at `proved` (indices into [`PROOFS`])
/// rewritten into proved statements.
fn ready_with(proved: &[usize]) -> usize {
    let temp = tempfile::tempdir().unwrap();
    copy_tree(Path::new(DIR), temp.path());
    for &i in proved {
        let (path, culprit, proof) = PROOFS[i];
        let file = temp.path().join(path);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains(culprit), "{path}");
        std::fs::write(&file, text.replace(culprit, proof)).unwrap();
    }
    Blockers::of(&inspect(temp.path(), ReadinessPolicy::V2))
        .functions
        .ready
}

#[test]
fn culprits_rank_by_the_functions_proving_them_makes_ready() {
    let blockers = Blockers::of(&inspect(Path::new(DIR), ReadinessPolicy::V2));
    let now = ready_with(&[]);
    let all = ready_with(&[0, 1]);
    // Each culprit of the summary is one of the fixture's, at the line it names.
    let mut expected: Vec<(usize, &str)> = Vec::new();
    for (i, (path, text, _)) in PROOFS.iter().enumerate() {
        let others: Vec<usize> = (0..PROOFS.len()).filter(|j| *j != i).collect();
        let blocked = all - ready_with(&others);
        let alone = ready_with(&[i]) - now;
        let ranked = blockers
            .culprits
            .iter()
            .find(|c| c.path == *path)
            .unwrap_or_else(|| panic!("{path} is not in the summary"));
        assert_eq!(ranked.text, *text);
        assert_eq!(ranked.functions, blocked, "{path}: functions blocked");
        assert_eq!(ranked.alone, alone, "{path}: functions it alone blocks");
        expected.push((blocked, path));
    }
    // More functions blocked ranks first.
    expected.sort_by_key(|e| std::cmp::Reverse(e.0));
    let order: Vec<&str> = blockers.culprits.iter().map(|c| c.path.as_str()).collect();
    let expected: Vec<&str> = expected.iter().map(|e| e.1).collect();
    assert_eq!(order, expected);
    // Proving the largest set makes exactly its functions ready.
    let set = &blockers.sets[0];
    assert_eq!(set.culprits, vec![1, 2]);
    assert_eq!(
        all - now,
        blockers.sets.iter().map(|s| s.functions).sum::<usize>()
    );
}

/// A local module that cannot be inspected (a syntax error) blocks its importers: the import's
/// culprit leads to it with no statement, and the summary counts the function as `other`.
#[test]
fn an_uninspectable_module_is_where_the_chain_ends() {
    let temp = tempfile::tempdir().unwrap();
    let pkg = temp.path().join("p");
    std::fs::create_dir(&pkg).unwrap();
    std::fs::write(pkg.join("__init__.py"), "").unwrap();
    std::fs::write(pkg.join("bad.py"), "def broken(:\n").unwrap();
    std::fs::write(
        pkg.join("user.py"),
        "from . import bad\n\n\ndef f(x: int) -> int:\n    return x\n",
    )
    .unwrap();
    let project = inspect(temp.path(), ReadinessPolicy::V2);
    let blockers = Blockers::of(&project);
    assert_eq!(blockers.functions.other, 1);
    assert!(blockers.culprits.is_empty());
    let doc: Value = serde_json::from_slice(&project.explanation_bytes().unwrap()).unwrap();
    let user = doc["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["module"] == "p.user")
        .unwrap();
    let culprit = &user["explanation"]["module_reasons"][0]["culprits"][0];
    assert_eq!(culprit["runs"], serde_json::json!(["p.bad"]));
    assert_eq!(culprit["leads_to"]["path"], "p/bad.py");
    assert_eq!(culprit["leads_to"]["culprit"], Value::Null);
    assert!(
        culprit["note"]
            .as_str()
            .unwrap()
            .ends_with("at fault: p/bad.py could not be inspected"),
        "{culprit}"
    );
}
