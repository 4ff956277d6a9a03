//! Standard-library classes a class statement may name as bases: the facts class creation
//! depends on, generated from the workers' CPython 3.11 by `scripts/gen-stdlib-table.py`
//! (`stdlib_classes.txt`; a test regenerates it).
//!
//! A class is listed only when subclassing it runs no code but `type.__new__` or
//! `abc.ABCMeta.__new__` (which only records abstract methods): its metaclass is `type` or
//! `ABCMeta`, the `__init_subclass__` its MRO finds is `object`'s, and it is subclassable
//! (`Py_TPFLAGS_BASETYPE`: `bool`, `types.FunctionType` are not, `TypeError`). With it: its
//! MRO (for the C3 merge, [`super::mro::Lineage`]), its chain of "solid bases" (CPython's
//! `solid_base`: the nearest type along `__base__` that adds fields to the instance layout;
//! two bases whose solid bases are not on one chain raise `TypeError: multiple bases have
//! instance lay-out conflict`, [`super::mro::Layout`]) and whether its instances hold a
//! variable number of items (nonempty `__slots__` in a subclass raise, [`super::slots`]).
//! `typing` aliases (`typing.MutableMapping[str, str]`) stand for their origin class through
//! `__mro_entries__` (and `Generic`, decided in [`super::class`]).

use std::collections::HashMap;
use std::sync::OnceLock;

const TABLE: &str = include_str!("stdlib_classes.txt");

/// A subclassable standard-library class.
#[derive(Debug)]
pub struct StdlibClass {
    /// `module.qualname` of the class object (its identity).
    pub key: &'static str,
    /// Its metaclass is `abc.ABCMeta` (else `type`).
    pub abc_meta: bool,
    /// `__itemsize__` is not zero (`int`, `bytes`, `tuple`).
    pub variable: bool,
    /// Its solid bases, nearest first, `object` left out (empty: no layout of its own).
    pub solid: Vec<&'static str>,
    /// Its MRO, the class first, `object` left out.
    pub mro: Vec<&'static str>,
}

impl StdlibClass {
    /// An exception class (`BaseException` in its MRO).
    pub fn is_exception(&self) -> bool {
        self.mro.contains(&"builtins.BaseException")
    }
}

struct Table {
    classes: HashMap<&'static str, StdlibClass>,
    /// Access name → key, for names that are not the class's own (`types.ModuleType`).
    names: HashMap<&'static str, &'static str>,
    /// typing alias → origin key (`typing.List` → `builtins.list`).
    aliases: HashMap<&'static str, &'static str>,
}

fn list(field: &'static str) -> Vec<&'static str> {
    if field == "-" {
        Vec::new()
    } else {
        field.split(',').collect()
    }
}

fn table() -> &'static Table {
    static PARSED: OnceLock<Table> = OnceLock::new();
    PARSED.get_or_init(|| {
        let mut out = Table {
            classes: HashMap::new(),
            names: HashMap::new(),
            aliases: HashMap::new(),
        };
        for line in TABLE.lines().filter(|l| !l.starts_with('#')) {
            let words: Vec<&'static str> = line.split(' ').collect();
            match words.as_slice() {
                ["class", key, meta, variable, solid, mro] => {
                    let mut full = vec![*key];
                    full.extend(list(mro));
                    out.classes.insert(
                        key,
                        StdlibClass {
                            key,
                            abc_meta: *meta == "abc.ABCMeta",
                            variable: *variable == "var",
                            solid: list(solid),
                            mro: full,
                        },
                    );
                }
                ["as", name, key] => {
                    out.names.insert(name, key);
                }
                ["alias", name, origin] => {
                    out.aliases.insert(name, origin);
                }
                _ => {}
            }
        }
        out
    })
}

/// The class a qualified name (`http.server.HTTPServer`, `types.ModuleType`) is bound to,
/// when subclassing it is known to run nothing foreign.
pub fn class(qualified: &str) -> Option<&'static StdlibClass> {
    let table = table();
    let key = table.names.get(qualified).copied().unwrap_or(qualified);
    table.classes.get(key)
}

/// The origin class of a `typing` alias (`typing.MutableMapping` →
/// `collections.abc.MutableMapping`), when subclassing it is known to run nothing foreign.
pub fn alias_origin(qualified: &str) -> Option<&'static StdlibClass> {
    let table = table();
    table.classes.get(table.aliases.get(qualified)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_the_facts_class_creation_depends_on() {
        let module = class("types.ModuleType").unwrap();
        assert_eq!(module.key, "builtins.module");
        assert_eq!(module.solid, ["builtins.module"]);
        let key_error = class("builtins.KeyError").unwrap();
        assert!(key_error.is_exception());
        assert_eq!(key_error.solid, ["builtins.BaseException"]);
        assert_eq!(
            class("builtins.OSError").unwrap().solid,
            ["builtins.OSError", "builtins.BaseException"]
        );
        assert!(class("builtins.int").unwrap().variable);
        assert!(class("http.server.HTTPServer").unwrap().solid.is_empty());
        assert!(class("builtins.bool").is_none(), "final");
        assert!(class("enum.Enum").is_none(), "EnumType metaclass");
        let mapping = alias_origin("typing.MutableMapping").unwrap();
        assert_eq!(mapping.key, "collections.abc.MutableMapping");
        assert!(mapping.abc_meta);
    }
}
