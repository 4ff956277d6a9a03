//! Readiness v2 over a package directory (`tests/data/readiness_v2_package`): imports of the
//! package's own modules are followed. A function is ready when every module its import runs
//! (its parent packages' `__init__` included, unless the module imports no file of a
//! directory that declares no requirements and is served alone) has a proved top level; a class proved in a
//! sibling module is a known base class; a declared third-party import is ready, explicitly,
//! with READY-020; each refusal names its cause (an unproved module, an import cycle, a
//! missing name, an unproved parent package). v1 over the same tree is unchanged.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

use apizr_inspect::InspectOptions;
use apizr_inspect::package::{PackageIndex, declared_dependencies};
use apizr_inspect::project::{ProjectOptions, inspect_dir};
use apizr_ir::ReadinessPolicy;

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/readiness_v2_package"
);

/// Per function: (state, can_generate_interface, execution reason codes, fixes of its reasons).
type Verdicts = BTreeMap<String, (String, bool, Vec<String>, Vec<String>)>;

fn verdicts(policy: ReadinessPolicy) -> Verdicts {
    verdicts_in(Path::new(DIR), policy)
}

fn verdicts_in(dir: &Path, policy: ReadinessPolicy) -> Verdicts {
    let options = ProjectOptions {
        inspect: InspectOptions {
            explain: true,
            readiness: policy,
            ..InspectOptions::default()
        },
        threads: Some(2),
        keep_envelopes: true,
    };
    let project = inspect_dir(dir, &options).unwrap();
    let mut out = Verdicts::new();
    for entry in &project.modules {
        let report = entry
            .result
            .as_ref()
            .unwrap_or_else(|e| panic!("{}: {e:?}", entry.path));
        let envelope: serde_json::Value = serde_json::from_slice(&report.envelope).unwrap();
        let explanation = report.explanation.as_ref().unwrap();
        for assessment in envelope["readiness"]["assessments"].as_array().unwrap() {
            let id = assessment["capability_id"].as_str().unwrap().to_string();
            let codes = assessment["dimensions"]["execution"]["reasons"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    r["code"]
                        .as_str()
                        .unwrap()
                        .trim_start_matches("APIZR-READY-")
                        .to_string()
                })
                .collect();
            let explained = explanation
                .capabilities
                .iter()
                .find(|c| c.capability_id == id)
                .unwrap();
            let mut fixes: Vec<String> = explained.reasons.iter().map(|r| r.fix.clone()).collect();
            if explained.module_reasons {
                fixes.extend(explanation.module_reasons.iter().map(|r| r.fix.clone()));
            }
            out.insert(
                id,
                (
                    assessment["state"].as_str().unwrap().to_string(),
                    assessment["can_generate_interface"].as_bool().unwrap(),
                    codes,
                    fixes,
                ),
            );
        }
    }
    out
}

fn verdict<'v>(v: &'v Verdicts, function: &str) -> &'v (String, bool, Vec<String>, Vec<String>) {
    v.get(&format!("python:{function}"))
        .unwrap_or_else(|| panic!("no assessment of {function}: {:?}", v.keys()))
}

fn has_fix(v: &Verdicts, function: &str, needle: &str) -> bool {
    verdict(v, function).3.iter().any(|f| f.contains(needle))
}

#[test]
fn local_imports_of_proved_modules_make_functions_ready() {
    let v2 = verdicts(ReadinessPolicy::V2);
    for function in [
        "shop.base:kinds",
        // `Item(Base)`: a dataclass whose base class is proved in `shop.base`.
        "shop.models:describe",
        // `from shop.models import Item` and `from . import base`; `shop/__init__` runs first.
        "shop.pricing:total",
        // A call-time import of a proved module.
        "shop.lazy:fine",
        // `base.Base` and `shop.base.KINDS`: attributes of a proved sibling module.
        "shop.special:special",
        // Its package `shop.labels` reads `names.LABELS` after `from . import names`: the
        // submodule's exports are known before the package is assessed.
        "shop.labels.names:label",
        // `from . import unsafe` under `if sys.platform == "win32":` never runs on a worker.
        "shop.windows_only:windows_only",
        // `if WIN:` with `WIN = sys.platform.startswith("win")` imported from `shop.compat`.
        "shop.uses_compat:uses_compat",
        // `re.compile` of strings and a tuple of strings imported from `shop.texts`.
        "shop.patterns:patterns",
        // Instances at import of a NamedTuple and of a class whose `__init__` only stores,
        // both imported from `shop.records` (also as `records.Item`); subclasses of its
        // `Plugin`, one with `dict` as a second base.
        "shop.uses_records:uses_records",
        // Calls at import of pure functions of `shop.tools`, proved in that module's globals.
        "shop.uses_tools:uses_tools",
        // A decorator factory of `shop.decorating` on a module-level `def`.
        "shop.uses_decorating:uses_decorating",
    ] {
        let (state, ready, codes, _) = verdict(&v2, function);
        assert!(
            *ready && state == "ready" && codes.is_empty(),
            "{function}: {state} {codes:?}"
        );
    }
    let v1 = verdicts(ReadinessPolicy::V1);
    for function in [
        "shop.models:describe",
        "shop.pricing:total",
        "shop.base:kinds",
    ] {
        assert!(!verdict(&v1, function).1, "v1 refuses {function}");
    }
}

