//! Attributes, items and calls: the object model the interpreter follows exactly, and the
//! builtins and methods it models.

use std::collections::HashSet;
use std::rc::Rc;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use super::Interp;
use super::exec::{Flow, Frame, Name, key};
use super::heap::{Builtin, Exc, Id, ModId, Obj, Origin, Refused, Run, Stop, Val, refuse};

/// Calls nested at most this deep (a deeper recursion is refused).
const MAX_DEPTH: usize = 48;

impl Interp<'_> {
    /// The classes of `class`'s MRO bind one of `names`.
    pub fn class_binds(&self, class: Id, names: &[&str]) -> bool {
        match &self.heap[class].obj {
            Obj::Class(c) => c.mro.iter().any(|k| match &self.heap[*k].obj {
                Obj::Class(k) => k.attrs.iter().any(|(n, _)| names.contains(&&**n)),
                _ => false,
            }),
            _ => false,
        }
    }

    /// `name` in the MRO of `class` from position `from` on.
    fn lookup(&self, class: Id, name: &str, skip_to: Option<Id>) -> Option<Val> {
        let Obj::Class(c) = &self.heap[class].obj else {
            return None;
        };
        let start = match skip_to {
            Some(after) => c.mro.iter().position(|k| *k == after)? + 1,
            None => 0,
        };
        c.mro[start..]
            .iter()
            .find_map(|k| match &self.heap[*k].obj {
                Obj::Class(k) => k
                    .attrs
                    .iter()
                    .rev()
                    .find(|(n, _)| &**n == name)
                    .map(|(_, v)| v.clone()),
                _ => None,
            })
    }

    /// A class attribute that may intercept an instance's attribute (a data descriptor): a
    /// property, an object the interpreter does not know, an instance whose class has
    /// `__get__`/`__set__`.
    fn may_be_descriptor(&self, v: &Val) -> bool {
        match v {
            Val::Opaque => true,
            Val::Ref(id) => match &self.heap[*id].obj {
                Obj::Descriptor => true,
                Obj::Instance { class, .. } => {
                    self.class_binds(*class, &["__get__", "__set__", "__delete__"])
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// `this.name`; `None` when it raises `AttributeError`.
    pub fn get_attr(
        &mut self,
        m: ModId,
        range: TextRange,
        this: &Val,
        name: &str,
    ) -> Run<Option<Val>> {
        let method = |this: &Val, names: &[&'static str]| {
            names
                .iter()
                .find(|n| **n == name)
                .copied()
                .map(|n| (this.clone(), n))
        };
        let id = match this {
            Val::Str(_) => {
                return match method(this, &["rsplit", "join", "startswith", "endswith"]) {
                    Some((this, name)) => {
                        Ok(Some(self.alloc(Obj::Method { this, name }, Origin::Fresh)))
                    }
                    None => refuse(m, range, Refused::Call),
                };
            }
            Val::Ref(id) => *id,
            _ => return refuse(m, range, Refused::Unknown),
        };
        match self.heap[id].obj.clone() {
            Obj::Instance { class, attrs } => {
                if self.class_binds(class, &["__getattribute__", "__getattr__"]) {
                    return refuse(m, range, Refused::Hook);
                }
                // `object.__class__` is the instance's type unless the class rebinds it (a
                // property or a plain attribute of the class wins: a data descriptor).
                if name == "__class__" {
                    if self.class_binds(class, &["__class__"]) {
                        return refuse(m, range, Refused::Descriptor);
                    }
                    return Ok(Some(Val::Ref(class)));
                }
                let found = self.lookup(class, name, None);
                if found.as_ref().is_some_and(|v| self.may_be_descriptor(v)) {
                    return refuse(m, range, Refused::Descriptor);
                }
                if let Some((_, v)) = attrs.iter().find(|(n, _)| &**n == name) {
                    return Ok(Some(v.clone()));
                }
                match found {
                    Some(v) => self.bind(m, range, v, this.clone()).map(Some),
                    // `object` has dunder attributes (`__dict__`, `__doc__`, ...).
                    None if name.starts_with("__") => refuse(m, range, Refused::Unknown),
                    None => Ok(None),
                }
            }
            Obj::Class(c) => {
                if name == "__name__" {
                    return Ok(Some(Val::Str(c.name.clone())));
                }
                if name.starts_with("__") && name.ends_with("__") {
                    return refuse(m, range, Refused::Unknown);
                }
                match self.lookup(id, name, None) {
                    Some(v) if self.may_be_descriptor(&v) => refuse(m, range, Refused::Descriptor),
                    Some(Val::Ref(f)) => match self.heap[f].obj.clone() {
                        Obj::StaticMethod(v) => Ok(Some(v)),
                        Obj::ClassMethod(Val::Ref(func)) => Ok(Some(self.alloc(
                            Obj::Bound {
                                func,
                                this: this.clone(),
                            },
                            Origin::Fresh,
                        ))),
                        Obj::ClassMethod(_) => refuse(m, range, Refused::Unknown),
                        _ => Ok(Some(Val::Ref(f))),
                    },
                    Some(other) => Ok(Some(other)),
                    // `type` has attributes of its own (`mro`): not known to be missing.
                    None => refuse(m, range, Refused::Unknown),
                }
            }
            Obj::Super { after, this: inner } => {
                let Val::Ref(obj) = inner else {
                    return refuse(m, range, Refused::Unknown);
                };
                let Obj::Instance { class, .. } = self.heap[obj].obj else {
                    return refuse(m, range, Refused::Unknown);
                };
                match self.lookup(class, name, Some(after)) {
                    Some(v) if self.may_be_descriptor(&v) => refuse(m, range, Refused::Descriptor),
                    Some(v) => self.bind(m, range, v, inner.clone()).map(Some),
                    // `object.__init__`, reached through `super()`.
                    None if name == "__init__" => Ok(Some(self.alloc(
                        Obj::Method {
                            this: inner.clone(),
                            name: "__object_init__",
                        },
                        Origin::Fresh,
                    ))),
                    None => refuse(m, range, Refused::Unknown),
                }
            }
            Obj::Module(t) => {
                let limit = self.modules[t].limit;
                match self.global(t, name, limit, range)? {
                    Some(v) => Ok(Some(v)),
                    // A submodule bound as an attribute, or a module `__getattr__`: not known.
                    None => refuse(m, range, Refused::Unknown),
                }
            }
            Obj::List(_) => match method(this, &["append", "insert", "index", "copy", "extend"]) {
                Some((this, name)) => {
                    Ok(Some(self.alloc(Obj::Method { this, name }, Origin::Fresh)))
                }
                None => refuse(m, range, Refused::Call),
            },
            Obj::Dict(_) => match method(this, &["get", "copy", "setdefault"]) {
                Some((this, name)) => {
                    Ok(Some(self.alloc(Obj::Method { this, name }, Origin::Fresh)))
                }
                None => refuse(m, range, Refused::Call),
            },
            _ => refuse(m, range, Refused::Unknown),
        }
    }

    /// A class attribute read through an instance: a function binds to it, a staticmethod
    /// unwraps, a classmethod binds to the class.
    fn bind(&mut self, m: ModId, range: TextRange, v: Val, this: Val) -> Run<Val> {
        let Val::Ref(f) = v else {
            return Ok(v);
        };
        Ok(match self.heap[f].obj.clone() {
            Obj::Function(_) | Obj::Closure => {
                self.alloc(Obj::Bound { func: f, this }, Origin::Fresh)
            }
            Obj::StaticMethod(inner) => inner,
            Obj::ClassMethod(Val::Ref(func)) => {
                let class = match &this {
                    Val::Ref(i) => match &self.heap[*i].obj {
                        Obj::Instance { class, .. } => Val::Ref(*class),
                        _ => Val::Opaque,
                    },
                    _ => Val::Opaque,
                };
                self.alloc(Obj::Bound { func, this: class }, Origin::Fresh)
            }
            // `importlib.import_module` is a Python function: it would bind too.
            Obj::Builtin(_) | Obj::Descriptor | Obj::ClassMethod(_) => {
                return refuse(m, range, Refused::Descriptor);
            }
            _ => Val::Ref(f),
        })
    }

    /// `this.name = value`: into an instance's `__dict__`, where no `__setattr__` or data
    /// descriptor of its class intercepts it.
    pub fn set_attr(
        &mut self,
        m: ModId,
        range: TextRange,
        this: &Val,
        name: &str,
        value: Val,
    ) -> Run<()> {
        let Val::Ref(id) = this else {
            return refuse(m, range, Refused::Unknown);
        };
        let Obj::Instance { class, .. } = self.heap[*id].obj else {
            return refuse(m, range, Refused::Mutation);
        };
        if self.class_binds(class, &["__setattr__"]) {
            return refuse(m, range, Refused::Hook);
        }
        // A dunder attribute is `object`'s data descriptor (`self.__class__ = Other` changes
        // the instance's type, `self.__dict__ = d` its namespace) or a slot CPython reads on
        // the type: never a plain `__dict__` entry the interpreter could follow.
        if name.starts_with("__") && name.ends_with("__") {
            return refuse(m, range, Refused::Descriptor);
        }
        if self
            .lookup(class, name, None)
            .is_some_and(|v| self.may_be_descriptor(&v))
        {
            return refuse(m, range, Refused::Descriptor);
        }
        if let Obj::Instance { attrs, .. } = self.mutate(m, range, *id)? {
            match attrs.iter_mut().find(|(n, _)| &**n == name) {
                Some(slot) => slot.1 = value,
                None => attrs.push((Rc::from(name), value)),
            }
        }
        Ok(())
    }

    pub fn get_item(
        &mut self,
        m: ModId,
        range: TextRange,
        container: &Val,
        index: &Val,
    ) -> Run<Val> {
        match container {
            Val::Str(s) => {
                let Val::Int(i) = index else {
                    return refuse(m, range, Refused::Unknown);
                };
                let chars: Vec<char> = s.chars().collect();
                match position(*i, chars.len()) {
                    Some(at) => Ok(Val::Str(Rc::from(chars[at].to_string()))),
                    None => refuse(m, range, Refused::Raises),
                }
            }
            Val::Ref(id) => match &self.heap[*id].obj {
                Obj::Dict(items) => {
                    key(m, range, index)?;
                    match items.iter().find(|(k, _)| k == index) {
                        Some((_, v)) => Ok(v.clone()),
                        None => Err(Stop::Raise(Exc::Key, m, range)),
                    }
                }
                Obj::List(items) | Obj::Tuple(items) => match index {
                    Val::Int(i) => match position(*i, items.len()) {
                        Some(at) => Ok(items[at].clone()),
                        None => refuse(m, range, Refused::Raises),
                    },
                    _ => refuse(m, range, Refused::Unknown),
                },
                _ => refuse(m, range, Refused::Unknown),
            },
            _ => refuse(m, range, Refused::Unknown),
        }
    }

    pub fn set_item(
        &mut self,
        m: ModId,
        range: TextRange,
        container: &Val,
        index: Val,
        value: Val,
    ) -> Run<()> {
        let Val::Ref(id) = container else {
            return refuse(m, range, Refused::Unknown);
        };
        match &self.heap[*id].obj {
            Obj::Dict(_) => key(m, range, &index)?,
            Obj::List(items) => {
                let Val::Int(i) = index else {
                    return refuse(m, range, Refused::Unknown);
                };
                let Some(at) = position(i, items.len()) else {
                    return refuse(m, range, Refused::Raises);
                };
                if let Obj::List(items) = self.mutate(m, range, *id)? {
                    items[at] = value;
                }
                return Ok(());
            }
            _ => return refuse(m, range, Refused::Unknown),
        }
        if let Obj::Dict(items) = self.mutate(m, range, *id)? {
            match items.iter_mut().find(|(k, _)| *k == index) {
                Some(slot) => slot.1 = value,
                None => items.push((index, value)),
            }
        }
        Ok(())
    }

    /// A call expression in frame `f`.
    pub fn call_expr(&mut self, f: &mut Frame, call: &ast::ExprCall) -> Run<Val> {
        let m = f.module;
        if let Expr::Name(n) = call.func.as_ref()
            && let Name::Builtin = self.name(f, n.id.as_str(), n.range)?
        {
            return self.builtin(f, n.id.as_str(), call);
        }
        let func = self.expr(f, &call.func)?;
        let args = self.exprs(f, &call.arguments.args)?;
        let mut kwargs = Vec::new();
        for keyword in &call.arguments.keywords {
            let Some(arg) = &keyword.arg else {
                return refuse(m, keyword.range, Refused::Arguments);
            };
            // A private keyword in a class body is mangled: not followed.
            if f.owner.is_some() && arg.starts_with("__") {
                return refuse(m, keyword.range, Refused::Arguments);
            }
            kwargs.push((Rc::from(arg.as_str()), self.expr(f, &keyword.value)?));
        }
        self.call(m, call.range(), &func, args, kwargs)
    }

    /// Call `func` with these arguments.
    pub fn call(
        &mut self,
        m: ModId,
        range: TextRange,
        func: &Val,
        mut args: Vec<Val>,
        kwargs: Vec<(Rc<str>, Val)>,
    ) -> Run<Val> {
        let Val::Ref(id) = func else {
            return refuse(m, range, Refused::Call);
        };
        match self.heap[*id].obj.clone() {
            Obj::Function(_) => self.run_function(m, range, *id, args, kwargs),
            Obj::Bound { func, this } => {
                args.insert(0, this);
                match self.heap[func].obj {
                    Obj::Function(_) => self.run_function(m, range, func, args, kwargs),
                    _ => refuse(m, range, Refused::Call),
                }
            }
            Obj::Class(_) => self.instantiate(m, range, *id, args, kwargs),
            Obj::Descriptor => refuse(m, range, Refused::Descriptor),
            Obj::Method { this, name } => self.method(m, range, &this, name, args, kwargs),
            Obj::Builtin(Builtin::ImportModule) => match (args.as_slice(), kwargs.is_empty()) {
                ([Val::Str(name)], true) => self.import_module(m, range, &name.clone()),
                _ => refuse(m, range, Refused::Arguments),
            },
            _ => refuse(m, range, Refused::Call),
        }
    }

    /// `C(...)`: `object.__new__`, then the package's `__init__` (or `object.__init__`).
    fn instantiate(
        &mut self,
        m: ModId,
        range: TextRange,
        class: Id,
        mut args: Vec<Val>,
        kwargs: Vec<(Rc<str>, Val)>,
    ) -> Run<Val> {
        if self.class_binds(class, &["__new__", "__del__"]) {
            return refuse(m, range, Refused::Hook);
        }
        let this = self.alloc(
            Obj::Instance {
                class,
                attrs: Vec::new(),
            },
            Origin::Fresh,
        );
        match self.lookup(class, "__init__", None) {
            None if args.is_empty() && kwargs.is_empty() => Ok(this),
            None => Err(Stop::Raise(Exc::Type, m, range)),
            Some(Val::Ref(init)) if matches!(self.heap[init].obj, Obj::Function(_)) => {
                args.insert(0, this.clone());
                match self.run_function(m, range, init, args, kwargs)? {
                    Val::None => Ok(this),
                    _ => Err(Stop::Raise(Exc::Type, m, range)),
                }
            }
            Some(_) => refuse(m, range, Refused::Descriptor),
        }
    }

    /// Run the package function `id` with these arguments bound to its parameters.
    fn run_function(
        &mut self,
        m: ModId,
        range: TextRange,
        id: Id,
        args: Vec<Val>,
        kwargs: Vec<(Rc<str>, Val)>,
    ) -> Run<Val> {
        let Obj::Function(func) = self.heap[id].obj.clone() else {
            return refuse(m, range, Refused::Call);
        };
        if self.depth >= MAX_DEPTH {
            return refuse(m, range, Refused::Recursion);
        }
        let parsed = self.modules[func.module].parsed.clone();
        let Some(def) = find_def(parsed.body(), func.def) else {
            return refuse(m, range, Refused::Call);
        };
        let fm = func.module;
        let params = &def.parameters;
        let private = func.owner.is_some()
            && params
                .iter()
                .any(|p| p.name().starts_with("__") && !p.name().ends_with("__"));
        if def.is_async || params.vararg.is_some() || params.kwarg.is_some() || private {
            return refuse(fm, def.name.range, Refused::Form);
        }
        let scan = scan_body(&def.body);
        if scan.unmodelled {
            return refuse(fm, def.name.range, Refused::Form);
        }
        let positional: Vec<&ast::ParameterWithDefault> =
            params.posonlyargs.iter().chain(&params.args).collect();
        let mut frame = Frame {
            module: fm,
            locals: Default::default(),
            local_names: Default::default(),
            owner: func.owner,
            first: positional.first().map(|p| Rc::from(p.name().as_str())),
        };
        if args.len() > positional.len() {
            return refuse(m, range, Refused::Arguments);
        }
        for (param, arg) in positional.iter().zip(args) {
            frame.locals.insert(Rc::from(param.name().as_str()), arg);
        }
        let posonly: HashSet<&str> = params
            .posonlyargs
            .iter()
            .map(|p| p.name().as_str())
            .collect();
        for (name, value) in kwargs {
            let known = params
                .iter_non_variadic_params()
                .any(|p| p.name().as_str() == &*name);
            if !known || posonly.contains(&*name) || frame.locals.contains_key(&name) {
                return refuse(m, range, Refused::Arguments);
            }
            frame.locals.insert(name, value);
        }
        for param in params.iter_non_variadic_params() {
            let name: Rc<str> = Rc::from(param.name().as_str());
            if !frame.locals.contains_key(&name) {
                match func.defaults.iter().find(|(n, _)| *n == name) {
                    Some((_, v)) => {
                        frame.locals.insert(name.clone(), v.clone());
                    }
                    None => return refuse(m, range, Refused::Arguments),
                }
            }
            frame.local_names.insert(name);
        }
        let mut bound = Vec::new();
        crate::readiness::v2::stmt::collect_bound(&def.body, &mut bound);
        frame.local_names.extend(
            bound
                .into_iter()
                .chain(scan.locals.iter().copied())
                .map(Rc::from),
        );
        self.depth += 1;
        let flow = self.block(&mut frame, &def.body);
        self.depth -= 1;
        match flow? {
            Flow::Return(v) => Ok(v),
            _ => Ok(Val::None),
        }
    }

    /// A builtin called by name (the module does not rebind it).
    fn builtin(&mut self, f: &mut Frame, name: &str, call: &ast::ExprCall) -> Run<Val> {
        let m = f.module;
        let range = call.range();
        if !call.arguments.keywords.is_empty() && name != "dict" {
            return refuse(m, range, Refused::Arguments);
        }
        let raw = &call.arguments.args;
        // `isinstance(x, str)`: a builtin type named as the class.
        if matches!(name, "isinstance" | "issubclass") && raw.len() == 2 {
            let v = self.expr(f, &raw[0])?;
            let classes = self.classes_of(f, &raw[1])?;
            return self.instance_test(m, range, name == "isinstance", &v, &classes);
        }
        let args = self.exprs(f, raw)?;
        match (name, args.as_slice()) {
            ("len", [v]) => {
                let len = match v {
                    Val::Str(s) => s.chars().count(),
                    Val::Ref(id) => match &self.heap[*id].obj {
                        Obj::List(items) | Obj::Tuple(items) => items.len(),
                        Obj::Dict(items) => items.len(),
                        _ => return refuse(m, range, Refused::Unknown),
                    },
                    _ => return refuse(m, range, Refused::Unknown),
                };
                Ok(Val::Int(i64::try_from(len).unwrap_or(i64::MAX)))
            }
            ("callable", [v]) => Ok(Val::Bool(match v {
                Val::None | Val::Bool(_) | Val::Int(_) | Val::Str(_) | Val::SomeStr(_) => false,
                Val::Opaque => return refuse(m, range, Refused::Unknown),
                Val::Ref(id) => match &self.heap[*id].obj {
                    Obj::List(_)
                    | Obj::Tuple(_)
                    | Obj::Dict(_)
                    | Obj::Module(_)
                    | Obj::StdModule(_) => false,
                    Obj::Instance { class, .. } => self.class_binds(*class, &["__call__"]),
                    Obj::Descriptor
                    | Obj::Super { .. }
                    | Obj::StaticMethod(_)
                    | Obj::ClassMethod(_) => {
                        return refuse(m, range, Refused::Unknown);
                    }
                    _ => true,
                },
            })),
            ("getattr", [this, Val::Str(attr), rest @ ..]) if rest.len() <= 1 => {
                match (self.get_attr(m, range, this, attr)?, rest.first()) {
                    (Some(v), _) => Ok(v),
                    (None, Some(default)) => Ok(default.clone()),
                    (None, None) => Err(Stop::Raise(Exc::Attribute, m, range)),
                }
            }
            ("list" | "tuple", []) => {
                let obj = if name == "list" {
                    Obj::List(Vec::new())
                } else {
                    Obj::Tuple(Vec::new())
                };
                Ok(self.alloc(obj, Origin::Fresh))
            }
            ("list" | "tuple", [v]) => {
                let (items, _) = self.items(m, range, v)?;
                let obj = if name == "list" {
                    Obj::List(items)
                } else {
                    Obj::Tuple(items)
                };
                Ok(self.alloc(obj, Origin::Fresh))
            }
            ("dict", []) => {
                let dict = self.alloc(Obj::Dict(Vec::new()), Origin::Fresh);
                for keyword in &call.arguments.keywords {
                    let Some(arg) = &keyword.arg else {
                        return refuse(m, range, Refused::Arguments);
                    };
                    let value = self.expr(f, &keyword.value)?;
                    self.set_item(m, range, &dict, Val::Str(Rc::from(arg.as_str())), value)?;
                }
                Ok(dict)
            }
            ("super", []) => {
                let (Some(owner), Some(first)) = (f.owner, f.first.clone()) else {
                    return refuse(m, range, Refused::Form);
                };
                let Some(this) = f.locals.get(&first).cloned() else {
                    return refuse(m, range, Refused::Form);
                };
                self.make_super(m, range, owner, this)
            }
            ("super", [Val::Ref(class), this])
                if matches!(self.heap[*class].obj, Obj::Class(_)) =>
            {
                self.make_super(m, range, *class, this.clone())
            }
            _ => refuse(m, range, Refused::Call),
        }
    }

    fn make_super(&mut self, m: ModId, range: TextRange, after: Id, this: Val) -> Run<Val> {
        let Val::Ref(obj) = this else {
            return refuse(m, range, Refused::Unknown);
        };
        let Obj::Instance { class, .. } = self.heap[obj].obj else {
            return refuse(m, range, Refused::Unknown);
        };
        match &self.heap[class].obj {
            Obj::Class(c) if c.mro.contains(&after) => {}
            // `super(C, obj)` with `obj` not an instance of `C` raises `TypeError`.
            _ => return refuse(m, range, Refused::Raises),
        }
        Ok(self.alloc(Obj::Super { after, this }, Origin::Fresh))
    }

    /// The classes an `isinstance`/`issubclass` test names: package classes (a tuple of them)
    /// or builtin type names; `Err` when not known.
    fn classes_of(&mut self, f: &mut Frame, expr: &Expr) -> Run<Vec<Result<Id, &'static str>>> {
        let m = f.module;
        let one = |this: &mut Self, f: &mut Frame, e: &Expr| -> Run<Result<Id, &'static str>> {
            if let Expr::Name(n) = e
                && let Name::Builtin = this.name(f, n.id.as_str(), n.range)?
            {
                return match ["str", "int", "bool", "list", "tuple", "dict"]
                    .iter()
                    .find(|b| **b == n.id.as_str())
                {
                    Some(b) => Ok(Err(*b)),
                    None => refuse(m, e.range(), Refused::Unknown),
                };
            }
            match this.expr(f, e)? {
                Val::Ref(id) if matches!(this.heap[id].obj, Obj::Class(_)) => Ok(Ok(id)),
                _ => refuse(m, e.range(), Refused::Unknown),
            }
        };
        match expr {
            Expr::Tuple(t) => t.elts.iter().map(|e| one(self, f, e)).collect(),
            e => Ok(vec![one(self, f, e)?]),
        }
    }

    fn instance_test(
        &mut self,
        m: ModId,
        range: TextRange,
        instance: bool,
        v: &Val,
        classes: &[Result<Id, &'static str>],
    ) -> Run<Val> {
        let is_class = |this: &Self, id: Id| matches!(this.heap[id].obj, Obj::Class(_));
        // `issubclass` of a non-class raises `TypeError`; of an unknown object is not known.
        let mro: Vec<Id> = if instance {
            match v {
                Val::Opaque | Val::SomeStr(_) => return refuse(m, range, Refused::Unknown),
                Val::Ref(id) => match &self.heap[*id].obj {
                    // Where `type(x)` is no subclass, `isinstance` reads `x.__class__`: a class
                    // that rebinds it (or hooks attribute reads) may claim another type.
                    Obj::Instance { class, .. }
                        if self.class_binds(*class, &["__class__", "__getattribute__"]) =>
                    {
                        return refuse(m, range, Refused::Hook);
                    }
                    Obj::Instance { class, .. } => match &self.heap[*class].obj {
                        Obj::Class(c) => c.mro.clone(),
                        _ => Vec::new(),
                    },
                    Obj::Descriptor => return refuse(m, range, Refused::Unknown),
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            }
        } else {
            match v {
                Val::Ref(id) if is_class(self, *id) => match &self.heap[*id].obj {
                    Obj::Class(c) => c.mro.clone(),
                    _ => Vec::new(),
                },
                // `issubclass` of a non-class raises `TypeError` unless the object has a
                // `__bases__` tuple (an attribute an instance, a function or a module may
                // bind): only immediates and builtin containers are known to raise.
                Val::None | Val::Bool(_) | Val::Int(_) | Val::Str(_) | Val::SomeStr(_) => {
                    return Err(Stop::Raise(Exc::Type, m, range));
                }
                Val::Ref(id)
                    if matches!(
                        self.heap[*id].obj,
                        Obj::List(_) | Obj::Tuple(_) | Obj::Dict(_)
                    ) =>
                {
                    return Err(Stop::Raise(Exc::Type, m, range));
                }
                _ => return refuse(m, range, Refused::Unknown),
            }
        };
        let builtin_kind = |b: &str| -> Option<bool> {
            if !instance {
                // A package class (bases `object` or package classes) is no builtin's subclass.
                return Some(false);
            }
            Some(match (b, v) {
                ("str", Val::Str(_))
                | ("int", Val::Int(_) | Val::Bool(_))
                | ("bool", Val::Bool(_)) => true,
                (_, Val::Ref(id)) => matches!(
                    (b, &self.heap[*id].obj),
                    ("list", Obj::List(_)) | ("tuple", Obj::Tuple(_)) | ("dict", Obj::Dict(_))
                ),
                _ => false,
            })
        };
        let mut found = false;
        for class in classes {
            found |= match class {
                Ok(id) => mro.contains(id),
                Err(b) => match builtin_kind(b) {
                    Some(x) => x,
                    None => return refuse(m, range, Refused::Unknown),
                },
            };
        }
        Ok(Val::Bool(found))
    }

    /// A method of a list, dict or str.
    fn method(
        &mut self,
        m: ModId,
        range: TextRange,
        this: &Val,
        name: &str,
        args: Vec<Val>,
        kwargs: Vec<(Rc<str>, Val)>,
    ) -> Run<Val> {
        let mut args = args;
        // Keywords only where the method takes them by name (`insert_rule(..., before=)` is a
        // function; `rsplit(sep, maxsplit=1)` is the one modelled here).
        for (k, v) in kwargs {
            match (name, &*k, args.len()) {
                ("rsplit", "sep", 0) | ("rsplit", "maxsplit", 1) => args.push(v),
                _ => return refuse(m, range, Refused::Arguments),
            }
        }
        if let Val::Str(s) = this {
            return self.str_method(m, range, s.clone(), name, &args);
        }
        let Val::Ref(id) = this else {
            return refuse(m, range, Refused::Unknown);
        };
        let id = *id;
        match (name, args.as_slice()) {
            ("__object_init__", []) => Ok(Val::None),
            ("append", [v]) => {
                if let Obj::List(items) = self.mutate(m, range, id)? {
                    items.push(v.clone());
                }
                Ok(Val::None)
            }
            ("extend", [v]) => {
                let (extra, _) = self.items(m, range, v)?;
                if let Obj::List(items) = self.mutate(m, range, id)? {
                    items.extend(extra);
                }
                Ok(Val::None)
            }
            ("insert", [Val::Int(i), v]) => {
                if let Obj::List(items) = self.mutate(m, range, id)? {
                    let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
                    let at = if *i < 0 {
                        (len + i).max(0)
                    } else {
                        (*i).min(len)
                    };
                    items.insert(usize::try_from(at).unwrap_or(0), v.clone());
                }
                Ok(Val::None)
            }
            ("index", [v]) => {
                let Obj::List(items) = self.heap[id].obj.clone() else {
                    return refuse(m, range, Refused::Call);
                };
                for (at, item) in items.iter().enumerate() {
                    if self.equals(m, range, item, v)? {
                        return Ok(Val::Int(i64::try_from(at).unwrap_or(i64::MAX)));
                    }
                }
                Err(Stop::Raise(Exc::Value, m, range))
            }
            ("copy", []) => {
                let obj = match &self.heap[id].obj {
                    Obj::List(items) => Obj::List(items.clone()),
                    Obj::Dict(items) => Obj::Dict(items.clone()),
                    _ => return refuse(m, range, Refused::Call),
                };
                Ok(self.alloc(obj, Origin::Fresh))
            }
            ("get", [k, rest @ ..]) if rest.len() <= 1 => {
                key(m, range, k)?;
                let Obj::Dict(items) = &self.heap[id].obj else {
                    return refuse(m, range, Refused::Call);
                };
                Ok(match items.iter().find(|(x, _)| x == k) {
                    Some((_, v)) => v.clone(),
                    None => rest.first().cloned().unwrap_or(Val::None),
                })
            }
            ("setdefault", [k, rest @ ..]) if rest.len() <= 1 => {
                key(m, range, k)?;
                if let Obj::Dict(items) = &self.heap[id].obj
                    && let Some((_, v)) = items.iter().find(|(x, _)| x == k)
                {
                    return Ok(v.clone());
                }
                let value = rest.first().cloned().unwrap_or(Val::None);
                if let Obj::Dict(items) = self.mutate(m, range, id)? {
                    items.push((k.clone(), value.clone()));
                }
                Ok(value)
            }
            _ => refuse(m, range, Refused::Arguments),
        }
    }

    fn str_method(
        &mut self,
        m: ModId,
        range: TextRange,
        s: Rc<str>,
        name: &str,
        args: &[Val],
    ) -> Run<Val> {
        match (name, args) {
            ("startswith" | "endswith", [Val::Str(p)]) => Ok(Val::Bool(if name == "startswith" {
                s.starts_with(&**p)
            } else {
                s.ends_with(&**p)
            })),
            ("rsplit", [Val::Str(sep), rest @ ..]) if !sep.is_empty() && rest.len() <= 1 => {
                let max = match rest.first() {
                    None => -1,
                    Some(Val::Int(i)) => *i,
                    _ => return refuse(m, range, Refused::Arguments),
                };
                let parts: Vec<Val> = if max < 0 {
                    s.split(&**sep).map(|p| Val::Str(Rc::from(p))).collect()
                } else {
                    let mut parts: Vec<Val> = s
                        .rsplitn(
                            usize::try_from(max).unwrap_or(usize::MAX).saturating_add(1),
                            &**sep,
                        )
                        .map(|p| Val::Str(Rc::from(p)))
                        .collect();
                    parts.reverse();
                    parts
                };
                Ok(self.alloc(Obj::List(parts), Origin::Fresh))
            }
            ("join", [v]) => {
                let (items, _) = self.items(m, range, v)?;
                let mut out = String::new();
                for (i, item) in items.iter().enumerate() {
                    let Val::Str(part) = item else {
                        return refuse(m, range, Refused::Unknown);
                    };
                    if i > 0 {
                        out.push_str(&s);
                    }
                    out.push_str(part);
                }
                Ok(Val::Str(Rc::from(out)))
            }
            _ => refuse(m, range, Refused::Arguments),
        }
    }
}

/// The index `i` of a sequence of `len` items (negative from the end), or `None`.
fn position(i: i64, len: usize) -> Option<usize> {
    let len = i64::try_from(len).ok()?;
    let at = if i < 0 { len + i } else { i };
    (0..len)
        .contains(&at)
        .then(|| usize::try_from(at).ok())
        .flatten()
}

/// The `def` at `range` among these statements (top level, class bodies, `if`/`try` arms).
pub fn find_def(body: &[Stmt], range: TextRange) -> Option<&ast::StmtFunctionDef> {
    for stmt in body {
        if !stmt.range().contains_range(range) {
            continue;
        }
        return match stmt {
            Stmt::FunctionDef(def) if def.range == range => Some(def),
            Stmt::ClassDef(c) => find_def(&c.body, range),
            Stmt::If(i) => find_def(&i.body, range).or_else(|| {
                i.elif_else_clauses
                    .iter()
                    .find_map(|c| find_def(&c.body, range))
            }),
            Stmt::Try(t) => find_def(&t.body, range).or_else(|| find_def(&t.orelse, range)),
            _ => None,
        };
    }
    None
}

/// What a function body holds that its call cannot be run without: `yield`/`await` (the
/// call returns a generator or coroutine), `global`/`nonlocal` (its names are not local),
/// and the names only a `del`, an `except ... as` or `:=` binds (local to the call).
#[derive(Default)]
pub struct Scan<'a> {
    pub unmodelled: bool,
    pub locals: Vec<&'a str>,
}

pub fn scan_body(body: &[Stmt]) -> Scan<'_> {
    let mut scan = Scan::default();
    for stmt in body {
        scan.visit_stmt(stmt);
    }
    scan
}

impl<'a> Visitor<'a> for Scan<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(def) => {
                for d in &def.decorator_list {
                    self.visit_expr(&d.expression);
                }
            }
            Stmt::ClassDef(_) | Stmt::Global(_) | Stmt::Nonlocal(_) => self.unmodelled = true,
            Stmt::Delete(d) => {
                self.locals.extend(
                    d.targets
                        .iter()
                        .filter_map(|t| t.as_name_expr())
                        .map(|n| n.id.as_str()),
                );
            }
            Stmt::Try(t) => {
                for handler in &t.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = handler;
                    if let Some(name) = &h.name {
                        self.locals.push(name.as_str());
                    }
                }
                visitor::walk_stmt(self, stmt);
            }
            _ => visitor::walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Yield(_) | Expr::YieldFrom(_) | Expr::Await(_) => self.unmodelled = true,
            Expr::Named(n) => {
                if let Expr::Name(name) = n.target.as_ref() {
                    self.locals.push(name.id.as_str());
                }
                visitor::walk_expr(self, expr);
            }
            Expr::Lambda(_) => {}
            _ => visitor::walk_expr(self, expr),
        }
    }
}
