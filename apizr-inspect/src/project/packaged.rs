//! Readiness v2 over a directory: modules are assessed with what their local imports run
//! ([`crate::readiness::v2::package`] states the rule and why it is sound).
//!
//! 1. The import graph: every module's resolved imports ([`PackageIndex`]); an import-time
//!    import of local module `T` is an edge to `T` and to each parent package of `T` (they
//!    run first) except the importer's own ancestors (they started before it). Its strongly
//!    connected components say which imports may meet a half-initialised module.
//! 2. First pass, in dependency order (a module after the modules of other components it reads
//!    names from or binds as submodules, for a later `m.name`; acyclic because reads inside a
//!    component are refused): each module is assessed with the exports of those before it;
//!    the pass yields whether each top level is own-proved and what it exports.
//! 3. `closure_safe`: the modules whose import-time closure (parents included) is own-proved.
//! 4. Second pass: the final report of every module whose verdict depends on other modules
//!    (it has a parent package or local or third-party imports); the others keep the first.
//!
//! Both passes run each level in parallel; the order of entries is the walk's. The second
//! pass can be limited to some modules (`serve DIR` and `generate DIR` want the verdict on the
//! modules they serve, [`super::selected`]); the first always covers the whole index, since a
//! module's verdict depends on every module its import runs.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use memchr::memmem;
use rayon::prelude::*;

use super::Progress;
use super::walk::Found;
use crate::package::{ImportTime, PackageIndex, ResolvedImport};
use crate::readiness::v2::interp::{Settled, Use};
use crate::readiness::v2::package::{
    Exports, PackageContext, PackageOutcome, local_target, reads_name,
};
use crate::{Built, Earlier, ParsedModule};

/// Inspects one entry with a package context, given what an earlier step computed for it
/// (the graph step's parse, the first pass's [`Built`]): what is kept of it, what v2 learned
/// and, with a [`Keep`] that has room, what the second pass may reuse.
pub(super) type Inspect<'f, T> =
    dyn Fn(&Found, Option<&PackageContext>, Earlier, Option<&Keep>) -> Inspected<T> + Sync + 'f;

/// What [`Inspect`] returns.
pub(super) type Inspected<T> = (T, Option<PackageOutcome>, Option<Box<Built>>);

/// The graph step parses a module to read its imports; the first pass inspects it again.
/// Parses are kept for it while their texts total at most this many bytes (parsing is most
/// of what inspecting a module costs; past the budget a module is parsed twice rather than
/// holding the trees of a huge directory in memory). The first pass's work on modules the
/// second pass may assess again is kept under a budget of the same size ([`Keep`]).
const KEPT_PARSES_BYTES: usize = 64 << 20;

/// Room for what the first pass built of modules whose verdict assumed something about other
/// modules (the second pass assesses them again unless the assumption holds): their texts
/// total at most [`KEPT_PARSES_BYTES`]. Past it, the second pass reads and parses again.
pub(super) struct Keep(AtomicUsize);

impl Keep {
    /// Reserves room for one module of `bytes` of text; false when there is none.
    pub(super) fn reserve(&self, bytes: usize) -> bool {
        self.0.fetch_add(bytes, Ordering::Relaxed) + bytes <= KEPT_PARSES_BYTES
    }
}

/// Which entries the second pass assesses (and the result holds).
pub(super) type Wanted<'f> = dyn Fn(&Found) -> bool + Sync + 'f;

