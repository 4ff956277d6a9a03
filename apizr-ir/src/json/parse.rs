//! The one JSON reader of the workspace, with exact integers ([`Value::BigInt`]) and two
//! dialects:
//!
//! * [`Dialect::Python`] — what Python's `json.loads` accepts, for input from users (JSON
//!   admission, manifests): the `NaN` / `Infinity` / `-Infinity` literals (so that the value
//!   budget can refuse them as non-finite, as the reference does, instead of failing as syntax
//!   errors), floats that overflow become infinities (refused the same way), the last
//!   duplicate key wins, integers longer than CPython's 4300-digit conversion limit are
//!   refused, and nesting is bounded at 512 as a last guard against stack exhaustion (callers
//!   run the lexical preflight first, which stops at 64).
//! * [`Dialect::Strict`] — RFC 8259 as Python's encoder writes it, for what workers send back:
//!   no non-finite literals, floats that overflow refused, duplicate keys refused, nesting
//!   bounded at 128 (the value budget is 64; the envelope adds one).
//!
//! Errors carry byte offsets and the reason texts of Python's `json` module
//! (`Expecting value`, `Expecting ',' delimiter`, …): `admission` turns them into Python's
//! full messages (`…: line 1 column 5 (char 4)`), which direct REST answers show.
//!
//! Why one reader: the two readers this replaces (admission and worker frames) had to agree on
//! strings, escapes, surrogates and numbers, and drifted apart in small ways.

use std::collections::BTreeMap;

use super::Value;

/// CPython's default `sys.get_int_max_str_digits()`.
pub const MAX_INT_DIGITS: usize = 4300;

/// Which JSON a document is read as (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Python,
    Strict,
}

impl Dialect {
    /// Deepest nesting read before [`ParseError::TooDeep`].
    pub fn max_depth(self) -> usize {
        match self {
            Dialect::Python => 512,
            Dialect::Strict => 128,
        }
    }
}

/// Why bytes are not a JSON document of the dialect.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// `reason` is Python's text where Python has one.
    #[error("invalid JSON at byte {offset}: {reason}")]
    Syntax { offset: usize, reason: &'static str },
    #[error("JSON nested deeper than {limit} at byte {offset}")]
    TooDeep { offset: usize, limit: usize },
    /// Python dialect: an integer beyond CPython's conversion limit.
    #[error("integer of {digits} digits exceeds the limit of {MAX_INT_DIGITS}")]
    IntDigits { digits: usize },
}

/// Read one document; surrounding whitespace is allowed, anything else is not.
pub fn parse(bytes: &[u8], dialect: Dialect) -> Result<Value, ParseError> {
    let mut p = Parser {
        bytes,
        pos: 0,
        dialect,
    };
    p.ws();
    let value = p.value(0)?;
    p.ws();
    if p.pos != bytes.len() {
        return Err(p.err("Extra data"));
    }
    Ok(value)
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
    dialect: Dialect,
}

