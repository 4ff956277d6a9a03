//! f-strings the CPython 3.11 way (`visit_JoinedStr`, `visit_FormattedValue`).
//!
//! CPython's AST has one `JoinedStr` whose `values` are merged literal `Constant`s and
//! `FormattedValue`s; ruff keeps the implicitly concatenated parts and `f"{x=}"` debug text.
//! [`Piece`] rebuilds CPython's `values` list: adjacent literal text (plain string parts,
//! f-string literal elements and debug text) is merged and empty text is dropped; a debug
//! field without conversion and format spec gets CPython's implicit `!r`.
//!
//! Writing then follows 3.11: each value is rendered on its own, quote types are narrowed so
//! that no value needs a backslash (literal parts may escape `\n`/`\t`), falling back to a
//! triple-quoted `repr` body when no common quote exists. Replacement-field expressions are
//! unparsed by a fresh unparser that avoids backslashes at `TEST.next()` precedence.

use ruff_python_ast::{
    ConversionFlag, FStringPart, FStringValue, InterpolatedElement, InterpolatedStringElement,
    TStringValue,
};

use super::UnparseError;
use super::expr::Unparser;
use super::precedence::Precedence;
use super::strings::{
    ALL_QUOTES, single_quoted_repr_body, str_avoiding_backslashes, str_literal_helper,
};

/// One entry of CPython's `JoinedStr.values`.
enum Piece<'a> {
    Text(String),
    Field(&'a InterpolatedElement),
}

fn push_text(pieces: &mut Vec<Piece<'_>>, text: &str) {
    if text.is_empty() {
        return;
    }
    if let Some(Piece::Text(last)) = pieces.last_mut() {
        last.push_str(text);
    } else {
        pieces.push(Piece::Text(text.to_owned()));
    }
}

fn push_elements<'a>(pieces: &mut Vec<Piece<'a>>, elements: &'a [InterpolatedStringElement]) {
    for element in elements {
        match element {
            InterpolatedStringElement::Literal(literal) => push_text(pieces, &literal.value),
            InterpolatedStringElement::Interpolation(field) => {
                if let Some(debug) = &field.debug_text {
                    push_text(pieces, debug.as_str());
                }
                pieces.push(Piece::Field(field));
            }
        }
    }
}

impl Unparser<'_> {
    /// Run `f` with an empty output buffer and return what it wrote (`buffered()`).
    fn buffered(&mut self, f: impl FnOnce(&mut Self)) -> String {
        let saved = std::mem::take(&mut self.out);
        f(self);
        std::mem::replace(&mut self.out, saved)
    }

    pub(super) fn fstring(&mut self, value: &FStringValue) {
        let mut pieces = Vec::new();
        for part in value.iter() {
            match part {
                FStringPart::Literal(literal) => push_text(&mut pieces, literal.as_str()),
                FStringPart::FString(fstring) => push_elements(&mut pieces, &fstring.elements),
            }
        }
        self.joined_str("f", &pieces);
    }

    /// t-strings are not Python 3.11 syntax; written like f-strings with a `t` prefix.
    pub(super) fn tstring(&mut self, value: &TStringValue) {
        let mut pieces = Vec::new();
        for tstring in value.iter() {
            push_elements(&mut pieces, &tstring.elements);
        }
        self.joined_str("t", &pieces);
    }

    /// `visit_JoinedStr`.
    fn joined_str(&mut self, prefix: &str, pieces: &[Piece<'_>]) {
        self.out.push_str(prefix);
        if self.avoid_backslashes {
            let inner = self.buffered(|this| {
                for piece in pieces {
                    this.fstring_inner(piece);
                }
            });
            let literal = str_avoiding_backslashes(&inner, &ALL_QUOTES);
            self.out.push_str(&literal);
            return;
        }
        let rendered: Vec<(String, bool)> = pieces
            .iter()
            .map(|piece| {
                let text = self.buffered(|this| this.fstring_inner(piece));
                (text, matches!(piece, Piece::Text(_)))
            })
            .collect();
        let mut quote_types: Vec<&'static str> = ALL_QUOTES.to_vec();
        let mut bodies = Vec::with_capacity(rendered.len());
        let mut fallback_to_repr = false;
        for (text, is_constant) in &rendered {
            let (body, new_quote_types) = str_literal_helper(text, &quote_types, *is_constant);
            bodies.push(body);
            if new_quote_types.iter().all(|q| !quote_types.contains(q)) {
                fallback_to_repr = true;
                break;
            }
            quote_types = new_quote_types;
        }
        if fallback_to_repr {
            quote_types = vec!["'''"];
            bodies = rendered
                .iter()
                .map(|(text, _)| {
                    let mut with_quote = String::from("\"");
                    with_quote.push_str(text);
                    let body = single_quoted_repr_body(&with_quote);
                    body.get(1..).unwrap_or("").to_owned()
                })
                .collect();
        }
        let quote = quote_types.first().copied().unwrap_or("'");
        self.out.push_str(quote);
        for body in &bodies {
            self.out.push_str(body);
        }
        self.out.push_str(quote);
    }

    /// `_write_fstring_inner` for one value.
    fn fstring_inner(&mut self, piece: &Piece<'_>) {
        match piece {
            Piece::Text(text) => {
                let escaped = text.replace('{', "{{").replace('}', "}}");
                self.out.push_str(&escaped);
            }
            Piece::Field(field) => self.formatted_value(field),
        }
    }

    /// `visit_FormattedValue`.
    fn formatted_value(&mut self, field: &InterpolatedElement) {
        self.out.push('{');
        let (text, error) = Unparser::run_with(
            &field.expression,
            self.source,
            Precedence::Test.next(),
            true,
        );
        if let Some(error) = error {
            self.fail(error);
        }
        if text.contains('\\') {
            self.fail(UnparseError::BackslashInFStringExpression);
        }
        if text.starts_with('{') {
            // Separate a pair of opening braces as "{ {".
            self.out.push(' ');
        }
        self.out.push_str(&text);
        let conversion = match field.conversion {
            ConversionFlag::None if field.debug_text.is_some() && field.format_spec.is_none() => {
                Some('r')
            }
            flag => flag.to_char(),
        };
        if let Some(conversion) = conversion {
            self.out.push('!');
            self.out.push(conversion);
        }
        if let Some(spec) = &field.format_spec {
            self.out.push(':');
            let mut pieces = Vec::new();
            push_elements(&mut pieces, &spec.elements);
            for piece in &pieces {
                self.fstring_inner(piece);
            }
        }
        self.out.push('}');
    }
}
