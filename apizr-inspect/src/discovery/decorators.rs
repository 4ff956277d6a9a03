//! The single inert decorator: the tracking SDK's `experiment`.
//!
//! Every other decorator may replace the function binding (CAP-005, availability unknown). The
//! exception holds only when all of these are true (each one probed against the oracle):
//!
//! * the implementation has exactly one decorator and is not a (async) generator;
//! * the decorator is `experiment` / `X.experiment` / `apizr.tracking.experiment`, optionally
//!   called, whose root name has exactly one module binding: a direct, earlier import of the right
//!   kind (`from apizr.tracking import experiment [as e]`, `import apizr.tracking as t`,
//!   `from apizr import tracking [as t]`, `import apizr.tracking`);
//! * the module has no star import, no namespace/dynamic-import call and no attribute/subscript
//!   store in module scope;
//! * a call has no positional arguments and only literal keywords: `parameters` (list/tuple of
//!   distinct parameter names), `root`/`store`/`source` (str ≤ 4096 chars or None),
//!   `distributions` (list/tuple of ≤ 256 str ≤ 4096 chars), `max_file_bytes` (int 1..=2**40).

use std::collections::HashSet;

use ruff_python_ast::{Expr, StmtFunctionDef};
use ruff_text_size::{Ranged, TextSize};

use crate::facts::{BindingKind, ModuleFacts};

const MAX_TEXT_CHARS: usize = 4096;
const MAX_DISTRIBUTIONS: usize = 256;
const MAX_FILE_BYTES: i64 = 1 << 40;

/// True when the function's decorators are exactly one inert `experiment` decorator.
pub fn is_inert(def: &StmtFunctionDef, generator: bool, facts: &ModuleFacts) -> bool {
    let [decorator] = def.decorator_list.as_slice() else {
        return false;
    };
    if generator || facts.disqualifies_inert_decorator() {
        return false;
    }
    let def_start = def.start();
    match &decorator.expression {
        Expr::Call(call) => {
            call.arguments.args.is_empty()
                && is_experiment_reference(&call.func, facts, def_start)
                && keywords_are_literal(def, &call.arguments.keywords)
        }
        other => is_experiment_reference(other, facts, def_start),
    }
}

fn earlier_unique<'f, 'a>(
    facts: &'f ModuleFacts<'a>,
    name: &str,
    def_start: TextSize,
) -> Option<&'f BindingKind<'a>> {
    facts
        .unique_earlier_binding(name, def_start)
        .map(|b| &b.kind)
}

fn is_experiment_reference(expr: &Expr, facts: &ModuleFacts, def_start: TextSize) -> bool {
    match expr {
        Expr::Name(name) => earlier_unique(facts, name.id.as_str(), def_start)
            .is_some_and(|kind| kind.is_from_import("apizr.tracking", "experiment")),
        Expr::Attribute(attribute) if attribute.attr.as_str() == "experiment" => {
            match attribute.value.as_ref() {
                Expr::Name(root) => {
                    earlier_unique(facts, root.id.as_str(), def_start).is_some_and(|kind| {
                        matches!(kind, BindingKind::Import { module, renamed: true }
                            if *module == "apizr.tracking")
                            || kind.is_from_import("apizr", "tracking")
                    })
                }
                Expr::Attribute(inner) if inner.attr.as_str() == "tracking" => {
                    matches!(inner.value.as_ref(), Expr::Name(root)
                    if root.id.as_str() == "apizr" && matches!(
                        earlier_unique(facts, "apizr", def_start),
                        Some(BindingKind::Import { module, renamed: false })
                            if *module == "apizr.tracking"
                    ))
                }
                _ => false,
            }
        }
        _ => false,
    }
}

fn keywords_are_literal(def: &StmtFunctionDef, keywords: &[ruff_python_ast::Keyword]) -> bool {
    let mut seen = HashSet::new();
    keywords.iter().all(|keyword| {
        let Some(arg) = &keyword.arg else {
            return false;
        };
        let name = arg.as_str();
        seen.insert(name)
            && match name {
                "parameters" => parameters_ok(def, &keyword.value),
                "root" | "store" | "source" => {
                    matches!(&keyword.value, Expr::NoneLiteral(_)) || short_text(&keyword.value)
                }
                "distributions" => string_items(&keyword.value).is_some_and(|items| {
                    items.len() <= MAX_DISTRIBUTIONS
                        && items.iter().all(|s| s.chars().count() <= MAX_TEXT_CHARS)
                }),
                "max_file_bytes" => match &keyword.value {
                    Expr::NumberLiteral(number) => match &number.value {
                        ruff_python_ast::Number::Int(int) => int
                            .as_i64()
                            .is_some_and(|v| (1..=MAX_FILE_BYTES).contains(&v)),
                        _ => false,
                    },
                    _ => false,
                },
                _ => false,
            }
    })
}

fn short_text(expr: &Expr) -> bool {
    matches!(expr, Expr::StringLiteral(s) if s.value.to_str().chars().count() <= MAX_TEXT_CHARS)
}

/// The items of a list/tuple display made only of string constants.
fn string_items(expr: &Expr) -> Option<Vec<&str>> {
    let elements = match expr {
        Expr::List(list) => &list.elts,
        Expr::Tuple(tuple) => &tuple.elts,
        _ => return None,
    };
    elements
        .iter()
        .map(|e| match e {
            Expr::StringLiteral(s) => Some(s.value.to_str()),
            _ => None,
        })
        .collect()
}

fn parameters_ok(def: &StmtFunctionDef, value: &Expr) -> bool {
    let Some(items) = string_items(value) else {
        return false;
    };
    let declared: HashSet<&str> = def
        .parameters
        .iter_non_variadic_params()
        .map(|p| p.parameter.name.as_str())
        .collect();
    let mut seen = HashSet::new();
    items
        .iter()
        .all(|item| declared.contains(item) && seen.insert(*item))
}
