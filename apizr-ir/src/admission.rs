//! JSON admission (contract 1.5), shared by `apizr execute`, HTTP and MCP surfaces.
//!
//! Three pure steps, in the order callers apply them:
//!
//! 1. [`preflight`] — a lexical scan of the raw bytes before any parser runs: byte limit, node
//!    count (openers, strings and scalar runs) and depth, so hostile input is refused in linear
//!    time and bounded memory. It is not a syntax validator.
//! 2. [`parse_permissive`] — a decoder with Python `json.loads` semantics: it accepts the
//!    `NaN` / `Infinity` / `-Infinity` literals (so they can be *rejected as non-finite* by step
//!    3, exactly like the reference, instead of failing as syntax errors), keeps integers exact
//!    ([`Value::BigInt`]), lets the last duplicate key win, and refuses integers longer than
//!    CPython's 4300-digit conversion limit.
//! 3. [`check_budget`] — the value-graph budget: finite floats, at most 100,000 nodes (keys
//!    count), depth 64, and a compact wire size limit.

use std::collections::BTreeMap;

use crate::json::Value;

/// Node limit of both the lexical preflight and the value budget.
pub const MAX_NODES: usize = 100_000;
/// Depth limit of both the lexical preflight and the value budget.
pub const MAX_DEPTH: usize = 64;
/// Default wire-size limit of the value budget (64 MiB).
pub const DEFAULT_VALUE_BYTES: u64 = 64 * 1024 * 1024;
/// CPython's default `sys.get_int_max_str_digits()`.
pub const MAX_INT_DIGITS: usize = 4300;
/// Hard recursion bound of the parser when called without a preflight.
const PARSE_DEPTH_LIMIT: usize = 512;

/// Why a JSON document was not admitted. `code()` gives the wire code where one exists.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdmissionError {
    #[error("JSON document exceeds {limit} bytes")]
    ByteLimit { limit: u64 },
    #[error("JSON document exceeds the structure budget (100000 nodes, depth 64)")]
    StructureLimit,
    #[error("JSON document has unbalanced closing brackets")]
    StructureInvalid,
    #[error("invalid JSON at byte {offset}: {reason}")]
    Syntax { offset: usize, reason: &'static str },
    #[error("Expected a finite JSON value")]
    NonFinite,
    /// CPython refuses to convert integers longer than 4300 digits.
    #[error(
        "Exceeds the limit (4300 digits) for integer string conversion: value has {digits} digits; use sys.set_int_max_str_digits() to increase the limit"
    )]
    IntDigits { digits: usize },
}

impl AdmissionError {
    /// The reference's admission code (`json_byte_limit`, …), or `json_syntax` / `json_value`.
    pub fn code(&self) -> &'static str {
        match self {
            AdmissionError::ByteLimit { .. } => "json_byte_limit",
            AdmissionError::StructureLimit => "json_structure_limit",
            AdmissionError::StructureInvalid => "json_structure_invalid",
            AdmissionError::Syntax { .. } | AdmissionError::IntDigits { .. } => "json_syntax",
            AdmissionError::NonFinite => "json_value",
        }
    }
}

impl AdmissionError {
    /// The message Python's `json.loads` gives for `doc` (`Expecting value: line 1 column 1
    /// (char 0)`): positions count characters, lines and columns are 1-based. Direct REST
    /// surfaces show it as the 422 detail.
    pub fn python_message(&self, doc: &[u8]) -> String {
        let AdmissionError::Syntax { offset, reason } = self else {
            return self.to_string();
        };
        let before = String::from_utf8_lossy(doc.get(..*offset).unwrap_or(doc));
        let pos = before.chars().count();
        let line = before.matches('\n').count() + 1;
        let column = match before.rfind('\n') {
            Some(nl) => before[nl + 1..].chars().count() + 1,
            None => pos + 1,
        };
        format!("{reason}: line {line} column {column} (char {pos})")
    }
}

/// Step 1: the lexical preflight over raw bytes.
pub fn preflight(bytes: &[u8], byte_limit: u64) -> Result<(), AdmissionError> {
    if bytes.len() as u64 > byte_limit {
        return Err(AdmissionError::ByteLimit { limit: byte_limit });
    }
    let mut nodes = 0usize;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut in_scalar = false;
    let count = |nodes: &mut usize| {
        *nodes += 1;
        if *nodes > MAX_NODES {
            Err(AdmissionError::StructureLimit)
        } else {
            Ok(())
        }
    };
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => {
                in_scalar = false;
                in_string = true;
                count(&mut nodes)?;
            }
            b'[' | b'{' => {
                in_scalar = false;
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(AdmissionError::StructureLimit);
                }
                count(&mut nodes)?;
            }
            b']' | b'}' => {
                in_scalar = false;
                depth = depth
                    .checked_sub(1)
                    .ok_or(AdmissionError::StructureInvalid)?;
            }
            b',' | b':' | b' ' | b'\t' | b'\n' | b'\r' => in_scalar = false,
            _ => {
                if !in_scalar {
                    in_scalar = true;
                    count(&mut nodes)?;
                }
            }
        }
    }
    Ok(())
}

