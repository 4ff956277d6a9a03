//! Ints of known bounds at import, and the operations on them that cannot fail for those
//! bounds (werkzeug.http's `_cookie_slash_map.update((v.to_bytes(1, "big"), b"\\%03o" % v)
//! for v in [*range(0x20), *b",;", *range(0x7F, 256)])`).
//!
//! | expression | accepted when | why it cannot raise |
//! | --- | --- | --- |
//! | a comprehension over `[*range(a[, b]), *b"..", 1, ...]` | every item a non-negative int literal, `*range()` of int literals (the builtin), or `*` a bytes literal | unpacking a range or bytes yields ints; the loop variable is an int in `0..n`, `n` one more than the largest item ([`super::env::Mark::IntBelow`]) |
//! | `v.to_bytes([length[, byteorder]])` | `v` an int in `0..n` with `n <= 256 ** length`, `length` an int literal `1..=8` (1 when absent), `byteorder` `"big"`/`"little"` (`"big"` when absent) | `int.to_bytes` raises `OverflowError` only for a value that does not fit `length` unsigned bytes, `ValueError` for another byte order |
//! | `b"..." % v` | `v` an int (a bool is refused); the bytes literal holds `%%` and exactly one conversion `d i o u x X` (any int) or `c` (`v` in `0..256`), with flags `-+ #0` and a width/precision of at most three digits, no `(key)` or `*` | `bytes.__mod__` with a non-tuple, non-mapping operand formats it as the one argument: `TypeError` when the literal holds no or two conversions or a conversion an int does not take (`%s`), `OverflowError` for `%c` outside `range(256)` |

use ruff_python_ast::{self as ast, Expr, ExprCall};

use super::Prover;
use super::comprehension::int_literal;
use super::env::{Kind, Meaning};

/// The largest width or precision (in digits) of a bytes conversion v2 accepts: a huge one
/// would allocate that many bytes.
const MAX_WIDTH_DIGITS: usize = 3;

impl Prover<'_> {
    /// The exclusive upper bound of the items of a display of non-negative ints: int
    /// literals, `*range(...)` of int literals and `*` bytes literals; `None` when an item is
    /// something else. `Some(0)` for an empty display.
    pub fn int_items_bound(&self, elts: &[Expr]) -> Option<u64> {
        let mut bound = 0u64;
        for elt in elts {
            let below = match elt {
                Expr::Starred(star) => match star.value.as_ref() {
                    Expr::BytesLiteral(b) => b.value.bytes().map(|b| u64::from(b) + 1).max()?,
                    Expr::Call(call) => self.range_bound(call)?,
                    _ => return None,
                },
                other => int_literal(other)?.checked_add(1)?,
            };
            bound = bound.max(below);
        }
        Some(bound)
    }

    /// `range(stop)` / `range(start, stop)` of non-negative int literals, the builtin: the
    /// exclusive bound of its items (`stop`, which may exceed them when empty).
    fn range_bound(&self, call: &ExprCall) -> Option<u64> {
        if !call.arguments.keywords.is_empty()
            || self.value(&call.func) != Ok(Meaning::Qualified("builtins.range".into()))
        {
            return None;
        }
        match &call.arguments.args[..] {
            [stop] | [_, stop] => {
                call.arguments
                    .args
                    .iter()
                    .try_for_each(|a| int_literal(a).map(drop))?;
                int_literal(stop)
            }
            _ => None,
        }
    }

    /// The exclusive bound of the int `expr` names ([`super::env::Mark::IntBelow`]), if v2 knows one.
    fn int_bound(&self, expr: &Expr) -> Option<u64> {
        let Expr::Name(n) = expr else {
            return None;
        };
        if self.env.lookup(n.id.as_str()) != Some(Meaning::Value(Kind::Int)) {
            return None;
        }
        self.env.int_below(n.id.as_str())
    }

    /// `v.to_bytes(...)` of a bounded int that fits (the table above): bytes.
    pub fn int_method(&self, call: &ExprCall) -> Option<Meaning> {
        let Expr::Attribute(method) = call.func.as_ref() else {
            return None;
        };
        if method.attr.as_str() != "to_bytes" || !call.arguments.keywords.is_empty() {
            return None;
        }
        let bound = self.int_bound(&method.value)?;
        let (length, order) = match &call.arguments.args[..] {
            [] => (1, None),
            [length] => (int_literal(length)?, None),
            [length, order] => (int_literal(length)?, Some(order)),
            _ => return None,
        };
        let order_ok = order.is_none_or(
            |o| matches!(o, Expr::StringLiteral(s) if matches!(s.value.to_str(), "big" | "little")),
        );
        // `length` unsigned bytes hold `0..256 ** length`.
        let fits = (1..=8).contains(&length) && u128::from(bound) <= 1u128 << (8 * length);
        (order_ok && fits).then_some(Meaning::Value(Kind::Bytes))
    }

    /// `b"..." % v` of an int by the rule of the table above: bytes.
    pub fn bytes_format(&self, b: &ast::ExprBinOp) -> Option<Meaning> {
        let Expr::BytesLiteral(format) = b.left.as_ref() else {
            return None;
        };
        if self.value(&b.right) != Ok(Meaning::Value(Kind::Int)) {
            return None;
        }
        let format: Vec<u8> = format.value.bytes().collect();
        let conversion = single_int_conversion(&format)?;
        let ok = conversion != b'c' || self.int_bound(&b.right).is_some_and(|n| n <= 256);
        ok.then_some(Meaning::Value(Kind::Bytes))
    }
}

