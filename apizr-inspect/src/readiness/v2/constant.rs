//! Calls of the module's own functions evaluated on known values (`__version__ =
//! _get_version(__version_info__)`): when every argument is a value v2 knows exactly, the body
//! is run as CPython runs it, on a small set of values, and the call is proved when it returns
//! without raising. Anything outside that set, or that might raise, leaves the call to the
//! proof by kinds ([`super::pure`]).
//!
//! Values: `int` (64-bit; an overflow is refused), `str`, `bool`, `None`, tuples of them, dicts
//! with `str` keys, and the iterator `map(str, <tuple>)` (only `join` consumes it). Statements
//! (after a docstring): `assert` of a true test, assignments and `+=` to a name, `if`/`elif`/
//! `else` on a known test (only the arm that runs is evaluated), `pass`, `return`. Expressions:
//! literals, displays, names (a local assigned before, else a module name bound to a known
//! value; a name the body assigns is local everywhere, so reading it earlier is refused as
//! CPython raises `UnboundLocalError`), `+ - *` on ints, `+` on strs and tuples, comparisons
//! (`== != < <= > >= in not in`) of values of one kind, `and`/`or`/`not`, `x if t else y`,
//! indexes and slices (without step) of tuples and strs in range, dict lookups of present
//! keys, and the builtins `len`, `str` and `map(str, ...)` plus `<str>.join(...)`, while the
//! module does not rebind those builtins.

use std::collections::HashMap;

use ruff_python_ast::{self as ast, CmpOp, Expr, Number, Operator, Stmt, UnaryOp};

use super::Prover;
use super::env::{Kind, Meaning};

/// Statements run per call at most (no loops are evaluated; this bounds nested `if`s).
const MAX_STEPS: usize = 256;

/// A value v2 knows exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Int(i64),
    Str(String),
    Bool(bool),
    None,
    Tuple(Vec<Value>),
    /// Keys are strs, in insertion order, each once.
    Dict(Vec<(String, Value)>),
    /// `map(str, <tuple>)`: its items, consumed once by `join`.
    Iter(Vec<Value>),
}

impl Value {
    /// The meaning of the value for the kinds-based proof.
    pub fn meaning(&self) -> Meaning {
        Meaning::Value(match self {
            Value::Int(_) => Kind::Int,
            Value::Str(_) => Kind::Str,
            Value::Bool(_) => Kind::Bool,
            Value::None => Kind::None,
            Value::Tuple(items) if items.iter().all(Value::hashable) => Kind::Tuple,
            Value::Dict(_) => Kind::Dict,
            Value::Tuple(_) | Value::Iter(_) => Kind::Other,
        })
    }

    fn hashable(&self) -> bool {
        match self {
            Value::Int(_) | Value::Str(_) | Value::Bool(_) | Value::None => true,
            Value::Tuple(items) => items.iter().all(Value::hashable),
            Value::Dict(_) | Value::Iter(_) => false,
        }
    }

    /// A literal tuple display of scalars, as a module binds it (`__version_info__ = (3, 6, 0,
    /// 'final', 0)`).
    pub fn of_literal(expr: &Expr) -> Option<Value> {
        match expr {
            Expr::Tuple(t) => t
                .elts
                .iter()
                .map(scalar)
                .collect::<Option<_>>()
                .map(Value::Tuple),
            _ => None,
        }
    }

    fn truthy(&self) -> bool {
        match self {
            Value::Int(i) => *i != 0,
            Value::Str(s) => !s.is_empty(),
            Value::Bool(b) => *b,
            Value::None => false,
            Value::Tuple(items) => !items.is_empty(),
            Value::Dict(items) => !items.is_empty(),
            // A `map` object is always true.
            Value::Iter(_) => true,
        }
    }

