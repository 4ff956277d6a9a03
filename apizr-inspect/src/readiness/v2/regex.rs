//! A conservative check that `re.compile(<literal>)` cannot raise `re.error`: a recursive
//! reader of the subset of Python's regular-expression syntax whose rules are simple, with
//! the errors `sre_parse` raises for it (nothing to repeat, multiple repeat, bad escape, bad
//! character range, unbalanced parenthesis, unknown or open group reference, min > max,
//! variable-width look-behind). Anything outside the subset (`\N{...}`, conditional groups,
//! global flags after the start, `(?L)`) is not proved: a pattern is accepted only when it is
//! certainly valid.

/// `pattern` compiles with `re.compile` (in verbose mode when `verbose`).
pub fn is_valid(pattern: &str, verbose: bool) -> bool {
    read(pattern.chars().collect(), verbose, true)
}

/// The bytes `pattern` compiles with `re.compile`: `sre_parse` reads a bytes pattern as its
/// latin-1 characters with the same rules, except that `\u`, `\U` and `\N` are bad escapes.
pub fn is_valid_bytes(pattern: &[u8], verbose: bool) -> bool {
    read(
        pattern.iter().map(|b| char::from(*b)).collect(),
        verbose,
        false,
    )
}

fn read(chars: Vec<char>, verbose: bool, text: bool) -> bool {
    let mut reader = Reader {
        chars,
        text,
        at: 0,
        verbose,
        groups: 0,
        closed: Vec::new(),
        open: Vec::new(),
        names: Vec::new(),
        lookbehind: 0,
    };
    if reader.global_flags().is_none() {
        return false;
    }
    reader.alternation().is_some() && reader.at == reader.chars.len()
}

struct Reader {
    chars: Vec<char>,
    /// A str pattern (`\u`/`\U` escapes are only known there).
    text: bool,
    at: usize,
    verbose: bool,
    /// Capturing groups opened so far; which of them are closed, which still open.
    groups: usize,
    closed: Vec<usize>,
    open: Vec<usize>,
    /// Named groups: (name, number).
    names: Vec<(String, usize)>,
    /// Depth of look-behind assertions (their content must have a fixed width).
    lookbehind: usize,
}

/// Whether the item just read can take a quantifier.
#[derive(PartialEq)]
enum Item {
    Repeatable,
    Anchor,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    fn eat(&mut self, s: &str) -> bool {
        let wanted: Vec<char> = s.chars().collect();
        if self.chars.get(self.at..self.at + wanted.len()) == Some(&wanted[..]) {
            self.at += wanted.len();
            true
        } else {
            false
        }
    }

    /// `(?imsx)` at the very start (global flags anywhere else are an error in 3.11). When the
    /// pattern starts with another kind of group, it is read as a group from the start.
    fn global_flags(&mut self) -> Option<()> {
        if !self.eat("(?") {
            return Some(());
        }
        let start = self.at;
        let mut verbose = self.verbose;
        while let Some(c) = self.peek().filter(|c| "imsx".contains(*c)) {
            verbose |= c == 'x';
            self.at += 1;
        }
        if self.at > start && self.eat(")") {
            self.verbose = verbose;
        } else {
            self.at = 0;
        }
        Some(())
    }

    /// Skips whitespace and comments in verbose mode.
    fn skip_verbose(&mut self) {
        while self.verbose {
            match self.peek() {
                Some(c) if c.is_whitespace() => self.at += 1,
                Some('#') => while self.next().is_some_and(|c| c != '\n') {},
                _ => break,
            }
        }
    }

    fn alternation(&mut self) -> Option<()> {
        loop {
            self.sequence()?;
            if self.peek() == Some('|') {
                if self.lookbehind > 0 {
                    return None;
                }
                self.at += 1;
            } else {
                return Some(());
            }
        }
    }

    fn sequence(&mut self) -> Option<()> {
        loop {
            self.skip_verbose();
            let item = match self.peek() {
                None | Some('|') | Some(')') => return Some(()),
                Some('*' | '+' | '?') => return None,
                Some('{') if self.quantifier_braces().is_some() => return None,
                Some(_) => self.item()?,
            };
            self.skip_verbose();
            if self.quantifier()? {
                if item != Item::Repeatable || self.lookbehind > 0 {
                    return None;
                }
                // A lazy or possessive suffix; another quantifier is "multiple repeat".
                if matches!(self.peek(), Some('?' | '+')) {
                    self.at += 1;
                }
                self.skip_verbose();
                if matches!(self.peek(), Some('*' | '+' | '?'))
                    || self.peek() == Some('{') && self.quantifier_braces().is_some()
                {
                    return None;
                }
            }
        }
    }

    /// Reads a quantifier if one follows; `None` on a malformed bound.
    fn quantifier(&mut self) -> Option<bool> {
        match self.peek() {
            Some('*' | '+' | '?') => {
                self.at += 1;
                Some(true)
            }
            Some('{') => match self.quantifier_braces() {
                Some((end, ok)) => {
                    self.at = end;
                    ok.then_some(true)
                }
                None => Some(false),
            },
            _ => Some(false),
        }
    }

