//! CPython 3.11 `ast.unparse` for expressions, over ruff's AST.
//!
//! Every `declared` text in the Capability IR (annotations, defaults, decorators) is what
//! CPython 3.11's `ast.unparse` prints for that expression, and those texts are hashed into
//! the IR digest, so this is a byte-exact port of `ast._Unparser` (expression part only).
//!
//! ruff's AST is close to CPython's but not identical; the differences handled here:
//! - implicitly concatenated strings / f-strings are kept as parts by ruff, while CPython
//!   merges them into one `Constant` or one `JoinedStr` (see [`fstring`]);
//! - big integers are kept as token text by ruff (see [`numbers`]);
//! - ruff records `f"{x=}"` as debug text, CPython as a literal part plus `!r`;
//! - ruff replaces lone surrogates (`'\ud800'`) by U+FFFD (see [`surrogates`]);
//! - ruff does not keep the case of a `u`/`U` prefix (read back from the source).
//!
//! Layout: [`expr`] is the visitor (precedence-driven parentheses), [`clauses`] the lambda
//! parameters and comprehension clauses, [`fstring`] the f-strings, [`strings`] holds
//! `repr` and the quote-choosing helpers, [`printable`] is CPython's `str.isprintable`.

mod clauses;
mod expr;
mod fstring;
mod numbers;
mod precedence;
mod printable;
mod strings;
mod surrogates;

use ruff_python_ast::Expr;

/// Cases where CPython's `ast.unparse` raises instead of returning text.
///
/// The `Display` text is exactly `str()` of CPython's `ValueError` (the reference tool prints
/// `apizr inspect: <that text>` and exits with status 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnparseError {
    /// A replacement-field expression of an f-string cannot be written without a backslash.
    #[error("Unable to avoid backslash in f-string expression part")]
    BackslashInFStringExpression,
    /// An integer with more decimal digits than `sys.get_int_max_str_digits()` (4300).
    #[error(
        "Exceeds the limit (4300 digits) for integer string conversion; \
         use sys.set_int_max_str_digits() to increase the limit"
    )]
    IntegerTooLarge { digits: usize },
    /// An integer token that is not a valid literal (the parser reported an error).
    #[error("malformed integer literal")]
    BadIntegerLiteral,
}

/// `ast.unparse(expr)` as CPython 3.11 prints it.
///
/// Where CPython would raise (see [`UnparseError`]) this still returns a best-effort text
/// (the same text, with the offending part written anyway); use [`try_unparse`] to detect it.
///
/// Without the source text one detail is unknowable: ruff does not record whether a string's
/// `u` prefix was `u` or `U`, and CPython writes `u'x'` only for the lowercase one. This
/// assumes lowercase; [`unparse_with_source`] is exact.
pub fn unparse(expr: &Expr) -> String {
    expr::Unparser::run(expr, None).0
}

/// [`unparse`] with `source`, the text the expression's ranges refer to (the parsed file).
pub fn unparse_with_source(expr: &Expr, source: &str) -> String {
    expr::Unparser::run(expr, Some(source)).0
}

/// Like [`unparse`], but reports the cases where CPython 3.11 raises an exception.
pub fn try_unparse(expr: &Expr) -> Result<String, UnparseError> {
    into_result(expr::Unparser::run(expr, None))
}

/// Like [`unparse_with_source`], but reports the cases where CPython 3.11 raises.
pub fn try_unparse_with_source(expr: &Expr, source: &str) -> Result<String, UnparseError> {
    into_result(expr::Unparser::run(expr, Some(source)))
}

fn into_result((text, error): (String, Option<UnparseError>)) -> Result<String, UnparseError> {
    match error {
        None => Ok(text),
        Some(error) => Err(error),
    }
}