impl Parser<'_> {
    fn err(&self, reason: &'static str) -> ParseError {
        self.err_at(self.pos, reason)
    }

    fn err_at(&self, offset: usize, reason: &'static str) -> ParseError {
        ParseError::Syntax { offset, reason }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn word(&mut self, word: &[u8], value: Value) -> Result<Value, ParseError> {
        if self.bytes.get(self.pos..self.pos + word.len()) == Some(word) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.err("Expecting value"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        let limit = self.dialect.max_depth();
        if depth > limit {
            return Err(ParseError::TooDeep {
                offset: self.pos,
                limit,
            });
        }
        let python = self.dialect == Dialect::Python;
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Value::Str(self.string()?)),
            Some(b'n') => self.word(b"null", Value::Null),
            Some(b't') => self.word(b"true", Value::Bool(true)),
            Some(b'f') => self.word(b"false", Value::Bool(false)),
            Some(b'N') if python => self.word(b"NaN", Value::Float(f64::NAN)),
            Some(b'I') if python => self.word(b"Infinity", Value::Float(f64::INFINITY)),
            Some(b'-') if python && self.bytes.get(self.pos + 1) == Some(&b'I') => {
                self.pos += 1;
                self.word(b"Infinity", Value::Float(f64::NEG_INFINITY))
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.err("Expecting value")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.pos += 1;
        let mut map = BTreeMap::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(map));
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(self.err("Expecting property name enclosed in double quotes"));
            }
            let key_at = self.pos;
            let key = self.string()?;
            self.ws();
            if self.peek() != Some(b':') {
                return Err(self.err("Expecting ':' delimiter"));
            }
            self.pos += 1;
            self.ws();
            let value = self.value(depth + 1)?;
            // Python keeps the last of duplicate keys; a worker's encoder never writes any.
            if map.insert(key, value).is_some() && self.dialect == Dialect::Strict {
                return Err(self.err_at(key_at, "Duplicate key"));
            }
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(map));
                }
                _ => return Err(self.err("Expecting ',' delimiter")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.pos += 1;
        let mut items = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.ws();
            items.push(self.value(depth + 1)?);
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.err("Expecting ',' delimiter")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let code = self
            .bytes
            .get(self.pos..self.pos + 4)
            .filter(|d| d.iter().all(u8::is_ascii_hexdigit))
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.err("Invalid \\uXXXX escape"))?;
        self.pos += 4;
        Ok(code)
    }

    /// A string; its bytes are checked as UTF-8 once it is complete.
    fn string(&mut self) -> Result<String, ParseError> {
        let quote = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            // Copy the run up to the next quote, backslash or control character at once.
            let run = self.bytes.get(self.pos..).unwrap_or_default();
            let plain = run
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .unwrap_or(run.len());
            out.extend_from_slice(run.get(..plain).unwrap_or_default());
            self.pos += plain;
            let Some(b) = self.peek() else {
                return Err(self.err_at(quote, "Unterminated string starting at"));
            };
            self.pos += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    let Some(e) = self.peek() else {
                        return Err(self.err_at(quote, "Unterminated string starting at"));
                    };
                    self.pos += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return Err(self.err_at(self.pos - 2, "Invalid \\escape")),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                _ => return Err(self.err_at(self.pos - 1, "Invalid control character at")),
            }
        }
        String::from_utf8(out).map_err(|_| self.err("invalid UTF-8"))
    }

    /// A `\uXXXX` escape, combining surrogate pairs. Lone surrogates (which Python keeps as
    /// unpaired code points) have no UTF-8 form and are refused.
    fn unicode_escape(&mut self) -> Result<char, ParseError> {
        let first = self.hex4()?;
        let code = if (0xd800..0xdc00).contains(&first)
            && self.bytes.get(self.pos..self.pos + 2) == Some(b"\\u")
        {
            self.pos += 2;
            let second = self.hex4()?;
            if !(0xdc00..0xe000).contains(&second) {
                return Err(self.err("unpaired surrogate"));
            }
            0x10000 + ((first - 0xd800) << 10) + (second - 0xdc00)
        } else {
            first
        };
        char::from_u32(code).ok_or_else(|| self.err("unpaired surrogate"))
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// A number as Python's scanner reads it: a fraction needs a digit after the point and an
    /// exponent needs digits (else the number ends before them).
    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err("Expecting value")),
        }
        let mut float = false;
        if self.peek() == Some(b'.') && self.bytes.get(self.pos + 1).is_some_and(u8::is_ascii_digit)
        {
            self.pos += 1;
            self.digits();
            float = true;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            let save = self.pos;
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                self.pos = save;
            } else {
                float = true;
            }
        }
        let text = std::str::from_utf8(self.bytes.get(start..self.pos).unwrap_or_default())
            .map_err(|_| self.err("Expecting value"))?;
        if float {
            let f: f64 = text.parse().map_err(|_| self.err("Expecting value"))?;
            if !f.is_finite() && self.dialect == Dialect::Strict {
                return Err(self.err_at(start, "Float out of range"));
            }
            return Ok(Value::Float(f));
        }
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Value::Int(i));
        }
        let body = text.strip_prefix('-').unwrap_or(text);
        if body.len() > MAX_INT_DIGITS && self.dialect == Dialect::Python {
            return Err(ParseError::IntDigits { digits: body.len() });
        }
        Ok(Value::BigInt(text.to_string()))
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