#[test]
fn declared_third_party_imports_are_ready_with_ready_020_and_undeclared_ones_are_not() {
    let v2 = verdicts(ReadinessPolicy::V2);
    let (state, ready, codes, _) = verdict(&v2, "shop.client:fetch");
    assert_eq!((state.as_str(), *ready), ("ready", true));
    assert_eq!(
        codes,
        &["020"],
        "ready, explicitly with declared dependencies"
    );
    assert!(has_fix(
        &v2,
        "shop.client:fetch",
        "`requests` is declared by the project"
    ));
    let (_, ready, codes, _) = verdict(&v2, "shop.undeclared:load");
    assert!(!*ready && codes.contains(&"015".to_string()), "{codes:?}");
    assert!(has_fix(
        &v2,
        "shop.undeclared:load",
        "nor declared by the project"
    ));
}

#[test]
fn each_refusal_names_its_cause() {
    let v2 = verdicts(ReadinessPolicy::V2);
    let refused = |function: &str, code: &str, needle: &str| {
        let (_, ready, codes, fixes) = verdict(&v2, function);
        assert!(!*ready, "{function} must not be ready");
        assert!(codes.contains(&code.to_string()), "{function}: {codes:?}");
        assert!(has_fix(&v2, function, needle), "{function}: {fixes:#?}");
    };
    refused("shop.unsafe:mode", "004", "");
    refused(
        "shop.uses_unsafe:double",
        "015",
        "readiness v2 does not prove harmless",
    );
    // A base class `Mode` from that module: the class statement says so.
    refused(
        "shop.unsafe_base:unsafe_base",
        "004",
        "make the top level of the module `Mode` is imported from provably harmless",
    );
    refused(
        "shop.lazy:later",
        "015",
        "readiness v2 does not prove harmless",
    );
    // `TYPE_CHECKING = True` of its own: the import under it runs, and is refused.
    refused(
        "shop.fake_tc:faked",
        "015",
        "readiness v2 does not prove harmless",
    );
    // `sys` bound to a module of the package: `sys.platform == "win32"` is not a fixed test.
    refused(
        "shop.fake_platform:fake_platform",
        "015",
        "readiness v2 does not prove harmless",
    );
    // The imported string makes the pattern unbalanced (CPython raises `re.error`).
    refused(
        "shop.patterns_bad:patterns_bad",
        "004",
        "make `OPEN + \"x\"` one of the forms",
    );
    // `Item("a+")` misses a field of the NamedTuple imported from `shop.records`.
    refused("shop.bad_records:bad_records", "004", "");
    // A subclass of `shop.records.Registered`, whose `__init_subclass__` runs (and raises).
    refused("shop.bad_hooks:bad_hooks", "004", "");
    // `bump("a")` of `shop.tools`: `"a" + 1` in its body raises.
    refused(
        "shop.bad_tools:bad_tools",
        "004",
        "make `bump(\"a\")` one of the forms",
    );
    // `deprecated("...", 2)`: the factory of `shop.decorating` takes one argument.
    refused("shop.bad_decorating:bad_decorating", "004", "");
    refused("shop.cycle_a:a", "015", "same import cycle");
    refused("shop.cycle_b:b", "015", "same import cycle");
    refused("shop.missing:m", "015", "does not bind on every path");
    refused(
        "shop.sub.leaf:leaf",
        "004",
        "make the top level of package `shop.sub`",
    );
    // No import of its own package, but the package declares requirements (`requests`), so
    // it is bundled with its parents all the same (`shop/sub/__init__.py`, which writes
    // `os.environ`, runs first): refused as well.
    refused(
        "shop.sub.alone:alone",
        "004",
        "make the top level of package `shop.sub`",
    );
}

