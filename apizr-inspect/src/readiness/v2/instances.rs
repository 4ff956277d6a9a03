//! What calling a class the module proved runs, so that `C(...)` at import is proved without
//! running anything v2 cannot see. Decided once, when the class statement is proved, and
//! carried with the class ([`super::env::ClassInfo::init`]) — also to the modules that import
//! it from a proved sibling ([`super::package::Exports`]), so no body is walked again per call.
//!
//! * [`Init::Object`] — a plain class without metaclass whose bases are `object` or such
//!   classes, none binding `__new__`, `__init__` or `__del__`: `C()` runs `object.__new__` and
//!   `object.__init__` only (with arguments, `object.__new__` raises `TypeError`).
//! * [`Init::Fields`] — a `NamedTuple` class: its `__new__` is the one `collections.namedtuple`
//!   generates (the class body may not replace it, [`super::class`]), which builds the tuple of
//!   its fields. A call whose arguments fit the fields (positional in order, keywords by name,
//!   each once, every field without default given) runs nothing else; any other call raises
//!   `TypeError`.
//! * [`Init::Stores`] — a plain class, bases none, `object` or `dict`, without metaclass, whose
//!   only lifecycle method is one `def __init__(self, ...)` — no decorators, `*args`,
//!   `**kwargs`, positional-only parameters or a parameter named `super` — with a body of
//!   `self.<name> = <parameter or literal>` and `super().__init__()`. `object.__new__` and
//!   `dict.__new__` accept the arguments when `__init__` is overridden; the stores run
//!   `object.__setattr__` into the instance's `__dict__` because `<name>` is not a dunder and
//!   the class body binds neither `<name>` (no descriptor, e.g. a property, can intercept it)
//!   nor `__setattr__` — or, when the body binds `__slots__` (checked by [`super::slots`]),
//!   `<name>` is one of the slots, whose member descriptor stores any value (instances of a
//!   slotted class with an `object` or `dict` base have no `__dict__`: any other name raises
//!   `AttributeError`); `super().__init__()` is `object.__init__` or `dict.__init__`
//!   with no arguments, provided `super` is still the builtin where `__init__` runs (checked at
//!   each call in the module, and at the end of the module for the importers).
//!
//! No instance of a class whose body binds `__set_name__` is proved: storing one in a class
//! body would run it when that class is created.

use std::hash::{DefaultHasher, Hash, Hasher};

use ruff_python_ast::{self as ast, Expr, Stmt};

/// The most parameters (or fields) v2 records for a call.
pub const MAX_PARAMS: usize = 8;

/// What calling a class runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Init {
    /// Not proved: calling the class is not proved harmless.
    #[default]
    Unknown,
    /// `object.__new__` and `object.__init__` only: `C()` without arguments.
    Object,
    /// A `NamedTuple`'s generated `__new__` over these fields.
    Fields(Signature),
    /// An `__init__` of attribute stores; `super_call` when it runs `super().__init__()`.
    Stores {
        signature: Signature,
        super_call: bool,
    },
}

/// The parameters a call must fit: names (hashed), which are positional, which required.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Signature {
    names: [u64; MAX_PARAMS],
    len: u8,
    /// The first `positional` names may be passed by position.
    positional: u8,
    /// Bit `i`: parameter `i` has no default.
    required: u8,
}

impl Signature {
    /// Append a parameter; `None` when there are too many, or a positional one follows a
    /// keyword-only one.
    fn push(&mut self, name: &str, positional: bool, required: bool) -> Option<()> {
        let index = usize::from(self.len);
        if index >= MAX_PARAMS || positional && self.positional != self.len {
            return None;
        }
        self.names[index] = hash(name);
        if positional {
            self.positional += 1;
        }
        if required {
            self.required |= 1 << index;
        }
        self.len += 1;
        Some(())
    }

    /// Python binds these arguments to the parameters without `TypeError`: positional ones in
    /// order, keywords by name, each parameter at most once, every required one given.
    pub fn fits(&self, arguments: &ast::Arguments) -> bool {
        let mut given: u8 = 0;
        if arguments.args.len() > usize::from(self.positional)
            || arguments.args.iter().any(|a| matches!(a, Expr::Starred(_)))
        {
            return false;
        }
        for index in 0..arguments.args.len() {
            given |= 1 << index;
        }
        for keyword in &arguments.keywords {
            let Some(name) = &keyword.arg else {
                return false;
            };
            let wanted = hash(name.as_str());
            let Some(index) = self.names[..usize::from(self.len)]
                .iter()
                .position(|n| *n == wanted)
            else {
                return false;
            };
            if given & (1 << index) != 0 {
                return false;
            }
            given |= 1 << index;
        }
        self.required & !given == 0
    }
}

fn hash(name: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    name.hash(&mut hasher);
    hasher.finish()
}

/// The signature of a `NamedTuple`'s fields (name, has a default), in order.
pub fn fields(fields: &[(&str, bool)]) -> Option<Signature> {
    let mut out = Signature::default();
    for (name, default) in fields {
        out.push(name, true, !default)?;
    }
    Some(out)
}

/// The class body binds a name that makes its instances run code v2 does not follow.
pub fn runs_code_when_stored(bound: &[&str]) -> bool {
    bound.contains(&"__set_name__")
}

