//! What an import statement imports, as written. Which imports a rule accepts (the stdlib
//! allowlist of READY-015) is the rule's business; this file only describes the statement.

use ruff_text_size::{Ranged, TextRange};

use super::{Import, ImportNode};

/// One imported module of an import statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportedModule<'a> {
    /// The dotted module name as written after the dots; `None` for `from . import x`.
    pub name: Option<&'a str>,
    /// Leading dots of a relative import (0 for absolute).
    pub level: u32,
    /// `from m import *`.
    pub star: bool,
    /// The module's name in the source (`a.b` of `import a.b as c`, `m` of `from m import x`),
    /// or the whole statement when there is no name (`from . import x`).
    pub range: TextRange,
}

impl<'a> ImportedModule<'a> {
    /// The first component of an absolute name (`a` of `a.b.c`).
    pub fn root(&self) -> Option<&'a str> {
        if self.level > 0 {
            return None;
        }
        self.name.map(|n| n.split('.').next().unwrap_or(n))
    }

    /// The name as written, dots included (`..pkg.mod`, `.`).
    pub fn written(&self) -> String {
        format!(
            "{}{}",
            ".".repeat(self.level as usize),
            self.name.unwrap_or("")
        )
    }

    /// The absolute module name, resolving a relative import against `package` (the package
    /// the importing module belongs to: itself for an `__init__`, else its parent). `None` when
    /// the dots climb above the top-level package.
    pub fn absolute(&self, package: &str) -> Option<String> {
        if self.level == 0 {
            return self.name.map(str::to_string);
        }
        let mut parts: Vec<&str> = package.split('.').filter(|p| !p.is_empty()).collect();
        for _ in 1..self.level {
            parts.pop()?;
        }
        if parts.is_empty() {
            return None;
        }
        parts.extend(self.name.iter().flat_map(|n| n.split('.')));
        Some(parts.join("."))
    }
}

impl<'a> Import<'a> {
    /// `import a, b.c` → one entry per alias; `from m import x, y` → one entry.
    pub fn modules(&self) -> Vec<ImportedModule<'a>> {
        match self.node {
            ImportNode::Import(node) => node
                .names
                .iter()
                .map(|alias| ImportedModule {
                    name: Some(alias.name.as_str()),
                    level: 0,
                    star: false,
                    range: alias.name.range(),
                })
                .collect(),
            ImportNode::From(node) => vec![ImportedModule {
                name: node.module.as_ref().map(|m| m.as_str()),
                level: node.level,
                star: node.names.iter().any(|a| a.name.as_str() == "*"),
                range: node
                    .module
                    .as_ref()
                    .map(|m| m.range())
                    .unwrap_or_else(|| node.range()),
            }],
        }
    }

    /// The statement's range.
    pub fn range(&self) -> TextRange {
        match self.node {
            ImportNode::Import(node) => node.range(),
            ImportNode::From(node) => node.range(),
        }
    }
}
