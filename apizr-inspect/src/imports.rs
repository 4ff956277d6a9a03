//! Every module a piece of Python code names for import, for the code interpreter's import
//! allowlist (`apizr run`, the `python` MCP tool). Never executes anything.
//!
//! What counts, anywhere in the tree (inside functions, classes, `if`/`try` bodies, lambdas):
//!
//! * `import a.b as c` → `a.b`; `from a.b import c` → `a.b` (the first component decides);
//! * `from .pkg import x` → `pkg` (the dots are ignored, as mellea does);
//! * `from . import x, y` → `x` and `y` (mellea's environment check skips this form; its
//!   `ImportRestrictions` requirement checks the names, and so do we);
//! * `__import__("a")`, `builtins.__import__("a")`, `importlib.import_module("a")`,
//!   `import_module("a")`, `importlib.__import__("a")` with a literal string;
//! * the same calls with a non-literal or relative name: an [`ImportKind::Dynamic`] reference
//!   whose name cannot be known (an allowlist refuses it: it cannot be proven allowed);
//! * `exec`, `eval` and `compile` of a literal string: that string is scanned too (nested up to
//!   [`MAX_LITERAL_DEPTH`] levels); a non-literal argument is left to the in-worker guard.
//!
//! The static check is a convenience and a first line: names built at run time, `sys.modules`
//! or objects reached through other modules are not visible here. The interpreter's in-worker
//! guard repeats the check at run time, and the OS sandbox is the security boundary.

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr, Stmt};
use ruff_text_size::{Ranged, TextSize};

use crate::budget;
use crate::error::{InspectError, Position};
use crate::module::ParsedModule;

/// How deep `exec("exec('import os')")` literals are followed.
pub const MAX_LITERAL_DEPTH: usize = 4;

/// How the code names the module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportKind {
    /// `import a.b`
    Import,
    /// `from a.b import c` or `from .a import c`
    From,
    /// `from . import x`: the imported name itself.
    RelativeName,
    /// `__import__("a")` or `importlib.import_module("a")` with a literal absolute name.
    Call,
    /// An import call whose name is not a literal absolute name.
    Dynamic,
}

/// One imported module name, where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportRef {
    /// The dotted name as written (dots of a relative import dropped); for
    /// [`ImportKind::Dynamic`], the call as written (`__import__(…)`).
    pub module: String,
    pub kind: ImportKind,
    /// Where it is written (in the outermost code: an import inside an `exec` literal is
    /// reported at the `exec` call).
    pub position: Position,
}

impl ImportRef {
    /// The top-level module name an allowlist is matched against (`a` of `a.b.c`).
    pub fn top_level(&self) -> &str {
        self.module.split('.').next().unwrap_or(&self.module)
    }
}

/// Every import reference in `text`, in source order. A syntax error (CPython 3.11 grammar)
/// or a nesting beyond the budget is an error with its position.
pub fn scan_imports(text: &str) -> Result<Vec<ImportRef>, InspectError> {
    let mut found = Vec::new();
    scan_into(text, None, 0, &mut found)?;
    Ok(found)
}

/// The top-level names of `refs` that `allowed` does not list, de-duplicated in first-seen
/// order (mellea's message order). A dynamic reference is never allowed.
pub fn unauthorized<'a>(refs: &'a [ImportRef], allowed: &[String]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for r in refs {
        let name = if r.kind == ImportKind::Dynamic {
            r.module.as_str()
        } else {
            r.top_level()
        };
        let ok = r.kind != ImportKind::Dynamic && allowed.iter().any(|a| a == name);
        if !ok && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

fn scan_into(
    text: &str,
    at: Option<Position>,
    depth: usize,
    found: &mut Vec<ImportRef>,
) -> Result<(), InspectError> {
    budget::prescan(text)?;
    let parsed = ParsedModule::parse(text.to_string(), "__main__".into())?;
    let mut scan = Scan {
        parsed: &parsed,
        at,
        depth,
        found,
        literals: Vec::new(),
    };
    for stmt in parsed.body() {
        scan.visit_stmt(stmt);
    }
    let literals = std::mem::take(&mut scan.literals);
    for (code, position) in literals {
        // A literal that does not parse fails when executed; nothing to check in it.
        let _ = scan_into(&code, Some(position), depth + 1, found);
    }
    Ok(())
}

struct Scan<'a> {
    parsed: &'a ParsedModule,
    /// The position every reference is reported at (inside an `exec` literal).
    at: Option<Position>,
    depth: usize,
    found: &'a mut Vec<ImportRef>,
    /// `exec`/`eval`/`compile` literals, scanned after this tree.
    literals: Vec<(String, Position)>,
}

impl Scan<'_> {
    fn push(&mut self, module: String, kind: ImportKind, offset: TextSize) {
        let position = self.at.unwrap_or_else(|| self.parsed.position(offset));
        self.found.push(ImportRef {
            module,
            kind,
            position,
        });
    }

    fn call(&mut self, call: &ruff_python_ast::ExprCall) {
        let callee = callee_name(&call.func);
        let first = call.arguments.args.first().or_else(|| {
            call.arguments
                .keywords
                .iter()
                .find(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == "name"))
                .map(|k| &k.value)
        });
        let literal = first.and_then(|e| match e {
            Expr::StringLiteral(s) => Some(s.value.to_str().to_string()),
            _ => None,
        });
        match callee.as_deref() {
            Some(
                "__import__"
                | "builtins.__import__"
                | "importlib.__import__"
                | "importlib.import_module"
                | "import_module",
            ) => match literal {
                Some(name) if !name.is_empty() && !name.starts_with('.') => {
                    self.push(name, ImportKind::Call, call.start());
                }
                _ => {
                    let written = format!("{}(…)", callee.unwrap_or_default());
                    self.push(written, ImportKind::Dynamic, call.start());
                }
            },
            Some("exec" | "eval" | "compile" | "builtins.exec" | "builtins.eval") => {
                if let Some(code) = literal
                    && self.depth < MAX_LITERAL_DEPTH
                {
                    let position = self
                        .at
                        .unwrap_or_else(|| self.parsed.position(call.start()));
                    self.literals.push((code, position));
                }
            }
            _ => {}
        }
    }
}

/// `name` or `a.b.name` of a call's callee, when it is a plain (dotted) name.
fn callee_name(func: &Expr) -> Option<String> {
    match func {
        Expr::Name(n) => Some(n.id.to_string()),
        Expr::Attribute(a) => callee_name(&a.value).map(|base| format!("{base}.{}", a.attr)),
        _ => None,
    }
}

impl<'a> Visitor<'a> for Scan<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Import(node) => {
                for alias in &node.names {
                    self.push(alias.name.to_string(), ImportKind::Import, alias.start());
                }
            }
            Stmt::ImportFrom(node) => match &node.module {
                Some(module) => self.push(module.to_string(), ImportKind::From, module.start()),
                None => {
                    for alias in &node.names {
                        self.push(
                            alias.name.to_string(),
                            ImportKind::RelativeName,
                            alias.start(),
                        );
                    }
                }
            },
            _ => {}
        }
        visitor::walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr {
            self.call(call);
        }
        visitor::walk_expr(self, expr);
    }
}

#[cfg(test)]
mod tests;
