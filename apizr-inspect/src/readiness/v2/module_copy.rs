//! A private copy of a standard-library module, as Markdown's `htmlparser` makes one to
//! monkeypatch it without touching `html.parser`:
//!
//! ```python
//! spec = importlib.util.find_spec('html.parser')
//! htmlparser = importlib.util.module_from_spec(spec)
//! spec.loader.exec_module(htmlparser)
//! sys.modules['htmlparser'] = htmlparser
//! htmlparser.piclose = re.compile(r'\?>')
//! class HTMLExtractor(htmlparser.HTMLParser): ...
//! ```
//!
//! Each step, in this order only (marks on the names, [`Mark::SpecOf`], [`Mark::Unexecuted`],
//! [`Mark::ModuleCopy`]):
//!
//! * `importlib.util.find_spec(<literal>)` of a module of [`COPYABLE`]: imports its parent
//!   packages (known to the workers, [`super::stdlib_names`]) and returns its spec — the
//!   loaded module's `__spec__` when it is imported already — with a source loader;
//! * `importlib.util.module_from_spec(spec)` of such a spec: a new, empty module object
//!   (`__name__`, `__loader__`, `__spec__`, `__file__`, ... set; nothing registered); reading
//!   its names before the next step would raise `AttributeError`, so it is only an object;
//! * `spec.loader.exec_module(m)` with that spec and that module: runs the module's source
//!   into `m`, a second time. For a module of [`COPYABLE`] that run only imports modules the
//!   first import already loaded (shared in `sys.modules`) and binds names: `m` then binds
//!   what the table says the module binds, and its classes are the table's facts (same
//!   source, same shared bases, metaclass `type`);
//! * `m.name = <proved value>` for a non-dunder name: a store into the copy's own `__dict__`
//!   (`ModuleType` has no `__setattr__` and no data descriptor of such a name), which nothing
//!   but this module and the next store can reach;
//! * `sys.modules["<name>"] = m`: the worker process's module registry gets an entry under a
//!   name that is no standard-library module, no module of the package and not imported so
//!   far, so only code importing that very name later reaches the copy (as for
//!   [`super::registry`]'s codec error handler names).
//!
//! A copy of any other module (one whose top level registers something process-wide —
//! `logging`'s `atexit` hook, `encodings`' codec search — would register it twice), a store
//! into the real module, a dunder store or any other `sys.modules` key stays unproved.

use ruff_python_ast::{Expr, ExprAttribute, ExprCall};
use ruff_text_size::Ranged;

use super::env::{Kind, Mark, Meaning};
use super::{Prover, Unproved, Why, stdlib_names};
use crate::readiness::stdlib::is_stdlib;

type Proof<T> = Result<T, Unproved>;

/// Standard-library modules whose top level, run again into a fresh module, only imports and
/// binds (read in CPython 3.11's source): `html/parser.py` imports `re`, `_markupbase` and
/// `html.unescape`, compiles patterns and defines `HTMLParser`.
pub const COPYABLE: &[&str] = &["html.parser"];

/// The calls of this module, for the allowlist of known names.
pub fn is_copy_call(qualified: &str) -> bool {
    matches!(
        qualified,
        "importlib.util.find_spec" | "importlib.util.module_from_spec"
    )
}

/// The name an expression is, when it is a plain name.
fn name_of(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Name(n) => Some(n.id.as_str()),
        _ => None,
    }
}

fn is_dunder(name: &str) -> bool {
    name.len() > 4 && name.starts_with("__") && name.ends_with("__")
}

