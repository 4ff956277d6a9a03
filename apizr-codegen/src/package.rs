//! A module of a package directory as the served source: `apizr generate|serve rest|mcp DIR
//! --select pkg.mod:func,…`.
//!
//! DIR is what would be on `sys.path`. The selection names functions of one module by its
//! dotted name; the bundle gets that module and every local file importing it runs (its
//! import closure, parent packages' `__init__.py` included, call-time imports too, from the one
//! resolver [`apizr_inspect::package`]), keyed by path under the `sys.path` root. Third-party
//! requirements come from `apizr_inspect::package::requirements`.
//!
//! Why one module per server: a bundle binds one executable (its digest chain, the worker's
//! module) and the contracts planned from its inspection; functions of two modules are two
//! servers. The refusal says so rather than serving half.

use std::collections::BTreeMap;
use std::path::Path;

use apizr_inspect::package::{PackageIndex, Requirements, requirements};

use crate::model::{GenerateError, input};

/// What `--select` names on a package directory: one module and its functions, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageSelection {
    pub module: String,
    pub functions: Vec<String>,
}

/// The module to serve, the files importing it executes and the package's requirements.
#[derive(Debug, Clone)]
pub struct PackageInput {
    pub module: String,
    /// The functions, as the planner's `--select` text (`f,g`).
    pub selection: String,
    /// The module's own bytes (the executable).
    pub source: Vec<u8>,
    /// Path under the `sys.path` root (`pkg/__init__.py`) → bytes; the module's file included.
    pub files: BTreeMap<String, Vec<u8>>,
    pub requirements: Requirements,
}

const EXPECTED: &str = "expected MODULE:FUNCTION[,MODULE:FUNCTION…] with a dotted module name \
                        of the package directory, e.g. humanize.number:intcomma";

/// Parse `--select` for a package directory. Every item is `MODULE:FUNCTION`; all items name
/// the same module.
pub fn parse_select(text: &str) -> Result<PackageSelection, GenerateError> {
    let mut module: Option<String> = None;
    let mut functions = Vec::new();
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
        match &module {
            Some(first) if first != name => {
                return Err(input(format!(
                    "--select names functions of two modules ({first} and {name}); a server \
                     serves functions of one module: generate or serve one per module"
                )));
            }
            Some(_) => {}
            None => module = Some(name.to_string()),
        }
        if !functions.iter().any(|f| f == function) {
            functions.push(function.to_string());
        }
    }
    let module = module.ok_or_else(|| input(format!("--select is empty; {EXPECTED}")))?;
    Ok(PackageSelection { module, functions })
}

/// Requirements under an `apizr.execution/v2` policy are refused, by `generate` and `serve`
/// alike: every call runs in the `--runtime-image`, a worker image `apizr image build` makes
/// from a base image with no virtual environment for the package's requirements, so the calls
/// would fail to import them. Nothing ties a runtime image to a requirement set yet (a label
/// the server checks would), so serving would be a promise the image does not keep.
pub fn refuse_requirements_in_containers(requirements: &[String]) -> Result<(), GenerateError> {
    if requirements.is_empty() {
        return Ok(());
    }
    Err(input(format!(
        "the package requires {} and an apizr.execution/v2 policy runs every call in the \
         --runtime-image, which has no environment with them (apizr image build installs \
         none): use a v1 policy or direct mode, where the server's image installs them \
         (generate) or APIZR_PYTHON names a virtual environment with them (serve)",
        requirements.join(", ")
    )))
}

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// Resolve the selection in `dir`: the module's file, its import closure and the
/// requirements. Parses every module of the closure, so run it on an inspection stack.
pub fn load(dir: &Path, select: Option<&str>) -> Result<PackageInput, GenerateError> {
    let select = select.ok_or_else(|| {
        input(format!(
            "{}: a package directory needs --select; {EXPECTED}",
            dir.display()
        ))
    })?;
    let selection = parse_select(select)?;
    let index = PackageIndex::scan(dir).map_err(input)?;
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
    let closure = index
        .closure(&[selection.module.as_str()], true)
        .map_err(input)?;
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
    Ok(PackageInput {
        module: selection.module,
        selection: selection.functions.join(","),
        source,
        files,
        requirements: requirements::find(dir).map_err(|e| input(e.to_string()))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_parse_and_refuse_precisely() {
        let ok =
            parse_select("pkg.number:intcomma, pkg.number:ordinal,pkg.number:intcomma").unwrap();
        assert_eq!(ok.module, "pkg.number");
        assert_eq!(ok.functions, ["intcomma", "ordinal"]);
        for (text, why) in [
            ("intcomma", "item 1 (\"intcomma\"): no ':'"),
            (
                "pkg.n:f,pkg.n:g:h",
                "item 2 (\"pkg.n:g:h\"): more than one ':'",
            ),
            ("pkg..n:f", "not a dotted name"),
            ("pkg.n:1f", "the function is not an identifier"),
            ("a:f,b:g", "two modules (a and b)"),
            ("", "item 1 (\"\"): no ':'"),
        ] {
            let error = parse_select(text).unwrap_err().to_string();
            assert!(error.contains(why), "{text:?}: {error}");
            assert_eq!(parse_select(text).unwrap_err().exit_code(), 2);
        }
    }
}
