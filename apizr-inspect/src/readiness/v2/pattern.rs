//! `re.compile(pattern[, flags])` at import: the call cannot raise when the pattern is one
//! [`super::regex`] proves valid and the flags are ones `re` accepts with it.
//!
//! * The pattern is a str v2 folds ([`super::strings`]) or a bytes literal (`sre_parse` reads
//!   bytes as latin-1 characters; `\u`, `\U`, `\N` are bad escapes there).
//! * The flags are `re.<FLAG>` attributes of the `re` module, int literals and `|` of them,
//!   whose value v2 computes: `re` raises `ValueError` for `re.L` with a str pattern, `re.U`
//!   with a bytes pattern, and `re.A | re.U`; `re.DEBUG` (128) prints the compiled program on
//!   stdout (an effect), and `re.T` is deprecated. So only `I`, `M`, `S`, `X`, `A` and (str
//!   patterns) `U` are proved; a flag expression v2 cannot compute is not.
//! * Verbose mode (`re.X`) changes how the pattern reads, so the validator is told.
//!
//! `re.Scanner(lexicon)` parses every phrase of its lexicon and compiles them as one pattern:
//! proved for a non-empty list display (at most [`MAX_PHRASES`]) of `(phrase, action)` tuple
//! displays whose phrases are valid patterns without `(` (a group's number would change in
//! the combined pattern) and whose actions v2 proves (they are only stored); no flags.

use ruff_python_ast::{Expr, ExprCall, Number, Operator};
use ruff_text_size::Ranged;

use super::env::{Kind, Meaning};
use super::{Prover, Unproved, Why, regex};

const IGNORECASE: u32 = 2;
const MULTILINE: u32 = 8;
const DOTALL: u32 = 16;
const UNICODE: u32 = 32;
const VERBOSE: u32 = 64;
const ASCII: u32 = 256;

/// The longest lexicon `re.Scanner` is proved for.
pub const MAX_PHRASES: usize = 64;

impl Prover<'_> {
    /// `re.Scanner(lexicon)` cannot raise (the rules above).
    pub fn scanner(&self, call: &ExprCall) -> Result<Meaning, Unproved> {
        let fail = |at: &dyn Ranged| Err(Unproved::at(at.range(), Why::Arguments));
        let ([Expr::List(lexicon)], true) =
            (&call.arguments.args[..], call.arguments.keywords.is_empty())
        else {
            return fail(call);
        };
        if lexicon.elts.is_empty() || lexicon.elts.len() > MAX_PHRASES {
            return fail(call);
        }
        for entry in &lexicon.elts {
            let Expr::Tuple(pair) = entry else {
                return fail(entry);
            };
            let [phrase, action] = &pair.elts[..] else {
                return fail(entry);
            };
            let valid = self
                .str_value(phrase)
                .is_some_and(|p| !p.contains('(') && regex::is_valid(&p, false));
            if !valid {
                return Err(Unproved::at(phrase.range(), Why::Regex));
            }
            self.value(action)?;
        }
        Ok(Meaning::Value(Kind::Object))
    }

    /// `re.compile(pattern, flags)` cannot raise or print.
    pub fn compile(&self, pattern: &Expr, flags: Option<&Expr>) -> Result<(), Unproved> {
        let bytes = matches!(pattern, Expr::BytesLiteral(_));
        let allowed = IGNORECASE | MULTILINE | DOTALL | VERBOSE | ASCII;
        let allowed = if bytes { allowed } else { allowed | UNICODE };
        let flags = match flags {
            None => 0,
            Some(expr) => match self.re_flags(expr) {
                Some(f) if f & !allowed == 0 && !(f & ASCII != 0 && f & UNICODE != 0) => f,
                _ => return Err(Unproved::at(expr.range(), Why::Arguments)),
            },
        };
        let verbose = flags & VERBOSE != 0;
        let valid = match pattern {
            Expr::BytesLiteral(b) => {
                let bytes: Vec<u8> = b.value.bytes().collect();
                regex::is_valid_bytes(&bytes, verbose)
            }
            // A literal, or a string folded from module constants ([`super::strings`]).
            _ => self
                .str_value(pattern)
                .is_some_and(|p| regex::is_valid(&p, verbose)),
        };
        if valid {
            Ok(())
        } else {
            Err(Unproved::at(pattern.range(), Why::Regex))
        }
    }

    /// The value of a flags expression: `re.I`, `re.IGNORECASE`, ... (attributes of the `re`
    /// module as bound here), int literals, and `|` of them.
    fn re_flags(&self, flags: &Expr) -> Option<u32> {
        match flags {
            Expr::BinOp(b) if b.op == Operator::BitOr => {
                Some(self.re_flags(&b.left)? | self.re_flags(&b.right)?)
            }
            Expr::NumberLiteral(n) => match &n.value {
                Number::Int(i) => i.as_u64().and_then(|v| u32::try_from(v).ok()),
                _ => None,
            },
            Expr::Attribute(a) if self.value(&a.value) == Ok(Meaning::Module("re".into())) => {
                Some(match a.attr.as_str() {
                    "I" | "IGNORECASE" => IGNORECASE,
                    "M" | "MULTILINE" => MULTILINE,
                    "S" | "DOTALL" => DOTALL,
                    "U" | "UNICODE" => UNICODE,
                    "X" | "VERBOSE" => VERBOSE,
                    "A" | "ASCII" => ASCII,
                    _ => return None,
                })
            }
            _ => None,
        }
    }
}
