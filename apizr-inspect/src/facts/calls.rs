//! The call classifications the reference uses, in one place.
//!
//! Two rules look at calls of names that reach into the module namespace, and they are not
//! the same set (both observed with the oracle):
//!
//! * READY-008 counts the namespace builtins `globals locals vars exec eval` called by their
//!   bare name ([`is_namespace_builtin`]); a bare `__import__(...)` is not one of them (it is a
//!   dynamic import, READY-014).
//! * The inert `experiment` decorator is ruled out by a namespace builtin, a bare `__import__`
//!   or any `<expr>.import_module(...)` ([`disqualifies_inert_decorator`]), but not by
//!   `builtins.__import__(...)` nor by a bare `import_module(...)`.
//!
//! READY-014 ([`ModuleFacts::is_dynamic_import`]) is a third set: `__import__`,
//! `import_module`, every name bound anywhere by `from importlib import import_module as x`,
//! and any `.import_module` / `.__import__` attribute.

use std::collections::HashSet;

use ruff_python_ast::Expr;

use super::{Call, Import, ImportNode, ModuleFacts};

/// The namespace builtins of READY-008.
pub const NAMESPACE_BUILTINS: [&str; 5] = ["globals", "locals", "vars", "exec", "eval"];

/// What is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Callee<'a> {
    /// `name(...)`.
    Name(&'a str),
    /// `<expr>.attr(...)`.
    Attribute(&'a str),
    /// Anything else (`f()()`, `x[0]()`, ...).
    Other,
}

impl<'a> Call<'a> {
    pub fn callee(&self) -> Callee<'a> {
        match self.node.func.as_ref() {
            Expr::Name(name) => Callee::Name(name.id.as_str()),
            Expr::Attribute(attribute) => Callee::Attribute(attribute.attr.as_str()),
            _ => Callee::Other,
        }
    }
}

/// READY-008: `globals()`, `locals()`, `vars()`, `exec(...)`, `eval(...)`.
pub fn is_namespace_builtin(call: &Call) -> bool {
    matches!(call.callee(), Callee::Name(name) if NAMESPACE_BUILTINS.contains(&name))
}

/// Rules out the inert decorator: a namespace builtin, `__import__(...)` or `x.import_module(...)`.
pub fn disqualifies_inert_decorator(call: &Call) -> bool {
    is_namespace_builtin(call)
        || matches!(
            call.callee(),
            Callee::Name("__import__") | Callee::Attribute("import_module")
        )
}

/// `__import__`, `import_module`, and every name bound (in any scope, relative or not) by
/// `from importlib import import_module [as x]`.
pub(super) fn dynamic_import_names<'a>(imports: &[Import<'a>]) -> HashSet<&'a str> {
    let mut names: HashSet<&'a str> = HashSet::from(["__import__", "import_module"]);
    for import in imports {
        let ImportNode::From(node) = import.node else {
            continue;
        };
        if node.module.as_ref().map(|m| m.as_str()) != Some("importlib") {
            continue;
        }
        for alias in &node.names {
            if alias.name.as_str() == "import_module" {
                names.insert(alias.asname.as_ref().unwrap_or(&alias.name).as_str());
            }
        }
    }
    names
}

impl ModuleFacts<'_> {
    /// READY-014: a dynamic import call.
    pub fn is_dynamic_import(&self, call: &Call) -> bool {
        match call.callee() {
            Callee::Name(name) => self.dynamic_import_names.contains(name),
            Callee::Attribute(attr) => matches!(attr, "import_module" | "__import__"),
            Callee::Other => false,
        }
    }
}
