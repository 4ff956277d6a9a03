//! Resolving the import statements of one module against a [`PackageIndex`].

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use super::PackageIndex;
use crate::error::Position;
use crate::module::ParsedModule;
use crate::readiness::v2::fixed;

/// When an import statement runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ImportTime {
    /// While the module is imported: module level, class bodies, `if`/`try`/`with` bodies.
    Import,
    /// Only when a function runs: any function body, however nested.
    Call,
    /// Never: the body of `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`), which is false at
    /// run time, and an arm behind a test false on every worker (`if sys.platform == "win32":`,
    /// [`crate::readiness::v2::fixed`]). Type checkers (and readers of annotations) follow it;
    /// the interpreter does not.
    TypeChecking,
}

/// What an import names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ImportTarget {
    /// A module of the index (dotted name).
    Local(String),
    /// A top-level name the index does not hold (`os`, `requests`): stdlib or third party.
    External(String),
    /// An import that fails when it runs, and why (a relative import beyond the top-level
    /// package, or with no package at all; a local package without the named submodule).
    Unresolvable(String),
}

/// One imported module or name of an import statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedImport {
    pub target: ImportTarget,
    /// The absolute module the statement names (`a.b` of `import a.b`, the resolved base of
    /// `from ..m import x`); as written (dots kept) when a relative import cannot be resolved.
    pub module: String,
    /// For `from m import x`: `x` (`*` for a star import). `None` for `import m`.
    pub name: Option<String>,
    /// The name bound in the importing module (`c` of `import a.b as c`, `a` of `import a.b`,
    /// `y` of `from m import x as y`); `None` for a star import.
    pub bound: Option<String>,
    pub time: ImportTime,
    /// Where the imported module or name is written.
    pub position: Position,
    /// The alias (`a.b as c`, `x as y`) in the source text.
    pub range: TextRange,
    /// The whole import statement in the source text.
    pub statement: TextRange,
    /// A relative import (`from .m import x`).
    pub relative: bool,
}

/// Every import statement of `parsed`, in source order.
pub(super) fn imports(index: &PackageIndex, parsed: &ParsedModule) -> Vec<ResolvedImport> {
    let mut walker = Walker {
        index,
        parsed,
        package: index.package_of(&parsed.module).to_string(),
        is_module_in_index: index.contains(&parsed.module),
        out: Vec::new(),
    };
    walker.body(parsed.body(), ImportTime::Import);
    walker.out
}

struct Walker<'a> {
    index: &'a PackageIndex,
    parsed: &'a ParsedModule,
    /// The package relative imports resolve against (`""`: none).
    package: String,
    is_module_in_index: bool,
    out: Vec<ResolvedImport>,
}

