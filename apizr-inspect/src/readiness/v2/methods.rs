//! Methods of strings whose value v2 folds ([`super::strings`]), called at import.
//!
//! Each rule below is exact for the values it accepts, so the result is a known string again
//! (and may feed `re.compile`), or it is not proved:
//!
//! | call | accepted when | why it cannot raise |
//! | --- | --- | --- |
//! | `sep.join(items)` | `items` a list or tuple of known strings ([`Prover::str_sequence`]: a display, a name bound to one, a tuple of a proved sibling module), or a known string | every item is a str |
//! | `fmt.format(*args, **kwargs)` | fields are `{}`, `{0}` or `{name}` (no conversion, spec, attribute or index), numbering not mixed, every field has a known string argument | a str formats as itself; `{{`/`}}` are escapes; a lone brace or a missing argument is refused |
//! | `s.upper()`, `s.lower()` | `s` is ASCII | ASCII case mapping is Rust's and Python's alike |
//! | `s.strip()`, `s.lstrip()`, `s.rstrip()` | no argument and `s` ASCII (Python's ASCII whitespace is ` \t\n\r\x0b\x0c\x1c-\x1f`), or a known string of characters | |
//! | `s.replace(old, new)` | both known, `old` not empty | |
//! | `s.encode([encoding])` | `utf-8` (no U+FFFD in `s`: the parser turns a lone surrogate, which `utf-8` refuses, into it), `ascii` (`s` ASCII), `latin-1` (`s` below U+0100); the encoding a literal | gives bytes ([`Prover::method_call`]) |

use ruff_python_ast::{Expr, ExprCall};

use super::Prover;
use super::env::{Kind, Meaning};

/// Python's whitespace among ASCII characters (`str.isspace`).
const ASCII_WHITESPACE: &[char] = &[
    ' ', '\t', '\n', '\r', '\x0b', '\x0c', '\x1c', '\x1d', '\x1e', '\x1f',
];

impl Prover<'_> {
    /// The value of a str method call on a known string, when v2 folds it.
    pub fn str_method(&self, call: &ExprCall) -> Option<String> {
        let Expr::Attribute(method) = call.func.as_ref() else {
            return None;
        };
        let receiver = self.str_value(&method.value)?;
        let args = &call.arguments.args;
        let keywords = &call.arguments.keywords;
        if method.attr.as_str() != "format" && !keywords.is_empty() {
            return None;
        }
        let ascii = receiver.is_ascii();
        match (method.attr.as_str(), &args[..]) {
            ("join", [items]) => {
                let items: Vec<String> = match self.str_sequence(items) {
                    Some(items) => items,
                    None => self.str_value(items)?.chars().map(String::from).collect(),
                };
                Some(items.join(&receiver))
            }
            ("format", _) => self.format(&receiver, call),
            ("upper", []) if ascii => Some(receiver.to_ascii_uppercase()),
            ("lower", []) if ascii => Some(receiver.to_ascii_lowercase()),
            ("strip", []) if ascii => Some(receiver.trim_matches(ASCII_WHITESPACE).to_string()),
            ("lstrip", []) if ascii => {
                Some(receiver.trim_start_matches(ASCII_WHITESPACE).to_string())
            }
            ("rstrip", []) if ascii => {
                Some(receiver.trim_end_matches(ASCII_WHITESPACE).to_string())
            }
            ("strip" | "lstrip" | "rstrip", [chars]) => {
                let chars: Vec<char> = self.str_value(chars)?.chars().collect();
                let set = |c: char| chars.contains(&c);
                Some(
                    match method.attr.as_str() {
                        "strip" => receiver.trim_matches(set),
                        "lstrip" => receiver.trim_start_matches(set),
                        _ => receiver.trim_end_matches(set),
                    }
                    .to_string(),
                )
            }
            ("replace", [old, new]) => {
                let old = self.str_value(old)?;
                let new = self.str_value(new)?;
                (!old.is_empty()).then(|| receiver.replace(&old, &new))
            }
            _ => None,
        }
    }

    /// A method call v2 proves that does not give a known string: `s.encode(...)` of a known
    /// string (bytes). `None` when the call is not one of these.
    pub fn method_call(&self, call: &ExprCall) -> Option<Meaning> {
        let Expr::Attribute(method) = call.func.as_ref() else {
            return None;
        };
        if method.attr.as_str() != "encode" || !call.arguments.keywords.is_empty() {
            return None;
        }
        let text = self.str_value(&method.value)?;
        let encoding = match &call.arguments.args[..] {
            [] => "utf-8".to_string(),
            [Expr::StringLiteral(e)] => e.value.to_str().to_ascii_lowercase(),
            _ => return None,
        };
        let encodes = match encoding.as_str() {
            "utf-8" | "utf8" => !text.contains('\u{FFFD}'),
            "ascii" | "us-ascii" => text.is_ascii(),
            "latin-1" | "latin1" | "iso-8859-1" => text.chars().all(|c| u32::from(c) < 0x100),
            _ => false,
        };
        encodes.then_some(Meaning::Value(Kind::Bytes))
    }

    /// `fmt.format(...)` with the rules of the table above.
    fn format(&self, fmt: &str, call: &ExprCall) -> Option<String> {
        let positional = call
            .arguments
            .args
            .iter()
            .map(|e| self.str_value(e))
            .collect::<Option<Vec<_>>>()?;
        let mut named = Vec::new();
        for keyword in &call.arguments.keywords {
            named.push((
                keyword.arg.as_ref()?.as_str(),
                self.str_value(&keyword.value)?,
            ));
        }
        let mut out = String::with_capacity(fmt.len());
        let mut chars = fmt.chars().peekable();
        // Automatic (`{}`) and manual (`{0}`) numbering cannot be mixed (`ValueError`).
        let (mut auto, mut manual) = (0usize, false);
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    out.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    out.push('}');
                }
                '}' => return None,
                '{' => {
                    let mut field = String::new();
                    loop {
                        match chars.next()? {
                            '}' => break,
                            c if c.is_alphanumeric() || c == '_' => field.push(c),
                            _ => return None,
                        }
                    }
                    let value = if field.is_empty() {
                        if manual {
                            return None;
                        }
                        auto += 1;
                        positional.get(auto - 1)?
                    } else if field.chars().all(|c| c.is_ascii_digit()) {
                        if auto > 0 {
                            return None;
                        }
                        manual = true;
                        positional.get(field.parse::<usize>().ok()?)?
                    } else if super::names::is_identifier(&field) {
                        &named.iter().find(|(n, _)| *n == field)?.1
                    } else {
                        return None;
                    };
                    out.push_str(value);
                }
                c => out.push(c),
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ascii_whitespace_is_pythons() {
        // `"".join(c for c in map(chr, range(128)) if c.isspace())` in CPython.
        let python: Vec<char> = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f ".chars().collect();
        let mut ours = super::ASCII_WHITESPACE.to_vec();
        ours.sort_unstable();
        assert_eq!(ours, python);
    }
}
