//! The import graph of a package directory: which local Python files a module imports, and
//! which local modules importing it executes. One resolver, shared by readiness v2 (it assesses
//! the modules an import runs) and by bundling (it ships them). Never executes anything.
//!
//! * [`PackageIndex::scan`] — every `.py` module under a root (the directory that would be on
//!   `sys.path`), named like Python names it: `a/b/__init__.py` is `a.b`, `a/b/c.py` is
//!   `a.b.c`. When the root itself is a package (it holds an `__init__.py` and its directory
//!   name is a module name), every name starts with it, as [`crate::project`] names them.
//! * [`PackageIndex::imports_of`] — every import statement of one module, resolved
//!   ([`resolve`]).
//! * [`PackageIndex::closure`] — the local modules importing some modules executes ([`closure`]).
//! * [`PackageIndex::stands_alone`] — whether a module needs that closure at all: a module
//!   that imports no file of the directory (of a package declaring no requirements) is served
//!   as a single file, without its parents' `__init__`.
//!
//! The rules follow CPython's import system, statically:
//!
//! * importing `a.b.c` runs `a/__init__.py`, then `a/b/__init__.py`, then `a/b/c.py`;
//! * a relative import is resolved against the importing module's package (itself for an
//!   `__init__`, else its parent); one dot per level, climbing above the top-level package is
//!   an error Python raises at import (`ImportError: attempted relative import beyond
//!   top-level package`), so it is reported as [`ImportTarget::Unresolvable`];
//! * `from p import x` imports the submodule `p.x` when the directory has one, else it reads
//!   the name `x` of `p`;
//! * a package directory wins over a module file of the same name (`a/__init__.py` over
//!   `a.py`), as the path finder checks directories first;
//! * names the index does not know are [`ImportTarget::External`]: whether that is the stdlib
//!   or a third-party distribution is the caller's business.
//!
//! Not seen (dynamic, so a caller must not treat the graph as complete for them):
//! `importlib.import_module(...)`, `__import__(...)`, `sys.path` edits, namespace packages
//! (directories without `__init__.py` are not modules, but their `.py` files are).

mod closure;
mod declared;
pub mod dist_info;
pub mod requirements;
mod resolve;
#[cfg(test)]
mod tests;
mod wheels;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use declared::declared_dependencies;
pub use requirements::{Requirements, RequirementsError};
pub use resolve::{ImportTarget, ImportTime, ResolvedImport};
pub use wheels::{WheelError, wheel_files_imports, wheel_imports, wheelhouse_imports};

use crate::error::InspectError;

/// Why the index could not be built or queried. Every variant names the path or module.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// The root is missing, not a directory, or cannot be listed.
    #[error("{}: {message}", path.display())]
    Root { path: PathBuf, message: String },
    /// A module name the index does not hold.
    #[error("no module `{name}` under the package root")]
    UnknownModule { name: String },
    /// A module's file could not be read, decoded or parsed.
    #[error("{}{}: {error}", path.display(), at(error))]
    Module { path: PathBuf, error: InspectError },
}

/// `:line:column` of an inspection error, when it has one.
fn at(error: &InspectError) -> String {
    error
        .position()
        .map(|p| format!(":{}:{}", p.line, p.column))
        .unwrap_or_default()
}

/// One module of the index.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    /// Relative to the root.
    path: PathBuf,
    /// Its file is an `__init__.py`: relative imports resolve against the module itself.
    is_package: bool,
}

/// Every module of a package directory, by dotted name (`pkg`, `pkg.sub.mod`).
#[derive(Debug, Clone)]
pub struct PackageIndex {
    root: PathBuf,
    modules: BTreeMap<String, Entry>,
    by_path: BTreeMap<PathBuf, String>,
}

impl PackageIndex {
    /// Scans `root` for `.py` files. The order is deterministic; hidden entries, `__pycache__`,
    /// virtual environments, `site-packages` and symbolic links are skipped (the walk of
    /// [`crate::project::walk`]); files whose path has no dotted module name (`my-mod.py`) are
    /// left out, as Python cannot import them.
    pub fn scan(root: &Path) -> Result<Self, PackageError> {
        let found = crate::project::walk::collect(root).map_err(|e| PackageError::Root {
            path: root.to_path_buf(),
            message: e.to_string(),
        })?;
        let mut index = PackageIndex {
            root: root.to_path_buf(),
            modules: BTreeMap::new(),
            by_path: BTreeMap::new(),
        };
        for found in found {
            let (Some(module), None) = (found.module, found.problem) else {
                continue;
            };
            let rel = PathBuf::from(&found.rel);
            if rel.extension().and_then(|e| e.to_str()) != Some("py") {
                continue;
            }
            let Ok(module) = crate::source::validate_module_name(&module) else {
                continue;
            };
            let is_package = rel.file_name().and_then(|n| n.to_str()) == Some("__init__.py");
            // `a/__init__.py` and `a.py` both name `a`: the package wins, as in CPython.
            if let Some(existing) = index.modules.get(&module)
                && (existing.is_package || !is_package)
            {
                continue;
            }
            if let Some(old) = index.modules.insert(
                module.clone(),
                Entry {
                    path: rel.clone(),
                    is_package,
                },
            ) {
                index.by_path.remove(&old.path);
            }
            index.by_path.insert(rel, module);
        }
        Ok(index)
    }

