//! The import graph over the fixture packages in `tests/data/package/`.

use std::collections::BTreeSet;
use std::path::Path;

use super::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/package")
        .join(name)
}

fn app() -> PackageIndex {
    match PackageIndex::scan(&fixture("app")) {
        Ok(index) => index,
        Err(error) => panic!("scan failed: {error}"),
    }
}

/// `(target, bound, time, line:column)` of every import of `module`.
fn imports(
    index: &PackageIndex,
    module: &str,
) -> Vec<(ImportTarget, Option<String>, ImportTime, String)> {
    let imports = match index.imports_of(module) {
        Ok(imports) => imports,
        Err(error) => panic!("imports_of({module}) failed: {error}"),
    };
    imports
        .into_iter()
        .map(|i| {
            let at = format!("{}:{}", i.position.line, i.position.column);
            (i.target, i.bound, i.time, at)
        })
        .collect()
}

fn local(name: &str) -> ImportTarget {
    ImportTarget::Local(name.into())
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| n.to_string()).collect()
}

#[test]
fn scan_names_modules_like_the_import_system() {
    let index = app();
    let modules: Vec<&str> = index.modules().collect();
    assert_eq!(
        modules,
        [
            "ns.mod",
            "pkg",
            "pkg.core",
            "pkg.lazy",
            "pkg.shadow",
            "pkg.sub",
            "pkg.sub.leaf",
            "pkg.typing_only",
            "pkg.util",
            "top"
        ],
        "`my-script.py` has no module name; `ns` has no __init__.py"
    );
    assert_eq!(index.module_path("pkg"), Some(Path::new("pkg/__init__.py")));
    assert_eq!(
        index.module_path("pkg.shadow"),
        Some(Path::new("pkg/shadow/__init__.py")),
        "a package directory wins over a module file of the same name"
    );
    assert_eq!(index.module_of(Path::new("pkg/shadow.py")), None);
    assert_eq!(
        index.module_of(Path::new("pkg/sub/leaf.py")),
        Some("pkg.sub.leaf")
    );
    assert_eq!(
        index.module_of(Path::new("./pkg/core.py")),
        Some("pkg.core")
    );
    assert_eq!(index.package_of("pkg.sub"), "pkg.sub");
    assert_eq!(index.package_of("pkg.sub.leaf"), "pkg.sub");
    assert_eq!(index.package_of("top"), "");
}

#[test]
fn a_root_that_is_a_package_prefixes_every_name() {
    let index = match PackageIndex::scan(&fixture("app/pkg")) {
        Ok(index) => index,
        Err(error) => panic!("{error}"),
    };
    assert_eq!(index.module_path("pkg.core"), Some(Path::new("core.py")));
    assert_eq!(index.module_path("pkg"), Some(Path::new("__init__.py")));
    assert_eq!(
        index.module_of(Path::new("sub/leaf.py")),
        Some("pkg.sub.leaf")
    );
    // Relative imports resolve the same way as when scanned from above.
    let leaf = imports(&index, "pkg.sub.leaf");
    assert_eq!(leaf[0].0, local("pkg.util"));
}

#[test]
fn absolute_imports_are_local_external_or_unresolvable() {
    let index = app();
    let top = imports(&index, "top");
    let beyond = ImportTarget::Unresolvable(
        "relative import in a module that is not part of a package (no known parent package)"
            .into(),
    );
    let missing =
        ImportTarget::Unresolvable("`pkg.missing` is not a module under the package root".into());
    let expected = vec![
        (
            ImportTarget::External("os".into()),
            Some("os".into()),
            ImportTime::Import,
            "1:8".into(),
        ),
        (
            local("pkg.sub.leaf"),
            Some("pkg".into()),
            ImportTime::Import,
            "2:8".into(),
        ),
        (
            missing,
            Some("pkg".into()),
            ImportTime::Import,
            "3:8".into(),
        ),
        (
            ImportTarget::External("requests".into()),
            Some("adapters".into()),
            ImportTime::Import,
            "4:8".into(),
        ),
        (
            beyond,
            Some("sibling".into()),
            ImportTime::Import,
            "5:15".into(),
        ),
    ];
    assert_eq!(top, expected);
}