    /// `==` as CPython computes it for these values (`True == 1`), or `None` when the
    /// comparison might run user code or is not modelled.
    fn equals(&self, other: &Value) -> Option<bool> {
        use Value::*;
        Some(match (self, other) {
            (Int(_) | Bool(_), Int(_) | Bool(_)) => self.as_int()? == other.as_int()?,
            (Str(a), Str(b)) => a == b,
            (None, None) => true,
            (Tuple(a), Tuple(b)) => {
                if a.len() != b.len() {
                    return Some(false);
                }
                for (x, y) in a.iter().zip(b) {
                    if !x.equals(y)? {
                        return Some(false);
                    }
                }
                true
            }
            (Iter(_), _) | (_, Iter(_)) | (Dict(_), _) | (_, Dict(_)) => return Option::None,
            _ => false,
        })
    }

    fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }
}

/// An int, str, bool or `None` literal.
fn scalar(expr: &Expr) -> Option<Value> {
    Some(match expr {
        Expr::NumberLiteral(n) => match &n.value {
            Number::Int(i) => Value::Int(i.as_i64()?),
            _ => return None,
        },
        Expr::UnaryOp(u) if u.op == UnaryOp::USub => match scalar(&u.operand)? {
            Value::Int(i) => Value::Int(i.checked_neg()?),
            _ => return None,
        },
        Expr::StringLiteral(s) => Value::Str(s.value.to_str().to_string()),
        Expr::BooleanLiteral(b) => Value::Bool(b.value),
        Expr::NoneLiteral(_) => Value::None,
        _ => return None,
    })
}

/// One call being evaluated.
struct Frame<'a, 'p> {
    prover: &'a Prover<'p>,
    locals: HashMap<&'a str, Value>,
    /// Every name the body binds: local to the call, unbound until assigned.
    local_names: Vec<&'a str>,
    steps: usize,
}

/// How a statement ended.
enum Flow {
    Next,
    Return(Value),
}

impl<'p> Prover<'p> {
    /// A known value of `expr` at module level: a folded string or a name bound to a value
    /// v2 knows exactly.
    pub fn constant(&self, expr: &Expr) -> Option<Value> {
        if let Some(value) = scalar(expr) {
            return Some(value);
        }
        match expr {
            Expr::Name(n) => self.env.constant(n.id.as_str()).cloned().or_else(|| {
                self.env
                    .string(n.id.as_str())
                    .map(|s| Value::Str(s.to_string()))
            }),
            Expr::Tuple(t) => t
                .elts
                .iter()
                .map(|e| self.constant(e))
                .collect::<Option<_>>()
                .map(Value::Tuple),
            _ => self.str_value(expr).map(Value::Str),
        }
    }

    /// Evaluate the call of local function `def` (its `body` after the docstring) when every
    /// argument is known; `None` when it cannot be evaluated exactly (or would raise).
    pub fn evaluate_call<'a>(
        &'a self,
        call: &ast::ExprCall,
        def: &'a ast::StmtFunctionDef,
        body: &'a [Stmt],
    ) -> Option<Value> {
        let params = super::pure::positional_params(def);
        // Positional arguments only, each a known value, every parameter given (a default's
        // value is not known here).
        if !call.arguments.keywords.is_empty()
            || !def.parameters.kwonlyargs.is_empty()
            || call.arguments.args.len() != params.len()
        {
            return None;
        }
        let mut frame = Frame {
            prover: self,
            locals: HashMap::new(),
            local_names: Vec::new(),
            steps: 0,
        };
        super::stmt::collect_bound(body, &mut frame.local_names);
        for (param, arg) in params.iter().zip(&call.arguments.args) {
            if matches!(arg, Expr::Starred(_)) {
                return None;
            }
            frame
                .locals
                .insert(param.name().as_str(), self.constant(arg)?);
            frame.local_names.push(param.name().as_str());
        }
        match frame.block(body)? {
            Flow::Return(value) => Some(value),
            Flow::Next => Some(Value::None),
        }
    }
}

