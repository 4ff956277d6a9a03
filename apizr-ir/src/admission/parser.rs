//! The permissive decoder of JSON admission step 2: Python `json.loads` semantics (NaN and
//! Infinity literals accepted so that the budget can refuse them as non-finite, exact big
//! integers, last duplicate key wins, CPython's 4300-digit limit), with byte offsets that
//! [`super::AdmissionError::python_message`] turns into Python's error texts.

use std::collections::BTreeMap;

use super::{AdmissionError, MAX_INT_DIGITS, PARSE_DEPTH_LIMIT};
use crate::json::Value;

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
