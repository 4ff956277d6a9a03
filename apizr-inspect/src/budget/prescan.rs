//! A single linear pass over the text that tracks only what nests: brackets, f-string
//! replacement fields and format specs, indentation, and an upper bound on how deeply the
//! parser will recurse (and how deep the AST can be) at every point.
//!
//! The bound: inside one comma-separated segment of a bracket, every token that can add a
//! level of nesting (arithmetic, bitwise and unary operators, `.`, `**`, `:=`, `not`,
//! `lambda`, `await`, `yield`, `if`/`else`/`for` and every opening bracket) adds one; a comma
//! returns to the bracket's base; a closing bracket hands its deepest value to the parent.
//! Flat operators (`and`, `or`, comparisons) add nothing: their nodes are lists, not chains.
//! Strings are lexed the way ruff lexes them (PEP 701 style, nested quotes allowed), so the
//! bound covers everything the parser will see.

use crate::decode::position_in_text;
use crate::error::{InspectError, Position};

/// CPython's tokenizer `MAXLEVEL`: 200 nested brackets are fine, the 201st is an error.
pub const MAX_BRACKET_DEPTH: usize = 200;
/// CPython's tokenizer `MAXINDENT`: the 100th indentation level is an error.
pub const MAX_INDENT_LEVELS: usize = 100;
/// Our bound on expression nesting (far above the reference's AST depth limit of 128, and
/// far below what the parser and the tree's destructor can recurse on a 2 MiB stack).
pub const MAX_EXPRESSION_NESTING: u32 = 1_000;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Root,
    Bracket,
    /// Literal text of an f-string.
    FString,
    /// A replacement field `{...}` (code).
    Field,
    /// A format spec after `:` (literal text with nested fields).
    Spec,
}

#[derive(Clone, Copy)]
struct Frame {
    kind: Kind,
    base: u32,
    running: u32,
    max: u32,
    /// Brackets open in the current CPython tokenizer (a field is compiled as `(expr)`).
    level: usize,
    /// Format specs enclosing this point inside the current f-string.
    specs: u32,
    /// The quote that ends the enclosing f-string, and whether it is tripled.
    quote: u8,
    triple: bool,
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    stack: Vec<Frame>,
    indents: Vec<usize>,
}

