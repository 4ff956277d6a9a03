//! Dependency rules: READY-014 (dynamic import calls) and READY-015 (imports that are relative,
//! star, or whose root module is outside the frozen stdlib allowlist).
//!
//! Both look at module scope (every import and call that runs at import time, control flow
//! included) and, per capability, at the function's own body with everything nested in it.

use ruff_python_ast::ExprCall;
use ruff_text_size::TextRange;

use crate::facts::imports::ImportedModule;
use crate::facts::{ModuleFacts, Scope};

use super::stdlib::is_stdlib;

/// Why an import leaves the dependency set unresolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportProblem {
    /// `from . import x`, `from .m import x`.
    Relative,
    /// The root module is not in the standard-library allowlist.
    NotStdlib,
    /// `from <stdlib module> import *`.
    Star,
    /// v2 in a package: an import that fails when it runs (a relative import beyond the
    /// top-level package, a module the directory does not hold).
    Unresolvable,
    /// v2 in a package: a local module whose import runs a top level v2 does not prove.
    LocalUnproved,
    /// v2 in a package: a name read from a module of the same import cycle, which may not be
    /// bound yet when this import runs.
    Cycle,
    /// v2 in a package: the local module does not bind the imported name (`ImportError`).
    MissingName,
    /// v2 in a package: a third-party module the project does not declare.
    Undeclared,
}

/// The READY-015 verdict on one imported module.
pub fn import_problem(module: &ImportedModule) -> Option<ImportProblem> {
    if module.level > 0 {
        Some(ImportProblem::Relative)
    } else if !module.root().is_some_and(is_stdlib) {
        Some(ImportProblem::NotStdlib)
    } else if module.star {
        Some(ImportProblem::Star)
    } else {
        None
    }
}

/// One unresolved import: the statement's line and range, and the module it names.
#[derive(Debug, Clone, Copy)]
pub struct UnresolvedImport<'a> {
    pub line: u32,
    pub statement: TextRange,
    pub module: ImportedModule<'a>,
    pub problem: ImportProblem,
}

/// READY-015 events in `scope`.
pub fn unresolved_imports<'a>(facts: &ModuleFacts<'a>, scope: Scope) -> Vec<UnresolvedImport<'a>> {
    facts
        .imports_in(scope)
        .flat_map(|import| {
            import.modules().into_iter().filter_map(|module| {
                import_problem(&module).map(|problem| UnresolvedImport {
                    line: import.line,
                    statement: import.range(),
                    module,
                    problem,
                })
            })
        })
        .collect()
}

/// READY-014 events in `scope`.
pub fn dynamic_imports<'a>(facts: &ModuleFacts<'a>, scope: Scope) -> Vec<&'a ExprCall> {
    facts.dynamic_import_calls(scope).map(|c| c.node).collect()
}
