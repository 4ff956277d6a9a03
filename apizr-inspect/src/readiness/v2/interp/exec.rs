//! Statements and expressions of the package's functions, run as CPython runs them.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use ruff_python_ast::{self as ast, BoolOp, CmpOp, Expr, Number, Operator, Stmt, UnaryOp};
use ruff_text_size::{Ranged, TextRange};

use super::Interp;
use super::heap::{Exc, Id, ModId, Obj, Origin, Refused, Run, Stop, Val, refuse};
use super::modules::{mangle, nonempty};

/// An object a loop walks, and its version when the loop started.
pub type Watched = Option<(Id, u32)>;

/// One running function (or the top-level expression being proved).
pub struct Frame {
    pub module: ModId,
    pub locals: HashMap<Rc<str>, Val>,
    /// The names local to the function (its parameters and every name its body binds):
    /// reading one before it is bound raises `UnboundLocalError`.
    pub local_names: HashSet<Rc<str>>,
    /// The class whose body holds the `def` (name mangling, `super()`).
    pub owner: Option<Id>,
    /// The first parameter (zero-argument `super()`).
    pub first: Option<Rc<str>>,
}

/// How a statement ended.
pub enum Flow {
    Next,
    Return(Val),
    Break,
    Continue,
}

/// What a name means in a frame.
pub enum Name {
    Val(Val),
    /// The builtin of that name (not rebound by the module).
    Builtin,
}

