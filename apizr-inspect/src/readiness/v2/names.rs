//! Python names v2 checks without running anything: identifiers (not keywords) and the
//! field names `collections.namedtuple` accepts.

use ruff_python_ast::Expr;

/// A Python identifier that is not a keyword (ASCII only: anything else is not proved).
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !is_keyword(name)
}

fn is_keyword(name: &str) -> bool {
    matches!(
        name,
        "False"
            | "None"
            | "True"
            | "and"
            | "as"
            | "assert"
            | "async"
            | "await"
            | "break"
            | "class"
            | "continue"
            | "def"
            | "del"
            | "elif"
            | "else"
            | "except"
            | "finally"
            | "for"
            | "from"
            | "global"
            | "if"
            | "import"
            | "in"
            | "is"
            | "lambda"
            | "nonlocal"
            | "not"
            | "or"
            | "pass"
            | "raise"
            | "return"
            | "try"
            | "while"
            | "with"
            | "yield"
    )
}

/// `namedtuple` field names: a string (split on commas and whitespace) or a list/tuple of
/// strings; identifiers, no `_` prefix, distinct.
pub fn namedtuple_fields(fields: &Expr) -> bool {
    let names: Vec<String> = match fields {
        Expr::StringLiteral(s) => s
            .value
            .to_str()
            .replace(',', " ")
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        Expr::List(l) => match l.elts.iter().map(literal_str).collect::<Option<Vec<_>>>() {
            Some(names) => names,
            None => return false,
        },
        Expr::Tuple(t) => match t.elts.iter().map(literal_str).collect::<Option<Vec<_>>>() {
            Some(names) => names,
            None => return false,
        },
        _ => return false,
    };
    let mut seen = std::collections::HashSet::new();
    names
        .iter()
        .all(|n| is_identifier(n) && !n.starts_with('_') && seen.insert(n.as_str()))
}

fn literal_str(expr: &Expr) -> Option<String> {
    match expr {
        Expr::StringLiteral(s) => Some(s.value.to_str().to_string()),
        _ => None,
    }
}
