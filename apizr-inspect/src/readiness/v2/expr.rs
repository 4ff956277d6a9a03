//! Expressions evaluated at import: which cannot raise or do anything, and what they give.
//!
//! * [`Prover::value`] — an expression evaluated for its value (an assigned value, a default,
//!   a test): literals, displays of hashable keys, names bound here, known stdlib attributes,
//!   arithmetic on numbers, `%`-formatting of known strings ([`super::strings`]), `|` of
//!   types, a str, bytes, list or tuple times a small int literal
//!   ([`super::strings::MAX_REPEAT`]), the allowlisted calls ([`super::calls`]) and str
//!   methods ([`super::methods`]).
//! * [`Prover::type_expr`] — an argument of a typing form (`Optional[X]`, `X | None`): typing
//!   checks its arguments and raises `TypeError` on a non-type, so only types, forward
//!   references that parse, `None`, and known generics with the right number of arguments.
//! * [`Prover::annotation`] — a `def`/class annotation evaluated at import (no
//!   `from __future__ import annotations`): any value, but typing forms are checked.
//!
//! The one assumption: a name imported from outside the standard library that is used where
//! a type belongs is a type (classes and functions pass typing's checks; only other objects
//! would not).

use ruff_python_ast::{self as ast, Expr, Number, Operator, UnaryOp};
use ruff_text_size::{Ranged, TextRange};

use super::env::{Kind, Meaning};
use super::known::{self, Arity};
use super::strings::repeat_count;
use super::{Prover, Unproved, Why};

type Proof<T> = Result<T, Unproved>;

