//! A module of a package directory as the served source: `apizr generate|serve rest|mcp DIR
//! --select pkg.mod:func,…`.
//!
//! DIR is what would be on `sys.path`. The selection names functions of modules by their
//! dotted names. A module that imports no file of the directory, of a package that declares
//! no requirements ([`PackageIndex::stands_alone`]), is the single file it is: it is served
//! exactly as `FILE --module-name pkg.mod --select f` serves it (no package files; the worker
//! makes its parents empty modules), so its parents' `__init__`, which it never reads, never
//! run, and the bundle is byte for byte that single-file one. Every other module gets every
//! local file importing it runs (its import closure, parent packages' `__init__.py`
//! included, call-time imports too, from the one resolver [`apizr_inspect::package`]), keyed
//! by path under the `sys.path` root, and is imported by its dotted name, parents first.
//! Third-party requirements come from `apizr_inspect::package::requirements`; a package that
//! declares some is always bundled (the bundle is what installs them). The directory's
//! `*.dist-info/METADATA` files travel with the package's files
//! (`apizr_inspect::package::dist_info`), so `importlib.metadata` finds them in the worker.
//!
//! Several modules: [`load`] gives one [`PackageInput`] per module, in the order the selection
//! first names them, and a function name may be selected once only (it is the route, the
//! operationId and the tool name). `serve` serves each module as a source of its own (one
//! executable, closure and worker set per module, in one server); `generate` makes one bundle
//! of them ([`served`]): the union of their closures (each file once), every module's binding
//! listed in the manifest's `package.modules`, and the runtime loads one source per module
//! from it, as `serve` does.
use std::collections::BTreeMap;
use std::path::Path;

use apizr_inspect::package::{PackageIndex, Requirements, requirements};

use crate::model::{GenerateError, PackageModule, ServedPackage, input};

/// What `--select` names on a package directory for one module: its functions, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageSelection {
    pub module: String,
    pub functions: Vec<String>,
}

/// One selected module, the files importing it executes and the package's requirements.
#[derive(Debug, Clone)]
pub struct PackageInput {
    pub module: String,
    /// The functions, as the planner's `--select` text (`f,g`).
    pub selection: String,
    /// The module's own bytes (the executable).
    pub source: Vec<u8>,
    /// Path under the `sys.path` root (`pkg/__init__.py`) → bytes; the module's file included.
    /// `None`: a module that stands alone, served as `FILE --module-name pkg.mod` would be.
    pub files: Option<BTreeMap<String, Vec<u8>>>,
    pub requirements: Requirements,
}

const EXPECTED: &str = "expected MODULE:FUNCTION[,MODULE:FUNCTION…] with a dotted module name \
                        of the package directory, e.g. humanize.number:intcomma";

/// Parse `--select` for a package directory. Every item is `MODULE:FUNCTION`; the modules in
/// the order the items first name them. A function named twice in one module counts once; the
/// same function name in two modules is refused (both would be served under that name).
pub fn parse_select(text: &str) -> Result<Vec<PackageSelection>, GenerateError> {
    let mut modules: Vec<PackageSelection> = Vec::new();
    for (index, item) in text.split(',').enumerate() {
        let item = item.trim();
        let bad = |why: &str| {
            input(format!(
                "--select item {} ({item:?}): {why}; {EXPECTED}",
                index + 1
            ))
        };
        let Some((name, function)) = item.split_once(':') else {
            return Err(bad("no ':' between module and function"));
        };
        if function.contains(':') {
            return Err(bad("more than one ':'"));
        }
        if name.is_empty() || !name.split('.').all(is_identifier) {
            return Err(bad("the module is not a dotted name of identifiers"));
        }
        if !is_identifier(function) {
            return Err(bad("the function is not an identifier"));
        }
        if let Some(other) = modules
            .iter()
            .find(|m| m.module != name && m.functions.iter().any(|f| f == function))
        {
            return Err(bad(&format!(
                "{}:{function} is selected too, and a server serves one function per name (its \
                 route, operationId and tool name): select {function} from one of the two \
                 modules, or generate (or serve) one project per module",
                other.module
            )));
        }
        match modules.iter_mut().find(|m| m.module == name) {
            Some(module) if module.functions.iter().any(|f| f == function) => {}
            Some(module) => module.functions.push(function.to_string()),
            None => modules.push(PackageSelection {
                module: name.to_string(),
                functions: vec![function.to_string()],
            }),
        }
    }
    Ok(modules)
}