impl<'a> Frame<'a, '_> {
    fn block(&mut self, body: &'a [Stmt]) -> Option<Flow> {
        for stmt in body {
            if let Flow::Return(value) = self.statement(stmt)? {
                return Some(Flow::Return(value));
            }
        }
        Some(Flow::Next)
    }

    fn statement(&mut self, stmt: &'a Stmt) -> Option<Flow> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return None;
        }
        match stmt {
            Stmt::Pass(_) => {}
            Stmt::Expr(e) if matches!(e.value.as_ref(), Expr::StringLiteral(_)) => {}
            // `assert` raises `AssertionError` unless its test is true.
            Stmt::Assert(a) => {
                if !self.value(&a.test)?.truthy() {
                    return None;
                }
            }
            Stmt::Assign(a) => {
                let [Expr::Name(target)] = a.targets.as_slice() else {
                    return None;
                };
                let value = self.value(&a.value)?;
                self.locals.insert(target.id.as_str(), value);
            }
            Stmt::AugAssign(a) => {
                let Expr::Name(target) = a.target.as_ref() else {
                    return None;
                };
                let left = self.locals.get(target.id.as_str())?.clone();
                let right = self.value(&a.value)?;
                let value = binary(a.op, left, right)?;
                self.locals.insert(target.id.as_str(), value);
            }
            Stmt::If(node) => {
                if self.value(&node.test)?.truthy() {
                    return self.block(&node.body);
                }
                for clause in &node.elif_else_clauses {
                    let runs = match &clause.test {
                        Some(test) => self.value(test)?.truthy(),
                        None => true,
                    };
                    if runs {
                        return self.block(&clause.body);
                    }
                }
            }
            Stmt::Return(r) => {
                let value = match &r.value {
                    Some(value) => self.value(value)?,
                    None => Value::None,
                };
                return Some(Flow::Return(value));
            }
            _ => return None,
        }
        Some(Flow::Next)
    }

    /// A builtin the function reads: not a local, not rebound by the module.
    fn builtin(&self, expr: &Expr, name: &str) -> bool {
        matches!(expr, Expr::Name(n) if n.id.as_str() == name)
            && !self.local_names.contains(&name)
            && !self.prover.env.shadows(name)
    }

    fn value(&mut self, expr: &'a Expr) -> Option<Value> {
        if let Some(value) = scalar(expr) {
            return Some(value);
        }
        Some(match expr {
            Expr::Name(n) => {
                let name = n.id.as_str();
                if self.local_names.contains(&name) {
                    // Unbound until assigned: `UnboundLocalError` otherwise.
                    return self.locals.get(name).cloned();
                }
                self.prover.constant(expr)?
            }
            Expr::Tuple(t) => Value::Tuple(
                t.elts
                    .iter()
                    .map(|e| self.value(e))
                    .collect::<Option<_>>()?,
            ),
            Expr::Dict(d) => {
                let mut items: Vec<(String, Value)> = Vec::new();
                for item in &d.items {
                    let Value::Str(key) = self.value(item.key.as_ref()?)? else {
                        return None;
                    };
                    let value = self.value(&item.value)?;
                    match items.iter_mut().find(|(k, _)| *k == key) {
                        Some(slot) => slot.1 = value,
                        None => items.push((key, value)),
                    }
                }
                Value::Dict(items)
            }
            Expr::BinOp(b) => {
                let (left, right) = (self.value(&b.left)?, self.value(&b.right)?);
                binary(b.op, left, right)?
            }
            Expr::UnaryOp(u) => match (u.op, self.value(&u.operand)?) {
                (UnaryOp::Not, v) => Value::Bool(!v.truthy()),
                (UnaryOp::USub, Value::Int(i)) => Value::Int(i.checked_neg()?),
                _ => return None,
            },
            Expr::BoolOp(b) => {
                let and = b.op == ast::BoolOp::And;
                let mut last = None;
                for value in &b.values {
                    let v = self.value(value)?;
                    let stop = v.truthy() != and;
                    last = Some(v);
                    if stop {
                        break;
                    }
                }
                last?
            }
            Expr::If(i) => {
                if self.value(&i.test)?.truthy() {
                    self.value(&i.body)?
                } else {
                    self.value(&i.orelse)?
                }
            }
            Expr::Compare(c) => {
                let mut left = self.value(&c.left)?;
                for (op, right) in c.ops.iter().zip(&c.comparators) {
                    let right = self.value(right)?;
                    if !compare(*op, &left, &right)? {
                        return Some(Value::Bool(false));
                    }
                    left = right;
                }
                Value::Bool(true)
            }
            Expr::Subscript(s) => self.subscript(s)?,
            Expr::Call(call) => self.call(call)?,
            _ => return None,
        })
    }

    fn subscript(&mut self, s: &'a ast::ExprSubscript) -> Option<Value> {
        let container = self.value(&s.value)?;
        if let Expr::Slice(slice) = s.slice.as_ref() {
            if slice.step.is_some() {
                return None;
            }
            let mut bound = |e: &'a Option<Box<Expr>>| match e {
                Some(e) => match self.value(e)? {
                    Value::Int(i) => Some(Some(i)),
                    _ => None,
                },
                None => Some(None),
            };
            let (lower, upper) = (bound(&slice.lower)?, bound(&slice.upper)?);
            let clamp = |i: Option<i64>, len: usize, default: usize| -> usize {
                let len_i = i64::try_from(len).unwrap_or(i64::MAX);
                match i {
                    None => default,
                    Some(i) if i < 0 => usize::try_from((len_i + i).max(0)).unwrap_or(0),
                    Some(i) => usize::try_from(i.min(len_i)).unwrap_or(len),
                }
            };
            return match container {
                Value::Tuple(items) => {
                    let (a, b) = (
                        clamp(lower, items.len(), 0),
                        clamp(upper, items.len(), items.len()),
                    );
                    Some(Value::Tuple(if a < b {
                        items[a..b].to_vec()
                    } else {
                        Vec::new()
                    }))
                }
                Value::Str(text) => {
                    let chars: Vec<char> = text.chars().collect();
                    let (a, b) = (
                        clamp(lower, chars.len(), 0),
                        clamp(upper, chars.len(), chars.len()),
                    );
                    Some(Value::Str(if a < b {
                        chars[a..b].iter().collect()
                    } else {
                        String::new()
                    }))
                }
                _ => None,
            };
        }
        let index = self.value(&s.slice)?;
        match (container, index) {
            (Value::Tuple(items), Value::Int(i)) => {
                let at = position(i, items.len())?;
                items.into_iter().nth(at)
            }
            (Value::Str(text), Value::Int(i)) => {
                let at = position(i, text.chars().count())?;
                text.chars().nth(at).map(|c| Value::Str(c.to_string()))
            }
            // A missing key raises `KeyError`.
            (Value::Dict(items), Value::Str(key)) => {
                items.into_iter().find(|(k, _)| *k == key).map(|(_, v)| v)
            }
            _ => None,
        }
    }

    fn call(&mut self, call: &'a ast::ExprCall) -> Option<Value> {
        if !call.arguments.keywords.is_empty() {
            return None;
        }
        let args = &call.arguments.args;
        let func = call.func.as_ref();
        if self.builtin(func, "len") {
            let [arg] = args.as_ref() else { return None };
            let len = match self.value(arg)? {
                Value::Tuple(items) => items.len(),
                Value::Str(text) => text.chars().count(),
                Value::Dict(items) => items.len(),
                _ => return None,
            };
            return Some(Value::Int(i64::try_from(len).ok()?));
        }
        if self.builtin(func, "str") {
            let [arg] = args.as_ref() else { return None };
            return Some(Value::Str(to_str(&self.value(arg)?)?));
        }
        if self.builtin(func, "map") {
            let [f, items] = args.as_ref() else {
                return None;
            };
            if !self.builtin(f, "str") {
                return None;
            }
            let Value::Tuple(items) = self.value(items)? else {
                return None;
            };
            let strs = items
                .iter()
                .map(|v| to_str(v).map(Value::Str))
                .collect::<Option<_>>()?;
            return Some(Value::Iter(strs));
        }
        // `<str>.join(<tuple or map of strs>)`.
        if let Expr::Attribute(attr) = func
            && attr.attr.as_str() == "join"
            && let [items] = args.as_ref()
            && let Value::Str(sep) = self.value(&attr.value)?
        {
            let (Value::Tuple(items) | Value::Iter(items)) = self.value(items)? else {
                return None;
            };
            let parts: Vec<String> = items
                .into_iter()
                .map(|v| match v {
                    Value::Str(s) => Some(s),
                    _ => None,
                })
                .collect::<Option<_>>()?;
            return Some(Value::Str(parts.join(&sep)));
        }
        None
    }
}