/// The same tree without declared requirements: `sub.alone` imports no module of the
/// directory, so it is served as the single file it is (its parents never run) and v2 judges
/// it as v1 does; `sub.leaf` imports its package and still needs `sub/__init__.py` proved.
#[test]
fn a_module_that_stands_alone_is_judged_without_its_parents() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("v2-package-alone");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("shop/sub")).unwrap();
    for (file, text) in [
        ("shop/__init__.py", ""),
        ("shop/base.py", "def kinds() -> list:\n    return []\n"),
        (
            "shop/sub/__init__.py",
            "import os\n\nos.environ[\"SHOP_SUB\"] = \"1\"\n",
        ),
        (
            "shop/sub/alone.py",
            "def alone(x: int) -> int:\n    return x\n",
        ),
        (
            "shop/sub/leaf.py",
            "from ..base import kinds\n\n\ndef leaf(x: int) -> int:\n    return x + len(kinds())\n",
        ),
    ] {
        std::fs::write(dir.join(file), text).unwrap();
    }
    let (v1, v2) = (
        verdicts_in(&dir, ReadinessPolicy::V1),
        verdicts_in(&dir, ReadinessPolicy::V2),
    );
    // `serve DIR`/`generate DIR` give these modules the same verdicts.
    assert_chosen_modules_get_inspect_dirs_verdict(&dir, 5);
    let (state, ready, codes, _) = verdict(&v2, "shop.sub.alone:alone");
    assert!(
        *ready && state == "ready" && codes.is_empty(),
        "{state} {codes:?}"
    );
    assert!(verdict(&v1, "shop.sub.alone:alone").1);
    let (_, ready, codes, _) = verdict(&v2, "shop.sub.leaf:leaf");
    assert!(!*ready && codes.contains(&"004".to_string()), "{codes:?}");
    assert!(has_fix(
        &v2,
        "shop.sub.leaf:leaf",
        "make the top level of package `shop.sub`"
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The proof obligation over the package corpus: every function v2 calls ready without
/// declared dependencies is imported the way a package bundle imports it (the directory on
/// `sys.path`, so parent `__init__`s run first; `python3 -I -S -W error`) and called once with
/// arguments of its annotated types; it must import and return. (The strict-sandbox runs are
/// `execute_sandbox::v2_ready_functions_import_and_run_in_the_strict_sandbox` for the
/// single-file corpus and `readiness_corpus` in apizr-cli for pinned PyPI wheels.)
#[test]
fn ready_package_functions_import_and_run_in_cpython() {
    // A single file loaded under its dotted name without its parents, as the worker loads a
    // single-file source.
    const ALONE: &str = "def alone(name, path):\n    \
                         spec = importlib.util.spec_from_file_location(name, path)\n    \
                         module = importlib.util.module_from_spec(spec)\n    \
                         spec.loader.exec_module(module)\n    return module\n";
    let options = ProjectOptions {
        inspect: InspectOptions {
            readiness: ReadinessPolicy::V2,
            ..InspectOptions::default()
        },
        threads: Some(2),
        keep_envelopes: true,
    };
    let project = inspect_dir(Path::new(DIR), &options).unwrap();
    let index = PackageIndex::scan(Path::new(DIR)).unwrap();
    let declares = !declared_dependencies(Path::new(DIR)).is_empty();
    let mut calls = Vec::new();
    for entry in &project.modules {
        let report = entry.result.as_ref().unwrap();
        let envelope: serde_json::Value = serde_json::from_slice(&report.envelope).unwrap();
        for assessment in envelope["readiness"]["assessments"].as_array().unwrap() {
            let declared = assessment["dimensions"]["execution"]["reasons"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["code"] == "APIZR-READY-020");
            if assessment["can_generate_interface"] != true || declared {
                continue;
            }
            let symbol = assessment["source"]["symbol"].as_str().unwrap();
            let capability = envelope["capability_ir"]["capabilities"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == symbol)
                .unwrap();
            let arguments: Vec<&str> = capability["signature"]["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| match p["annotation"]["declared"].as_str() {
                    Some("int") => "0",
                    Some("str") => "''",
                    other => panic!("{symbol}: no example for {other:?}"),
                })
                .collect();
            let module = entry.module.as_deref().unwrap();
            // As bundles load it: a module that imports no file of the directory alone, from
            // its file (its parents never run), every other one inside its package (by its
            // dotted name, parents first).
            let load = if index.stands_alone(module, declares).unwrap() {
                let path = Path::new(DIR).join(index.module_path(module).unwrap());
                format!("alone({module:?}, {:?})", path.to_str().unwrap())
            } else {
                format!("importlib.import_module({module:?})")
            };
            calls.push(format!(
                "print(repr({load}.{symbol}({})))",
                arguments.join(", ")
            ));
        }
    }
    assert!(calls.len() >= 5, "{calls:?}");
    let script = format!(
        "import importlib.util, sys\nsys.path.insert(0, {DIR:?})\n{ALONE}{}\n",
        calls.join("\n")
    );
    let output = std::process::Command::new("python3")
        .args(["-I", "-S", "-W", "error", "-B", "-c", &script])
        .output()
        .expect("python3 runs (CI installs it)");
    assert!(
        output.status.success(),
        "{script}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).lines().count(),
        calls.len()
    );
}

/// The package near-misses that use classes or functions of a proved sibling module really raise when
/// imported (as bundles import them: the directory on `sys.path`, parents first).
#[test]
fn sibling_class_near_misses_raise_in_cpython() {
    for (module, error) in [
        (
            "shop.bad_records",
            "missing 1 required positional argument: 'builder'",
        ),
        ("shop.bad_hooks", "TypeError: Anonymous"),
        ("shop.bad_tools", "TypeError: can only concatenate str"),
        (
            "shop.bad_decorating",
            "TypeError: deprecated() takes 1 positional argument",
        ),
    ] {
        let script = format!(
            "import importlib, sys\nsys.path.insert(0, {DIR:?})\nimportlib.import_module({module:?})\n"
        );
        let output = std::process::Command::new("python3")
            .args(["-I", "-S", "-W", "error", "-B", "-c", &script])
            .output()
            .expect("python3 runs (CI installs it)");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success() && stderr.contains(error),
            "{module}: {stderr}"
        );
    }
}

