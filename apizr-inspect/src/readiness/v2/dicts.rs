//! Dicts the module builds itself, filled at import (werkzeug.http's
//! `_cookie_slash_map = {...}` then `_cookie_slash_map.update(<generator of pairs>)`).
//!
//! A name bound to a dict display or to `dict(...)` holds a new dict that only this module
//! reaches through that name ([`Mark::FreshDict`]; the mark goes with any rebinding, and a
//! name bound to the same dict through another name, an import or an attribute never gets
//! it). A top-level statement `D.update(arg)` of such a name changes only that dict, a value
//! of the module's own namespace, and cannot raise when (CPython's `dict_update_arg`):
//!
//! * `arg` is a dict display (its keys proved hashable): an exact dict, merged with
//!   `PyDict_Merge`; or
//! * `arg` is a generator v2 proves ([`super::comprehension`]) whose element is a display of
//!   two items, both hashable (the element's tuple is a hashable one): a generator has no
//!   `keys`, so `PyDict_MergeFromSeq2` takes each item as a sequence of length 2 (a
//!   `ValueError` for another length) and hashes its first item (`TypeError` when it is
//!   unhashable). The generator's items are ranges, literals or proved values, never `D`
//!   itself (a dict changing size while iterated raises `RuntimeError`).
//!
//! Not in a class body, and not in the body of a call of the module's own code
//! ([`super::pure`]): that body may be another module's function, whose globals are not this
//! module's.

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::Ranged;

use super::env::{Kind, Mark, Meaning};
use super::{Prover, Unproved, Why};

type Proof<T> = Result<T, Unproved>;

impl Prover<'_> {
    /// `value` (proved, a dict) builds a new dict: a display or a call of the builtin `dict`.
    pub fn builds_dict(&self, value: &Expr) -> bool {
        match value {
            Expr::Dict(_) => true,
            Expr::Call(call) => {
                self.value(&call.func) == Ok(Meaning::Qualified("builtins.dict".into()))
            }
            _ => false,
        }
    }

    /// `D.update(...)` as a statement of the top level, by the rule above; `None` when the
    /// statement is not one (the expression is then proved as any other).
    pub fn dict_update(&self, expr: &Expr) -> Option<Proof<()>> {
        let Expr::Call(call) = expr else {
            return None;
        };
        let Expr::Attribute(method) = call.func.as_ref() else {
            return None;
        };
        let Expr::Name(name) = method.value.as_ref() else {
            return None;
        };
        if method.attr.as_str() != "update"
            || !self.env.has_mark(name.id.as_str(), Mark::FreshDict)
            || self.env.lookup(name.id.as_str()) != Some(Meaning::Value(Kind::Dict))
            || self.local.in_class
            || self.local.calling()
        {
            return None;
        }
        Some(self.update_argument(call))
    }

    fn update_argument(&self, call: &ExprCall) -> Proof<()> {
        let fail = |range, why| Err(Unproved::at(range, why));
        let ([arg], true) = (&call.arguments.args[..], call.arguments.keywords.is_empty()) else {
            return fail(call.range(), Why::Arguments);
        };
        match arg {
            Expr::Dict(_) => self.value(arg).map(drop),
            Expr::Generator(generator) => {
                let Expr::Tuple(pair) = generator.elt.as_ref() else {
                    return fail(generator.elt.range(), Why::Arguments);
                };
                if pair.elts.len() != 2 {
                    return fail(generator.elt.range(), Why::Arguments);
                }
                match self.comprehension(&generator.elt, &generator.generators, arg)? {
                    Meaning::Value(Kind::Tuple) => Ok(()),
                    _ => fail(pair.elts[0].range(), Why::Unhashable),
                }
            }
            other => fail(other.range(), Why::Arguments),
        }
    }
}