/// Step 2: decode one document with Python `json.loads` semantics (see the module docs).
pub fn parse_permissive(bytes: &[u8]) -> Result<Value, AdmissionError> {
    let mut p = Parser { bytes, pos: 0 };
    p.ws();
    let value = p.value(0)?;
    p.ws();
    if p.pos != bytes.len() {
        return Err(p.err("Extra data"));
    }
    Ok(value)
}

/// Step 3: the value-graph budget. `byte_limit` bounds the compact wire size.
pub fn check_budget(value: &Value, byte_limit: u64) -> Result<(), AdmissionError> {
    let mut nodes = 0usize;
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((v, depth)) = stack.pop() {
        nodes += 1;
        if nodes > MAX_NODES || depth > MAX_DEPTH {
            return Err(AdmissionError::StructureLimit);
        }
        match v {
            Value::Float(f) if !f.is_finite() => return Err(AdmissionError::NonFinite),
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, depth + 1))),
            Value::Object(map) => {
                nodes += map.len();
                stack.extend(map.values().map(|i| (i, depth + 1)));
            }
            _ => {}
        }
    }
    let size = value
        .canonical_string()
        .map_err(|_| AdmissionError::NonFinite)?
        .len() as u64;
    if size > byte_limit {
        return Err(AdmissionError::ByteLimit { limit: byte_limit });
    }
    Ok(())
}

/// Nesting depth of a value (a scalar is 1, `[]` is 1, `[[]]` is 2).
pub fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    deepest
}

/// All three steps: what every surface applies to an untrusted JSON body.
pub fn admit(bytes: &[u8], byte_limit: u64) -> Result<Value, AdmissionError> {
    preflight(bytes, byte_limit)?;
    let value = parse_permissive(bytes)?;
    check_budget(&value, DEFAULT_VALUE_BYTES)?;
    Ok(value)
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn err(&self, reason: &'static str) -> AdmissionError {
        AdmissionError::Syntax {
            offset: self.pos,
            reason,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn word(&mut self, word: &[u8], value: Value) -> Result<Value, AdmissionError> {
        if self.bytes.get(self.pos..self.pos + word.len()) == Some(word) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.err("Expecting value"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, AdmissionError> {
        if depth > PARSE_DEPTH_LIMIT {
            return Err(AdmissionError::StructureLimit);
        }
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Value::Str(self.string()?)),
            Some(b'n') => self.word(b"null", Value::Null),
            Some(b't') => self.word(b"true", Value::Bool(true)),
            Some(b'f') => self.word(b"false", Value::Bool(false)),
            Some(b'N') => self.word(b"NaN", Value::Float(f64::NAN)),
            Some(b'I') => self.word(b"Infinity", Value::Float(f64::INFINITY)),
            Some(b'-') if self.bytes.get(self.pos + 1) == Some(&b'I') => {
                self.pos += 1;
                self.word(b"Infinity", Value::Float(f64::NEG_INFINITY))
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.err("Expecting value")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, AdmissionError> {
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
            let key = self.string()?;
            self.ws();
            if self.peek() != Some(b':') {
                return Err(self.err("Expecting ':' delimiter"));
            }
            self.pos += 1;
            self.ws();
            let value = self.value(depth + 1)?;
            map.insert(key, value);
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

    fn array(&mut self, depth: usize) -> Result<Value, AdmissionError> {
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

    fn hex4(&mut self) -> Result<u32, AdmissionError> {
        let digits = self
            .bytes
            .get(self.pos..self.pos + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.err("Invalid \\uXXXX escape"))?;
        self.pos += 4;
        Ok(digits)
    }

    fn err_at(&self, offset: usize, reason: &'static str) -> AdmissionError {
        AdmissionError::Syntax { offset, reason }
    }

    fn string(&mut self) -> Result<String, AdmissionError> {
        let quote = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
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
                0..=0x1f => return Err(self.err_at(self.pos - 1, "Invalid control character at")),
                _ => out.push(b),
            }
        }
        String::from_utf8(out).map_err(|_| self.err("invalid UTF-8"))
    }

    /// A `\uXXXX` escape, combining surrogate pairs. Lone surrogates (which Python keeps as
    /// unpaired code points) have no UTF-8 form and are refused.
    fn unicode_escape(&mut self) -> Result<char, AdmissionError> {
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

    fn number(&mut self) -> Result<Value, AdmissionError> {
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
            return Ok(Value::Float(f));
        }
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Value::Int(i));
        }
        let (negative, body) = match text.strip_prefix('-') {
            Some(body) => (true, body),
            None => (false, text),
        };
        if body.len() > MAX_INT_DIGITS {
            return Err(AdmissionError::IntDigits { digits: body.len() });
        }
        Ok(Value::BigInt(if negative {
            format!("-{body}")
        } else {
            body.to_string()
        }))
    }
}

#[cfg(test)]
#[path = "admission_tests.rs"]
mod tests;