#[test]
fn relative_and_submodule_imports_resolve_with_their_time() {
    let index = app();
    let core = imports(&index, "pkg.core");
    let beyond = ImportTarget::Unresolvable("relative import beyond the top-level package".into());
    let expected = vec![
        (
            ImportTarget::External("json".into()),
            Some("json".into()),
            ImportTime::Import,
            "1:8".into(),
        ),
        (
            ImportTarget::External("typing".into()),
            Some("TYPE_CHECKING".into()),
            ImportTime::Import,
            "2:20".into(),
        ),
        // `from . import util`: `util` is a submodule, so the import runs `pkg.util`.
        (
            local("pkg.util"),
            Some("util".into()),
            ImportTime::Import,
            "4:15".into(),
        ),
        // `from .util import helper as help_me`: a name read from `pkg.util`.
        (
            local("pkg.util"),
            Some("help_me".into()),
            ImportTime::Import,
            "5:19".into(),
        ),
        (
            beyond,
            Some("above".into()),
            ImportTime::Import,
            "6:16".into(),
        ),
        (
            local("pkg.typing_only"),
            Some("typing_only".into()),
            ImportTime::TypeChecking,
            "9:21".into(),
        ),
        // A class body runs at import.
        (
            local("pkg.shadow"),
            Some("shadow".into()),
            ImportTime::Import,
            "13:21".into(),
        ),
        (
            local("pkg.lazy"),
            Some("lazy".into()),
            ImportTime::Call,
            "17:21".into(),
        ),
    ];
    assert_eq!(core, expected);

    let detailed = match index.imports_of("pkg.core") {
        Ok(imports) => imports,
        Err(error) => panic!("{error}"),
    };
    assert_eq!(detailed[3].module, "pkg.util");
    assert_eq!(detailed[3].name.as_deref(), Some("helper"));
    assert_eq!(
        detailed[4].module, "..",
        "an unresolvable relative import keeps its dots"
    );

    let leaf = imports(&index, "pkg.sub.leaf");
    assert_eq!(leaf[0].0, local("pkg.util"), "`..util` from pkg.sub.leaf");
    assert_eq!(
        leaf[1].0,
        ImportTarget::Unresolvable("relative import beyond the top-level package".into())
    );
    assert_eq!(
        leaf[2].0,
        ImportTarget::Unresolvable(
            "`pkg.sub.nothing` is not a module under the package root".into()
        )
    );

    let util = imports(&index, "pkg.util");
    assert_eq!(
        util[1].0,
        local("pkg.core"),
        "a star import reads the module"
    );
    assert_eq!(util[1].1, None, "a star import binds no single name");

    let ns = imports(&index, "ns.mod");
    assert!(
        matches!(&ns[0].0, ImportTarget::Unresolvable(why) if why.contains("without `__init__.py`")),
        "{ns:?}"
    );
}

#[test]
fn closure_runs_parent_inits_and_survives_cycles() {
    let index = app();
    let closure = |roots: &[&str], call_time| match index.closure(roots, call_time) {
        Ok(closure) => closure,
        Err(error) => panic!("{error}"),
    };
    // pkg.sub.leaf runs pkg/__init__ (→ core → util → core: a cycle; core's class body → shadow)
    // and pkg/sub/__init__; the call-time and TYPE_CHECKING imports are not followed.
    let import_time = set(&[
        "pkg",
        "pkg.core",
        "pkg.shadow",
        "pkg.sub",
        "pkg.sub.leaf",
        "pkg.util",
    ]);
    assert_eq!(closure(&["pkg.sub.leaf"], false), import_time);
    let mut everything = import_time.clone();
    everything.extend(set(&["pkg.lazy", "pkg.typing_only"]));
    assert_eq!(closure(&["pkg.sub.leaf"], true), everything);
    assert_eq!(
        closure(&["pkg.lazy"], false),
        set(&["pkg", "pkg.core", "pkg.lazy", "pkg.shadow", "pkg.util"])
    );
    let mut from_top = import_time;
    from_top.insert("top".into());
    assert_eq!(closure(&["top"], false), from_top);
    assert_eq!(closure(&["ns.mod"], true), set(&["ns.mod"]));
}

#[test]
fn errors_name_the_module_or_path() {
    let index = app();
    assert!(matches!(
        index.imports_of("pkg.nope"),
        Err(PackageError::UnknownModule { name }) if name == "pkg.nope"
    ));
    assert!(matches!(
        index.closure(&["nope"], false),
        Err(PackageError::UnknownModule { name }) if name == "nope"
    ));
    let missing = fixture("no-such-dir");
    match PackageIndex::scan(&missing) {
        Err(error @ PackageError::Root { .. }) => {
            assert!(error.to_string().contains("no-such-dir"), "{error}")
        }
        other => panic!("expected a root error, got {other:?}"),
    }
    let broken = match PackageIndex::scan(&fixture("broken")) {
        Ok(index) => index,
        Err(error) => panic!("{error}"),
    };
    match broken.closure(&["ok"], false) {
        Err(error @ PackageError::Module { .. }) => {
            let text = error.to_string();
            assert!(text.contains("bad.py") && text.contains("1:"), "{text}");
        }
        other => panic!("expected the syntax error of bad.py, got {other:?}"),
    }
}

#[test]
fn a_module_that_imports_no_file_of_the_directory_stands_alone() {
    let index = app();
    let alone = |module: &str| match index.stands_alone(module, false) {
        Ok(alone) => alone,
        Err(error) => panic!("{module}: {error}"),
    };
    // No import at all: single files, whatever their parents' `__init__` do.
    assert!(alone("pkg.lazy"));
    assert!(alone("pkg.typing_only"));
    // A package that declares requirements is always bundled (the bundle installs them).
    assert!(!index.stands_alone("pkg.lazy", true).unwrap_or(true));
    // Relative imports (even unresolvable ones), an absolute import of the own package, an
    // import of another top-level module, and a package's `__init__` itself: not alone.
    assert!(!alone("pkg.core"));
    assert!(!alone("pkg.sub.leaf"));
    assert!(!alone("pkg.util"));
    assert!(!alone("top"));
    assert!(!alone("pkg.shadow"));
    assert!(matches!(
        index.stands_alone("pkg.nothing", false),
        Err(PackageError::UnknownModule { .. })
    ));
}