/// The entries of `found` (sorted by path) that are `wanted`, assessed package-aware, in the
/// walk's order.
pub(super) fn inspect_all<T: Send>(
    index: &PackageIndex,
    (declared, provides): (&BTreeSet<String>, &BTreeMap<String, String>),
    found: Vec<Found>,
    (progress, wanted): (&(dyn Fn(Progress) + Sync), &Wanted),
    inspect: &Inspect<T>,
) -> Vec<T> {
    let total = found.iter().filter(|f| wanted(f)).count();
    let done = AtomicUsize::new(0);
    let finish = |entry: T| {
        let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
        progress(Progress {
            done: finished,
            total,
        });
        entry
    };
    // Which entries are the index's modules (a shadowed `a.py` next to `a/__init__.py`, a
    // notebook, an unimportable name are not: they are assessed without the package).
    let module_of: Vec<Option<String>> = found
        .iter()
        .map(|f| {
            index
                .module_of(std::path::Path::new(&f.rel))
                .map(str::to_string)
        })
        .collect();
    let names: Vec<&str> = index.modules().collect();
    let tops = local_tops(&names);
    let budget = AtomicUsize::new(0);
    let parsed: Vec<(&str, Vec<ResolvedImport>, Option<ParsedModule>)> = names
        .par_iter()
        .filter(|m| may_import_locally(index, m, &tops))
        .filter_map(|m| {
            let parsed = index.parse(m).ok()?;
            let imports = index.imports_in(&parsed);
            let size = parsed.text.len();
            let keep = budget.fetch_add(size, Ordering::Relaxed) + size <= KEPT_PARSES_BYTES;
            Some((*m, imports, keep.then_some(parsed)))
        })
        .collect();
    let mut imports: HashMap<&str, Vec<ResolvedImport>> = HashMap::new();
    let mut kept: HashMap<&str, Mutex<Option<ParsedModule>>> = HashMap::new();
    for (module, resolved, parsed) in parsed {
        imports.insert(module, resolved);
        if let Some(parsed) = parsed {
            kept.insert(module, Mutex::new(Some(parsed)));
        }
    }
    // Each kept parse is used once, by the module's first-pass inspection.
    let take = |module: Option<&String>| {
        let parsed = (|| kept.get(module?.as_str())?.lock().ok()?.take())();
        parsed.map_or(Earlier::Nothing, Earlier::Parsed)
    };
    let keep = Keep(AtomicUsize::new(0));
    let graph = Graph::new(index, &names, &imports);
    let by_module: HashMap<&str, usize> = module_of
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m.as_deref().map(|m| (m, i)))
        .collect();

    // First pass, level by level.
    let mut exports: HashMap<String, Exports> = HashMap::new();
    let mut own_proved: HashSet<String> = HashSet::new();
    let mut not_proved: HashSet<&str> = HashSet::new();
    let mut first: Vec<Option<T>> = found.iter().map(|_| None).collect();
    let mut built: Vec<Option<Box<Built>>> = found.iter().map(|_| None).collect();
    let mut assumptions: HashMap<usize, (BTreeSet<String>, BTreeSet<String>)> = HashMap::new();
    let mut interpreted: BTreeMap<String, Vec<(u32, Use)>> = BTreeMap::new();
    for level in graph.levels(&names) {
        let ctx = PackageContext {
            index,
            component: &graph.component,
            exports: std::mem::take(&mut exports),
            closure_safe: None,
            closure_unsafe: graph.running_any(index, &names, &not_proved),
            declared,
            provides,
            settled: None,
        };
        let results: Vec<(usize, Inspected<T>)> = level
            .par_iter()
            .filter_map(|m| by_module.get(m).copied())
            .map(|i| {
                let earlier = take(module_of[i].as_ref());
                (i, inspect(&found[i], Some(&ctx), earlier, Some(&keep)))
            })
            .collect();
        exports = ctx.exports;
        for (i, (entry, outcome, kept)) in results {
            built[i] = kept;
            if let (Some(module), Some(outcome)) = (&module_of[i], outcome) {
                if !outcome.interpreted.is_empty() {
                    interpreted.insert(module.clone(), outcome.interpreted);
                }
                if outcome.own_proved {
                    own_proved.insert(module.clone());
                    exports.insert(module.clone(), outcome.exports);
                } else if let Some(name) = names.iter().find(|n| **n == module.as_str()) {
                    not_proved.insert(name);
                }
                assumptions.insert(i, (outcome.assumed, outcome.missing));
            }
            first[i] = Some(entry);
        }
    }

    let (settled, revoked) = settle(
        index,
        &graph,
        &imports,
        &interpreted,
        (&mut own_proved, &mut exports),
    );
    let closure_safe: HashSet<String> = names
        .iter()
        .filter(|m| {
            graph
                .closure(index, m)
                .iter()
                .all(|n| own_proved.contains(*n))
        })
        .map(|m| m.to_string())
        .collect();
    let ctx = PackageContext {
        index,
        component: &graph.component,
        exports,
        closure_safe: Some(closure_safe),
        closure_unsafe: HashSet::new(),
        declared,
        provides,
        settled: Some(settled),
    };
    // The first verdict stands unless it assumed a closure that is not safe, or needed
    // exports that are known now.
    let stands = |i: usize| {
        let revoked = module_of[i].as_ref().is_some_and(|m| revoked.contains(m));
        !revoked
            && assumptions.get(&i).is_some_and(|(assumed, missing)| {
                assumed
                    .iter()
                    .all(|m| ctx.closure_safe.as_ref().is_some_and(|s| s.contains(m)))
                    && missing.iter().all(|m| !ctx.exports.contains_key(m))
            })
    };
    first
        .into_par_iter()
        .zip(built)
        .enumerate()
        .filter(|(i, _)| wanted(&found[*i]))
        .map(|(i, (first, built))| {
            let earlier = built.map_or(Earlier::Nothing, Earlier::Built);
            let entry = match (&module_of[i], first) {
                (Some(_), Some(first)) if stands(i) => first,
                (Some(_), _) => inspect(&found[i], Some(&ctx), earlier, None).0,
                (None, _) => inspect(&found[i], None, Earlier::Nothing, None).0,
            };
            finish(entry)
        })
        .collect()
}