impl Prover<'_> {
    /// The index in [`COPYABLE`] of the spec `name` is bound to.
    fn spec_of(&self, name: &str) -> Option<u8> {
        (0..COPYABLE.len() as u8).find(|i| self.env.has_mark(name, Mark::SpecOf(*i)))
    }

    /// `importlib.util.find_spec(...)` and `module_from_spec(...)` as the steps above allow
    /// them; `None` for other names.
    pub fn copy_call(&self, qualified: &str, call: &ExprCall) -> Option<Proof<Meaning>> {
        let fail = || Err(Unproved::at(call.range(), Why::Arguments));
        let args = &call.arguments.args;
        if !call.arguments.keywords.is_empty() || args.len() != 1 {
            return is_copy_call(qualified).then(fail);
        }
        Some(match qualified {
            "importlib.util.find_spec" => match self.copyable(&args[0]) {
                Some(_) => Ok(Meaning::Value(Kind::Object)),
                None => fail(),
            },
            "importlib.util.module_from_spec" => match name_of(&args[0]) {
                Some(spec) if self.spec_of(spec).is_some() => Ok(Meaning::Value(Kind::Object)),
                _ => fail(),
            },
            _ => return None,
        })
    }

    /// A str literal naming a module of [`COPYABLE`] the workers have: its index.
    fn copyable(&self, expr: &Expr) -> Option<u8> {
        let Expr::StringLiteral(s) = expr else {
            return None;
        };
        let module = s.value.to_str();
        let index = COPYABLE.iter().position(|m| *m == module)?;
        (stdlib_names::module(module) == stdlib_names::ModuleStatus::Known).then_some(index as u8)
    }

    /// After `name = value` was proved: mark a spec of a copyable module, or the module
    /// object made from one.
    pub fn mark_module_copy(&mut self, name: &str, value: &Expr) {
        let Expr::Call(call) = value else {
            return;
        };
        // Cheap first: every assignment of a call passes here.
        let callee = match call.func.as_ref() {
            Expr::Attribute(a) => a.attr.as_str(),
            Expr::Name(n) => n.id.as_str(),
            _ => return,
        };
        if !matches!(callee, "find_spec" | "module_from_spec") {
            return;
        }
        let Ok(Meaning::Qualified(q)) = self.value(&call.func) else {
            return;
        };
        let mark = match (q.as_str(), call.arguments.args.first()) {
            ("importlib.util.find_spec", Some(arg)) => self.copyable(arg).map(Mark::SpecOf),
            ("importlib.util.module_from_spec", Some(arg)) => name_of(arg)
                .and_then(|spec| self.spec_of(spec))
                .map(Mark::Unexecuted),
            _ => None,
        };
        if let Some(mark) = mark {
            self.env.mark(name, mark);
        }
    }

    /// `spec.loader.exec_module(m)` with a spec and the module object made from it: proved,
    /// and `m` is now the copy. `false` when the statement is no such call.
    pub fn exec_module_copy(&mut self, expr: &Expr) -> bool {
        let Expr::Call(call) = expr else {
            return false;
        };
        let (Expr::Attribute(exec), [module], true) = (
            call.func.as_ref(),
            call.arguments.args.as_ref(),
            call.arguments.keywords.is_empty(),
        ) else {
            return false;
        };
        let Expr::Attribute(loader) = exec.value.as_ref() else {
            return false;
        };
        let (Some(spec), Some(module)) = (name_of(&loader.value), name_of(module)) else {
            return false;
        };
        let Some(index) = self.spec_of(spec) else {
            return false;
        };
        if exec.attr.as_str() != "exec_module"
            || loader.attr.as_str() != "loader"
            || !self.env.has_mark(module, Mark::Unexecuted(index))
        {
            return false;
        }
        self.env.bind(
            module,
            Meaning::Module(COPYABLE[index as usize].to_string()),
        );
        self.env.mark(module, Mark::ModuleCopy);
        true
    }

    /// A store into the copy (`m.name = …`, non-dunder) or of the copy into `sys.modules`
    /// under a fresh name; `None` for other targets.
    pub fn module_copy_target(&self, target: &Expr, value: &Expr) -> Option<Proof<()>> {
        let is_copy = |e: &Expr| name_of(e).is_some_and(|n| self.env.has_mark(n, Mark::ModuleCopy));
        match target {
            Expr::Attribute(attr) if is_copy(&attr.value) => {
                Some(if is_dunder(attr.attr.as_str()) {
                    Err(Unproved::at(target.range(), Why::Target))
                } else {
                    Ok(())
                })
            }
            Expr::Subscript(sub) if is_copy(value) => {
                let Expr::Attribute(modules) = sub.value.as_ref() else {
                    return None;
                };
                let Expr::StringLiteral(key) = sub.slice.as_ref() else {
                    return None;
                };
                let key = key.value.to_str();
                let root = key.split('.').next().unwrap_or(key);
                let local = self.package.is_some_and(|p| {
                    p.ctx
                        .index
                        .modules()
                        .any(|m| m.split('.').next() == Some(root))
                });
                let fresh = !key.is_empty()
                    && !is_stdlib(root)
                    && !local
                    && !self.imported_modules.contains(root)
                    && root != self.module.split('.').next().unwrap_or(self.module);
                let registry = modules.attr.as_str() == "modules"
                    && self.value(&modules.value) == Ok(Meaning::Module("sys".into()));
                (registry && fresh).then_some(Ok(()))
            }
            _ => None,
        }
    }

    /// A name the copy binds (the table's names of its module), read through it.
    pub fn copy_attribute(&self, attr: &ExprAttribute) -> Option<Meaning> {
        let name = name_of(&attr.value)?;
        if !self.env.has_mark(name, Mark::ModuleCopy) {
            return None;
        }
        let Some(Meaning::Module(module)) = self.env.lookup(name) else {
            return None;
        };
        stdlib_names::binds(&module, attr.attr.as_str()).then_some(Meaning::Value(Kind::Other))
    }
}
