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
        let parsed = index.parse(&module)?;
        let imports = index.imports_in(&parsed);
        for import in &imports {
            let followed = match import.time {
                ImportTime::Import => true,
                ImportTime::Call | ImportTime::TypeChecking => include_call_time,
            };
            if let (true, ImportTarget::Local(target)) = (followed, &import.target) {
                enqueue(index, target, &mut seen, &mut queue);
            }
        }
        if include_call_time && imports.iter().any(|i| i.module == "importlib") {
            for target in named_modules(index, &parsed) {
                enqueue(index, &target, &mut seen, &mut queue);
            }
        }
    }
    Ok(seen)
}

/// The modules of the index a module that imports `importlib` names in a string literal (the
/// longest dotted prefix of the literal that is one: `"pkg.plugins.table.table"` names
/// `pkg.plugins.table`): it may import them by name at call time
/// (`importlib.import_module(...)`, which readiness v2 may prove at import,
/// [`crate::readiness::v2::interp`]), so the call-time closure, and the bundle built from it,
/// holds them. Shipping a file that is never imported changes nothing.
fn named_modules(index: &PackageIndex, parsed: &crate::ParsedModule) -> Vec<String> {
    use ruff_python_ast::visitor::{self, Visitor};
    struct Literals<'i> {
        index: &'i PackageIndex,
        out: Vec<String>,
    }
    impl<'a> Visitor<'a> for Literals<'_> {
        fn visit_expr(&mut self, expr: &'a ruff_python_ast::Expr) {
            if let ruff_python_ast::Expr::StringLiteral(s) = expr {
                let text = s.value.to_str();
                let mut prefix = text;
                loop {
                    if self.index.contains(prefix) {
                        self.out.push(prefix.to_string());
                        break;
                    }
                    match prefix.rsplit_once('.') {
                        Some((head, _)) => prefix = head,
                        None => break,
                    }
                }
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut literals = Literals {
        index,
        out: Vec::new(),
    };
    for stmt in parsed.body() {
        literals.visit_stmt(stmt);
    }
    literals.out
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