    /// `{m}`, `{m,}`, `{,n}`, `{m,n}` at the cursor: where it ends and whether min <= max
    /// (and both fit); `None` when the brace is a literal.
    fn quantifier_braces(&self) -> Option<(usize, bool)> {
        let rest = &self.chars[self.at..];
        let close = rest.iter().position(|c| *c == '}')?;
        let body: String = rest[1..close].iter().collect();
        let (lo, hi) = match body.split_once(',') {
            Some((lo, hi)) => (lo, Some(hi)),
            None => (body.as_str(), None),
        };
        let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
        if !digits(lo) || !hi.is_none_or(digits) || lo.is_empty() && hi.is_none() {
            return None;
        }
        let parse = |s: &str| {
            if s.is_empty() {
                Some(0)
            } else if s.len() > 9 {
                None
            } else {
                s.parse::<u64>().ok()
            }
        };
        let ok = match (parse(lo), hi.map(parse)) {
            (Some(lo), None) => lo < u32::MAX as u64,
            (Some(_), Some(Some(0))) if hi == Some("") => true,
            (Some(lo), Some(Some(hi))) => lo <= hi,
            _ => false,
        };
        Some((self.at + close + 1, ok))
    }

    fn item(&mut self) -> Option<Item> {
        match self.next()? {
            '^' | '$' => Some(Item::Anchor),
            '.' => Some(Item::Repeatable),
            '\\' => self.escape(),
            '[' => self.class().map(|()| Item::Repeatable),
            '(' => self.group(),
            _ => Some(Item::Repeatable),
        }
    }

    fn escape(&mut self) -> Option<Item> {
        let c = self.next()?;
        match c {
            'b' | 'B' | 'A' | 'Z' => Some(Item::Anchor),
            'd' | 'D' | 's' | 'S' | 'w' | 'W' | 'n' | 't' | 'r' | 'f' | 'v' | 'a' => {
                Some(Item::Repeatable)
            }
            'x' => self.hex(2).map(|_| Item::Repeatable),
            'u' if self.text => self.hex(4).map(|_| Item::Repeatable),
            'U' if self.text => self
                .hex(8)
                .filter(|v| *v <= 0x10FFFF)
                .map(|_| Item::Repeatable),
            '0' => {
                // Up to two more octal digits.
                for _ in 0..2 {
                    if self.peek().is_some_and(|c| ('0'..='7').contains(&c)) {
                        self.at += 1;
                    }
                }
                Some(Item::Repeatable)
            }
            '1'..='9' => {
                // A one-digit reference to a closed group (longer numbers are not proved).
                let number = c.to_digit(10)? as usize;
                let refers = self.closed.contains(&number)
                    && !self.peek().is_some_and(|c| c.is_ascii_digit());
                (refers && self.lookbehind == 0).then_some(Item::Repeatable)
            }
            c if c.is_ascii_alphanumeric() => None,
            _ => Some(Item::Repeatable),
        }
    }

    fn hex(&mut self, digits: usize) -> Option<u32> {
        let text: String = self.chars.get(self.at..self.at + digits)?.iter().collect();
        if !text.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        self.at += digits;
        u32::from_str_radix(&text, 16).ok()
    }

    /// A character class after its `[`.
    fn class(&mut self) -> Option<()> {
        self.eat("^");
        let mut first = true;
        loop {
            let start = match self.next()? {
                ']' if !first => return Some(()),
                '\\' => self.class_escape()?,
                c => Some(c),
            };
            first = false;
            if self.peek() == Some('-') && self.chars.get(self.at + 1).is_some_and(|c| *c != ']') {
                self.at += 1;
                let end = match self.next()? {
                    '\\' => self.class_escape()?,
                    c => Some(c),
                };
                match (start, end) {
                    (Some(lo), Some(hi)) if lo <= hi => {}
                    _ => return None,
                }
            }
        }
    }

