//! What the workers' standard library binds: `from M import N` raises `ImportError` when `N`
//! is neither a name the module `M` binds nor a submodule of it, and `import a.b` raises
//! `ModuleNotFoundError` when `a.b` does not exist.
//!
//! The table (`stdlib_names.txt`) is generated from CPython 3.11 on Linux by
//! `scripts/gen-stdlib-table.py`, importing each module alone in a fresh `python3 -I -S`
//! (as workers run) on every worker interpreter and keeping what all of them have; a test
//! regenerates it so it cannot rot. A module is listed with the keys of its `__dict__` right
//! after import; a submodule is a line of its own, so `from xml import dom` is valid before
//! `xml.dom` is imported. A module whose import has effects (`this`, `antigravity`,
//! `__main__` modules, ...) is never imported by the generator and stays out of the table:
//! v2 never proves an import of it. A module-level `__getattr__` may bind more names lazily
//! (`concurrent.futures.ThreadPoolExecutor`): those are not in the table and stay unproved.

use std::collections::HashMap;
use std::sync::OnceLock;

const TABLE: &str = include_str!("stdlib_names.txt");

/// The parsed table: module → its sorted names; the packages and submodule names never
/// imported.
struct Table {
    modules: HashMap<&'static str, Vec<&'static str>>,
    skip_roots: Vec<&'static str>,
    skip_parts: Vec<&'static str>,
}

fn table() -> &'static Table {
    static PARSED: OnceLock<Table> = OnceLock::new();
    PARSED.get_or_init(|| {
        let mut out = Table {
            modules: HashMap::new(),
            skip_roots: Vec::new(),
            skip_parts: Vec::new(),
        };
        for line in TABLE.lines().filter(|l| !l.starts_with('#')) {
            let mut words = line.split(' ');
            let Some(head) = words.next() else { continue };
            match head {
                "!roots" => out.skip_roots.extend(words),
                "!parts" => out.skip_parts.extend(words),
                module => {
                    let mut names: Vec<&str> = words.collect();
                    names.sort_unstable();
                    out.modules.insert(module, names);
                }
            }
        }
        out
    })
}

/// What importing a standard-library module (dotted name) does on the workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleStatus {
    /// It imports without effects (every parent package too).
    Known,
    /// It, or a parent, has effects when imported (never proved).
    Effects,
    /// It does not exist on the workers' CPython 3.11 or fails to import there.
    Missing,
}

/// The status of `module` and of its parent packages (`xml.nope`: `xml` is known, the
/// submodule is missing).
pub fn module(module: &str) -> ModuleStatus {
    let table = table();
    let mut parts = module.split('.');
    let root = parts.next().unwrap_or(module);
    if table.skip_roots.contains(&root) || parts.any(|p| table.skip_parts.contains(&p)) {
        return ModuleStatus::Effects;
    }
    // Every parent package is imported first, so each must be known.
    let mut end = 0;
    for part in module.split('.') {
        end += part.len();
        if !table.modules.contains_key(&module[..end]) {
            return ModuleStatus::Missing;
        }
        end += 1;
    }
    ModuleStatus::Known
}

/// Whether `module` binds `name` right after its import (not counting submodules).
pub fn binds(module: &str, name: &str) -> bool {
    table()
        .modules
        .get(module)
        .is_some_and(|names| names.binary_search(&name).is_ok())
}

/// What `from module import name` finds on the workers (`module` known, [`module`]).
pub fn import_from(module: &str, name: &str) -> ModuleStatus {
    let table = table();
    let binds = table
        .modules
        .get(module)
        .is_some_and(|names| names.binary_search(&name).is_ok());
    if binds {
        return ModuleStatus::Known;
    }
    // Not bound: the import system tries the submodule `module.name`.
    self::module(&format!("{module}.{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_knows_modules_names_and_submodules() {
        assert_eq!(module("os"), ModuleStatus::Known);
        assert_eq!(module("os.path"), ModuleStatus::Known);
        assert_eq!(module("xml.dom.minidom"), ModuleStatus::Known);
        assert_eq!(module("xml.nope"), ModuleStatus::Missing);
        assert_eq!(module("msvcrt"), ModuleStatus::Missing);
        assert_eq!(module("this"), ModuleStatus::Effects);
        assert_eq!(module("json.__main__"), ModuleStatus::Effects);
        assert_eq!(import_from("os", "path"), ModuleStatus::Known);
        assert_eq!(import_from("xml", "dom"), ModuleStatus::Known);
        assert_eq!(import_from("collections", "abc"), ModuleStatus::Known);
        assert_eq!(import_from("typing", "TYPE_CHECKING"), ModuleStatus::Known);
        assert_eq!(
            import_from("os", "nonexistent_thing"),
            ModuleStatus::Missing
        );
        assert_eq!(import_from("json", "__main__"), ModuleStatus::Effects);
    }
}
