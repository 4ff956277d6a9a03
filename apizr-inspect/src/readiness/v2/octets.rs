//! Strings v2 folds from bytes built of int literals, decoded at import:
//! `_always_unsafe = bytes((*range(0x21), 0x25, 0x7F)).decode()` (werkzeug's URL quoting
//! tables) is a known string, so what is built from it (`_always_unsafe + "&=+#"`, a pattern)
//! is folded and checked like a literal ([`super::strings`]).
//!
//! | expression | accepted when | why it cannot raise, and its value |
//! | --- | --- | --- |
//! | `bytes(D)` | `bytes` the builtin, `D` a tuple or list display of int literals below 256 and `*range(a[, b])` with int literals `a`, `b` up to 256 (`range` the builtin) | `bytes` of an iterable of ints in `range(256)` takes them as they are (`ValueError` for others) |
//! | `b"..."` | a bytes literal | |
//! | `B.decode([encoding])` | `B` one of the above, no keywords, the encoding a literal: `utf-8` (`B` valid UTF-8), `ascii` (`B` ASCII), `latin-1` | the strict decoders accept exactly these bytes (`UnicodeDecodeError` otherwise); Rust's UTF-8 check refuses what CPython's does (overlong forms, surrogates, code points above U+10FFFF) |

use ruff_python_ast::{self as ast, Expr};

use super::Prover;
use super::comprehension::int_literal;
use super::env::Meaning;

/// The largest `range` bound accepted (every item must fit a byte).
const BYTE_RANGE: u64 = 256;

impl Prover<'_> {
    /// `B.decode(...)` of bytes v2 knows: the decoded string.
    pub fn decoded_bytes(&self, call: &ast::ExprCall) -> Option<String> {
        let Expr::Attribute(method) = call.func.as_ref() else {
            return None;
        };
        if method.attr.as_str() != "decode" || !call.arguments.keywords.is_empty() {
            return None;
        }
        let encoding = match &call.arguments.args[..] {
            [] => "utf-8".to_string(),
            [Expr::StringLiteral(e)] => e.value.to_str().to_ascii_lowercase(),
            _ => return None,
        };
        let octets = self.bytes_value(&method.value)?;
        match encoding.as_str() {
            "utf-8" | "utf8" => String::from_utf8(octets).ok(),
            "ascii" | "us-ascii" if octets.is_ascii() => String::from_utf8(octets).ok(),
            "latin-1" | "latin1" | "iso-8859-1" => {
                Some(octets.into_iter().map(char::from).collect())
            }
            _ => None,
        }
    }

    /// The value of a bytes literal or of `bytes(<display of byte values>)`.
    fn bytes_value(&self, expr: &Expr) -> Option<Vec<u8>> {
        let call = match expr {
            Expr::BytesLiteral(b) => return Some(b.value.bytes().collect()),
            Expr::Call(call) => call,
            _ => return None,
        };
        if !call.arguments.keywords.is_empty()
            || self.value(&call.func) != Ok(Meaning::Qualified("builtins.bytes".into()))
        {
            return None;
        }
        let items = match &call.arguments.args[..] {
            [Expr::Tuple(t)] => &t.elts,
            [Expr::List(l)] => &l.elts,
            _ => return None,
        };
        let mut out = Vec::new();
        for item in items {
            match item {
                Expr::Starred(starred) => out.extend(self.byte_range(&starred.value)?),
                other => out.push(u8::try_from(int_literal(other)?).ok()?),
            }
        }
        Some(out)
    }

    /// `range(a[, b])` of int literals within `0..=256`: its items (empty when `a >= b`).
    fn byte_range(&self, expr: &Expr) -> Option<Vec<u8>> {
        let Expr::Call(call) = expr else {
            return None;
        };
        if !call.arguments.keywords.is_empty()
            || self.value(&call.func) != Ok(Meaning::Qualified("builtins.range".into()))
        {
            return None;
        }
        let (start, stop) = match &call.arguments.args[..] {
            [stop] => (0, int_literal(stop)?),
            [start, stop] => (int_literal(start)?, int_literal(stop)?),
            _ => return None,
        };
        if stop > BYTE_RANGE {
            return None;
        }
        (start..stop).map(|b| u8::try_from(b).ok()).collect()
    }
}
