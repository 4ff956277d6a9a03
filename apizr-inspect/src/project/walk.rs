//! Finding the files of a project and naming their modules.
//!
//! The walk is sequential (listing directories is cheap next to parsing) and never follows
//! symbolic links, so a link cycle or a link out of the tree cannot make it loop or leave the
//! root. It skips what is not the project's own code:
//!
//! * hidden entries (names starting with `.`: `.git`, `.venv`, `.ipynb_checkpoints`, ...);
//! * `__pycache__`, `node_modules`, `site-packages` and `dist-packages`;
//! * virtual environments: any directory holding a `pyvenv.cfg`;
//! * symbolic links, to files or directories.
//!
//! Module names follow Python's import system: `pkg/sub/mod.py` → `pkg.sub.mod`,
//! `pkg/__init__.py` → `pkg`, `nb/analysis.ipynb` → `nb.analysis`. When the root itself is a
//! package (it holds an `__init__.py`) and its directory name is a module name, every name
//! starts with it: inspecting `humanize/` gives `humanize`, `humanize.number`, ..., which is
//! how the package's own imports name them. A path that cannot be imported under a dotted name
//! (a `-` in a name, a `.` inside a directory name, the `__init__.py` of a root that is not a
//! package name, a non-UTF-8 name) yields an error entry instead of a guess.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::{ModuleEntry, ModuleError};
use crate::Note;
use crate::error::InspectError;

/// Directory names that never hold the project's own modules.
const SKIPPED_DIRS: [&str; 4] = [
    "__pycache__",
    "node_modules",
    "site-packages",
    "dist-packages",
];

/// One candidate found by the walk.
#[derive(Debug, Clone)]
pub struct Found {
    /// The path to open (the root joined with the relative path).
    pub path: PathBuf,
    /// Relative to the root, `/`-separated (lossy for non-UTF-8 names).
    pub rel: String,
    /// The dotted module name derived from `rel`, not yet validated.
    pub module: Option<String>,
    /// Set when the entry can not be inspected at all (naming or listing problems).
    pub problem: Option<ModuleError>,
}

/// Every candidate under `root`, sorted by relative path. Fails only if `root` itself can not
/// be listed.
pub fn collect(root: &Path) -> io::Result<Vec<Found>> {
    let metadata = fs::metadata(root)?;
    if !metadata.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            "not a directory",
        ));
    }
    // Read the root eagerly so that an unreadable root is a fatal error.
    let root_entries = fs::read_dir(root)?;
    let package: Vec<String> = root_package(root).into_iter().collect();
    let mut found = Vec::new();
    let mut pending = vec![Pending {
        dir: root.to_path_buf(),
        components: Vec::new(),
        utf8: true,
        entries: Some(root_entries),
    }];
    while let Some(Pending {
        dir,
        components,
        utf8,
        entries,
    }) = pending.pop()
    {
        let entries = match entries {
            Some(entries) => Ok(entries),
            None => fs::read_dir(&dir),
        };
        let entries = match entries {
            Ok(entries) => entries,
            Err(error) => {
                found.push(unreadable(&dir, &components, &error));
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(error) => {
                    found.push(unreadable(&dir, &components, &error));
                    continue;
                }
            };
            let os_name = entry.file_name();
            let child_utf8 = utf8 && os_name.to_str().is_some();
            let name = os_name.to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            // `DirEntry::file_type` does not follow symbolic links.
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            let mut child = components.clone();
            child.push(name);
            if file_type.is_dir() {
                if !is_skipped_dir(&path, child.last().map(String::as_str).unwrap_or("")) {
                    pending.push(Pending {
                        dir: path,
                        components: child,
                        utf8: child_utf8,
                        entries: None,
                    });
                }
            } else if file_type.is_file() && is_source(&path) {
                found.push(candidate(path, &package, child, child_utf8));
            }
        }
    }
    found.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(found)
}

/// A directory waiting to be listed.
struct Pending {
    dir: PathBuf,
    components: Vec<String>,
    /// Every component so far is valid UTF-8.
    utf8: bool,
    /// Already opened (only the root, so that its errors are fatal).
    entries: Option<fs::ReadDir>,
}

fn is_source(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("py" | "ipynb")
    )
}

fn is_skipped_dir(path: &Path, name: &str) -> bool {
    SKIPPED_DIRS.contains(&name) || fs::symlink_metadata(path.join("pyvenv.cfg")).is_ok()
}

