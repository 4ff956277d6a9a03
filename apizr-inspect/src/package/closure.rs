//! The local modules that importing some modules executes.
//!
//! A breadth-first walk over the import graph with a visited set, so an import cycle
//! (`a` imports `b` imports `a`) is followed once: CPython runs each module once too, the second
//! import finding the partly initialised module in `sys.modules`. Every module reached brings
//! its parent packages, whose `__init__` runs first.
//!
//! `stands_alone` decides which modules need that closure at all: a module that imports no
//! file of its directory (no relative import, no import resolving to a local module) is a
//! single file, and is served as one — under its dotted name with empty parent modules, so
//! its parents' `__init__`, which it never reads, never run. Only the other modules run
//! inside their package. [`PackageIndex::stands_alone`] is the one rule, read by bundling
//! (`apizr_codegen::package`) and by readiness v2 (whose parent obligation holds only for
//! modules that run inside their package).

use std::collections::{BTreeSet, VecDeque};

use super::{ImportTarget, ImportTime, PackageError, PackageIndex, ResolvedImport};

pub(super) fn closure(
    index: &PackageIndex,
    roots: &[&str],
    include_call_time: bool,
) -> Result<BTreeSet<String>, PackageError> {
    let mut seen = BTreeSet::new();
    let mut queue = VecDeque::new();
    for root in roots {
        if !index.contains(root) {
            return Err(PackageError::UnknownModule {
                name: (*root).to_string(),
            });
        }
        enqueue(index, root, &mut seen, &mut queue);
    }
    while let Some(module) = queue.pop_front() {
        for import in index.imports_of(&module)? {
            let followed = match import.time {
                ImportTime::Import => true,
                ImportTime::Call | ImportTime::TypeChecking => include_call_time,
            };
            if let (true, ImportTarget::Local(target)) = (followed, &import.target) {
                enqueue(index, target, &mut seen, &mut queue);
            }
        }
    }
    Ok(seen)
}

/// `module` and its parent packages, each once.
fn enqueue(
    index: &PackageIndex,
    module: &str,
    seen: &mut BTreeSet<String>,
    queue: &mut VecDeque<String>,
) {
    for name in index.with_parents(module) {
        if seen.insert(name.to_string()) {
            queue.push_back(name.to_string());
        }
    }
}

/// A module with these imports (all of them: module level, call time and `TYPE_CHECKING`)
/// stands alone: none is relative (a single file has no package to resolve it against) and
/// none resolves to a module of the directory — not a sibling, not its own package, not
/// itself by its dotted name.
pub(super) fn stands_alone(imports: &[ResolvedImport]) -> bool {
    imports
        .iter()
        .all(|i| !i.relative && !matches!(i.target, ImportTarget::Local(_)))
}
