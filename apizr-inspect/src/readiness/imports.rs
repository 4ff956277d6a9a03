//! Dependency rules: READY-014 (dynamic import calls) and READY-015 (imports that are relative,
//! star, or whose root module is outside the frozen stdlib allowlist).
//!
//! Module-scope imports and calls come from [`super::scan`]; this file adds the capability's own
//! body, which is walked completely (nested functions, classes and lambdas included).

use std::collections::HashSet;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr, Stmt, StmtImport, StmtImportFrom};

use super::scan::is_dynamic_import;
use super::stdlib::is_stdlib;
use crate::module::ParsedModule;

/// One import statement and whether it leaves the dependency set unresolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportUse {
    pub line: u32,
    pub unresolved: bool,
}

/// `import a.b, c` — one use per alias.
pub fn import_use(node: &StmtImport, line: u32) -> Vec<ImportUse> {
    node.names
        .iter()
        .map(|alias| {
            let root = alias.name.as_str().split('.').next().unwrap_or("");
            ImportUse {
                line,
                unresolved: !is_stdlib(root),
            }
        })
        .collect()
}

/// `from m import x` — relative, star or non-stdlib roots are unresolved.
pub fn import_from_use(node: &StmtImportFrom, line: u32) -> ImportUse {
    let star = node.names.iter().any(|a| a.name.as_str() == "*");
    let root = node
        .module
        .as_ref()
        .map(|m| m.as_str().split('.').next().unwrap_or("").to_string());
    let unresolved = node.level > 0 || star || !root.as_deref().is_some_and(is_stdlib);
    ImportUse { line, unresolved }
}

/// Lines of READY-015 and READY-014 events inside a function body.
#[derive(Debug, Default)]
pub struct BodyDependencies {
    pub unresolved_import_lines: Vec<u32>,
    pub dynamic_import_lines: Vec<u32>,
}

pub fn body_dependencies(
    parsed: &ParsedModule,
    body: &[Stmt],
    aliases: &HashSet<String>,
) -> BodyDependencies {
    let mut walker = BodyWalker {
        parsed,
        aliases,
        out: BodyDependencies::default(),
    };
    body.iter().for_each(|s| walker.visit_stmt(s));
    walker.out
}

struct BodyWalker<'p> {
    parsed: &'p ParsedModule,
    aliases: &'p HashSet<String>,
    out: BodyDependencies,
}

impl<'a> Visitor<'a> for BodyWalker<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        let line = super::stmt_line(self.parsed, stmt);
        match stmt {
            Stmt::Import(node) => {
                let uses = import_use(node, line);
                if uses.iter().any(|u| u.unresolved) {
                    self.out.unresolved_import_lines.push(line);
                }
            }
            Stmt::ImportFrom(node) if import_from_use(node, line).unresolved => {
                self.out.unresolved_import_lines.push(line);
            }
            _ => {}
        }
        visitor::walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr
            && is_dynamic_import(call, self.aliases)
        {
            self.out
                .dynamic_import_lines
                .push(self.parsed.start_line(call));
        }
        visitor::walk_expr(self, expr);
    }
}