/// `def` is an `__init__` of attribute stores ([`Init::Stores`]) in class `class` whose body
/// binds `bound`: its signature without `self`, and whether it calls `super().__init__()`.
pub fn stores_init(
    class: &ast::StmtClassDef,
    def: &ast::StmtFunctionDef,
    bound: &[&str],
) -> Option<Init> {
    let slots = if bound.contains(&"__slots__") {
        Some(slot_names(class)?)
    } else {
        None
    };
    let params = &def.parameters;
    if !super::pure::plain_def(def)
        || !params.posonlyargs.is_empty()
        || bound
            .iter()
            .any(|n| matches!(*n, "__setattr__" | "__new__" | "__del__"))
        || bound.iter().filter(|n| **n == "__init__").count() != 1
    {
        return None;
    }
    let (this, rest) = params.args.split_first()?;
    if this.default.is_some() {
        return None;
    }
    let this = this.name().as_str();
    let mut signature = Signature::default();
    let mut names = vec![this];
    for (param, positional) in rest
        .iter()
        .map(|p| (p, true))
        .chain(params.kwonlyargs.iter().map(|p| (p, false)))
    {
        let name = param.name().as_str();
        names.push(name);
        signature.push(name, positional, param.default.is_none())?;
    }
    // A parameter named `super` would be what `super()` calls.
    if names.contains(&"super") {
        return None;
    }
    let body = super::pure::body_after_docstring(def);
    let mut super_call = false;
    for stmt in body {
        match stmt {
            Stmt::Pass(_) => {}
            Stmt::Assign(assign) => {
                let [Expr::Attribute(target)] = assign.targets.as_slice() else {
                    return None;
                };
                let attr = target.attr.as_str();
                let on_self =
                    matches!(target.value.as_ref(), Expr::Name(n) if n.id.as_str() == this);
                let slotted = slots.as_ref().is_none_or(|slots| slots.contains(&attr));
                if !on_self || is_dunder(attr) || bound.contains(&attr) || !slotted {
                    return None;
                }
                let plain = match assign.value.as_ref() {
                    Expr::Name(n) => names.contains(&n.id.as_str()),
                    value => is_literal(value),
                };
                if !plain {
                    return None;
                }
            }
            Stmt::Expr(e) if is_super_init(&e.value) => super_call = true,
            _ => return None,
        }
    }
    Some(Init::Stores {
        signature,
        super_call,
    })
}

/// The names of the one `__slots__ = <string or display of strings>` of the class body.
fn slot_names(class: &ast::StmtClassDef) -> Option<Vec<&str>> {
    let mut values = class.body.iter().filter_map(|stmt| match stmt {
        Stmt::Assign(assign)
            if matches!(assign.targets.as_slice(), [Expr::Name(n)] if n.id.as_str() == "__slots__") =>
        {
            Some(assign.value.as_ref())
        }
        _ => None,
    });
    let (Some(value), None) = (values.next(), values.next()) else {
        return None;
    };
    let items: Vec<&Expr> = match value {
        Expr::StringLiteral(_) => vec![value],
        Expr::Tuple(t) => t.elts.iter().collect(),
        Expr::List(l) => l.elts.iter().collect(),
        _ => return None,
    };
    items
        .into_iter()
        .map(|item| match item {
            Expr::StringLiteral(s) => Some(s.value.to_str()),
            _ => None,
        })
        .collect()
}

/// The classes a module exports, as its importers call them: after the module ran, with
/// `super` shadowed (`super_shadowed`) an `__init__` calling `super().__init__()` is not the
/// one v2 proved.
pub fn settle_exports(exports: &mut super::package::Exports, super_shadowed: bool) {
    if !super_shadowed {
        return;
    }
    for export in exports.values_mut() {
        if let super::env::Meaning::Class(info) = &mut export.meaning
            && matches!(
                info.init,
                Init::Stores {
                    super_call: true,
                    ..
                }
            )
        {
            info.init = Init::Unknown;
        }
    }
}

/// `super().__init__()`, no arguments anywhere.
fn is_super_init(expr: &Expr) -> bool {
    let Expr::Call(call) = expr else {
        return false;
    };
    let Expr::Attribute(attribute) = call.func.as_ref() else {
        return false;
    };
    let Expr::Call(inner) = attribute.value.as_ref() else {
        return false;
    };
    call.arguments.is_empty()
        && attribute.attr.as_str() == "__init__"
        && inner.arguments.is_empty()
        && matches!(inner.func.as_ref(), Expr::Name(n) if n.id.as_str() == "super")
}

fn is_literal(expr: &Expr) -> bool {
    matches!(
        expr,
        Expr::NumberLiteral(_)
            | Expr::StringLiteral(_)
            | Expr::BytesLiteral(_)
            | Expr::BooleanLiteral(_)
            | Expr::NoneLiteral(_)
            | Expr::EllipsisLiteral(_)
    )
}

fn is_dunder(name: &str) -> bool {
    name.len() > 4 && name.starts_with("__") && name.ends_with("__")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(source: &str) -> ast::ExprCall {
        let parsed = ruff_python_parser::parse_expression(source).unwrap();
        match parsed.into_expr() {
            Expr::Call(call) => call,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn calls_fit_a_signature_as_python_binds_them() {
        // def __init__(self, a, b=1, *, c, d=2)
        let mut s = Signature::default();
        s.push("a", true, true).unwrap();
        s.push("b", true, false).unwrap();
        s.push("c", false, true).unwrap();
        s.push("d", false, false).unwrap();
        assert!(
            s.push("e", true, true).is_none(),
            "positional after keyword-only"
        );
        for (source, fits) in [
            ("C(1, c=3)", true),
            ("C(1, 2, c=3, d=4)", true),
            ("C(a=1, c=3)", true),
            ("C(c=3, b=2, a=1)", true),
            ("C(1)", false),
            ("C(1, 2, 3)", false),
            ("C(1, a=1, c=3)", false),
            ("C(1, c=3, e=5)", false),
            ("C(*x, c=3)", false),
            ("C(1, **k)", false),
        ] {
            assert_eq!(s.fits(&call(source).arguments), fits, "{source}");
        }
    }
}