/// The package a bundle holds for the loaded selection, and the first module (whose source,
/// name and selection the request carries). One module: its closure (`None` when it stands
/// alone: generated as its single file). Several: the union of their closures, each file once
/// (two closures hold the same path with the same bytes: both read it from DIR), and every
/// module with its own closure ([`PackageModule`]).
pub fn served(
    mut inputs: Vec<PackageInput>,
    wheelhouse: BTreeMap<String, Vec<u8>>,
) -> Result<(PackageInput, Option<ServedPackage>), GenerateError> {
    if inputs.is_empty() {
        return Err(input("--select names no module"));
    }
    if inputs.len() == 1 {
        let one = inputs.remove(0);
        let package = one.files.clone().map(|files| ServedPackage {
            files,
            requirements: one.requirements.specifiers.clone(),
            wheelhouse,
            root: None,
            modules: Vec::new(),
        });
        return Ok((one, package));
    }
    let mut files = BTreeMap::new();
    let mut modules = Vec::with_capacity(inputs.len());
    for one in &inputs {
        if let Some(closure) = &one.files {
            files.extend(closure.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        modules.push(PackageModule {
            module: one.module.clone(),
            source: one.source.clone(),
            selection: one.selection.clone(),
            closure: one.files.as_ref().map(|f| f.keys().cloned().collect()),
        });
    }
    let first = inputs.remove(0);
    let package = ServedPackage {
        files,
        requirements: first.requirements.specifiers.clone(),
        wheelhouse,
        root: None,
        modules,
    };
    Ok((first, Some(package)))
}

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// Resolve the selection in `dir`: for each selected module, its file, its import closure and
/// the package's requirements. Parses every module of the closures, so run it on an
/// inspection stack.
pub fn load(dir: &Path, select: Option<&str>) -> Result<Vec<PackageInput>, GenerateError> {
    let select = select.ok_or_else(|| {
        input(format!(
            "{}: a package directory needs --select; {EXPECTED}",
            dir.display()
        ))
    })?;
    let selections = parse_select(select)?;
    let index = PackageIndex::scan(dir).map_err(input)?;
    let requirements = requirements::find(dir).map_err(|e| input(e.to_string()))?;
    selections
        .into_iter()
        .map(|selection| load_module(dir, &index, selection, requirements.clone()))
        .collect()
}

fn load_module(
    dir: &Path,
    index: &PackageIndex,
    selection: PackageSelection,
    requirements: Requirements,
) -> Result<PackageInput, GenerateError> {
    if !index.contains(&selection.module) {
        let known: Vec<&str> = index.modules().take(12).collect();
        return Err(input(format!(
            "--select: no module {} under {} (modules there: {}{})",
            selection.module,
            dir.display(),
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            },
            if index.modules().count() > known.len() {
                ", …"
            } else {
                ""
            }
        )));
    }
    let declares = !requirements.specifiers.is_empty();
    let alone = index
        .stands_alone(&selection.module, declares)
        .map_err(input)?;
    let closure = match alone {
        true => [selection.module.clone()].into(),
        false => index
            .closure(&[selection.module.as_str()], true)
            .map_err(input)?,
    };
    let mut files = BTreeMap::new();
    let mut source = Vec::new();
    for module in &closure {
        let Some(relative) = index.module_path(module) else {
            continue;
        };
        let path = index.root().join(relative);
        let (bytes, _) = apizr_inspect::source::read_source(&path)
            .map_err(|e| input(format!("{}: {e}", path.display())))?;
        // Keyed by the module name, not by the path under DIR: when DIR is itself a package
        // its modules' names start with its own name, and that is the layout Python imports.
        let base = module.replace('.', "/");
        let key = if index.is_package(module) {
            format!("{base}/__init__.py")
        } else {
            format!("{base}.py")
        };
        if *module == selection.module {
            source = bytes.clone();
        }
        files.insert(key, bytes);
    }
    // The directory's distribution metadata (`*.dist-info/METADATA`), which the worker serves
    // to `importlib.metadata` as an installed distribution would be: readiness v2 proves
    // `importlib.metadata.version(__name__)` only for a module served with these files.
    if !alone {
        files.extend(apizr_inspect::package::dist_info::metadata_files(
            index.root(),
        ));
    }
    Ok(PackageInput {
        module: selection.module,
        selection: selection.functions.join(","),
        source,
        files: (!alone).then_some(files),
        requirements,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_parse_and_refuse_precisely() {
        let ok =
            parse_select("pkg.number:intcomma, pkg.number:ordinal,pkg.number:intcomma").unwrap();
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].module, "pkg.number");
        assert_eq!(ok[0].functions, ["intcomma", "ordinal"]);
        // Several modules: in the order first named, each with its functions.
        let two = parse_select("b.y:g,a.x:f,b.y:h").unwrap();
        let modules: Vec<(&str, &[String])> = two
            .iter()
            .map(|m| (m.module.as_str(), m.functions.as_slice()))
            .collect();
        assert_eq!(
            modules,
            [
                ("b.y", &["g".to_string(), "h".to_string()][..]),
                ("a.x", &["f".to_string()][..])
            ]
        );
        for (text, why) in [
            ("intcomma", "item 1 (\"intcomma\"): no ':'"),
            (
                "pkg.n:f,pkg.n:g:h",
                "item 2 (\"pkg.n:g:h\"): more than one ':'",
            ),
            ("pkg..n:f", "not a dotted name"),
            ("pkg.n:1f", "the function is not an identifier"),
            (
                "a:f,b:f",
                "item 2 (\"b:f\"): a:f is selected too, and a server serves one function per \
                 name (its route, operationId and tool name): select f from one of the two \
                 modules, or generate (or serve) one project per module",
            ),
            ("", "item 1 (\"\"): no ':'"),
        ] {
            let error = parse_select(text).unwrap_err().to_string();
            assert!(error.contains(why), "{text:?}: {error}");
            assert_eq!(parse_select(text).unwrap_err().exit_code(), 2);
        }
    }

    /// Several modules: one package holding the union of their closures (a shared file once),
    /// every module with its own closure; a module that stands alone has none.
    #[test]
    fn several_modules_are_one_package_of_their_closures() {
        let input = |module: &str, files: Option<&[&str]>| PackageInput {
            module: module.into(),
            selection: "f".into(),
            source: module.as_bytes().to_vec(),
            files: files.map(|f| {
                f.iter()
                    .map(|p| (p.to_string(), p.as_bytes().to_vec()))
                    .collect()
            }),
            requirements: Requirements::default(),
        };
        let (first, package) = served(
            vec![
                input("p.a", Some(&["p/__init__.py", "p/a.py", "p/base.py"])),
                input("p.b", Some(&["p/__init__.py", "p/b.py", "p/base.py"])),
                input("q.c", None),
            ],
            BTreeMap::new(),
        )
        .unwrap();
        assert_eq!(first.module, "p.a");
        let package = package.unwrap();
        let files: Vec<&str> = package.files.keys().map(String::as_str).collect();
        assert_eq!(files, ["p/__init__.py", "p/a.py", "p/b.py", "p/base.py"]);
        let modules: Vec<(&str, Option<Vec<String>>)> = package
            .modules
            .iter()
            .map(|m| (m.module.as_str(), m.closure.clone()))
            .collect();
        let closure = |f: &[&str]| Some(f.iter().map(|p| p.to_string()).collect::<Vec<_>>());
        assert_eq!(
            modules,
            [
                ("p.a", closure(&["p/__init__.py", "p/a.py", "p/base.py"])),
                ("p.b", closure(&["p/__init__.py", "p/b.py", "p/base.py"])),
                ("q.c", None),
            ]
        );
        // One module keeps its own shape: no `modules`, and none at all when it stands alone.
        let (_, one) = served(vec![input("p.a", Some(&["p/a.py"]))], BTreeMap::new()).unwrap();
        assert!(one.unwrap().modules.is_empty());
        let (_, alone) = served(vec![input("q.c", None)], BTreeMap::new()).unwrap();
        assert!(alone.is_none());
    }
}
