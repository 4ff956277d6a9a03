//! The expression visitor: a port of `ast._Unparser.visit_*` for expression nodes.
//!
//! CPython keeps a `node -> precedence` dictionary that a parent fills right before it
//! traverses a child (default `TEST`). Every child is traversed exactly once right after its
//! precedence is set, so here the precedence is simply passed down as an argument.

use ruff_python_ast::{BoolOp, Expr, Number, Operator, StringLiteral, UnaryOp};

use super::UnparseError;
use super::numbers::{is_int_constant, number_text};
use super::precedence::{Precedence, binop_precedence};
use super::strings::{ALL_QUOTES, repr_bytes, repr_str, repr_units, str_avoiding_backslashes};
use super::surrogates::string_units;

pub(crate) struct Unparser<'s> {
    /// The text the expression's ranges point into, when known (see `is_lower_u_prefix`).
    pub(super) source: Option<&'s str>,
    pub(super) out: String,
    /// `_avoid_backslashes`: set for the expression inside an f-string replacement field.
    pub(super) avoid_backslashes: bool,
    /// First reason CPython would have raised; the text is still produced.
    pub(super) error: Option<UnparseError>,
}

impl<'s> Unparser<'s> {
    /// Unparse `expr` with the default precedence (`TEST`), as `ast.unparse` does.
    pub(crate) fn run(expr: &Expr, source: Option<&'s str>) -> (String, Option<UnparseError>) {
        Self::run_with(expr, source, Precedence::Test, false)
    }

    pub(super) fn run_with(
        expr: &Expr,
        source: Option<&'s str>,
        precedence: Precedence,
        avoid_backslashes: bool,
    ) -> (String, Option<UnparseError>) {
        let mut unparser = Unparser {
            source,
            out: String::new(),
            avoid_backslashes,
            error: None,
        };
        unparser.expr(expr, precedence);
        (unparser.out, unparser.error)
    }

    pub(super) fn fail(&mut self, error: UnparseError) {
        if self.error.is_none() {
            self.error = Some(error);
        }
    }

    pub(super) fn write(&mut self, text: &str) {
        self.out.push_str(text);
    }

    /// `require_parens` / `delimit_if`: open a parenthesis when needed, return whether it did.
    fn open_if(&mut self, condition: bool) -> bool {
        if condition {
            self.out.push('(');
        }
        condition
    }

    fn close_if(&mut self, opened: bool) {
        if opened {
            self.out.push(')');
        }
    }

    /// `interleave(", ", traverse, items)` with every item at `TEST` precedence.
    fn comma_separated(&mut self, items: &[Expr]) {
        for (index, item) in items.iter().enumerate() {
            if index > 0 {
                self.write(", ");
            }
            self.expr(item, Precedence::Test);
        }
    }

    /// `items_view`: a single item gets a trailing comma.
    fn items_view(&mut self, items: &[Expr]) {
        if let [only] = items {
            self.expr(only, Precedence::Test);
            self.write(",");
        } else {
            self.comma_separated(items);
        }
    }