/// What the first pass's interpreted calls need of each other ([`crate::readiness::v2::interp`]
/// states the rules): the dicts more than one interpreted statement touches (one changing
/// them) are contested, and an `import_module` is refused unless its target's closure is
/// own-proved and cannot meet the importer half-initialised. A module with a refused use
/// loses its own proof (and exports); to a fixed point, since an import's closure may hold a
/// module that lost it. Returns the settlement and the modules that lost their proof.
fn settle(
    index: &PackageIndex,
    graph: &Graph,
    imports: &HashMap<&str, Vec<ResolvedImport>>,
    interpreted: &BTreeMap<String, Vec<(u32, Use)>>,
    (own_proved, exports): (&mut HashSet<String>, &mut HashMap<String, Exports>),
) -> (Settled, HashSet<String>) {
    let mut settled = Settled::default();
    for (module, uses) in interpreted {
        for (statement, used) in uses {
            settled
                .uses
                .insert((module.clone(), *statement), used.clone());
        }
    }
    // Per dict: the statements (module, offset) touching it, and whether one writes it.
    type Touches<'u> = (BTreeSet<(&'u str, u32)>, bool);
    let mut touched: HashMap<&(String, u32), Touches> = HashMap::new();
    for (module, uses) in interpreted {
        for (statement, used) in uses {
            for (dict, write) in used
                .reads
                .iter()
                .map(|d| (d, false))
                .chain(used.writes.iter().map(|d| (d, true)))
            {
                let entry = touched.entry(dict).or_default();
                entry.0.insert((module.as_str(), *statement));
                entry.1 |= write;
            }
        }
    }
    settled.contested = touched
        .into_iter()
        .filter(|(_, (statements, write))| *write && statements.len() > 1)
        .map(|(dict, _)| dict.clone())
        .collect();
    let mut revoked = HashSet::new();
    loop {
        let mut changed = false;
        for (module, uses) in interpreted {
            if !own_proved.contains(module) {
                continue;
            }
            let mut bad = false;
            for (_, used) in uses {
                bad |= used
                    .reads
                    .iter()
                    .chain(&used.writes)
                    .any(|d| settled.contested.contains(d));
                for target in &used.dynamic {
                    if !dynamic_import_ok(index, graph, imports, own_proved, module, target) {
                        settled
                            .refused_imports
                            .insert((module.clone(), target.clone()));
                        bad = true;
                    }
                }
            }
            if bad {
                own_proved.remove(module);
                exports.remove(module);
                revoked.insert(module.clone());
                changed = true;
            }
        }
        if !changed {
            return (settled, revoked);
        }
    }
}