    /// An escape inside a class: `Some(Some(c))` for one character, `Some(None)` for a
    /// category (`\d`), `None` when invalid.
    fn class_escape(&mut self) -> Option<Option<char>> {
        let c = self.next()?;
        Some(match c {
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => None,
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'f' => Some('\x0c'),
            'v' => Some('\x0b'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'x' => Some(char::from_u32(self.hex(2)?)?),
            'u' if self.text => Some(char::from_u32(self.hex(4)?)?),
            'U' if self.text => Some(char::from_u32(self.hex(8)?)?),
            c if c.is_ascii_alphanumeric() => return None,
            c => Some(c),
        })
    }

    /// At the start of a look-behind: when its content up to `)` is two or more alternatives
    /// of plain characters (no metacharacter, no escape) of one and the same width, the
    /// position of that `)`.
    fn equal_width_literals(&self) -> Option<usize> {
        let mut widths = vec![0usize];
        let mut at = self.at;
        loop {
            let c = *self.chars.get(at)?;
            match c {
                ')' => break,
                '|' => widths.push(0),
                c if self.verbose && c.is_whitespace() => {}
                '#' if self.verbose => return None,
                c if c.is_alphanumeric() || "=!~<>-_@,;:'\"/&%` ".contains(c) => {
                    if let Some(w) = widths.last_mut() {
                        *w += 1;
                    }
                }
                _ => return None,
            }
            at += 1;
        }
        (widths.len() >= 2 && widths[0] > 0 && widths.iter().all(|w| *w == widths[0])).then_some(at)
    }

    /// A group after its `(`.
    fn group(&mut self) -> Option<Item> {
        let mut capture = None;
        let mut lookbehind = false;
        let mut anchor = false;
        if self.eat("?") {
            if self.eat(":") {
            } else if self.eat("P<") {
                let mut name = String::new();
                while let Some(c) = self.next() {
                    if c == '>' {
                        break;
                    }
                    name.push(c);
                }
                if !super::names::is_identifier(&name) || self.names.iter().any(|(n, _)| *n == name)
                {
                    return None;
                }
                self.groups += 1;
                self.names.push((name, self.groups));
                capture = Some(self.groups);
            } else if self.eat("P=") {
                let mut name = String::new();
                while let Some(c) = self.next() {
                    if c == ')' {
                        let number = self.names.iter().find(|(n, _)| *n == name)?.1;
                        return (self.closed.contains(&number) && self.lookbehind == 0)
                            .then_some(Item::Repeatable);
                    }
                    name.push(c);
                }
                return None;
            } else if self.eat("#") {
                while self.next()? != ')' {}
                return Some(Item::Anchor);
            } else if self.eat("=") || self.eat("!") {
                anchor = true;
            } else if self.eat("<=") || self.eat("<!") {
                anchor = true;
                lookbehind = true;
            } else {
                // Scoped flags `(?i:...)`, `(?-i:...)`, `(?i-s:...)`.
                let mut any = false;
                // `x` would change how the group's text reads: not proved.
                while self.peek().is_some_and(|c| "ims-".contains(c)) {
                    any = true;
                    self.at += 1;
                }
                if !any || !self.eat(":") {
                    return None;
                }
            }
        } else {
            self.groups += 1;
            capture = Some(self.groups);
        }
        if let Some(number) = capture {
            self.open.push(number);
        }
        if lookbehind {
            self.lookbehind += 1;
        }
        // `(?<===|!=)`: alternatives of plain characters, all of one width (fixed width).
        if lookbehind && let Some(end) = self.equal_width_literals() {
            self.at = end;
        } else {
            self.alternation()?;
        }
        if lookbehind {
            self.lookbehind -= 1;
        }
        if self.next()? != ')' {
            return None;
        }
        if let Some(number) = capture {
            self.open.retain(|n| *n != number);
            self.closed.push(number);
        }
        Some(if anchor {
            Item::Anchor
        } else {
            Item::Repeatable
        })
    }
}

#[cfg(test)]
mod tests {
    use super::is_valid;

    #[test]
    fn accepts_common_patterns() {
        for pattern in [
            r"^\d+(\.\d+)?$",
            r"[A-Za-z_][A-Za-z0-9_]*",
            r"(?P<year>\d{4})-(?P<month>\d{2})",
            r"\s*,\s*",
            r"(?i)hello|world",
            r"a{2,3}?b{,4}c{3,}",
            r"(?:ab)+?(?=x)(?<=ab)",
            r"(?<===|!=)\s*x(?<!==|!=|~=)",
            r"[\]\-\\]",
            r"(a)\1",
            r"x{",
            r"[^]]",
        ] {
            assert!(is_valid(pattern, false), "{pattern}");
        }
        assert!(is_valid("a b # comment\n c", true));
        assert!(super::is_valid_bytes(br"^[^:\s][^:\r\n]*$", false));
        assert!(super::is_valid_bytes(b"[\x00-\x19\",;\\\x7f-\xff]", false));
    }

    #[test]
    fn bytes_patterns_know_no_unicode_escapes() {
        assert!(is_valid(r"\u0041[\u0042]", false));
        for pattern in [
            &br"\u0041"[..],
            br"[\u0041]",
            br"\U00000041",
            br"\N{DIGIT ONE}",
        ] {
            assert!(!super::is_valid_bytes(pattern, false));
        }
    }

    #[test]
    fn refuses_what_re_refuses_or_cannot_be_proved() {
        for pattern in [
            "*a",
            "a**",
            "(ab",
            "ab)",
            "[abc",
            r"\q",
            "[z-a]",
            r"a{3,2}",
            r"\1",
            r"(a\1)",
            "^*",
            r"(?<=a+)b",
            "a(?i)b",
            r"(?P<n>a)(?P<n>b)",
            r"[\d-z]",
            r"\x4",
            r"(?P=n)",
            // Look-behind alternatives of different widths, or an empty one.
            r"(?<=a|bc)x",
            r"(?<=a|)x",
            r"(?<!a.|bc)x",
        ] {
            assert!(!is_valid(pattern, false), "{pattern}");
        }
    }
}