    pub(super) fn expr(&mut self, expr: &Expr, precedence: Precedence) {
        match expr {
            Expr::BoolOp(node) => {
                let (word, mut operator) = match node.op {
                    BoolOp::And => (" and ", Precedence::And),
                    BoolOp::Or => (" or ", Precedence::Or),
                };
                let opened = self.open_if(precedence > operator);
                for (index, value) in node.values.iter().enumerate() {
                    if index > 0 {
                        self.write(word);
                    }
                    // CPython raises the level for *each* operand (increasing_level_traverse).
                    operator = operator.next();
                    self.expr(value, operator);
                }
                self.close_if(opened);
            }
            Expr::Named(node) => {
                let opened = self.open_if(precedence > Precedence::NamedExpr);
                self.expr(&node.target, Precedence::Atom);
                self.write(" := ");
                self.expr(&node.value, Precedence::Atom);
                self.close_if(opened);
            }
            Expr::BinOp(node) => {
                let operator = binop_precedence(node.op);
                let opened = self.open_if(precedence > operator);
                let (left, right) = if node.op == Operator::Pow {
                    (operator.next(), operator)
                } else {
                    (operator, operator.next())
                };
                self.expr(&node.left, left);
                self.write(" ");
                self.write(node.op.as_str());
                self.write(" ");
                self.expr(&node.right, right);
                self.close_if(opened);
            }
            Expr::UnaryOp(node) => {
                let (text, operator) = match node.op {
                    UnaryOp::Not => ("not ", Precedence::Not),
                    UnaryOp::Invert => ("~", Precedence::Factor),
                    UnaryOp::UAdd => ("+", Precedence::Factor),
                    UnaryOp::USub => ("-", Precedence::Factor),
                };
                let opened = self.open_if(precedence > operator);
                self.write(text);
                self.expr(&node.operand, operator);
                self.close_if(opened);
            }
            Expr::Lambda(node) => {
                let opened = self.open_if(precedence > Precedence::Test);
                self.write("lambda");
                if let Some(parameters) = &node.parameters {
                    let mut buffer = Unparser {
                        source: self.source,
                        out: String::new(),
                        avoid_backslashes: self.avoid_backslashes,
                        error: None,
                    };
                    buffer.parameters(parameters);
                    if let Some(error) = buffer.error {
                        self.fail(error);
                    }
                    if !buffer.out.is_empty() {
                        self.write(" ");
                        self.write(&buffer.out);
                    }
                }
                self.write(": ");
                self.expr(&node.body, Precedence::Test);
                self.close_if(opened);
            }
            Expr::If(node) => {
                let opened = self.open_if(precedence > Precedence::Test);
                self.expr(&node.body, Precedence::Test.next());
                self.write(" if ");
                self.expr(&node.test, Precedence::Test.next());
                self.write(" else ");
                self.expr(&node.orelse, Precedence::Test);
                self.close_if(opened);
            }
            Expr::Dict(node) => {
                self.write("{");
                for (index, item) in node.items.iter().enumerate() {
                    if index > 0 {
                        self.write(", ");
                    }
                    match &item.key {
                        Some(key) => {
                            self.expr(key, Precedence::Test);
                            self.write(": ");
                            self.expr(&item.value, Precedence::Test);
                        }
                        None => {
                            self.write("**");
                            self.expr(&item.value, Precedence::Expr);
                        }
                    }
                }
                self.write("}");
            }
            Expr::Set(node) => {
                if node.elts.is_empty() {
                    self.write("{*()}");
                } else {
                    self.write("{");
                    self.comma_separated(&node.elts);
                    self.write("}");
                }
            }
            Expr::ListComp(node) => {
                self.write("[");
                self.expr(&node.elt, Precedence::Test);
                self.generators(&node.generators);
                self.write("]");
            }
            Expr::SetComp(node) => {
                self.write("{");
                self.expr(&node.elt, Precedence::Test);
                self.generators(&node.generators);
                self.write("}");
            }
            Expr::DictComp(node) => {
                self.write("{");
                if let Some(key) = &node.key {
                    self.expr(key, Precedence::Test);
                } else {
                    self.write("**");
                }
                self.write(": ");
                self.expr(&node.value, Precedence::Test);
                self.generators(&node.generators);
                self.write("}");
            }
            Expr::Generator(node) => {
                self.write("(");
                self.expr(&node.elt, Precedence::Test);
                self.generators(&node.generators);
                self.write(")");
            }
            Expr::Await(node) => {
                let opened = self.open_if(precedence > Precedence::Await);
                self.write("await ");
                self.expr(&node.value, Precedence::Atom);
                self.close_if(opened);
            }
            Expr::Yield(node) => {
                let opened = self.open_if(precedence > Precedence::Yield);
                self.write("yield");
                if let Some(value) = &node.value {
                    self.write(" ");
                    self.expr(value, Precedence::Atom);
                }
                self.close_if(opened);
            }
            Expr::YieldFrom(node) => {
                let opened = self.open_if(precedence > Precedence::Yield);
                self.write("yield from ");
                self.expr(&node.value, Precedence::Atom);
                self.close_if(opened);
            }
            Expr::Compare(node) => {
                let opened = self.open_if(precedence > Precedence::Cmp);
                self.expr(&node.left, Precedence::Cmp.next());
                for (op, comparator) in node.ops.iter().zip(node.comparators.iter()) {
                    self.write(" ");
                    self.write(op.as_str());
                    self.write(" ");
                    self.expr(comparator, Precedence::Cmp.next());
                }
                self.close_if(opened);
            }
            Expr::Call(node) => {
                self.expr(&node.func, Precedence::Atom);
                self.write("(");
                let mut comma = false;
                for arg in node.arguments.args.iter() {
                    if comma {
                        self.write(", ");
                    }
                    comma = true;
                    self.expr(arg, Precedence::Test);
                }
                for keyword in node.arguments.keywords.iter() {
                    if comma {
                        self.write(", ");
                    }
                    comma = true;
                    match &keyword.arg {
                        Some(name) => {
                            self.write(name.as_str());
                            self.write("=");
                        }
                        None => self.write("**"),
                    }
                    self.expr(&keyword.value, Precedence::Test);
                }
                self.write(")");
            }
            Expr::FString(node) => self.fstring(&node.value),
            Expr::TString(node) => self.tstring(&node.value),
            Expr::StringLiteral(node) => {
                if node.value.is_unicode() && self.is_lower_u_prefix(node.value.iter().next()) {
                    self.write("u");
                }
                let units = match self.source {
                    Some(source) if !self.avoid_backslashes => string_units(&node.value, source),
                    _ => None,
                };
                let text = if let Some(units) = units {
                    repr_units(&units)
                } else if self.avoid_backslashes {
                    str_avoiding_backslashes(node.value.to_str(), &ALL_QUOTES)
                } else {
                    repr_str(node.value.to_str())
                };
                self.write(&text);
            }
            Expr::BytesLiteral(node) => {
                let bytes: Vec<u8> = node.value.bytes().collect();
                self.write(&repr_bytes(&bytes));
            }
            Expr::NumberLiteral(node) => match number_text(&node.value) {
                Ok(text) => self.write(&text),
                Err(error) => {
                    if let Number::Int(int) = &node.value {
                        self.write(&int.to_string());
                    }
                    self.fail(error);
                }
            },
            Expr::BooleanLiteral(node) => self.write(if node.value { "True" } else { "False" }),
            Expr::NoneLiteral(_) => self.write("None"),
            Expr::EllipsisLiteral(_) => self.write("..."),
            Expr::Attribute(node) => {
                self.expr(&node.value, Precedence::Atom);
                // `3.real` is a syntax error; CPython writes `3 .real` for any int constant,
                // and `bool` is an `int` subclass, so `True .real` too.
                if is_int_constant(&node.value) {
                    self.write(" ");
                }
                self.write(".");
                self.write(node.attr.as_str());
            }
            Expr::Subscript(node) => {
                self.expr(&node.value, Precedence::Atom);
                self.write("[");
                match node.slice.as_ref() {
                    Expr::Tuple(tuple) if !tuple.elts.is_empty() => self.items_view(&tuple.elts),
                    slice => self.expr(slice, Precedence::Test),
                }
                self.write("]");
            }
            Expr::Starred(node) => {
                self.write("*");
                self.expr(&node.value, Precedence::Expr);
            }
            Expr::Name(node) => self.write(node.id.as_str()),
            Expr::List(node) => {
                self.write("[");
                self.comma_separated(&node.elts);
                self.write("]");
            }
            Expr::Tuple(node) => {
                let opened = self.open_if(node.elts.is_empty() || precedence > Precedence::Tuple);
                self.items_view(&node.elts);
                self.close_if(opened);
            }
            Expr::Slice(node) => {
                if let Some(lower) = &node.lower {
                    self.expr(lower, Precedence::Test);
                }
                self.write(":");
                if let Some(upper) = &node.upper {
                    self.expr(upper, Precedence::Test);
                }
                if let Some(step) = &node.step {
                    self.write(":");
                    self.expr(step, Precedence::Test);
                }
            }
            // Not Python syntax; CPython has no node for it. Write the command back.
            Expr::IpyEscapeCommand(node) => {
                self.write(node.kind.as_str());
                self.write(&node.value);
            }
        }
    }

    /// CPython sets `kind='u'` only for a lowercase `u` prefix on the first part; ruff does not
    /// keep the case, so it is read from the source when available (else assumed lowercase).
    fn is_lower_u_prefix(&self, first: Option<&StringLiteral>) -> bool {
        let (Some(source), Some(first)) = (self.source, first) else {
            return true;
        };
        let start = first.range.start().to_usize();
        source.get(start..).and_then(|rest| rest.chars().next()) != Some('U')
    }
}
