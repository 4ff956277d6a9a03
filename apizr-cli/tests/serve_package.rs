//! A module of a package directory (`apizr serve|generate DIR --select pkg.mod:func`), on the
//! host: the real binary, real workers (warm pool and governed), real HTTP.
//!
//! The fixture `tests/fixtures/package/src/shop` has a module that imports a sibling
//! relatively, another by its absolute name and a name of its parent package; a module nobody
//! imports raises when imported, so bundling or importing it would fail the calls.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

#[path = "support/served.rs"]
mod served;
use served::Served;

fn package_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/package/src")
}

fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("serve-package")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_apizr"))
        .args(args)
        .output()
        .unwrap()
}

fn start(args: &[&str]) -> Served {
    Served::spawn_ready(args, &[], Duration::from_secs(30), Duration::from_secs(30))
}

const SELECT: &str = "shop.pricing:quote,shop.pricing:where";
const QUOTE: &str = "\"250 cents (EUR)\"";

/// Direct (warm pool) and governed (a sandboxed worker per call): the module is imported by its
/// dotted name, parents first, so relative and absolute intra-package imports work.
#[test]
fn serves_a_module_of_a_package_with_its_intra_package_imports() {
    let dir = package_dir();
    let policy = tmp("modes").join("policy.json");
    std::fs::write(&policy, "{}").unwrap();
    for extra in [
        vec!["--workers", "1"],
        vec!["--policy", policy.to_str().unwrap()],
    ] {
        let mut args = vec![
            dir.to_str().unwrap(),
            "--select",
            SELECT,
            "--allow-conditional",
        ];
        args.extend(&extra);
        let server = start(&args);
        assert_eq!(
            server.post("quote", r#"{"price": 2.5}"#),
            (200, QUOTE.into()),
            "{extra:?}"
        );
        assert_eq!(
            server.post("where", "{}"),
            (200, "\"shop.pricing in shop\"".into()),
            "{extra:?}"
        );
    }
}

/// Readiness v2 over a package directory: parameters typed with classes of sibling modules
/// (`shop.models` imported at module level, `shop.extra` only under `if TYPE_CHECKING:`) are
/// planned with their exact schemas and reach Python, in the warm pool, as instances of the
/// module that declares them (the fixture functions raise otherwise). Its local imports are
/// proved with the package, as `inspect DIR` proves them: no `--allow-conditional`.
#[test]
fn serves_classes_imported_from_sibling_modules_under_readiness_v2() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../apizr-inspect/tests/data/input_types_pkg");
    let args = [
        dir.to_str().unwrap(),
        "--select",
        "shop.api:move,shop.api:unbox",
        "--readiness",
        "v2",
        "--workers",
        "1",
    ];
    let server = start(&args);
    assert_eq!(
        server.post("move", r#"{"p": {"x": 1, "y": 2}, "dx": 3}"#),
        (200, r#"{"x":4,"y":2}"#.into())
    );
    assert_eq!(
        server.post("unbox", r#"{"b": {"size": 3}, "pair": {"left": "ab"}}"#),
        (200, "5".into())
    );
    // The other module's exact schema is enforced before any worker runs.
    let (status, _) = server.post("move", r#"{"p": {"x": 1, "z": 2}, "dx": 3}"#);
    assert_eq!(status, 422);
}

/// `serve` and `generate` DIR `--readiness v2` give a module the verdict `inspect DIR` gives
/// it (`tests/data/readiness_v2_package`): `shop.models` imports `shop.base` relatively, whose
/// top level is proved, so `describe` is served and generated without `--allow-conditional`
/// and runs; `shop.uses_unsafe` imports `shop.unsafe`, which sets an environment variable at
/// import (READY-004 there), so `double` is refused by both, naming READY-015. Under v1 the
/// same selection of `describe` is refused as before (its relative import).
#[test]
fn serve_and_generate_accept_what_inspect_dir_proves_and_refuse_a_near_miss() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../apizr-inspect/tests/data/readiness_v2_package");
    let dir = dir.to_str().unwrap();
    let out = tmp("v2-verdict");
    for transport in ["rest", "mcp"] {
        let project = out.join(transport);
        let (ok, refused) = (
            ["--select", "shop.models:describe"],
            ["--select", "shop.uses_unsafe:double"],
        );
        let generate = |select: [&str; 2], project: &Path| {
            let project = project.to_str().unwrap();
            let mut args = vec!["generate", transport, dir, "--readiness", "v2"];
            args.extend(select);
            args.extend(["--output-dir", project, "--no-lockfile"]);
            run(&args)
        };
        let accepted = generate(ok, &project);
        let stderr = String::from_utf8_lossy(&accepted.stderr);
        assert_eq!(accepted.status.code(), Some(0), "{transport}: {stderr}");
        let readiness = std::fs::read_to_string(project.join("readiness.json")).unwrap();
        assert!(readiness.contains("apizr.readiness/v2"), "{readiness}");
        let near_miss = generate(refused, &out.join(format!("{transport}-refused")));
        let stderr = String::from_utf8_lossy(&near_miss.stderr);
        assert_ne!(near_miss.status.code(), Some(0), "{transport}: {stderr}");
        assert!(
            stderr.contains("double: conditional (APIZR-READY-015)"),
            "{transport}: {stderr}"
        );
        assert!(
            !out.join(format!("{transport}-refused"))
                .join("openapi.json")
                .exists()
        );
    }
    let serve = |extra: &[&str]| {
        let mut args = vec!["serve", "rest", dir];
        args.extend(extra);
        args.extend(["--port", "1"]);
        run(&args)
    };
    let refused = serve(&["--select", "shop.uses_unsafe:double", "--readiness", "v2"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot serve double: conditional (APIZR-READY-015)"),
        "{stderr}"
    );
    let v1 = serve(&["--select", "shop.models:describe"]);
    let stderr = String::from_utf8_lossy(&v1.stderr);
    assert_eq!(v1.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot serve describe: conditional"),
        "{stderr}"
    );
    let args = [
        dir,
        "--select",
        "shop.models:describe",
        "--readiness",
        "v2",
        "--workers",
        "1",
    ];
    let server = start(&args);
    assert_eq!(
        server.post("describe", r#"{"name": "pen", "kind": "b"}"#),
        (200, "\"pen (b)\"".into())
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&out);
}

/// Functions of two modules in one server: each module is a source of its own (its executable,
/// its closure and digests, its workers), so each capability runs in its own module — `whoami`
/// and `whoareyou` have the same body and answer with their own module's name, and only
/// `kit.alpha` imports the sibling `kit.base`.
#[test]
fn serves_functions_of_two_modules_each_in_its_own_module() {
    let root = tmp("two-modules");
    let src =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/package-modules/src");
    let policy = root.join("policy.json");
    std::fs::write(&policy, "{}").unwrap();
    for extra in [
        vec!["--workers", "1"],
        vec!["--policy", policy.to_str().unwrap()],
    ] {
        let mut args = vec![
            src.to_str().unwrap(),
            "--select",
            "kit.alpha:up,kit.beta:down,kit.alpha:whoami,kit.beta:whoareyou",
            "--allow-conditional",
        ];
        args.extend(&extra);
        let server = start(&args);
        assert_eq!(
            server.post("up", r#"{"x": 4}"#),
            (200, "40".into()),
            "{extra:?}"
        );
        assert_eq!(
            server.post("down", r#"{"x": 4}"#),
            (200, "3".into()),
            "{extra:?}"
        );
        assert_eq!(
            server.post("whoami", "{}"),
            (200, "\"kit.alpha\"".into()),
            "{extra:?}"
        );
        assert_eq!(
            server.post("whoareyou", "{}"),
            (200, "\"kit.beta\"".into()),
            "{extra:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}

const TWO_MODULES: &str = "kit.alpha:up,kit.beta:down,kit.alpha:whoami,kit.beta:whoareyou";

/// `generate rest|mcp DIR --select` with functions of two modules: one bundle holding the
/// union of their closures (each file once: `kit.alpha` with its package, the stand-alone
/// `kit.beta` as its file), every module bound in `package.modules`, and that bundle served by
/// the runtime's loader as one source per module (each capability answers in its own module).
/// A file of one module's closure edited: the server refuses to start, naming it. The same
/// function name selected from two modules: refused before anything is written, naming both.
/// (The built project and its image: `generate_governed_image`.)
#[test]
fn generates_one_bundle_of_two_modules_and_serves_each_in_its_own_module() {
    let root = tmp("generate-two-modules");
    let src =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/package-modules/src");
    let generate = |transport: &str, out: &Path| {
        run(&[
            "generate",
            transport,
            src.to_str().unwrap(),
            "--select",
            TWO_MODULES,
            "--allow-conditional",
            "--output-dir",
            out.to_str().unwrap(),
            "--no-lockfile",
        ])
    };
    let project = root.join("rest");
    let out = generate("rest", &project);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut sources = Vec::new();
    for entry in walk(&project.join("source")) {
        let relative = entry
            .strip_prefix(&project)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let original = src.join(relative.strip_prefix("source/").unwrap());
        assert_eq!(
            std::fs::read(&entry).unwrap(),
            std::fs::read(original).unwrap(),
            "{relative}"
        );
        sources.push(relative);
    }
    sources.sort();
    assert_eq!(
        sources,
        [
            "source/kit/__init__.py",
            "source/kit/alpha.py",
            "source/kit/base.py",
            "source/kit/beta.py"
        ]
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(project.join("apizr-rest.json")).unwrap()).unwrap();
    let package = &manifest["package"];
    assert_eq!(
        package["files"],
        serde_json::json!([
            "source/kit/__init__.py",
            "source/kit/alpha.py",
            "source/kit/base.py"
        ])
    );
    let modules = package["modules"].as_array().unwrap();
    assert_eq!(modules.len(), 2, "{package}");
    let ids = |m: &serde_json::Value| -> Vec<String> {
        m["capabilities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|id| id.as_str().unwrap().rsplit(':').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(modules[0]["source"]["module"], "kit.alpha");
    assert_eq!(ids(&modules[0]), ["up", "whoami"]);
    assert_eq!(modules[0]["files"], package["files"]);
    assert_eq!(modules[0]["ir"], "capability-ir.json");
    assert_eq!(modules[1]["source"]["module"], "kit.beta");
    assert_eq!(ids(&modules[1]), ["down", "whoareyou"]);
    assert!(modules[1].get("files").is_none(), "kit.beta stands alone");
    assert_eq!(modules[1]["executable_path"], "source/kit/beta.py");
    for file in [
        "modules/kit.beta/capability-ir.json",
        "modules/kit.beta/readiness.json",
    ] {
        assert!(
            manifest["artifacts"].get(file).is_some(),
            "{file} is not an artifact"
        );
        assert!(project.join("Dockerfile").is_file());
    }
    assert!(
        std::fs::read_to_string(project.join("Dockerfile"))
            .unwrap()
            .contains("COPY modules ./modules"),
        "the image carries the further modules' IR"
    );
    let readme = std::fs::read_to_string(project.join("README.md")).unwrap();
    assert!(
        readme.contains("server of the Python modules `kit.alpha`, `kit.beta`,")
            && readme.contains(
                "`kit.alpha`, `kit.beta` are modules of a package: `source/` holds the 3 files"
            ),
        "{readme}"
    );
    // The runtime's loader: one source per module, serving the bundle's own openapi.json.
    let plan = apizr_runtime::serve::ServicePlan::from_bundle_dir(&project).unwrap();
    let served: Vec<(String, Vec<String>)> = plan
        .specs
        .iter()
        .map(|s| {
            (
                s.source.module.clone(),
                s.capabilities.iter().map(|c| c.name.clone()).collect(),
            )
        })
        .collect();
    assert_eq!(
        served,
        [
            (
                "kit.alpha".to_string(),
                vec!["up".to_string(), "whoami".to_string()]
            ),
            (
                "kit.beta".to_string(),
                vec!["down".to_string(), "whoareyou".to_string()]
            )
        ]
    );
    assert_eq!(
        plan.openapi(),
        std::fs::read(project.join("openapi.json")).unwrap()
    );
    let one = apizr_runtime::serve::ServeSpec::from_bundle_dir(&project).unwrap_err();
    assert!(
        one.to_string().contains("the bundle serves 2 modules"),
        "{one}"
    );
    {
        let server = start(&["--bundle", project.to_str().unwrap(), "--workers", "1"]);
        for (name, body, answer) in [
            ("up", r#"{"x": 4}"#, "40"),
            ("down", r#"{"x": 4}"#, "3"),
            ("whoami", "{}", "\"kit.alpha\""),
            ("whoareyou", "{}", "\"kit.beta\""),
        ] {
            assert_eq!(server.post(name, body), (200, answer.to_string()), "{name}");
        }
    }
    // MCP: the same bundle shape, one tool per function.
    let mcp = root.join("mcp");
    let out = generate("mcp", &mcp);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tools: serde_json::Value =
        serde_json::from_slice(&std::fs::read(mcp.join("mcp-tools.json")).unwrap()).unwrap();
    let mut names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["down", "up", "whoami", "whoareyou"], "{tools}");
    assert_eq!(
        apizr_runtime::serve::ServicePlan::from_bundle_dir(&mcp)
            .unwrap()
            .specs
            .len(),
        2
    );
    // A file only kit.alpha's closure holds, edited: refused at start-up, naming the file.
    std::fs::write(project.join("source/kit/base.py"), "SCALE = 1000\n").unwrap();
    let out = run(&["serve", "rest", "--bundle", project.to_str().unwrap()]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("source/kit/base.py"), "{stderr}");
    // One function name from two modules: refused before anything is written.
    let clash = root.join("clash");
    let out = run(&[
        "generate",
        "rest",
        src.to_str().unwrap(),
        "--select",
        "kit.alpha:whoami,kit.beta:whoami",
        "--output-dir",
        clash.to_str().unwrap(),
        "--no-lockfile",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "--select item 2 (\"kit.beta:whoami\"): kit.alpha:whoami is selected too, and a \
             server serves one function per name (its route, operationId and tool name): select \
             whoami from one of the two modules, or generate (or serve) one project per module"
        ),
        "{stderr}"
    );
    assert!(!clash.exists());
    let _ = std::fs::remove_dir_all(&root);
}

/// Every file under `dir`, recursively.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// `serve mcp DIR --select …` (stdio), driven by the official `mcp` client: the tools are the
/// selected functions of two modules and their calls import the package (direct warm pool and
/// governed).
#[test]
fn serves_a_module_of_a_package_over_mcp_to_the_official_client() {
    let Some(python) = apizr_test_support::mcp_client_python() else {
        return;
    };
    let dir = package_dir();
    let scratch = tmp("mcp");
    let calls = scratch.join("calls.json");
    std::fs::write(
        &calls,
        r#"[{"name": "quote", "arguments": {"price": 2.5}}, {"name": "where", "arguments": {}},
            {"name": "cents", "arguments": {"amount": 1.5}}]"#,
    )
    .unwrap();
    let policy = scratch.join("policy.json");
    std::fs::write(&policy, "{}").unwrap();
    let client = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp_client/drive.py");
    for extra in [
        vec!["--workers", "1"],
        vec!["--policy", policy.to_str().unwrap()],
    ] {
        let out = Command::new(&python)
            .arg(&client)
            .arg("--calls")
            .arg(&calls)
            .args(["--stdio", "--", env!("CARGO_BIN_EXE_apizr"), "serve", "mcp"])
            .arg(&dir)
            .args(["--select", &format!("{SELECT},shop.money:cents")])
            .arg("--allow-conditional")
            .args(&extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let transcript: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let tools: Vec<&str> = transcript["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        // Listed by name, across both modules.
        assert_eq!(tools, ["cents", "quote", "where"], "{extra:?}");
        let results: Vec<String> = transcript["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                assert_ne!(c["result"]["isError"], true, "{extra:?}: {c}");
                let text = c["result"]["content"][0]["text"].as_str().unwrap();
                assert_eq!(
                    serde_json::from_str::<serde_json::Value>(text).unwrap(),
                    c["result"]["structuredContent"],
                    "{c}"
                );
                c["result"]["structuredContent"]["result"].to_string()
            })
            .collect();
        assert_eq!(
            results,
            ["\"250 cents (EUR)\"", "\"shop.pricing in shop\"", "150"],
            "{extra:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Exit code 2 and a message that says what was expected, for every way `--select` can be
/// wrong on a package directory; a function importing its own package is `conditional`.
#[test]
fn bad_package_selections_are_refused_precisely() {
    let dir = package_dir();
    let dir = dir.to_str().unwrap();
    for (args, want) in [
        (
            vec![dir],
            "a package directory needs --select; expected MODULE:FUNCTION",
        ),
        (
            vec![dir, "--select", "quote"],
            "--select item 1 (\"quote\"): no ':' between module and function; expected \
             MODULE:FUNCTION",
        ),
        (
            vec![dir, "--select", "shop.pricing:quote,shop..x:f"],
            "--select item 2 (\"shop..x:f\"): the module is not a dotted name",
        ),
        (
            vec![dir, "--select", "shop.nothere:f"],
            "--select: no module shop.nothere under",
        ),
        (
            vec![dir, "--select", "shop.pricing:quote,shop.money:quote"],
            "--select item 2 (\"shop.money:quote\"): shop.pricing:quote is selected too, and a \
             server serves one function per name (its route, operationId and tool name): select \
             quote from one of the two modules, or generate (or serve) one project per module",
        ),
        (
            vec![
                dir,
                "--select",
                "shop.pricing:nothere",
                "--allow-conditional",
            ],
            "Unknown capability selection: nothere",
        ),
        (
            vec![dir, "--select", "shop.pricing:quote", "--module-name", "x"],
            "--module-name does not apply to a package directory",
        ),
        (
            vec![dir, "--select", "shop.pricing:quote"],
            "cannot serve quote: conditional",
        ),
    ] {
        let mut argv = vec!["serve", "rest"];
        argv.extend(&args);
        argv.extend(["--port", "1"]);
        let out = run(&argv);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
    }
    // The module list helps: the refusal names the modules that are there.
    let out = run(&[
        "serve",
        "rest",
        dir,
        "--select",
        "shop.nothere:f",
        "--port",
        "1",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("shop.pricing"), "{stderr}");
}

fn manifest(project: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(project.join("apizr-rest.json")).unwrap()).unwrap()
}

/// `generate DIR --select`: the bundle holds exactly the import closure (parents' `__init__.py`
/// included, the unused module not), each file's digest in the manifest; the requirements of
/// `pyproject.toml` go to `python/requirements.txt` and the Dockerfile's virtual environment;
/// `serve --bundle` serves it, and a tampered package file is refused at start-up.
#[test]
fn generated_package_bundle_holds_its_closure_and_refuses_a_tampered_file() {
    let dir = package_dir();
    let out = tmp("generate").join("project");
    let generated = run(&[
        "generate",
        "rest",
        dir.to_str().unwrap(),
        "--select",
        SELECT,
        "--allow-conditional",
        "--output-dir",
        out.to_str().unwrap(),
        "--no-lockfile",
    ]);
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );
    let doc = manifest(&out);
    let files = [
        "source/shop/__init__.py",
        "source/shop/i18n.py",
        "source/shop/money.py",
        "source/shop/pricing.py",
    ];
    assert_eq!(doc["package"]["files"], serde_json::json!(files));
    assert_eq!(
        doc["package"]["requirements"],
        serde_json::json!(["attrs>=22"])
    );
    assert_eq!(doc["source"]["module"], "shop.pricing");
    for file in files {
        let bytes = std::fs::read(out.join(file)).unwrap();
        let want = sha256_hex(&bytes);
        assert_eq!(doc["artifacts"][file]["value"], want.as_str(), "{file}");
    }
    assert!(!out.join("source/shop/unused.py").exists());
    // A `#[python]` binding embeds one file: a package module's project keeps the main.rs
    // that serves the verified bundle (its import closure) instead.
    let main = std::fs::read_to_string(out.join("src/main.rs")).unwrap();
    assert!(
        main.contains("bundle_main_in") && !main.contains("#[apizr_runtime::python"),
        "{main}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("python/requirements.txt")).unwrap(),
        "attrs>=22\n"
    );
    let dockerfile = std::fs::read_to_string(out.join("Dockerfile")).unwrap();
    assert!(
        dockerfile.contains("RUN sh /opt/apizr/python/install.sh")
            && dockerfile.contains("ENV APIZR_PYTHON=/opt/apizr/venv/bin/python"),
        "{dockerfile}"
    );
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(
        readme.contains("/opt/apizr/venv") && readme.contains("* `attrs>=22`"),
        "{readme}"
    );
    {
        let server = start(&["--bundle", out.to_str().unwrap(), "--workers", "1"]);
        assert_eq!(
            server.post("quote", r#"{"price": 2.5}"#),
            (200, QUOTE.into())
        );
    }
    // A package file other than the module itself: still verified before anything is served.
    std::fs::write(out.join("source/shop/money.py"), "def cents(a): return 0\n").unwrap();
    let refused = run(&[
        "serve",
        "rest",
        "--bundle",
        out.to_str().unwrap(),
        "--port",
        "1",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("artifact digest mismatch: source/shop/money.py"),
        "{stderr}"
    );
    // `apizr image build --project` installs offline only: without a wheelhouse it refuses
    // (before any engine or cargo work), naming both ways.
    let image = run(&[
        "image",
        "build",
        "--project",
        out.to_str().unwrap(),
        "--base",
        "x",
    ]);
    assert_eq!(image.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&image.stderr);
    assert!(
        stderr.contains(
            "the package has requirements but no wheelhouse: apizr image build installs them \
             offline only (generate with --wheelhouse DIR), or use docker build"
        ),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(out.parent().unwrap());
}

/// Under an `apizr.execution/v2` policy every call runs in the runtime image: `generate`
/// accepts a package with requirements and records them in the manifest, which is what its
/// server checks the runtime image's requirement label against at start-up (on a real engine:
/// `serve_oci::requirements`).
#[test]
fn requirements_under_a_container_policy_are_recorded_for_the_image_check() {
    let dir = package_dir();
    let scratch = tmp("v2");
    let policy = scratch.join("v2.json");
    std::fs::write(&policy, r#"{"schema_version":"apizr.execution/v2"}"#).unwrap();
    let image = format!("sha256:{}", "a".repeat(64));
    let project = scratch.join("project");
    let out = run(&[
        "generate",
        "rest",
        dir.to_str().unwrap(),
        "--select",
        SELECT,
        "--allow-conditional",
        "--runtime-image",
        &image,
        "--runtime-platform",
        "linux/amd64",
        "--execution-policy",
        policy.to_str().unwrap(),
        "--output-dir",
        project.to_str().unwrap(),
        "--no-lockfile",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        manifest(&project)["package"]["requirements"],
        serde_json::json!(["attrs>=22"])
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

/// `--wheelhouse` and requirement files that carry pip options are refused with where, by
/// `generate` and by `image build --package` (before any engine call).
#[test]
fn requirement_options_and_a_wheelhouse_without_requirements_are_refused() {
    let root = tmp("requirements");
    let pkg = root.join("src/tool");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("__init__.py"), "").unwrap();
    std::fs::write(pkg.join("calc.py"), "def f(x: int) -> int:\n    return x\n").unwrap();
    std::fs::write(
        root.join("requirements.txt"),
        "ok>=1\n--extra-index-url http://x\n",
    )
    .unwrap();
    let src = root.join("src");
    let out = run(&[
        "generate",
        "rest",
        src.to_str().unwrap(),
        "--select",
        "tool.calc:f",
        "--output-dir",
        root.join("p").to_str().unwrap(),
        "--no-lockfile",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "requirements.txt:2: \"--extra-index-url http://x\": pip options are not accepted"
        ),
        "{stderr}"
    );
    std::fs::remove_file(root.join("requirements.txt")).unwrap();
    let out = run(&[
        "generate",
        "rest",
        src.to_str().unwrap(),
        "--select",
        "tool.calc:f",
        "--output-dir",
        root.join("p").to_str().unwrap(),
        "--no-lockfile",
        "--wheelhouse",
        root.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("declares no requirements"), "{stderr}");
    assert!(!root.join("p").exists(), "nothing is written on a refusal");
    // `image build --package` reads the same requirements and refuses before any engine call.
    let image_build = |wheelhouse: &Path| {
        let out = run(&[
            "image",
            "build",
            "--base",
            "apizr-absent/base:none",
            "--package",
            src.to_str().unwrap(),
            "--wheelhouse",
            wheelhouse.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let stderr = image_build(&root);
    assert!(
        stderr.contains("declares no requirements") && stderr.contains("a plain worker image"),
        "{stderr}"
    );
    std::fs::write(root.join("requirements.txt"), "ok>=1\n-e .\n").unwrap();
    let stderr = image_build(&root);
    assert!(
        stderr.contains("requirements.txt:2: \"-e .\": pip options are not accepted"),
        "{stderr}"
    );
    std::fs::write(root.join("requirements.txt"), "ok>=1\n").unwrap();
    let stderr = image_build(&root);
    assert!(stderr.contains("holds no *.whl file"), "{stderr}");
    let _ = std::fs::remove_dir_all(&root);
}

fn sha256_hex(bytes: &[u8]) -> String {
    apizr_ir::Digest::sha256(bytes).value
}

/// Readiness v2 proves `importlib.metadata.version(__name__)` for a package whose directory
/// holds its `*.dist-info/METADATA`: `serve DIR` sends that file with the package's files,
/// `generate DIR` bundles it (listed and digested like them), and the worker serves it to
/// `importlib.metadata`, so the ready function answers with the version — without
/// `--allow-conditional`, from the directory and from the bundle.
#[test]
fn a_version_read_from_the_distribution_metadata_is_served_from_dir_and_bundle() {
    let root = tmp("dist-info");
    let dir = root.join("src");
    std::fs::create_dir_all(dir.join("vpkg")).unwrap();
    std::fs::write(
        dir.join("vpkg/__init__.py"),
        "import importlib.metadata\n__version__ = importlib.metadata.version(__name__)\n\n\n\
         def version() -> str:\n    return __version__\n",
    )
    .unwrap();
    std::fs::create_dir(dir.join("vpkg-1.2.3.dist-info")).unwrap();
    std::fs::write(
        dir.join("vpkg-1.2.3.dist-info/METADATA"),
        "Metadata-Version: 2.1\nName: vpkg\nVersion: 1.2.3\n",
    )
    .unwrap();
    let dir_str = dir.to_str().unwrap();
    {
        let server = start(&[dir_str, "--select", "vpkg:version", "--readiness", "v2"]);
        assert_eq!(server.post("version", "{}"), (200, "\"1.2.3\"".into()));
    }
    let out = root.join("project");
    let generated = run(&[
        "generate",
        "rest",
        dir_str,
        "--select",
        "vpkg:version",
        "--readiness",
        "v2",
        "--output-dir",
        out.to_str().unwrap(),
        "--no-lockfile",
    ]);
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );
    let doc = manifest(&out);
    let files = [
        "source/vpkg-1.2.3.dist-info/METADATA",
        "source/vpkg/__init__.py",
    ];
    assert_eq!(doc["package"]["files"], serde_json::json!(files));
    for file in files {
        let want = sha256_hex(&std::fs::read(out.join(file)).unwrap());
        assert_eq!(doc["artifacts"][file]["value"], want.as_str(), "{file}");
    }
    {
        let server = start(&["--bundle", out.to_str().unwrap(), "--workers", "1"]);
        assert_eq!(server.post("version", "{}"), (200, "\"1.2.3\"".into()));
    }
    let _ = std::fs::remove_dir_all(&root);
}