impl Interp<'_> {
    pub fn block(&mut self, f: &mut Frame, body: &[Stmt]) -> Run<Flow> {
        for stmt in body {
            match self.statement(f, stmt)? {
                Flow::Next => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Next)
    }

    fn statement(&mut self, f: &mut Frame, stmt: &Stmt) -> Run<Flow> {
        self.step(f.module, stmt.range())?;
        let m = f.module;
        match stmt {
            Stmt::Pass(_) => {}
            Stmt::Expr(e) => {
                self.expr(f, &e.value)?;
            }
            Stmt::Assign(a) => {
                let value = self.expr(f, &a.value)?;
                for target in &a.targets {
                    self.store(f, target, value.clone())?;
                }
            }
            Stmt::AnnAssign(a) => {
                // A local's annotation is never evaluated; without a value, an attribute or
                // subscript target's object (and index) still is (`b.missing.x: int` raises).
                if a.value.is_none() && !a.target.is_name_expr() {
                    return refuse(m, a.target.range(), Refused::Form);
                }
                if let Some(value) = &a.value {
                    let value = self.expr(f, value)?;
                    self.store(f, &a.target, value)?;
                }
            }
            Stmt::AugAssign(a) => {
                let Expr::Name(n) = a.target.as_ref() else {
                    return refuse(m, a.target.range(), Refused::Form);
                };
                let left = self.expr(f, &a.target)?;
                let right = self.expr(f, &a.value)?;
                let value = self.binary(m, a.range, a.op, left, right, true)?;
                f.locals.insert(Rc::from(n.id.as_str()), value);
            }
            Stmt::If(node) => {
                let test = self.expr(f, &node.test)?;
                if self.truth(m, node.test.range(), &test)? {
                    return self.block(f, &node.body);
                }
                for clause in &node.elif_else_clauses {
                    let runs = match &clause.test {
                        Some(test) => {
                            let v = self.expr(f, test)?;
                            self.truth(m, test.range(), &v)?
                        }
                        None => true,
                    };
                    if runs {
                        return self.block(f, &clause.body);
                    }
                }
            }
            Stmt::For(node) if !node.is_async && node.orelse.is_empty() => {
                let iterable = self.expr(f, &node.iter)?;
                let (items, watched) = self.items(m, node.iter.range(), &iterable)?;
                for item in items {
                    self.store(f, &node.target, item)?;
                    let flow = self.block(f, &node.body)?;
                    // CPython iterates the live object: a change under the loop is not followed.
                    if let Some((id, version)) = watched
                        && self.heap[id].version != version
                    {
                        return refuse(m, node.iter.range(), Refused::Mutation);
                    }
                    match flow {
                        Flow::Break => break,
                        Flow::Return(v) => return Ok(Flow::Return(v)),
                        Flow::Next | Flow::Continue => {}
                    }
                }
            }
            Stmt::While(node) if node.orelse.is_empty() => loop {
                let test = self.expr(f, &node.test)?;
                if !self.truth(m, node.test.range(), &test)? {
                    break;
                }
                match self.block(f, &node.body)? {
                    Flow::Break => break,
                    Flow::Return(v) => return Ok(Flow::Return(v)),
                    Flow::Next | Flow::Continue => {}
                }
            },
            Stmt::Break(_) => return Ok(Flow::Break),
            Stmt::Continue(_) => return Ok(Flow::Continue),
            Stmt::Return(r) => {
                let value = match &r.value {
                    Some(v) => self.expr(f, v)?,
                    None => Val::None,
                };
                return Ok(Flow::Return(value));
            }
            Stmt::Assert(a) => {
                let v = self.expr(f, &a.test)?;
                if !self.truth(m, a.test.range(), &v)? {
                    return refuse(m, a.range, Refused::Raises);
                }
            }
            Stmt::Try(node) if !node.is_star && node.finalbody.is_empty() => {
                return self.try_(f, node);
            }
            // A nested `def` binds a function object the interpreter never calls. Its
            // annotations are evaluated when the `def` runs (unless `from __future__ import
            // annotations`): not followed.
            Stmt::FunctionDef(def)
                if def.decorator_list.is_empty()
                    && def.returns.is_none()
                    && def.parameters.iter().all(|p| p.annotation().is_none()) =>
            {
                for default in def
                    .parameters
                    .iter_non_variadic_params()
                    .filter_map(|p| p.default.as_deref())
                {
                    self.expr(f, default)?;
                }
                let closure = self.alloc(Obj::Closure, Origin::Fresh);
                f.locals.insert(Rc::from(def.name.as_str()), closure);
            }
            _ => return refuse(m, stmt.range(), Refused::Form),
        }
        Ok(Flow::Next)
    }

    /// `try`/`except` of the modelled builtin exceptions (no `finally`, no `as`).
    fn try_(&mut self, f: &mut Frame, node: &ast::StmtTry) -> Run<Flow> {
        let m = f.module;
        match self.block(f, &node.body) {
            Ok(Flow::Next) => self.block(f, &node.orelse),
            Ok(flow) => Ok(flow),
            Err(Stop::Raise(exc, rm, rr)) => {
                for handler in &node.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = handler;
                    if h.name.is_some() {
                        return refuse(m, h.range, Refused::Form);
                    }
                    let Some(kind) = &h.type_ else {
                        return refuse(m, h.range, Refused::Form);
                    };
                    let names: Vec<&Expr> = match kind.as_ref() {
                        Expr::Tuple(t) => t.elts.iter().collect(),
                        other => vec![other],
                    };
                    let mut caught = false;
                    for name in names {
                        let Expr::Name(n) = name else {
                            return refuse(m, name.range(), Refused::Form);
                        };
                        // Matching against a name that is no exception class raises `TypeError`.
                        if !matches!(self.name(f, n.id.as_str(), n.range)?, Name::Builtin)
                            || !BUILTIN_EXCEPTIONS.contains(&n.id.as_str())
                        {
                            return refuse(m, name.range(), Refused::Unknown);
                        }
                        caught |= exc.caught_by(n.id.as_str());
                    }
                    if caught {
                        return self.block(f, &h.body);
                    }
                }
                Err(Stop::Raise(exc, rm, rr))
            }
            Err(refusal) => Err(refusal),
        }
    }

    /// The items a `for` loop (or comprehension) walks, and the object to watch for changes.
    pub fn items(&mut self, m: ModId, range: TextRange, v: &Val) -> Run<(Vec<Val>, Watched)> {
        let Val::Ref(id) = v else {
            return refuse(m, range, Refused::Unknown);
        };
        let items = match &self.heap[*id].obj {
            Obj::List(items) | Obj::Tuple(items) => items.clone(),
            Obj::Dict(items) => items.iter().map(|(k, _)| k.clone()).collect(),
            _ => return refuse(m, range, Refused::Unknown),
        };
        Ok((items, Some((*id, self.heap[*id].version))))
    }

    /// Bind `target` to `value`.
    pub fn store(&mut self, f: &mut Frame, target: &Expr, value: Val) -> Run<()> {
        let m = f.module;
        match target {
            Expr::Name(n) => {
                f.locals.insert(Rc::from(n.id.as_str()), value);
                Ok(())
            }
            Expr::Attribute(a) => {
                let this = self.expr(f, &a.value)?;
                let name = self.attr_name(f, a.attr.as_str());
                self.set_attr(m, a.range, &this, &name, value)
            }
            Expr::Subscript(s) => {
                let container = self.expr(f, &s.value)?;
                let key = self.expr(f, &s.slice)?;
                self.set_item(m, s.range, &container, key, value)
            }
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                let Val::Ref(id) = value else {
                    return refuse(m, target.range(), Refused::Unknown);
                };
                let items = match &self.heap[id].obj {
                    Obj::List(items) | Obj::Tuple(items) => items.clone(),
                    _ => return refuse(m, target.range(), Refused::Unknown),
                };
                // A length mismatch raises `ValueError`.
                if items.len() != elts.len() || elts.iter().any(|e| e.is_starred_expr()) {
                    return refuse(m, target.range(), Refused::Raises);
                }
                for (e, item) in elts.iter().zip(items) {
                    self.store(f, e, item)?;
                }
                Ok(())
            }
            _ => refuse(m, target.range(), Refused::Form),
        }
    }

    /// An attribute name as written in the frame's code (mangled inside a class body).
    pub fn attr_name(&self, f: &Frame, name: &str) -> Rc<str> {
        match f.owner.and_then(|o| match &self.heap[o].obj {
            Obj::Class(c) => Some(c.name.clone()),
            _ => None,
        }) {
            Some(class) => Rc::from(mangle(&class, name)),
            None => Rc::from(name),
        }
    }

    /// What `name` means in frame `f`: a local, the module's global (as bound when the call
    /// runs), or a builtin.
    pub fn name(&mut self, f: &Frame, name: &str, range: TextRange) -> Run<Name> {
        // Locals are stored and read under the name as written (CPython mangles both alike);
        // a global is read under the mangled name.
        let raw: Rc<str> = Rc::from(name);
        if f.local_names.contains(&raw) {
            return match f.locals.get(&raw) {
                Some(v) => Ok(Name::Val(v.clone())),
                None => refuse(f.module, range, Refused::Name),
            };
        }
        if let Some(v) = f.locals.get(&raw) {
            return Ok(Name::Val(v.clone()));
        }
        let name = self.attr_name(f, name);
        let limit = self.modules[f.module].limit;
        match self.global(f.module, &name, limit, range)? {
            Some(v) => Ok(Name::Val(v)),
            // A name the module binds later (or on some paths) is not the builtin for sure.
            None if self.modules[f.module].bindings.contains_key(&*name) => {
                refuse(f.module, range, Refused::Name)
            }
            None => Ok(Name::Builtin),
        }
    }

    pub fn expr(&mut self, f: &mut Frame, expr: &Expr) -> Run<Val> {
        self.step(f.module, expr.range())?;
        let m = f.module;
        Ok(match expr {
            Expr::StringLiteral(s) => Val::Str(Rc::from(s.value.to_str())),
            Expr::NumberLiteral(n) => match &n.value {
                Number::Int(i) => match i.as_i64() {
                    Some(i) => Val::Int(i),
                    None => return refuse(m, expr.range(), Refused::Form),
                },
                _ => return refuse(m, expr.range(), Refused::Form),
            },
            Expr::BooleanLiteral(b) => Val::Bool(b.value),
            Expr::NoneLiteral(_) => Val::None,
            Expr::Name(n) => match self.name(f, n.id.as_str(), n.range)? {
                Name::Val(v) => v,
                Name::Builtin => return refuse(m, n.range, Refused::Unknown),
            },
            Expr::Attribute(a) => {
                let this = self.expr(f, &a.value)?;
                let name = self.attr_name(f, a.attr.as_str());
                match self.get_attr(m, a.range, &this, &name)? {
                    Some(v) => v,
                    None => return Err(Stop::Raise(Exc::Attribute, m, a.range)),
                }
            }
            Expr::Subscript(s) => {
                let container = self.expr(f, &s.value)?;
                let key = self.expr(f, &s.slice)?;
                self.get_item(m, s.range, &container, &key)?
            }
            Expr::Call(call) => {
                let result = self.call_expr(f, call);
                // A refusal inside another module's code is shown at the call in this one.
                match result {
                    Err(Stop::Refuse(mut r)) if r.module != m && m == 0 => {
                        r.module = 0;
                        r.range = call.range();
                        return Err(Stop::Refuse(r));
                    }
                    other => other?,
                }
            }
            Expr::Tuple(t) => {
                let items = self.exprs(f, &t.elts)?;
                self.alloc(Obj::Tuple(items), Origin::Fresh)
            }
            Expr::List(l) => {
                let items = self.exprs(f, &l.elts)?;
                self.alloc(Obj::List(items), Origin::Fresh)
            }
            Expr::Dict(d) => {
                let dict = self.alloc(Obj::Dict(Vec::new()), Origin::Fresh);
                for item in &d.items {
                    let Some(key) = &item.key else {
                        return refuse(m, item.value.range(), Refused::Form);
                    };
                    let key = self.expr(f, key)?;
                    let value = self.expr(f, &item.value)?;
                    self.set_item(m, d.range, &dict, key, value)?;
                }
                dict
            }
            Expr::BinOp(b) => {
                let left = self.expr(f, &b.left)?;
                let right = self.expr(f, &b.right)?;
                self.binary(m, b.range, b.op, left, right, false)?
            }
            Expr::UnaryOp(u) => {
                let v = self.expr(f, &u.operand)?;
                match (u.op, v) {
                    (UnaryOp::Not, v) => Val::Bool(!self.truth(m, u.range, &v)?),
                    (UnaryOp::USub, Val::Int(i)) => match i.checked_neg() {
                        Some(i) => Val::Int(i),
                        None => return refuse(m, u.range, Refused::Form),
                    },
                    _ => return refuse(m, u.range, Refused::Form),
                }
            }
            Expr::BoolOp(b) => {
                let and = b.op == BoolOp::And;
                let mut last = Val::None;
                for value in &b.values {
                    last = self.expr(f, value)?;
                    if self.truth(m, value.range(), &last)? != and {
                        break;
                    }
                }
                last
            }
            Expr::If(i) => {
                let test = self.expr(f, &i.test)?;
                if self.truth(m, i.test.range(), &test)? {
                    self.expr(f, &i.body)?
                } else {
                    self.expr(f, &i.orelse)?
                }
            }
            Expr::Compare(c) => {
                let mut left = self.expr(f, &c.left)?;
                for (op, right) in c.ops.iter().zip(&c.comparators) {
                    let right = self.expr(f, right)?;
                    if !self.compare(m, c.range, *op, &left, &right)? {
                        return Ok(Val::Bool(false));
                    }
                    left = right;
                }
                Val::Bool(true)
            }
            // A lambda is a function object the interpreter never calls.
            Expr::Lambda(l) => {
                if let Some(params) = &l.parameters {
                    for default in params
                        .iter_non_variadic_params()
                        .filter_map(|p| p.default.as_deref())
                    {
                        self.expr(f, default)?;
                    }
                }
                self.alloc(Obj::Closure, Origin::Fresh)
            }
            Expr::ListComp(c) => {
                let out = self.alloc(Obj::List(Vec::new()), Origin::Fresh);
                self.comprehension(f, &c.generators, c.range, &mut |this, f| {
                    let v = this.expr(f, &c.elt)?;
                    this.push(out.clone(), v);
                    Ok(())
                })?;
                out
            }
            Expr::DictComp(c) => {
                let out = self.alloc(Obj::Dict(Vec::new()), Origin::Fresh);
                self.comprehension(f, &c.generators, c.range, &mut |this, f| {
                    let Some(key) = c.key.as_deref() else {
                        return refuse(f.module, c.range, Refused::Form);
                    };
                    let key = this.expr(f, key)?;
                    let value = this.expr(f, &c.value)?;
                    this.set_item(f.module, c.range, &out, key, value)
                })?;
                out
            }
            _ => return refuse(m, expr.range(), Refused::Form),
        })
    }

    fn push(&mut self, list: Val, v: Val) {
        if let Val::Ref(id) = list
            && let Obj::List(items) = &mut self.heap[id].obj
        {
            items.push(v);
        }
    }

    pub fn exprs(&mut self, f: &mut Frame, exprs: &[Expr]) -> Run<Vec<Val>> {
        let mut out = Vec::with_capacity(exprs.len());
        for e in exprs {
            if e.is_starred_expr() {
                return refuse(f.module, e.range(), Refused::Form);
            }
            out.push(self.expr(f, e)?);
        }
        Ok(out)
    }

    /// A comprehension with one `for` over a list, tuple or dict (and `if`s): its variable is
    /// local to it; the body runs `each` per item.
    fn comprehension(
        &mut self,
        f: &mut Frame,
        generators: &[ast::Comprehension],
        range: TextRange,
        each: &mut dyn FnMut(&mut Self, &mut Frame) -> Run<()>,
    ) -> Run<()> {
        let m = f.module;
        let [generator] = generators else {
            return refuse(m, range, Refused::Form);
        };
        let Expr::Name(var) = &generator.target else {
            return refuse(m, generator.target.range(), Refused::Form);
        };
        if generator.is_async {
            return refuse(m, range, Refused::Form);
        }
        let iterable = self.expr(f, &generator.iter)?;
        let (items, watched) = self.items(m, generator.iter.range(), &iterable)?;
        let var: Rc<str> = Rc::from(var.id.as_str());
        let mut inner = Frame {
            module: m,
            locals: f.locals.clone(),
            local_names: f.local_names.clone(),
            owner: f.owner,
            first: f.first.clone(),
        };
        inner.local_names.insert(var.clone());
        'items: for item in items {
            inner.locals.insert(var.clone(), item);
            for condition in &generator.ifs {
                let v = self.expr(&mut inner, condition)?;
                if !self.truth(m, condition.range(), &v)? {
                    continue 'items;
                }
            }
            each(self, &mut inner)?;
            if let Some((id, version)) = watched
                && self.heap[id].version != version
            {
                return refuse(m, generator.iter.range(), Refused::Mutation);
            }
        }
        Ok(())
    }

    /// `left <op> right` on ints, strs, lists and tuples; `in_place` for `+=` (a list is
    /// extended in place).
    pub fn binary(
        &mut self,
        m: ModId,
        range: TextRange,
        op: Operator,
        left: Val,
        right: Val,
        in_place: bool,
    ) -> Run<Val> {
        Ok(match (op, &left, &right) {
            (Operator::Add, Val::Int(a), Val::Int(b)) => {
                a.checked_add(*b).map_or(Val::Opaque, Val::Int)
            }
            (Operator::Sub, Val::Int(a), Val::Int(b)) => {
                a.checked_sub(*b).map_or(Val::Opaque, Val::Int)
            }
            (Operator::Mult, Val::Int(a), Val::Int(b)) => {
                a.checked_mul(*b).map_or(Val::Opaque, Val::Int)
            }
            (Operator::Add, Val::Str(a), Val::Str(b)) => Val::Str(Rc::from(format!("{a}{b}"))),
            (Operator::Add, Val::Str(_) | Val::SomeStr(_), Val::Str(_) | Val::SomeStr(_)) => {
                Val::SomeStr(nonempty(&left) || nonempty(&right))
            }
            (Operator::Add, Val::Ref(a), Val::Ref(b)) => {
                let (a, b) = (*a, *b);
                match (&self.heap[a].obj, &self.heap[b].obj) {
                    (Obj::List(x), Obj::List(y)) if in_place => {
                        let y = y.clone();
                        let Obj::List(x) = self.mutate(m, range, a)? else {
                            return refuse(m, range, Refused::Form);
                        };
                        x.extend(y);
                        left
                    }
                    (Obj::List(x), Obj::List(y)) => {
                        let items = x.iter().chain(y).cloned().collect();
                        self.alloc(Obj::List(items), Origin::Fresh)
                    }
                    (Obj::Tuple(x), Obj::Tuple(y)) => {
                        let items = x.iter().chain(y).cloned().collect();
                        self.alloc(Obj::Tuple(items), Origin::Fresh)
                    }
                    _ => return refuse(m, range, Refused::Form),
                }
            }
            _ => return refuse(m, range, Refused::Form),
        })
        .and_then(|v| match v {
            Val::Opaque => refuse(m, range, Refused::Form),
            v => Ok(v),
        })
    }

    /// One comparison.
    fn compare(
        &mut self,
        m: ModId,
        range: TextRange,
        op: CmpOp,
        left: &Val,
        right: &Val,
    ) -> Run<bool> {
        Ok(match op {
            CmpOp::Eq => self.equals(m, range, left, right)?,
            CmpOp::NotEq => !self.equals(m, range, left, right)?,
            CmpOp::Is | CmpOp::IsNot => {
                let same = match (left, right) {
                    (Val::None, Val::None) => true,
                    (Val::Bool(a), Val::Bool(b)) => a == b,
                    // One heap object is one Python object; two are distinct when one of them
                    // was created by the call, or both are classes (built once per statement);
                    // an existing function, module or default is rebuilt at each read.
                    (Val::Ref(a), Val::Ref(b)) => {
                        let fresh = |id: &Id| self.heap[*id].origin == Origin::Fresh;
                        let class = |id: &Id| matches!(self.heap[*id].obj, Obj::Class(_));
                        let known = a == b || fresh(a) || fresh(b) || (class(a) && class(b));
                        if !known {
                            return refuse(m, range, Refused::Unknown);
                        }
                        a == b
                    }
                    (
                        Val::None | Val::Bool(_),
                        Val::Ref(_) | Val::Int(_) | Val::Str(_) | Val::SomeStr(_),
                    )
                    | (
                        Val::Ref(_) | Val::Int(_) | Val::Str(_) | Val::SomeStr(_),
                        Val::None | Val::Bool(_),
                    ) => false,
                    _ => return refuse(m, range, Refused::Unknown),
                };
                same == (op == CmpOp::Is)
            }
            CmpOp::In | CmpOp::NotIn => {
                let found = match right {
                    Val::Str(text) => match left {
                        Val::Str(part) => text.contains(&**part),
                        _ => return refuse(m, range, Refused::Unknown),
                    },
                    Val::Ref(id) => match self.heap[*id].obj.clone() {
                        Obj::List(items) | Obj::Tuple(items) => {
                            let mut found = false;
                            for item in &items {
                                if self.equals(m, range, left, item)? {
                                    found = true;
                                    break;
                                }
                            }
                            found
                        }
                        Obj::Dict(items) => {
                            key(m, range, left)?;
                            items.iter().any(|(k, _)| k == left)
                        }
                        _ => return refuse(m, range, Refused::Unknown),
                    },
                    _ => return refuse(m, range, Refused::Unknown),
                };
                found == (op == CmpOp::In)
            }
            _ => match (left, right) {
                (Val::Int(a), Val::Int(b)) => match op {
                    CmpOp::Lt => a < b,
                    CmpOp::LtE => a <= b,
                    CmpOp::Gt => a > b,
                    _ => a >= b,
                },
                _ => return refuse(m, range, Refused::Unknown),
            },
        })
    }

    /// `==` of two values where no `__eq__` of the package can run: ints, strs, bools,
    /// `None`, and identity of other objects of the package whose classes bind no `__eq__`.
    pub fn equals(&mut self, m: ModId, range: TextRange, a: &Val, b: &Val) -> Run<bool> {
        Ok(match (a, b) {
            (Val::Int(x), Val::Int(y)) => x == y,
            (Val::Bool(x), Val::Bool(y)) => x == y,
            (Val::Int(x), Val::Bool(y)) | (Val::Bool(y), Val::Int(x)) => *x == i64::from(*y),
            (Val::Str(x), Val::Str(y)) => x == y,
            (Val::None, Val::None) => true,
            (Val::None | Val::Bool(_) | Val::Int(_), Val::Str(_) | Val::SomeStr(_))
            | (Val::Str(_) | Val::SomeStr(_), Val::None | Val::Bool(_) | Val::Int(_))
            | (Val::None, Val::Bool(_) | Val::Int(_))
            | (Val::Bool(_) | Val::Int(_), Val::None) => false,
            _ => return refuse(m, range, Refused::Hook),
        })
    }

    /// `bool(v)`.
    pub fn truth(&mut self, m: ModId, range: TextRange, v: &Val) -> Run<bool> {
        Ok(match v {
            Val::None => false,
            Val::Bool(b) => *b,
            Val::Int(i) => *i != 0,
            Val::Str(s) => !s.is_empty(),
            Val::SomeStr(true) => true,
            Val::SomeStr(false) | Val::Opaque => return refuse(m, range, Refused::Unknown),
            Val::Ref(id) => match &self.heap[*id].obj {
                Obj::List(items) | Obj::Tuple(items) => !items.is_empty(),
                Obj::Dict(items) => !items.is_empty(),
                Obj::Instance { class, .. } => {
                    let class = *class;
                    if self.class_binds(class, &["__bool__", "__len__"]) {
                        return refuse(m, range, Refused::Hook);
                    }
                    true
                }
                Obj::Descriptor => return refuse(m, range, Refused::Unknown),
                _ => true,
            },
        })
    }
}

/// The builtin exception classes an `except` clause may name (matching against any other
/// builtin raises `TypeError`).
const BUILTIN_EXCEPTIONS: &[&str] = &[
    "BaseException",
    "Exception",
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "ImportError",
    "IndexError",
    "KeyError",
    "LookupError",
    "ModuleNotFoundError",
    "NameError",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "RecursionError",
    "RuntimeError",
    "StopIteration",
    "TypeError",
    "UnboundLocalError",
    "UnicodeError",
    "ValueError",
    "ZeroDivisionError",
];

/// A dict key the interpreter hashes exactly: a str or an int.
pub fn key(m: ModId, range: TextRange, v: &Val) -> Run<()> {
    match v {
        Val::Str(_) | Val::Int(_) => Ok(()),
        _ => refuse(m, range, Refused::Unknown),
    }
}