impl Prover<'_> {
    /// Evaluate `expr` for its value.
    pub fn value(&self, expr: &Expr) -> Proof<Meaning> {
        let fail = |why| Err(Unproved::at(expr.range(), why));
        Ok(match expr {
            Expr::StringLiteral(_) => Meaning::Value(Kind::Str),
            Expr::BytesLiteral(_) => Meaning::Value(Kind::Bytes),
            Expr::BooleanLiteral(_) => Meaning::Value(Kind::Bool),
            Expr::NoneLiteral(_) => Meaning::Value(Kind::None),
            Expr::EllipsisLiteral(_) => Meaning::Value(Kind::Object),
            Expr::NumberLiteral(n) => Meaning::Value(match n.value {
                Number::Int(_) => Kind::Int,
                _ => Kind::Float,
            }),
            Expr::Tuple(t) => {
                let mut hashable = true;
                for elt in &t.elts {
                    hashable &= self.element(elt)?;
                }
                Meaning::Value(if hashable { Kind::Tuple } else { Kind::Other })
            }
            Expr::List(l) => {
                for elt in &l.elts {
                    self.element(elt)?;
                }
                Meaning::Value(Kind::List)
            }
            Expr::Set(s) => {
                for elt in &s.elts {
                    match elt {
                        Expr::Starred(star) => self.unpacked_hashables(&star.value)?,
                        _ => self.hashable(elt)?,
                    }
                }
                Meaning::Value(Kind::Set)
            }
            Expr::Dict(d) => {
                for item in &d.items {
                    match &item.key {
                        Some(key) => self.hashable(key)?,
                        None => return fail(Why::Expression),
                    }
                    self.value(&item.value)?;
                }
                Meaning::Value(Kind::Dict)
            }
            Expr::Name(name) => match self.env.lookup(name.id.as_str()) {
                None => return fail(Why::Unbound),
                Some(Meaning::Maybe) => return fail(Why::MaybeUnbound),
                Some(Meaning::TypeOnly) => return fail(Why::TypeCheckingOnly),
                Some(meaning) => meaning,
            },
            Expr::Attribute(attr) => self.attribute(attr)?,
            Expr::Subscript(sub) => self.subscript(sub)?,
            // `not x` tests the truth of `x` ([`Prover::test`]: not of an instance).
            Expr::UnaryOp(u) if u.op == UnaryOp::Not => {
                self.test(&u.operand)?;
                Meaning::Value(Kind::Bool)
            }
            Expr::UnaryOp(u) => {
                let operand = self.value(&u.operand)?;
                match (u.op, operand) {
                    (
                        UnaryOp::USub | UnaryOp::UAdd,
                        Meaning::Value(k @ (Kind::Int | Kind::Float)),
                    ) => Meaning::Value(k),
                    _ => return fail(Why::Expression),
                }
            }
            Expr::BinOp(b) => self.binop(b)?,
            Expr::Compare(_) => {
                self.test(expr)?;
                Meaning::Value(Kind::Bool)
            }
            Expr::BoolOp(_) => {
                self.test(expr)?;
                Meaning::Value(Kind::Other)
            }
            // `sys.platform.startswith("win")`: a method of a known string, a literal argument.
            Expr::Call(call) if super::stmt::is_str_prefix_test(self, call) => {
                Meaning::Value(Kind::Bool)
            }
            // A call v2 folds to a string (`re.escape(string.punctuation)`).
            Expr::Call(_) if self.str_value(expr).is_some() => Meaning::Value(Kind::Str),
            // `ord("\\")` of a known one-character string ([`super::joins`]).
            Expr::Call(_) if self.int_value(expr).is_some() => Meaning::Value(Kind::Int),
            Expr::Call(call) => self.call(call)?,
            // An f-string v2 folds ([`super::strings`]): only known strings are formatted.
            Expr::FString(_) if self.str_value(expr).is_some() => Meaning::Value(Kind::Str),
            Expr::FString(f) if self.formats_builtin_scalars(f) => Meaning::Value(Kind::Str),
            Expr::ListComp(c) => {
                self.comprehension(&c.elt, &c.generators, expr)?;
                Meaning::Value(Kind::List)
            }
            // `{k: v for x in ...}` ([`super::dicts`]).
            Expr::DictComp(d) => self.dict_comprehension(d, expr)?,
            Expr::Lambda(lambda) => {
                if let Some(params) = &lambda.parameters {
                    for default in params
                        .iter_non_variadic_params()
                        .filter_map(|p| p.default.as_deref())
                    {
                        self.value(default)?;
                    }
                }
                Meaning::Value(Kind::Other)
            }
            _ => return fail(Why::Expression),
        })
    }

    /// An element of a tuple or list: its value; true when it is hashable.
    fn element(&self, expr: &Expr) -> Proof<bool> {
        if let Expr::Starred(_) = expr {
            return Err(Unproved::at(expr.range(), Why::Expression));
        }
        Ok(match self.value(expr)? {
            Meaning::Value(kind) => kind.hashable(),
            Meaning::Unknown => false,
            _ => true,
        })
    }

    /// `expr` evaluates without failing to a value whose `hash()` cannot fail.
    pub fn is_hashable_element(&self, expr: &Expr) -> bool {
        self.element(expr).unwrap_or(false)
    }

    /// `*items` in a set display: a tuple or list display of hashable elements, a generator v2
    /// proves ([`super::comprehension`]) whose elements are hashable, or a value whose items
    /// are ([`Self::hashable_items`]).
    fn unpacked_hashables(&self, items: &Expr) -> Proof<()> {
        match items {
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                elts.iter().try_for_each(|e| self.hashable(e))
            }
            Expr::Generator(g) => match self.comprehension(&g.elt, &g.generators, items)? {
                Meaning::Value(kind) if !kind.hashable() => {
                    Err(Unproved::at(g.elt.range(), Why::Unhashable))
                }
                Meaning::Unknown => Err(Unproved::at(g.elt.range(), Why::Unhashable)),
                _ => Ok(()),
            },
            other => {
                self.value(other)?;
                if self.hashable_items(other) {
                    Ok(())
                } else {
                    Err(Unproved::at(other.range(), Why::Unhashable))
                }
            }
        }
    }

    /// `items` evaluates to a value whose items are hashable: a set, frozenset or dict (their
    /// members and keys are), a str or bytes (characters, ints), or a hashable tuple.
    pub fn hashable_items(&self, items: &Expr) -> bool {
        matches!(
            self.value(items),
            Ok(Meaning::Value(
                Kind::Set | Kind::FrozenSet | Kind::Dict | Kind::Str | Kind::Bytes | Kind::Tuple
            ))
        )
    }

    /// A set element or dict key: `hash()` must not fail.
    fn hashable(&self, expr: &Expr) -> Proof<()> {
        if self.element(expr)? {
            Ok(())
        } else {
            Err(Unproved::at(expr.range(), Why::Unhashable))
        }
    }

    fn attribute(&self, attr: &ast::ExprAttribute) -> Proof<Meaning> {
        let fail = || Err(Unproved::at(attr.range(), Why::Attribute));
        // The methods and attributes of a `struct.Struct` ([`super::values`]).
        if let Expr::Name(n) = attr.value.as_ref()
            && self.env.has_mark(n.id.as_str(), super::env::Mark::Struct)
        {
            return match attr.attr.as_str() {
                "pack" | "unpack" | "pack_into" | "unpack_from" | "iter_unpack" => {
                    Ok(Meaning::Value(Kind::Object))
                }
                "size" => Ok(Meaning::Value(Kind::Int)),
                "format" => Ok(Meaning::Value(Kind::Str)),
                _ => fail(),
            };
        }
        // A member of an enum class of the module, or a plain class's data attribute
        // ([`super::env::Env::member`]).
        if let Expr::Name(n) = attr.value.as_ref()
            && let Some(kind) = self.env.member(n.id.as_str(), attr.attr.as_str())
        {
            return Ok(Meaning::Value(kind));
        }
        let qualified = match self.value(&attr.value)? {
            // A module of the inspected package: what it binds, when it is proved.
            Meaning::Module(module)
                if let Some(meaning) = self
                    .package
                    .and_then(|p| p.attribute(&module, attr.attr.as_str())) =>
            {
                return Ok(meaning.meaning);
            }
            Meaning::Module(module) | Meaning::Qualified(module) => {
                format!("{module}.{}", attr.attr.as_str())
            }
            _ => return fail(),
        };
        if let Some(kind) = known::constant(&qualified) {
            return Ok(Meaning::Value(kind));
        }
        if known::is_known(&qualified) {
            return Ok(Meaning::Qualified(qualified));
        }
        // `os` always binds `os.path` (it imports `posixpath` or `ntpath` as `path`).
        if self.imported_modules.contains(&qualified) || qualified == "os.path" {
            return Ok(Meaning::Module(qualified));
        }
        // A name a private copy of a stdlib module binds ([`super::module_copy`]).
        self.copy_attribute(attr).ok_or(()).or_else(|()| fail())
    }

    fn subscript(&self, sub: &ast::ExprSubscript) -> Proof<Meaning> {
        // `codecs.lookup("utf-8")[3]` ([`super::values`]).
        if let Some(item) = self.codec_item(sub) {
            return item;
        }
        let head = self.value(&sub.value)?;
        // `C[T]` of a generic class of the module ([`super::generics`]).
        if let Some(proof) = self.generic_class_subscript(&head, sub) {
            return proof;
        }
        match &head {
            Meaning::Qualified(q) if q == "sys.version_info" => {}
            Meaning::Value(Kind::Tuple) if is_version_info(&sub.value) => {}
            _ => {
                self.type_subscript(&head, sub)?;
                return Ok(Meaning::TypeLike);
            }
        }
        // `sys.version_info[0]`, `sys.version_info[:2]`.
        match sub.slice.as_ref() {
            Expr::NumberLiteral(n) if matches!(&n.value, Number::Int(i) if i.as_u8().is_some_and(|v| v < 5)) => {
                Ok(Meaning::Value(Kind::Int))
            }
            Expr::Slice(_) => Ok(Meaning::Value(Kind::Tuple)),
            _ => Err(Unproved::at(sub.range(), Why::Expression)),
        }
    }

    fn binop(&self, b: &ast::ExprBinOp) -> Proof<Meaning> {
        let fail = || Err(Unproved::at(b.range(), Why::Expression));
        // `10 ** 3`, `10 ** x` over small exponents ([`super::pure`]).
        if b.op == Operator::Pow {
            return self.power(b);
        }
        // `%`-formatting of known strings ([`super::strings`]).
        if b.op == Operator::Mod {
            // `b"\\%03o" % v` of an int ([`super::ints`]).
            if let Some(meaning) = self.bytes_format(b) {
                return Ok(meaning);
            }
            return if self.str_binop(b).is_some() {
                Ok(Meaning::Value(Kind::Str))
            } else {
                fail()
            };
        }
        if b.op == Operator::BitOr
            && (is_typeish(&self.value(&b.left)?) || is_typeish(&self.value(&b.right)?))
        {
            // `int | "Foo"` raises: a forward reference cannot be an operand of `|`.
            for side in [&b.left, &b.right] {
                if let Expr::StringLiteral(_) = side.as_ref() {
                    return Err(Unproved::at(side.range(), Why::NotAType));
                }
                self.type_expr(side)?;
            }
            return Ok(Meaning::TypeLike);
        }
        // `"-" * 72`, `[1] * 31`: a sequence repeated a small literal number of times.
        if b.op == Operator::Mult {
            let sequence = match (repeat_count(&b.left), repeat_count(&b.right)) {
                (Option::None, Some(_)) => Some(&b.left),
                (Some(_), Option::None) => Some(&b.right),
                _ => Option::None,
            };
            if let Some(sequence) = sequence
                && let Meaning::Value(kind @ (Kind::Str | Kind::Bytes | Kind::List | Kind::Tuple)) =
                    self.value(sequence)?
            {
                return Ok(Meaning::Value(kind));
            }
        }
        let (Meaning::Value(left), Meaning::Value(right)) =
            (self.value(&b.left)?, self.value(&b.right)?)
        else {
            return fail();
        };
        use Kind::*;
        let kind = match (b.op, left, right) {
            (Operator::Add | Operator::Sub | Operator::Mult, Int, Int) => Int,
            (Operator::Add | Operator::Sub | Operator::Mult, Int | Float, Int | Float) => Float,
            (Operator::BitOr | Operator::BitAnd | Operator::BitXor, Int, Int) => Int,
            (Operator::Add, Str, Str) => Str,
            (Operator::Add, Bytes, Bytes) => Bytes,
            (Operator::Add, Tuple, Tuple) => Tuple,
            (Operator::Add, List, List) => List,
            (
                Operator::BitOr | Operator::BitAnd | Operator::BitXor | Operator::Sub,
                Set | FrozenSet,
                Set | FrozenSet,
            ) => left,
            _ => return fail(),
        };
        Ok(Meaning::Value(kind))
    }

    /// `head[...]` for a typing form: the arguments must satisfy its arity.
    fn type_subscript(&self, head: &Meaning, sub: &ast::ExprSubscript) -> Proof<()> {
        let fail = |range: TextRange, why| Err(Unproved::at(range, why));
        let arity = match head {
            Meaning::Qualified(q) => known::type_form(q),
            _ => None,
        };
        let Some(arity) = arity else {
            return fail(sub.value.range(), Why::NotGeneric);
        };
        // `Tuple[()]` / `tuple[()]`: the empty tuple type.
        if arity == Arity::Any
            && matches!(sub.slice.as_ref(), Expr::Tuple(t) if t.elts.is_empty() && t.parenthesized)
        {
            return Ok(());
        }
        let args: Vec<&Expr> = match sub.slice.as_ref() {
            Expr::Tuple(t) => t.elts.iter().collect(),
            other => vec![other],
        };
        let count = args.len();
        let arity_ok = match arity {
            Arity::Exactly(n) => count == n,
            Arity::AtLeast(n) => count >= n,
            Arity::Any | Arity::Literal | Arity::TypeVars => count >= 1,
            Arity::Callable => count == 2,
            Arity::Annotated => count >= 2,
        };
        if !arity_ok {
            return fail(sub.slice.range(), Why::Arity);
        }
        match arity {
            Arity::Literal => {
                for arg in args {
                    if !is_literal_member(arg) {
                        return fail(arg.range(), Why::NotALiteral);
                    }
                }
            }
            Arity::TypeVars => {
                let mut seen = Vec::new();
                for arg in args {
                    let name = match arg {
                        Expr::Name(n)
                            if self.env.lookup(n.id.as_str()) == Some(Meaning::TypeVar) =>
                        {
                            n.id.as_str()
                        }
                        _ => return fail(arg.range(), Why::NotATypeVar),
                    };
                    if seen.contains(&name) {
                        return fail(arg.range(), Why::NotATypeVar);
                    }
                    seen.push(name);
                }
            }
            Arity::Callable => {
                match args[0] {
                    Expr::List(l) => {
                        for arg in &l.elts {
                            self.type_expr(arg)?;
                        }
                    }
                    Expr::EllipsisLiteral(_) => {}
                    other => return fail(other.range(), Why::NotAType),
                }
                self.type_expr(args[1])?;
            }
            Arity::Annotated => {
                self.type_expr(args[0])?;
                for arg in &args[1..] {
                    self.value(arg)?;
                }
            }
            Arity::Any => {
                for (index, arg) in args.iter().enumerate() {
                    match arg {
                        // `Tuple[int, ...]`, `tuple[()]`.
                        Expr::EllipsisLiteral(_) if index == 1 => {}
                        Expr::Tuple(t) if t.elts.is_empty() => {}
                        _ => self.type_expr(arg)?,
                    }
                }
            }
            Arity::Exactly(_) | Arity::AtLeast(_) => {
                for arg in args {
                    self.type_expr(arg)?;
                }
            }
        }
        Ok(())
    }

    /// An argument of a typing form.
    pub fn type_expr(&self, expr: &Expr) -> Proof<()> {
        let fail = |why| Err(Unproved::at(expr.range(), why));
        match expr {
            Expr::NoneLiteral(_) => Ok(()),
            // A forward reference: typing compiles it, so it must parse.
            Expr::StringLiteral(s) => {
                match ruff_python_parser::parse_expression(s.value.to_str()) {
                    Ok(_) => Ok(()),
                    Err(_) => fail(Why::BadForwardRef),
                }
            }
            Expr::Name(_) | Expr::Attribute(_) | Expr::Subscript(_) | Expr::BinOp(_) => {
                match self.value(expr)? {
                    Meaning::Qualified(q)
                        if known::is_plain_type(&q) || known::type_form(&q).is_some() =>
                    {
                        Ok(())
                    }
                    Meaning::Class(_) | Meaning::TypeVar | Meaning::TypeLike | Meaning::Unknown => {
                        Ok(())
                    }
                    _ => fail(Why::NotAType),
                }
            }
            _ => fail(Why::NotAType),
        }
    }

    /// An annotation evaluated at import (`def f(x: A)`, `x: A = 1` in a class body).
    pub fn annotation(&self, expr: &Expr) -> Proof<()> {
        if self.future_annotations {
            return Ok(());
        }
        match expr {
            Expr::StringLiteral(_) => Ok(()),
            Expr::Subscript(_) | Expr::BinOp(_) => self.type_expr(expr),
            _ => self.value(expr).map(drop),
        }
    }
}

fn is_typeish(meaning: &Meaning) -> bool {
    match meaning {
        Meaning::Qualified(q) => known::is_plain_type(q) || known::type_form(q).is_some(),
        Meaning::Class(_) | Meaning::TypeVar | Meaning::TypeLike => true,
        _ => false,
    }
}

/// `sys.version_info` written out (after `from sys import version_info` it is a name).
fn is_version_info(expr: &Expr) -> bool {
    match expr {
        Expr::Attribute(a) => a.attr.as_str() == "version_info",
        Expr::Name(n) => n.id.as_str() == "version_info",
        _ => false,
    }
}

/// A `Literal[...]` member: a str/bytes/int/bool/None literal (negative numbers included).
fn is_literal_member(expr: &Expr) -> bool {
    match expr {
        Expr::StringLiteral(_)
        | Expr::BytesLiteral(_)
        | Expr::BooleanLiteral(_)
        | Expr::NoneLiteral(_) => true,
        Expr::NumberLiteral(n) => matches!(n.value, Number::Int(_)),
        Expr::UnaryOp(u) => {
            u.op == UnaryOp::USub
                && matches!(u.operand.as_ref(), Expr::NumberLiteral(n) if matches!(n.value, Number::Int(_)))
        }
        _ => false,
    }
}