/// The one conversion of a printf-style format, when it has exactly one and it formats any
/// int (`c`: an int in `range(256)`, checked by the caller); `%%` is a literal percent.
fn single_int_conversion(format: &[u8]) -> Option<u8> {
    let mut found = None;
    let mut rest = format;
    while let Some(at) = rest.iter().position(|&c| c == b'%') {
        rest = &rest[at + 1..];
        let flags = rest.iter().take_while(|c| b"-+ #0".contains(c)).count();
        rest = &rest[flags..];
        let width = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        rest = &rest[width..];
        let mut precision = 0;
        if rest.first() == Some(&b'.') {
            rest = &rest[1..];
            precision = rest.iter().take_while(|c| c.is_ascii_digit()).count();
            rest = &rest[precision..];
        }
        let length = rest.iter().take_while(|c| b"hlL".contains(c)).count();
        rest = &rest[length..];
        let (&conversion, tail) = rest.split_first()?;
        rest = tail;
        // CPython skips one `h`/`l`/`L` before the conversion character.
        if width > MAX_WIDTH_DIGITS || precision > MAX_WIDTH_DIGITS || length > 1 {
            return None;
        }
        match conversion {
            b'%' if flags + width + precision + length == 0 => {}
            b'd' | b'i' | b'o' | b'u' | b'x' | b'X' | b'c' if found.is_none() => {
                found = Some(conversion)
            }
            _ => return None,
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::single_int_conversion;

    #[test]
    fn one_int_conversion_per_format() {
        assert_eq!(single_int_conversion(b"\\%03o"), Some(b'o'));
        assert_eq!(single_int_conversion(b"%% %#x %%"), Some(b'x'));
        assert_eq!(single_int_conversion(b"%c"), Some(b'c'));
        assert_eq!(single_int_conversion(b"no conversion"), None);
        assert_eq!(single_int_conversion(b"%d %d"), None);
        assert_eq!(single_int_conversion(b"%s"), None);
        assert_eq!(single_int_conversion(b"%(k)d"), None);
        assert_eq!(single_int_conversion(b"%*d"), None);
        assert_eq!(single_int_conversion(b"%9999d"), None);
        assert_eq!(single_int_conversion(b"%"), None);
    }
}