/// `importlib.import_module(target)` run by `module`'s top level: the modules it runs (the
/// target, its parents that are not `module` or above it, and their import-time closure)
/// are own-proved, do not include `module`, and import no name from `module` or a package
/// above it (those may be half-initialised while `module` runs).
fn dynamic_import_ok(
    index: &PackageIndex,
    graph: &Graph,
    imports: &HashMap<&str, Vec<ResolvedImport>>,
    own_proved: &HashSet<String>,
    module: &str,
    target: &str,
) -> bool {
    let above = |p: &str| p == module || module.starts_with(&format!("{p}."));
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut stack: Vec<&str> = index
        .with_parents(target)
        .into_iter()
        .filter(|p| !above(p))
        .collect();
    while let Some(next) = stack.pop() {
        if seen.insert(next) {
            stack.extend(graph.runs.get(next).into_iter().flatten());
        }
    }
    if seen.is_empty() || seen.contains(module) || !seen.contains(target) {
        return false;
    }
    seen.iter().all(|m| {
        own_proved.contains(*m)
            && imports.get(m).into_iter().flatten().all(|import| {
                import.time != ImportTime::Import
                    || local_target(import).is_none_or(|t| !(reads_name(import, t) && above(t)))
            })
    })
}

/// The import-time graph of the index.
struct Graph<'a> {
    /// Edges: the local modules an import-time import runs (targets and their parents).
    runs: HashMap<&'a str, BTreeSet<&'a str>>,
    /// Edges: the modules of other components an import-time import reads names from (or
    /// binds, for a later `m.name`).
    reads: HashMap<&'a str, BTreeSet<&'a str>>,
    component: HashMap<String, usize>,
}