/// `serve DIR` and `generate DIR` assess the modules they serve with
/// [`inspect_modules_in_dir`]: every module of the package fixtures, chosen all at once and
/// one at a time, gets the inspection `inspect_dir` gives it, byte for byte (the same two
/// passes, not a second copy of the rule).
#[test]
fn chosen_modules_get_the_verdict_inspect_dir_gives_them() {
    let input_types = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/input_types_pkg");
    for dir in [DIR, input_types] {
        assert_chosen_modules_get_inspect_dirs_verdict(Path::new(dir), 8);
    }
    // A module the index does not hold is an error naming it, not a verdict.
    let index = PackageIndex::scan(Path::new(DIR)).unwrap();
    let options = InspectOptions {
        readiness: ReadinessPolicy::V2,
        ..InspectOptions::default()
    };
    let missing = apizr_inspect::project::inspect_modules_in_dir(
        &index,
        &[("shop.nothere", b"")],
        options,
        &BTreeMap::new(),
    );
    assert!(
        missing.is_err_and(|e| e.to_string().contains("no module shop.nothere")),
        "a module outside the index"
    );
}

/// Every module of `dir` (at least `at_least`), chosen all at once and one at a time, gets the
/// envelope `inspect_dir` gives it; one that stands alone gets it inspected as its file too.
fn assert_chosen_modules_get_inspect_dirs_verdict(dir: &Path, at_least: usize) {
    use apizr_inspect::project::inspect_modules_in_dir;
    let options = InspectOptions {
        readiness: ReadinessPolicy::V2,
        ..InspectOptions::default()
    };
    let project = ProjectOptions {
        inspect: options,
        threads: Some(2),
        keep_envelopes: true,
    };
    let whole = inspect_dir(dir, &project).unwrap();
    let index = PackageIndex::scan(dir).unwrap();
    let (mut expected, mut sources) = (BTreeMap::new(), BTreeMap::new());
    for entry in &whole.modules {
        let (Some(module), Ok(report)) = (&entry.module, &entry.result) else {
            continue;
        };
        expected.insert(module.clone(), report.envelope.clone());
        sources.insert(
            module.clone(),
            std::fs::read(dir.join(&entry.path)).unwrap(),
        );
    }
    let shown = dir.display();
    assert!(expected.len() >= at_least, "{shown}: {:?}", expected.keys());
    let chosen: Vec<(&str, &[u8])> = sources
        .iter()
        .map(|(m, b)| (m.as_str(), b.as_slice()))
        .collect();
    let none = BTreeMap::new();
    let all = inspect_modules_in_dir(&index, &chosen, options, &none).unwrap();
    assert_eq!(all.len(), chosen.len());
    for ((module, _), (outcome, parsed)) in chosen.iter().zip(&all) {
        let envelope = apizr_ir::canonical_bytes(&outcome.inspection).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&envelope),
            String::from_utf8_lossy(&expected[*module]),
            "{shown}: {module}"
        );
        assert_eq!(parsed.module, *module);
    }
    let declares = !declared_dependencies(dir).is_empty();
    for (module, bytes) in &chosen {
        let one = inspect_modules_in_dir(&index, &[(module, bytes)], options, &none).unwrap();
        let envelope = apizr_ir::canonical_bytes(&one[0].0.inspection).unwrap();
        assert_eq!(
            envelope, expected[*module],
            "{shown}: {module} chosen alone"
        );
        // A module that stands alone is served as its file, inspected without the package:
        // the verdict is the same.
        if index.stands_alone(module, declares).unwrap() {
            let kind = apizr_ir::SourceKind::Python;
            let (file, _) =
                apizr_inspect::inspect_bytes_in_index(bytes, kind, module, options, None, None)
                    .unwrap();
            let envelope = apizr_ir::canonical_bytes(&file.inspection).unwrap();
            assert_eq!(envelope, expected[*module], "{shown}: {module} as its file");
        }
    }
}