    /// The directory scanned.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Every module name, sorted.
    pub fn modules(&self) -> impl Iterator<Item = &str> {
        self.modules.keys().map(String::as_str)
    }

    /// Whether `dotted` is a module of the index.
    pub fn contains(&self, dotted: &str) -> bool {
        self.modules.contains_key(dotted)
    }

    /// The file of module `dotted`, relative to the root.
    pub fn module_path(&self, dotted: &str) -> Option<&Path> {
        self.modules.get(dotted).map(|e| e.path.as_path())
    }

    /// Whether `dotted` is a package (its file is an `__init__.py`).
    pub fn is_package(&self, dotted: &str) -> bool {
        self.modules.get(dotted).is_some_and(|e| e.is_package)
    }

    /// The module name of a file under the root (`relative` as `module_path` returns it,
    /// `/`-separated).
    pub fn module_of(&self, relative: &Path) -> Option<&str> {
        let normal: PathBuf = relative
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect();
        self.by_path.get(&normal).map(String::as_str)
    }

    /// The package relative imports of `dotted` resolve against: the module itself for a
    /// package, else its parent (`""` for a top-level module, which has none).
    pub fn package_of<'a>(&self, dotted: &'a str) -> &'a str {
        if self.is_package(dotted) {
            return dotted;
        }
        dotted.rsplit_once('.').map_or("", |(parent, _)| parent)
    }

    /// Every import statement of module `dotted`, resolved, in source order. Reads and parses
    /// the file (run it on an inspection stack, see [`crate::on_inspect_stack`]).
    pub fn imports_of(&self, dotted: &str) -> Result<Vec<ResolvedImport>, PackageError> {
        let parsed = self.parse(dotted)?;
        Ok(self.imports_in(&parsed))
    }

    /// [`Self::imports_of`] for a module already parsed (its `module` names it).
    pub fn imports_in(&self, parsed: &crate::ParsedModule) -> Vec<ResolvedImport> {
        resolve::imports(self, parsed)
    }

    /// Reads, decodes and parses module `dotted` under the inspection budgets.
    pub fn parse(&self, dotted: &str) -> Result<crate::ParsedModule, PackageError> {
        let entry = self
            .modules
            .get(dotted)
            .ok_or_else(|| PackageError::UnknownModule {
                name: dotted.into(),
            })?;
        let path = self.root.join(&entry.path);
        let failed = |error| PackageError::Module {
            path: path.clone(),
            error,
        };
        let (bytes, _) = crate::source::read_source(&path).map_err(failed)?;
        let text = crate::decode::decode_python(&bytes).map_err(failed)?;
        crate::budget::prescan(&text).map_err(failed)?;
        let parsed = crate::ParsedModule::parse(text, dotted.to_string()).map_err(failed)?;
        crate::budget::check_structure(&parsed).map_err(failed)?;
        Ok(parsed)
    }

    /// The local modules that importing `roots` executes, transitively: every parent package's
    /// `__init__` (importing `a.b.c` runs `a` and `a.b`), the modules their import-time
    /// imports name, and (with `include_call_time`) those imported in function bodies and
    /// under `if TYPE_CHECKING:` too. Cycles are followed once. Sorted.
    pub fn closure(
        &self,
        roots: &[&str],
        include_call_time: bool,
    ) -> Result<std::collections::BTreeSet<String>, PackageError> {
        closure::closure(self, roots, include_call_time)
    }

    /// Module `dotted` is served as a single file: it is not a package's `__init__`, it imports
    /// no module of the directory (no relative import, none resolving to one of its modules),
    /// and the directory `declares` no requirements (a single file has no environment to
    /// install them into; a bundle that installs them is the package bundle). It is then
    /// served as `FILE --module-name DOTTED` serves it: under its dotted name, its parents
    /// empty modules, so their `__init__`, which it never reads, never runs. The one rule of
    /// bundling (`apizr_codegen::package`) and of readiness v2's parent obligation.
    pub fn stands_alone(&self, dotted: &str, declares: bool) -> Result<bool, PackageError> {
        Ok(self.stands_alone_with(dotted, &self.imports_of(dotted)?, declares))
    }

    /// [`Self::stands_alone`] for a module whose imports are resolved already.
    pub fn stands_alone_with(
        &self,
        dotted: &str,
        imports: &[ResolvedImport],
        declares: bool,
    ) -> bool {
        !declares && !self.is_package(dotted) && closure::stands_alone(imports)
    }

    /// `dotted` and the packages above it that the index holds, outermost first
    /// (`a.b.c` → `a`, `a.b`, `a.b.c`).
    pub fn with_parents<'a>(&self, dotted: &'a str) -> Vec<&'a str> {
        let mut out = Vec::new();
        for (index, _) in dotted.match_indices('.') {
            if let Some(parent) = dotted.get(..index)
                && self.contains(parent)
            {
                out.push(parent);
            }
        }
        if self.contains(dotted) {
            out.push(dotted);
        }
        out
    }
}