/// The index `i` of a sequence of `len` items (negative from the end), or `None`
/// (`IndexError`).
fn position(i: i64, len: usize) -> Option<usize> {
    let len = i64::try_from(len).ok()?;
    let at = if i < 0 { len + i } else { i };
    if (0..len).contains(&at) {
        usize::try_from(at).ok()
    } else {
        None
    }
}

/// `str(v)` of a scalar.
fn to_str(value: &Value) -> Option<String> {
    Some(match value {
        Value::Int(i) => i.to_string(),
        Value::Str(s) => s.clone(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::None => "None".into(),
        _ => return None,
    })
}

fn binary(op: Operator, left: Value, right: Value) -> Option<Value> {
    use Value::*;
    Some(match (op, left, right) {
        (Operator::Add, Int(a), Int(b)) => Int(a.checked_add(b)?),
        (Operator::Sub, Int(a), Int(b)) => Int(a.checked_sub(b)?),
        (Operator::Mult, Int(a), Int(b)) => Int(a.checked_mul(b)?),
        (Operator::Add, Str(a), Str(b)) => Str(a + &b),
        (Operator::Add, Tuple(mut a), Tuple(b)) => {
            a.extend(b);
            Tuple(a)
        }
        _ => return Option::None,
    })
}

/// One comparison; `None` when it may raise (`<` across kinds) or is not modelled.
fn compare(op: CmpOp, left: &Value, right: &Value) -> Option<bool> {
    use Value::*;
    Some(match op {
        CmpOp::Eq => left.equals(right)?,
        CmpOp::NotEq => !left.equals(right)?,
        CmpOp::In | CmpOp::NotIn => {
            let found = match right {
                Tuple(items) => {
                    let mut found = false;
                    for item in items {
                        found |= left.equals(item)?;
                    }
                    found
                }
                Str(text) => match left {
                    Str(part) => text.contains(part.as_str()),
                    _ => return Option::None,
                },
                Dict(items) => match left {
                    Str(key) => items.iter().any(|(k, _)| k == key),
                    _ => return Option::None,
                },
                _ => return Option::None,
            };
            found == (op == CmpOp::In)
        }
        CmpOp::Lt | CmpOp::LtE | CmpOp::Gt | CmpOp::GtE => {
            let ordering = match (left, right) {
                (Int(_) | Bool(_), Int(_) | Bool(_)) => left.as_int()?.cmp(&right.as_int()?),
                (Str(a), Str(b)) => a.cmp(b),
                _ => return Option::None,
            };
            match op {
                CmpOp::Lt => ordering.is_lt(),
                CmpOp::LtE => ordering.is_le(),
                CmpOp::Gt => ordering.is_gt(),
                _ => ordering.is_ge(),
            }
        }
        _ => return Option::None,
    })
}
