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
//!
//! `D[key] = value` of such a name, at the top level or in a class body (both run in this
//! module's import; werkzeug.serving's `_control_char_table[ord("\\")] = r"\\"`), stores
//! into an exact dict: `dict.__setitem__` raises only when hashing the key fails, so the key
//! must be hashable.
//!
//! Other dicts built here: `{k: v for x in ...}` ([`super::comprehension`], key and value
//! proved for every item, the key hashable), and `str.maketrans(d)` of a dict display or
//! comprehension whose keys are ints or one-character strings (`unicode_maketrans_impl`
//! copies int keys, converts one-character str keys to their code point and raises for any
//! other key; the values are not checked): a new dict.

use ruff_python_ast::{Expr, ExprCall, ExprDictComp};
use ruff_text_size::Ranged;

use super::env::{Kind, Mark, Meaning};
use super::{Prover, Unproved, Why};

type Proof<T> = Result<T, Unproved>;

impl Prover<'_> {
    /// `value` (proved, a dict) builds a new dict: a display or a call of the builtin `dict`.
    pub fn builds_dict(&self, value: &Expr) -> bool {
        match value {
            Expr::Dict(_) | Expr::DictComp(_) => true,
            Expr::Call(call) => matches!(
                self.value(&call.func),
                Ok(Meaning::Qualified(q)) if q == "builtins.dict" || q == "builtins.str.maketrans"
            ),
            _ => false,
        }
    }

    /// `{key: value for x in ...}`: both proved for every item, the key hashable.
    pub fn dict_comprehension(&self, d: &ExprDictComp, whole: &Expr) -> Proof<Meaning> {
        // `{**x for ...}` (no key) is not Python 3.11.
        let Some(key_expr) = d.key.as_deref() else {
            return Err(Unproved::at(whole.range(), Why::Expression));
        };
        let key = self.comprehension(key_expr, &d.generators, whole)?;
        self.comprehension(&d.value, &d.generators, whole)?;
        match key {
            Meaning::Value(kind) if !kind.hashable() => {
                Err(Unproved::at(key_expr.range(), Why::Unhashable))
            }
            Meaning::Unknown => Err(Unproved::at(key_expr.range(), Why::Unhashable)),
            _ => Ok(Meaning::Value(Kind::Dict)),
        }
    }

    /// The argument of `str.maketrans(d)` (the rule above): a dict display or comprehension
    /// whose keys are ints or one-character strings.
    pub fn maketrans_argument(&self, call: &ExprCall) -> Proof<Meaning> {
        let fail = |range, why| Err(Unproved::at(range, why));
        let ([table], true) = (&call.arguments.args[..], call.arguments.keywords.is_empty()) else {
            return fail(call.range(), Why::Arguments);
        };
        self.value(table)?;
        let one_char = |e: &Expr| self.str_value(e).is_some_and(|s| s.chars().count() == 1);
        match table {
            Expr::Dict(d) => {
                for item in &d.items {
                    let Some(key) = &item.key else {
                        return fail(table.range(), Why::Arguments);
                    };
                    if self.value(key)? != Meaning::Value(Kind::Int) && !one_char(key) {
                        return fail(key.range(), Why::Arguments);
                    }
                }
            }
            Expr::DictComp(d) => {
                let Some(key) = d.key.as_deref() else {
                    return fail(table.range(), Why::Arguments);
                };
                if self.comprehension(key, &d.generators, table)? != Meaning::Value(Kind::Int) {
                    return fail(key.range(), Why::Arguments);
                }
            }
            other => return fail(other.range(), Why::Arguments),
        }
        Ok(Meaning::Value(Kind::Dict))
    }

    /// `D[key] = ...` of a dict the module built (the rule above); `None` when the target is
    /// not one (the store is then refused as any other).
    pub fn dict_item_store(&self, target: &Expr) -> Option<Proof<()>> {
        let Expr::Subscript(sub) = target else {
            return None;
        };
        let Expr::Name(name) = sub.value.as_ref() else {
            return None;
        };
        if !self.env.has_mark(name.id.as_str(), Mark::FreshDict)
            || self.env.lookup(name.id.as_str()) != Some(Meaning::Value(Kind::Dict))
            || self.local.calling()
        {
            return None;
        }
        Some(if self.is_hashable_element(&sub.slice) {
            Ok(())
        } else {
            self.value(&sub.slice)
                .and(Err(Unproved::at(sub.slice.range(), Why::Unhashable)))
        })
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
