//! Generators whose items v2 folds, so that joining them gives a known string:
//! `choices = "|".join(f"{ord(c):02X}" for c in sorted(chars))` in werkzeug's
//! `_make_unquote_part`, whose result feeds `re.compile` ([`super::strings`]).
//!
//! | form | accepted when | value |
//! | --- | --- | --- |
//! | `(E for x in S)` | one `for`, no condition, not async, not in a class body; `S` a known string (its characters), a tuple or list of known strings, or `sorted(...)` of one (`sorted` the builtin); at most [`MAX_ITEMS`] items; `E` a string v2 folds with `x` bound to each item | the items in order (`sorted` orders strs by code point, as Rust does) |
//! | `ord(c)` | `ord` the builtin, `c` a known string of one character | its code point |
//! | `{n:spec}` in an f-string | `n` an int literal or such an `ord`, `spec` a literal `[0][width][d|x|X|o|b]` | `format(n, spec)`: right-aligned, padded with `0` or spaces to `width` |
//!
//! Each item is folded by the same rules as any string ([`Prover::str_value`]), which only
//! folds what cannot raise, so the generator cannot raise either.

use ruff_python_ast::{self as ast, Expr, Number};

use super::Prover;
use super::env::{Kind, Meaning};

/// Items a folded generator may have (bounds the work of folding).
pub const MAX_ITEMS: usize = 4096;

impl Prover<'_> {
    /// The items of a generator v2 folds.
    pub fn folded_generator(&self, generator: &ast::ExprGenerator) -> Option<Vec<String>> {
        let [comprehension] = &generator.generators[..] else {
            return None;
        };
        if self.local.in_class || comprehension.is_async || !comprehension.ifs.is_empty() {
            return None;
        }
        let Expr::Name(target) = &comprehension.target else {
            return None;
        };
        let items = self.folded_items(&comprehension.iter)?;
        if items.len() > MAX_ITEMS {
            return None;
        }
        // The loop variable lives in the generator's scope; every other name is the module's.
        let mut scope = self.nested(self.local.clone());
        items
            .into_iter()
            .map(|item| {
                scope.env.bind_str(target.id.as_str(), item);
                scope.str_value(&generator.elt)
            })
            .collect()
    }

    /// What a folded generator iterates over: a known string's characters, a tuple or list of
    /// known strings, `sorted()` of either.
    fn folded_items(&self, iter: &Expr) -> Option<Vec<String>> {
        if let Expr::Call(call) = iter
            && self.is_builtin_function(&call.func, "sorted")
        {
            let ([items], true) = (&call.arguments.args[..], call.arguments.keywords.is_empty())
            else {
                return None;
            };
            let mut items = self.folded_items(items)?;
            // Python orders strs by code point, as Rust orders `String`s.
            items.sort();
            return Some(items);
        }
        if let Some(items) = self.str_sequence(iter) {
            return Some(items);
        }
        Some(self.str_value(iter)?.chars().map(String::from).collect())
    }

    /// `func` is the builtin function `name` (not rebound by the module).
    fn is_builtin_function(&self, func: &Expr, name: &str) -> bool {
        matches!(func, Expr::Name(n) if n.id.as_str() == name)
            && !self.env.shadows(name)
            && self.value(func) == Ok(Meaning::Value(Kind::Object))
    }

    /// An int v2 knows the value of: a literal, or `ord()` of a one-character known string.
    pub fn int_value(&self, expr: &Expr) -> Option<u64> {
        match expr {
            Expr::NumberLiteral(n) => match &n.value {
                Number::Int(i) => i.as_u64(),
                _ => None,
            },
            Expr::Call(call) if self.is_builtin_function(&call.func, "ord") => {
                let ([arg], true) = (&call.arguments.args[..], call.arguments.keywords.is_empty())
                else {
                    return None;
                };
                let text = self.str_value(arg)?;
                let mut chars = text.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Some(u64::from(u32::from(c))),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// `format(value, spec)` for a non-negative int and a spec `[0][width][d|x|X|o|b]`; `None`
/// for any other spec (fill, alignment, sign, grouping, precision, other types).
pub fn format_int(value: u64, spec: &str) -> Option<String> {
    let (zero, rest) = match spec.strip_prefix('0') {
        Some(rest) => (true, rest),
        None => (false, spec),
    };
    let digits_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (width, kind) = rest.split_at(digits_end);
    let width: usize = if width.is_empty() {
        0
    } else {
        // A width beyond this is refused (Python raises for absurd widths; none is needed).
        width.parse().ok().filter(|w| *w <= 64)?
    };
    let digits = match kind {
        "" | "d" => value.to_string(),
        "x" => format!("{value:x}"),
        "X" => format!("{value:X}"),
        "o" => format!("{value:o}"),
        "b" => format!("{value:b}"),
        _ => return None,
    };
    let pad = if zero { '0' } else { ' ' };
    let padding: String = std::iter::repeat_n(pad, width.saturating_sub(digits.len())).collect();
    Some(padding + &digits)
}

/// A format spec without nested fields (`02X`), as written.
pub fn literal_spec(spec: &ast::InterpolatedStringFormatSpec) -> Option<String> {
    spec.elements
        .iter()
        .map(|element| match element {
            ast::InterpolatedStringElement::Literal(l) => Some(l.value.to_string()),
            ast::InterpolatedStringElement::Interpolation(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::format_int;

    #[test]
    fn int_specs_format_as_python_does() {
        // `format(0x7F, "02X")`, `format(5, "02X")`, `format(5, "3")`, `format(8, "o")`.
        assert_eq!(format_int(0x7F, "02X").as_deref(), Some("7F"));
        assert_eq!(format_int(5, "02X").as_deref(), Some("05"));
        assert_eq!(format_int(5, "3").as_deref(), Some("  5"));
        assert_eq!(format_int(8, "o").as_deref(), Some("10"));
        assert_eq!(format_int(255, "08b").as_deref(), Some("11111111"));
        assert_eq!(format_int(5, "<3"), None);
        assert_eq!(format_int(5, ",d"), None);
        assert_eq!(format_int(5, "02s"), None);
    }
}