impl Walker<'_> {
    fn body(&mut self, body: &[Stmt], time: ImportTime) {
        for stmt in body {
            self.stmt(stmt, time);
        }
    }

    fn stmt(&mut self, stmt: &Stmt, time: ImportTime) {
        let deferred = |time| match time {
            ImportTime::Import => ImportTime::Call,
            other => other,
        };
        match stmt {
            Stmt::Import(node) => self.import(node, time),
            Stmt::ImportFrom(node) => self.import_from(node, time),
            Stmt::FunctionDef(def) => self.body(&def.body, deferred(time)),
            Stmt::ClassDef(class) => self.body(&class.body, time),
            Stmt::If(node) => {
                // An arm under `TYPE_CHECKING`, or behind a test false on every worker, never
                // runs; after a test true on every worker, neither do the later arms.
                let mut decided = false;
                let clauses = std::iter::once((Some(node.test.as_ref()), &node.body)).chain(
                    node.elif_else_clauses
                        .iter()
                        .map(|c| (c.test.as_ref(), &c.body)),
                );
                for (index, (test, body)) in clauses.enumerate() {
                    let fixed = test.and_then(|t| fixed::fixed(t, &fixed::Spelling));
                    let never = decided
                        || fixed == Some(false)
                        || index == 0 && test.is_some_and(is_type_checking);
                    let arm_time = if never {
                        ImportTime::TypeChecking
                    } else {
                        time
                    };
                    self.body(body, arm_time);
                    decided |= fixed == Some(true) && !never;
                }
            }
            Stmt::For(node) => {
                self.body(&node.body, time);
                self.body(&node.orelse, time);
            }
            Stmt::While(node) => {
                self.body(&node.body, time);
                self.body(&node.orelse, time);
            }
            Stmt::With(node) => self.body(&node.body, time),
            Stmt::Try(node) => {
                self.body(&node.body, time);
                for handler in &node.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = handler;
                    self.body(&h.body, time);
                }
                self.body(&node.orelse, time);
                self.body(&node.finalbody, time);
            }
            Stmt::Match(node) => {
                for case in &node.cases {
                    self.body(&case.body, time);
                }
            }
            _ => {}
        }
    }

    /// `import a.b.c [as x]`: runs `a`, `a.b` and `a.b.c`; the target is `a.b.c`.
    fn import(&mut self, node: &ast::StmtImport, time: ImportTime) {
        for alias in &node.names {
            let module = alias.name.as_str();
            let top = module.split('.').next().unwrap_or(module);
            let target = if !self.index.is_local_top(top) {
                ImportTarget::External(top.to_string())
            } else if self.index.contains(module) {
                ImportTarget::Local(module.to_string())
            } else {
                ImportTarget::Unresolvable(format!(
                    "`{module}` is not a module under the package root"
                ))
            };
            let bound = alias.asname.as_ref().map_or(top, |a| a.as_str());
            self.out.push(ResolvedImport {
                target,
                module: module.to_string(),
                name: None,
                bound: Some(bound.to_string()),
                time,
                position: self.parsed.position(alias.range().start()),
                range: alias.range(),
                statement: node.range(),
                relative: false,
            });
        }
    }

    /// `from m import x, y as z` / `from .m import *`: one entry per name.
    fn import_from(&mut self, node: &ast::StmtImportFrom, time: ImportTime) {
        let written = format!(
            "{}{}",
            ".".repeat(node.level as usize),
            node.module.as_ref().map_or("", |m| m.as_str())
        );
        let base = match self.absolute(node) {
            Ok(base) => base,
            Err(why) => {
                for alias in &node.names {
                    self.push_from(
                        ImportTarget::Unresolvable(why.clone()),
                        written.clone(),
                        (alias, node),
                        time,
                    );
                }
                return;
            }
        };
        let top = base.split('.').next().unwrap_or(&base);
        for alias in &node.names {
            let name = alias.name.as_str();
            let target = if node.level == 0 && !self.index.is_local_top(top) {
                ImportTarget::External(top.to_string())
            } else {
                let submodule = format!("{base}.{name}");
                if name != "*" && self.index.contains(&submodule) {
                    ImportTarget::Local(submodule)
                } else if self.index.contains(&base) {
                    ImportTarget::Local(base.clone())
                } else if name != "*" && self.index.is_namespace(&base) {
                    ImportTarget::Unresolvable(format!(
                        "`{base}` is a directory without `__init__.py` and has no submodule \
                         `{name}`"
                    ))
                } else {
                    ImportTarget::Unresolvable(format!(
                        "`{base}` is not a module under the package root"
                    ))
                }
            };
            self.push_from(target, base.clone(), (alias, node), time);
        }
    }

    fn push_from(
        &mut self,
        target: ImportTarget,
        module: String,
        (alias, node): (&ast::Alias, &ast::StmtImportFrom),
        time: ImportTime,
    ) {
        let name = alias.name.as_str();
        let bound = (name != "*").then(|| alias.asname.as_ref().map_or(name, |a| a.as_str()));
        self.out.push(ResolvedImport {
            target,
            module,
            name: Some(name.to_string()),
            bound: bound.map(str::to_string),
            time,
            position: self.parsed.position(alias.range().start()),
            range: alias.range(),
            statement: node.range(),
            relative: node.level > 0,
        });
    }

    /// The absolute base module of a `from` import, or why a relative one fails at run time.
    fn absolute(&self, node: &ast::StmtImportFrom) -> Result<String, String> {
        let name = node.module.as_ref().map(|m| m.as_str());
        if node.level == 0 {
            return Ok(name.unwrap_or("").to_string());
        }
        if !self.is_module_in_index || self.package.is_empty() {
            return Err(
                "relative import in a module that is not part of a package (no known parent \
                 package)"
                    .into(),
            );
        }
        let mut parts: Vec<&str> = self.package.split('.').collect();
        for _ in 1..node.level {
            if parts.pop().is_none() || parts.is_empty() {
                return Err("relative import beyond the top-level package".into());
            }
        }
        if parts.is_empty() {
            return Err("relative import beyond the top-level package".into());
        }
        parts.extend(name.iter().flat_map(|n| n.split('.')));
        Ok(parts.join("."))
    }
}

/// `TYPE_CHECKING` or `<anything>.TYPE_CHECKING` (`typing.TYPE_CHECKING`, `t.TYPE_CHECKING`).
fn is_type_checking(test: &Expr) -> bool {
    match test {
        Expr::Name(name) => name.id.as_str() == "TYPE_CHECKING",
        Expr::Attribute(attr) => attr.attr.as_str() == "TYPE_CHECKING",
        _ => false,
    }
}

impl PackageIndex {
    /// `top` is a module of the index, or a directory holding some (a namespace package).
    pub(super) fn is_local_top(&self, top: &str) -> bool {
        self.contains(top) || self.is_namespace(top)
    }

    /// Some module of the index lives under `dotted.` although `dotted` itself is none.
    pub(super) fn is_namespace(&self, dotted: &str) -> bool {
        let prefix = format!("{dotted}.");
        self.modules
            .range(prefix.clone()..)
            .next()
            .is_some_and(|(name, _)| name.starts_with(&prefix))
    }
}