/// Refuse what CPython 3.11's tokenizer refuses for nesting, and anything nested so deeply
/// that parsing it could exhaust the stack.
pub fn prescan(text: &str) -> Result<(), InspectError> {
    let root = Frame {
        kind: Kind::Root,
        base: 0,
        running: 0,
        max: 0,
        level: 0,
        specs: 0,
        quote: 0,
        triple: false,
    };
    let mut scanner = Scanner {
        text,
        bytes: text.as_bytes(),
        at: 0,
        stack: vec![root],
        indents: vec![0],
    };
    scanner.run()
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

fn keyword_weight(word: &[u8]) -> u32 {
    match word {
        b"not" | b"lambda" | b"await" | b"yield" | b"if" | b"else" | b"for" => 1,
        _ => 0,
    }
}

fn is_string_prefix(word: &[u8]) -> Option<bool> {
    let lower = word.to_ascii_lowercase();
    match lower.as_slice() {
        b"r" | b"u" | b"b" | b"br" | b"rb" => Some(false),
        b"f" | b"fr" | b"rf" => Some(true),
        _ => None,
    }
}

impl Scanner<'_> {
    fn peek(&self, offset: usize) -> u8 {
        self.bytes.get(self.at + offset).copied().unwrap_or(0)
    }

    fn top(&mut self) -> &mut Frame {
        let last = self.stack.len().saturating_sub(1);
        // The root frame is never popped, so the stack is never empty.
        &mut self.stack[last]
    }

    fn top_kind(&self) -> Kind {
        self.stack.last().map_or(Kind::Root, |f| f.kind)
    }

    fn position(&self, at: usize) -> Position {
        position_in_text(self.text, at.min(self.text.len()))
    }

    fn syntax(&self, at: usize, message: &str) -> InspectError {
        let position = self.position(at);
        let line_text = self
            .text
            .lines()
            .nth(position.line.saturating_sub(1) as usize)
            .unwrap_or("")
            .to_string();
        InspectError::Syntax {
            message: message.into(),
            position,
            line_text,
        }
    }

    fn too_deep(&self, at: usize) -> InspectError {
        let p = self.position(at);
        InspectError::StructureLimit {
            message: format!(
                "source_structure_limit: expression nested more than {MAX_EXPRESSION_NESTING} \
                 levels deep at line {}, column {} (refused before parsing)",
                p.line, p.column
            ),
        }
    }

    fn add(&mut self, weight: u32, at: usize) -> Result<(), InspectError> {
        let top = self.top();
        top.running = top.running.saturating_add(weight);
        top.max = top.max.max(top.running);
        if top.running > MAX_EXPRESSION_NESTING {
            return Err(self.too_deep(at));
        }
        Ok(())
    }

    fn push(&mut self, kind: Kind, at: usize) -> Result<(), InspectError> {
        let parent = *self.top();
        let base = parent.running.saturating_add(1);
        let (level, specs, quote, triple) = match kind {
            Kind::Bracket => {
                if parent.level >= MAX_BRACKET_DEPTH {
                    return Err(self.syntax(at, "too many nested parentheses"));
                }
                (parent.level + 1, parent.specs, parent.quote, parent.triple)
            }
            Kind::Field => {
                if parent.specs >= 2 {
                    return Err(self.syntax(at, "f-string: expressions nested too deeply"));
                }
                (1, parent.specs, parent.quote, parent.triple)
            }
            Kind::Spec => (parent.level, parent.specs + 1, parent.quote, parent.triple),
            Kind::FString | Kind::Root => (parent.level, 0, parent.quote, parent.triple),
        };
        if base > MAX_EXPRESSION_NESTING {
            return Err(self.too_deep(at));
        }
        self.stack.push(Frame {
            kind,
            base,
            running: base,
            max: base,
            level,
            specs,
            quote,
            triple,
        });
        Ok(())
    }

    fn pop(&mut self) {
        if self.stack.len() > 1
            && let Some(child) = self.stack.pop()
        {
            let parent = self.top();
            parent.running = parent.running.max(child.max);
            parent.max = parent.max.max(parent.running);
        }
    }

    fn run(&mut self) -> Result<(), InspectError> {
        let mut line_start = true;
        while self.at < self.bytes.len() {
            match self.top_kind() {
                Kind::FString | Kind::Spec => self.literal()?,
                Kind::Root | Kind::Bracket | Kind::Field => {
                    if line_start && self.top_kind() == Kind::Root {
                        self.indentation()?;
                    }
                    line_start = self.code()?;
                }
            }
        }
        Ok(())
    }

    /// Indentation at the start of a logical line (CPython's column rules for tabs).
    fn indentation(&mut self) -> Result<(), InspectError> {
        let start = self.at;
        let mut column = 0usize;
        loop {
            match self.peek(0) {
                b' ' => column += 1,
                b'\t' => column = (column / 8 + 1) * 8,
                b'\x0c' => column = 0,
                _ => break,
            }
            self.at += 1;
        }
        if matches!(self.peek(0), b'#' | b'\n' | b'\r' | 0) && self.at >= self.bytes.len()
            || matches!(self.peek(0), b'#' | b'\n' | b'\r')
        {
            return Ok(());
        }
        let current = self.indents.last().copied().unwrap_or(0);
        if column > current {
            if self.indents.len() >= MAX_INDENT_LEVELS {
                return Err(self.syntax(start, "too many levels of indentation"));
            }
            self.indents.push(column);
        } else {
            while self.indents.len() > 1 && self.indents.last().is_some_and(|c| column < *c) {
                self.indents.pop();
            }
        }
        Ok(())
    }

    /// One token in code. Returns whether a new logical line starts after it.
    fn code(&mut self) -> Result<bool, InspectError> {
        let start = self.at;
        let c = self.peek(0);
        match c {
            b' ' | b'\t' | b'\x0c' => self.at += 1,
            b'\r' | b'\n' => {
                self.at += if c == b'\r' && self.peek(1) == b'\n' {
                    2
                } else {
                    1
                };
                if self.top_kind() == Kind::Root {
                    let top = self.top();
                    top.running = 0;
                    return Ok(true);
                }
            }
            b'#' => {
                while !matches!(self.peek(0), b'\n' | b'\r' | 0) {
                    self.at += 1;
                }
            }
            b'\\' => {
                self.at += 1;
                match (self.peek(0), self.peek(1)) {
                    (b'\r', b'\n') => self.at += 2,
                    (b'\r' | b'\n', _) => self.at += 1,
                    _ => {}
                }
            }
            b'\'' | b'"' => self.string(false)?,
            b'0'..=b'9' => self.number(),
            b'.' if self.peek(1).is_ascii_digit() => self.number(),
            b'.' => {
                if self.peek(1) == b'.' && self.peek(2) == b'.' {
                    self.at += 3;
                } else {
                    self.at += 1;
                    self.add(1, start)?;
                }
            }
            b'(' | b'[' | b'{' => {
                self.push(Kind::Bracket, start)?;
                self.at += 1;
            }
            b')' | b']' => {
                self.at += 1;
                if self.top_kind() == Kind::Bracket {
                    self.pop();
                }
            }
            b'}' => {
                self.at += 1;
                match self.top_kind() {
                    Kind::Bracket => self.pop(),
                    Kind::Field => self.pop(),
                    _ => {}
                }
            }
            b',' => {
                self.at += 1;
                let top = self.top();
                top.running = top.base;
            }
            b';' => {
                self.at += 1;
                if self.top_kind() == Kind::Root {
                    self.top().running = 0;
                }
            }
            b':' => {
                if self.peek(1) == b'=' {
                    self.at += 2;
                    self.add(1, start)?;
                } else {
                    self.at += 1;
                    if self.top_kind() == Kind::Field {
                        self.push(Kind::Spec, start)?;
                    }
                }
            }
            b'!' if self.top_kind() == Kind::Field && self.peek(1) != b'=' => {
                // A conversion (`!r`): the letter is not an expression.
                self.at += 1;
                while is_ident(self.peek(0)) {
                    self.at += 1;
                }
            }
            _ if is_ident(c) => {
                while is_ident(self.peek(0)) {
                    self.at += 1;
                }
                let word = self.bytes.get(start..self.at).unwrap_or(&[]);
                if matches!(self.peek(0), b'\'' | b'"')
                    && let Some(f) = is_string_prefix(word)
                {
                    return self.string(f).map(|()| false);
                }
                let weight = keyword_weight(word);
                if weight > 0 {
                    self.add(weight, start)?;
                }
            }
            _ => self.operator(start)?,
        }
        Ok(false)
    }

    fn operator(&mut self, start: usize) -> Result<(), InspectError> {
        let c = self.peek(0);
        self.at += 1;
        if !b"+-*/%@&|^~<>=!".contains(&c) {
            return Ok(());
        }
        let doubled = matches!(c, b'*' | b'/' | b'<' | b'>') && self.peek(0) == c;
        if doubled {
            self.at += 1;
        }
        if c == b'-' && self.peek(0) == b'>' {
            self.at += 1;
            return Ok(());
        }
        if self.peek(0) == b'=' {
            self.at += 1;
            return Ok(());
        }
        let flat = matches!(c, b'<' | b'>' | b'=' | b'!') && !doubled;
        if !flat {
            self.add(1, start)?;
        }
        Ok(())
    }

    fn number(&mut self) {
        let radix = self.peek(0) == b'0' && matches!(self.peek(1) | 0x20, b'x' | b'o' | b'b');
        while self.at < self.bytes.len() {
            let c = self.peek(0);
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' {
                self.at += 1;
                if !radix && matches!(c, b'e' | b'E') && matches!(self.peek(0), b'+' | b'-') {
                    self.at += 1;
                }
            } else {
                break;
            }
        }
    }

    /// A string literal starting at the quote under the cursor (prefix already consumed).
    fn string(&mut self, fstring: bool) -> Result<(), InspectError> {
        let start = self.at;
        let quote = self.peek(0);
        let triple = self.peek(1) == quote && self.peek(2) == quote;
        self.at += if triple { 3 } else { 1 };
        if fstring {
            self.push(Kind::FString, start)?;
            let top = self.top();
            top.quote = quote;
            top.triple = triple;
            return Ok(());
        }
        while self.at < self.bytes.len() {
            match self.peek(0) {
                b'\\' => self.skip_escape(),
                c if c == quote => {
                    if !triple {
                        self.at += 1;
                        return Ok(());
                    }
                    if self.peek(1) == quote && self.peek(2) == quote {
                        self.at += 3;
                        return Ok(());
                    }
                    self.at += 1;
                }
                b'\n' | b'\r' if !triple => return Ok(()),
                _ => self.at += 1,
            }
        }
        Ok(())
    }

    fn skip_escape(&mut self) {
        self.at += 1;
        if self.peek(0) == b'\r' && self.peek(1) == b'\n' {
            self.at += 2;
        } else if self.at < self.bytes.len() {
            self.at += 1;
        }
    }

    /// Literal text of an f-string or a format spec.
    fn literal(&mut self) -> Result<(), InspectError> {
        let (kind, quote, triple) = {
            let top = self.top();
            (top.kind, top.quote, top.triple)
        };
        while self.at < self.bytes.len() {
            let start = self.at;
            match self.peek(0) {
                b'\\' => self.skip_escape(),
                b'{' if kind == Kind::FString && self.peek(1) == b'{' => self.at += 2,
                b'{' => {
                    self.at += 1;
                    return self.push(Kind::Field, start);
                }
                b'}' if kind == Kind::Spec => {
                    self.at += 1;
                    self.pop(); // the spec
                    self.pop(); // its field
                    return Ok(());
                }
                b'}' if self.peek(1) == b'}' => self.at += 2,
                c if c == quote
                    && (!triple || (self.peek(1) == quote && self.peek(2) == quote)) =>
                {
                    self.at += if triple { 3 } else { 1 };
                    self.close_fstring();
                    return Ok(());
                }
                b'\n' | b'\r' if !triple => {
                    // Unterminated: the parser reports it; end the f-string here.
                    self.close_fstring();
                    return Ok(());
                }
                _ => self.at += 1,
            }
        }
        Ok(())
    }

    /// Pop frames up to and including the innermost f-string.
    fn close_fstring(&mut self) {
        while self.stack.len() > 1 {
            let kind = self.top_kind();
            self.pop();
            if kind == Kind::FString {
                break;
            }
        }
    }
}