impl<'a> Graph<'a> {
    fn new(
        index: &'a PackageIndex,
        names: &[&'a str],
        imports: &'a HashMap<&'a str, Vec<ResolvedImport>>,
    ) -> Self {
        let mut runs: HashMap<&str, BTreeSet<&str>> = HashMap::new();
        for module in names {
            let edges = runs.entry(*module).or_default();
            for import in imports.get(module).into_iter().flatten() {
                if import.time != ImportTime::Import {
                    continue;
                }
                // An ancestor of `module` has started before `module` did, so the import
                // cannot start it again: no edge (else every `__init__` importing its
                // submodules would form a cycle with them).
                if let Some(target) = local_target(import) {
                    edges.extend(
                        index
                            .with_parents(target)
                            .into_iter()
                            .filter(|p| !is_ancestor_or_self(p, module)),
                    );
                }
            }
        }
        let component = components(names, &runs);
        let mut reads: HashMap<&str, BTreeSet<&str>> = HashMap::new();
        for module in names {
            let edges = reads.entry(*module).or_default();
            for import in imports.get(module).into_iter().flatten() {
                let Some(target) = local_target(import) else {
                    continue;
                };
                // A submodule import (`from . import m`) reads no name at once, but the
                // module may read `m.name` later at import: ordered the same way.
                if import.time == ImportTime::Import
                    && component.get(*module) != component.get(target)
                    && let Some(target) = names.iter().find(|n| **n == target)
                {
                    edges.insert(target);
                }
            }
        }
        Graph {
            runs,
            reads,
            component,
        }
    }

    /// The modules in dependency order of `reads`, grouped in levels that can run in
    /// parallel.
    fn levels(&self, names: &[&'a str]) -> Vec<Vec<&'a str>> {
        let mut waiting: HashMap<&str, usize> =
            names.iter().map(|m| (*m, self.reads[m].len())).collect();
        let mut dependents: HashMap<&str, Vec<&str>> = HashMap::new();
        for (module, targets) in &self.reads {
            for target in targets {
                dependents.entry(*target).or_default().push(*module);
            }
        }
        let mut level: Vec<&str> = names.iter().copied().filter(|m| waiting[m] == 0).collect();
        let mut levels = Vec::new();
        while !level.is_empty() {
            let mut next = Vec::new();
            for module in &level {
                for dependent in dependents.get(module).into_iter().flatten() {
                    if let Some(count) = waiting.get_mut(dependent) {
                        *count -= 1;
                        if *count == 0 {
                            next.push(*dependent);
                        }
                    }
                }
            }
            next.sort_unstable();
            levels.push(std::mem::replace(&mut level, next));
        }
        levels
    }

    /// The modules whose closure ([`Self::closure`]) holds one of `bad`: the modules that
    /// run one of them (reverse edges), and every module below a package that does.
    fn running_any(
        &self,
        index: &PackageIndex,
        names: &[&'a str],
        bad: &HashSet<&'a str>,
    ) -> HashSet<String> {
        if bad.is_empty() {
            return HashSet::new();
        }
        let mut reverse: HashMap<&str, Vec<&str>> = HashMap::new();
        for (module, targets) in &self.runs {
            for target in targets {
                reverse.entry(*target).or_default().push(*module);
            }
        }
        let mut running: HashSet<&str> = HashSet::new();
        let mut stack: Vec<&str> = bad.iter().copied().collect();
        while let Some(next) = stack.pop() {
            if running.insert(next) {
                stack.extend(reverse.get(next).into_iter().flatten());
            }
        }
        names
            .iter()
            .filter(|m| index.with_parents(m).iter().any(|p| running.contains(p)))
            .map(|m| m.to_string())
            .collect()
    }

    /// `module`, its parents and everything their import-time imports run.
    fn closure(&self, index: &'a PackageIndex, module: &'a str) -> BTreeSet<&'a str> {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut stack: Vec<&str> = index.with_parents(module);
        while let Some(next) = stack.pop() {
            if seen.insert(next) {
                stack.extend(self.runs.get(next).into_iter().flatten());
            }
        }
        seen
    }
}

/// Strongly connected components (Tarjan's algorithm, iterative so a deep import chain cannot
/// exhaust the stack): module → component number.
fn components<'a>(
    names: &[&'a str],
    edges: &HashMap<&'a str, BTreeSet<&'a str>>,
) -> HashMap<String, usize> {
    let mut index_of: HashMap<&str, usize> = HashMap::new();
    let mut low: HashMap<&str, usize> = HashMap::new();
    let mut on_stack: HashSet<&str> = HashSet::new();
    let mut stack: Vec<&str> = Vec::new();
    let mut out: HashMap<String, usize> = HashMap::new();
    let mut counter = 0;
    let mut component = 0;
    let successors = |m: &str| -> Vec<&'a str> {
        edges
            .get(m)
            .map(|e| e.iter().copied().collect())
            .unwrap_or_default()
    };
    for root in names {
        if index_of.contains_key(root) {
            continue;
        }
        // Frames: (module, its successors, next successor to visit).
        let mut frames: Vec<(&str, Vec<&str>, usize)> = vec![(root, successors(root), 0)];
        index_of.insert(root, counter);
        low.insert(root, counter);
        counter += 1;
        stack.push(root);
        on_stack.insert(root);
        while let Some((module, succ, next)) = frames.last_mut() {
            let module = *module;
            if let Some(target) = succ.get(*next).copied() {
                *next += 1;
                if !index_of.contains_key(target) {
                    index_of.insert(target, counter);
                    low.insert(target, counter);
                    counter += 1;
                    stack.push(target);
                    on_stack.insert(target);
                    frames.push((target, successors(target), 0));
                } else if on_stack.contains(target) {
                    let lowest = low[module].min(index_of[target]);
                    low.insert(module, lowest);
                }
                continue;
            }
            frames.pop();
            if let Some((parent, _, _)) = frames.last() {
                let lowest = low[parent].min(low[module]);
                low.insert(parent, lowest);
            }
            if low[module] == index_of[module] {
                while let Some(member) = stack.pop() {
                    on_stack.remove(member);
                    out.insert(member.to_string(), component);
                    if member == module {
                        break;
                    }
                }
                component += 1;
            }
        }
    }
    out
}

/// `package` is `module` or one of its parent packages.
fn is_ancestor_or_self(package: &str, module: &str) -> bool {
    module == package
        || module
            .strip_prefix(package)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// The first components of the index's module names that are not stdlib names (an absolute
/// import of a stdlib name is never followed).
fn local_tops<'a>(names: &[&'a str]) -> BTreeSet<&'a str> {
    names
        .iter()
        .map(|n| n.split('.').next().unwrap_or(n))
        .filter(|top| !crate::readiness::stdlib::is_stdlib(top))
        .collect()
}