/// The root's name when the root is a package: it holds a regular `__init__.py` and its
/// directory name is a module name.
fn root_package(root: &Path) -> Option<String> {
    let init = root.join("__init__.py");
    let metadata = fs::symlink_metadata(&init).ok()?;
    if !metadata.is_file() {
        return None;
    }
    crate::source::package_name(&init)
}

fn candidate(path: PathBuf, package: &[String], components: Vec<String>, utf8: bool) -> Found {
    let rel = components.join("/");
    if !utf8 {
        return Found {
            path,
            rel,
            module: None,
            problem: Some(ModuleError {
                kind: "path",
                message: "the path is not valid UTF-8, so it has no module name".into(),
                position: None,
            }),
        };
    }
    let qualified: Vec<String> = package.iter().cloned().chain(components).collect();
    match module_name(&qualified) {
        Ok(module) => Found {
            path,
            rel,
            module: Some(module),
            problem: None,
        },
        Err((module, problem)) => Found {
            path,
            rel,
            module,
            problem: Some(problem),
        },
    }
}

fn unreadable(dir: &Path, components: &[String], error: &io::Error) -> Found {
    Found {
        path: dir.to_path_buf(),
        rel: components.join("/"),
        module: None,
        problem: Some(ModuleError {
            kind: "read",
            message: format!("could not list the directory: {error}"),
            position: None,
        }),
    }
}

/// The dotted module name of a relative path given as its components (the last one is the file
/// name). On failure, returns the best candidate name (if any) and the problem.
pub fn module_name(components: &[String]) -> Result<String, (Option<String>, ModuleError)> {
    let mut parts: Vec<&str> = components.iter().map(String::as_str).collect();
    if let Some(last) = parts.pop() {
        let stem = last
            .strip_suffix(".py")
            .or_else(|| last.strip_suffix(".ipynb"))
            .unwrap_or(last);
        if stem != "__init__" {
            parts.push(stem);
        }
    }
    if parts.is_empty() {
        return Err((
            None,
            ModuleError {
                kind: "module_name",
                message: "an `__init__` file at the root has no module name of its own; \
                          inspect the parent directory instead"
                    .into(),
                position: None,
            },
        ));
    }
    let name = parts.join(".");
    if parts
        .iter()
        .any(|part| part.is_empty() || part.contains('.'))
    {
        let error = InspectError::ModuleName { name: name.clone() };
        return Err((Some(name), ModuleError::from_inspect(&error)));
    }
    Ok(name)
}

/// Two files that map to one module name (`a.py` and `a/__init__.py`, `m.py` and `m.ipynb`):
/// Python imports only one of them, so each gets a note naming the others.
pub(super) fn note_shared_module_names(entries: &mut [ModuleEntry]) {
    let mut by_name: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    for (index, entry) in entries.iter().enumerate() {
        if let Some(module) = &entry.module {
            by_name.entry(module.clone()).or_default().push(index);
        }
    }
    for (module, indexes) in by_name.into_iter().filter(|(_, i)| i.len() > 1) {
        let paths: Vec<String> = indexes
            .iter()
            .filter_map(|i| entries.get(*i).map(|e| e.path.clone()))
            .collect();
        for index in indexes {
            let Some(entry) = entries.get_mut(index) else {
                continue;
            };
            let others: Vec<&str> = paths
                .iter()
                .filter(|p| **p != entry.path)
                .map(String::as_str)
                .collect();
            entry.notes.push(Note {
                position: None,
                message: format!(
                    "module name `{module}` is also the name of {}; Python imports only one of \
                     them (a package directory wins over a module file)",
                    others.join(", ")
                ),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(path: &str) -> Result<String, Option<String>> {
        let components: Vec<String> = path.split('/').map(str::to_string).collect();
        module_name(&components).map_err(|(name, _)| name)
    }

    #[test]
    fn names_follow_the_import_system() {
        assert_eq!(name("mod.py"), Ok("mod".into()));
        assert_eq!(name("pkg/sub/mod.py"), Ok("pkg.sub.mod".into()));
        assert_eq!(name("pkg/__init__.py"), Ok("pkg".into()));
        assert_eq!(name("nb/analysis.ipynb"), Ok("nb.analysis".into()));
    }

    #[test]
    fn unimportable_paths_are_refused() {
        assert_eq!(name("__init__.py"), Err(None));
        assert_eq!(name("foo.bar/x.py"), Err(Some("foo.bar.x".into())));
        assert_eq!(name("a.b.py"), Err(Some("a.b".into())));
    }
}