/// A cheap filter before parsing a module for the graph: a local import is either relative
/// (`from` followed by a dot) or names a local top-level module as a whole word on a line
/// holding `import` (or on the lines a backslash continues it to), so a file whose bytes hold
/// neither has none. Parsing is the expensive part; the first pass parses every module anyway,
/// with every import resolved, so this only decides which files the graph is built from. The
/// scans jump between occurrences of `from` and `import` (`memchr::memmem`), so the cost is
/// in the lines that hold them, not in every byte of every file.
fn may_import_locally(index: &PackageIndex, module: &str, tops: &BTreeSet<&str>) -> bool {
    let Some(path) = index.module_path(module) else {
        return false;
    };
    let Ok(bytes) = std::fs::read(index.root().join(path)) else {
        // Unreadable: let the parse report it.
        return true;
    };
    relative_from(&bytes) || names_a_top(&bytes, tops)
}

/// Some line holding `import`, or a line a backslash continues such a line to, names one of
/// `tops` as a whole word.
fn names_a_top(bytes: &[u8], tops: &BTreeSet<&str>) -> bool {
    if tops.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(found) = bytes
        .get(from..)
        .and_then(|rest| memmem::find(rest, b"import"))
    {
        let at = from + found;
        let mut start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
        loop {
            let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
            let line = &bytes[start..end];
            if tops.iter().any(|t| has_word(line, t)) {
                return true;
            }
            if end >= bytes.len() || !line.trim_ascii_end().ends_with(b"\\") {
                from = end;
                break;
            }
            start = end + 1;
        }
    }
    false
}

/// `word` occurs in `line` between non-identifier bytes.
fn has_word(line: &[u8], word: &str) -> bool {
    let word = word.as_bytes();
    let ident =
        |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b >= 0x80);
    memmem::find_iter(line, word).any(|i| {
        !ident(i.checked_sub(1).and_then(|j| line.get(j))) && !ident(line.get(i + word.len()))
    })
}

/// `from` followed (after blanks or line continuations) by `.`. (`from` cannot overlap itself,
/// so the non-overlapping occurrences `find_iter` gives are all of them.)
fn relative_from(bytes: &[u8]) -> bool {
    memmem::find_iter(bytes, b"from").any(|i| {
        bytes.get(i + 4..).and_then(|rest| {
            rest.iter()
                .find(|b| !matches!(b, b' ' | b'\t' | b'\\' | b'\r' | b'\n'))
        }) == Some(&b'.')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefilter_finds_local_imports_as_words() {
        assert!(relative_from(b"x = 1\nfrom . import a\n"));
        assert!(relative_from(b"from\\\n  .m import a\n"));
        assert!(!relative_from(b"from os import path  # from the docs.\n"));
        assert!(has_word(b"import os, test", "test"));
        assert!(!has_word(b"import unittest", "test"));
        assert!(!has_word(b"import test_x", "test"));
        assert!(has_word(b"import test_x, test", "test"));
        let tops: BTreeSet<&str> = ["shop"].into_iter().collect();
        assert!(names_a_top(b"x = 1\nimport os, shop\n", &tops));
        assert!(names_a_top(
            b"from os import (path,\\\n  sep) ; import \\\r\n shop\n",
            &tops
        ));
        assert!(!names_a_top(b"import os\nshop = 1\n", &tops));
        assert!(!names_a_top(b"import os  \\\n\nshop = 1", &tops));
        assert!(!names_a_top(b"import shops, workshop\n", &tops));
        assert!(!names_a_top(b"import os\\", &tops));
    }
}
