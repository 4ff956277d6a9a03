//! Calls of the module's own code at import, proved without running anything v2 cannot see.
//!
//! * **Local functions.** `def f(a, b=1): <body>` — no decorators, not `async`, no `*args`
//!   or `**kwargs`, no type parameters, a body of statements v2 proves (after an optional
//!   docstring): assignments, nested `def`s (their decorators, defaults and annotations run;
//!   the nested function is only a function: its body reads this call's locals), expression
//!   statements, and a final `return E`. Calling `f(...)` with positional and keyword
//!   arguments that fit its parameters runs that body in the module's globals *at the time of
//!   the call* plus the parameters (a parameter left to its default is of unknown value): so
//!   the body is proved with the environment of the call site, where every name the body
//!   binds is a local, unbound until its assignment (`UnboundLocalError` otherwise). Generated
//!   data tables (`uts46data = tuple(_seg_0() + _seg_1() + ...)`) and stream-function
//!   factories (`_make_cached_stream_func(lambda: sys.stdin, get_text_stdin)`) are written
//!   this way. Imports, branches, loops and stores into attributes in the body are not proved,
//!   except a str `__name__`/`__qualname__` of an undecorated nested `def` (`Mark::PlainFunction`:
//!   a function object's setters accept any str).
//!   Calls nest at most [`MAX_DEPTH`] deep: recursion is never proved (it would raise
//!   `RecursionError` or loop).
//! * **On known values** ([`super::constant`]): a call whose arguments v2 knows exactly runs
//!   the body as CPython does (`assert`, `if`, `len`, `str`, `map(str, ...)`, `join`, ...).
//! * **Pure functions of a proved sibling module** ([`Foreign`]): `from .i18n import
//!   _ngettext_noop as NS_; NS_("a", "b")`. An importer outside the sibling's import cycle
//!   runs after the sibling finished its top level, and no proved module stores into another
//!   one, so the function's globals when it is called are the sibling's environment at its
//!   end: the body is proved there, with the arguments evaluated at the call site. The
//!   sibling's proof carries a copy of the functions whose body holds only statements v2
//!   proves in a function (a handful per module), with one copy of that environment.
//! * **Instances of classes whose instantiation v2 proved** ([`super::instances`]): `C()` of a
//!   class that runs only `object`'s `__new__`/`__init__`, `C(a, b=...)` of a `NamedTuple`
//!   or of a class whose `__init__` only stores parameters and literals into `self`; the class
//!   is the module's or one a proved sibling module exports. The instance may define `__eq__`
//!   without `__hash__`, so it counts as a value of unknown hashability.
//! * **`chr(i)`** with an int literal in `range(0x110000)` (`ValueError` otherwise), or a
//!   comprehension's loop variable over such a range ([`super::comprehension`]).
//! * **`b ** e`** with `b` an int literal and `e` an int literal in `0..=`[`MAX_EXPONENT`] or a
//!   comprehension's loop variable over a display of such literals: an int of bounded size
//!   (a negative exponent makes a float, or raises `ZeroDivisionError` for `0`; an unknown one
//!   may exhaust memory).

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use ruff_python_ast::{self as ast, Expr, Number, Stmt};
use ruff_text_size::{Ranged, TextRange};

use super::env::{Env, Kind, Mark, Meaning};
use super::instances::Init;
use super::package::Exports;
use super::{Prover, Unproved, Why};

type Proof<T> = Result<T, Unproved>;

/// Pure-function calls evaluated inside one another at most this deep.
pub const MAX_DEPTH: u8 = 4;

/// The largest exponent of `b ** e` v2 evaluates.
pub const MAX_EXPONENT: u64 = 1024;

/// The module's local functions v2 can call (shared with nested provers).
#[derive(Debug, Clone, Default)]
pub struct Local<'p> {
    /// By the range of their `def`: borrowed from the module's tree (a copy per function
    /// made the whole v2 pass noticeably slower on large modules).
    bodies: Rc<RefCell<HashMap<TextRange, &'p ast::StmtFunctionDef>>>,
    depth: Rc<Cell<u8>>,
    /// Proving a class body: its names shadow the module's for the prover but not for a
    /// function, which reads the module's globals ([`Self::globals`]).
    pub in_class: bool,
    /// In a class body that calls a local function: the module's names at the class
    /// statement, which are the function's globals when the body calls it (a class body
    /// rebinds no global), so its body is proved there, its arguments in the class body.
    globals: Option<Rc<Env>>,
    /// Loop variables of the comprehension being proved that are code points
    /// ([`super::comprehension`]): `chr(x)` of them cannot fail.
    code_points: Vec<String>,
    /// Loop variables of the comprehension being proved whose items are int literals in
    /// `0..=MAX_EXPONENT`: `10 ** x` of them is a bounded int.
    exponents: Vec<String>,
}

impl<'p> Local<'p> {
    /// The same functions, seen from a class body; `globals`: the module's names there, when
    /// the body calls a local function (a nested class keeps the outer ones).
    pub fn in_class_body(&self, globals: Option<Rc<Env>>) -> Local<'p> {
        Local {
            in_class: true,
            globals: self.globals.clone().or(globals),
            ..self.clone()
        }
    }

    /// The module's names are kept for this class body ([`Self::globals`]).
    pub fn has_globals(&self) -> bool {
        self.globals.is_some()
    }

    /// The same, with `name` a code point.
    pub fn with_code_point(&self, name: &str) -> Local<'p> {
        let mut local = self.clone();
        local.code_points.push(name.to_string());
        local
    }

    /// The same, with `name` a small exponent.
    pub fn with_exponent(&self, name: &str) -> Local<'p> {
        let mut local = self.clone();
        local.exponents.push(name.to_string());
        local
    }

    /// Proving the body of a call of the module's own code (not its top level): a statement
    /// there runs in another function's frame, maybe for another module ([`super::dicts`]).
    pub fn calling(&self) -> bool {
        self.depth.get() > 0
    }

    /// The same functions, as a called function's body sees them: the comprehension's loop
    /// variables are not its names (a local of the same name may hold anything).
    fn in_call(&self) -> Local<'p> {
        Local {
            code_points: Vec::new(),
            exponents: Vec::new(),
            in_class: false,
            globals: None,
            ..self.clone()
        }
    }
}

/// A pure function of another module of the package ([`Meaning::Foreign`]): the function in
/// its home module, compared by identity.
#[derive(Clone)]
pub struct Foreign {
    home: Arc<Home>,
    def: TextRange,
}

/// What a proved module lends its importers to call its pure functions: its name, its
/// environment at the end of its top level, and copies of the functions.
struct Home {
    module: String,
    env: Env,
    future_annotations: bool,
    imported_modules: HashSet<String>,
    defs: HashMap<TextRange, ast::StmtFunctionDef>,
}

impl PartialEq for Foreign {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.home, &other.home) && self.def == other.def
    }
}

impl Eq for Foreign {}

impl std::fmt::Debug for Foreign {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Foreign({}, {:?})", self.home.module, self.def)
    }
}

/// The parameters of a decorator called with the function it decorates: one positional
/// parameter, nothing else (`wrapper(func)`).
fn with_function(def: &ast::StmtFunctionDef, argument: Meaning) -> Option<HashMap<&str, Meaning>> {
    let params = &def.parameters;
    match (params.posonlyargs.as_slice(), params.args.as_slice()) {
        ([only], []) | ([], [only]) if params.kwonlyargs.is_empty() => {
            Some(HashMap::from([(only.name().as_str(), argument)]))
        }
        _ => None,
    }
}

/// The nested function `name` names at the end of `body`: bound once, by a `def` of it.
fn returned_def<'b>(body: &'b [Stmt], name: &str) -> Option<&'b ast::StmtFunctionDef> {
    let mut bound = Vec::new();
    super::stmt::collect_bound(body, &mut bound);
    if bound.iter().filter(|n| **n == name).count() != 1 {
        return None;
    }
    body.iter().find_map(|stmt| match stmt {
        Stmt::FunctionDef(def) if def.name.as_str() == name => Some(def),
        _ => None,
    })
}

/// Statements a called function's body may hold for v2 to prove it (the others refuse it
/// at once, so only these functions are lent to importers).
fn provable_body(body: &[Stmt]) -> bool {
    body.iter().all(|stmt| {
        matches!(
            stmt,
            Stmt::Assign(_)
                | Stmt::AnnAssign(_)
                | Stmt::Expr(_)
                | Stmt::Pass(_)
                | Stmt::FunctionDef(_)
                | Stmt::Return(_)
        )
    })
}

/// The exports of a module proved inside a package: its pure functions whose bodies v2 can
/// prove become [`Meaning::Foreign`] (they were plain functions to the importers).
pub fn lend_functions(prover: &Prover, exports: &mut Exports) {
    if prover.package.is_none() {
        return;
    }
    let bodies = prover.local.bodies.borrow();
    let lent: Vec<(&str, TextRange)> = prover
        .env
        .pure_functions()
        .filter(|(name, def)| {
            exports.contains_key(*name)
                && bodies
                    .get(def)
                    .and_then(|d| callable_body(d))
                    .is_some_and(provable_body)
        })
        .collect();
    if lent.is_empty() {
        return;
    }
    let home = Arc::new(Home {
        module: prover.module.to_string(),
        env: prover.env.clone(),
        future_annotations: prover.future_annotations,
        imported_modules: prover.imported_modules.clone(),
        defs: lent
            .iter()
            .filter_map(|(_, def)| bodies.get(def).map(|d| (*def, (*d).clone())))
            .collect(),
    });
    for (name, def) in lent {
        if let Some(export) = exports.get_mut(name) {
            export.meaning = Meaning::Foreign(Foreign {
                home: home.clone(),
                def,
            });
        }
    }
}

/// `def` runs what its body says when called: not `async` (a call would only build a
/// coroutine), no decorator or type parameter (nothing replaces or wraps the function), and
/// no `*args`/`**kwargs` (every argument binds to a named parameter). Every rule that runs a
/// module's own function in its head (calls, markers, instance `__init__`s) starts here.
pub fn plain_def(def: &ast::StmtFunctionDef) -> bool {
    let params = &def.parameters;
    !def.is_async
        && def.decorator_list.is_empty()
        && def.type_params.is_none()
        && params.vararg.is_none()
        && params.kwarg.is_none()
}

/// `def`'s statements after its docstring (the docstring only binds `__doc__`).
pub fn body_after_docstring(def: &ast::StmtFunctionDef) -> &[Stmt] {
    match def.body.as_slice() {
        [Stmt::Expr(doc), rest @ ..] if matches!(doc.value.as_ref(), Expr::StringLiteral(_)) => {
            rest
        }
        body => body,
    }
}

/// `def`'s positional parameters in binding order, positional-only first.
pub fn positional_params(def: &ast::StmtFunctionDef) -> Vec<&ast::ParameterWithDefault> {
    def.parameters
        .posonlyargs
        .iter()
        .chain(&def.parameters.args)
        .collect()
}

/// `def` is a local function v2 can call ([`Local`]): its statements after the docstring.
pub fn callable_body(def: &ast::StmtFunctionDef) -> Option<&[Stmt]> {
    plain_def(def).then(|| body_after_docstring(def))
}

impl<'p> Prover<'p> {
    /// Record `def` as a local function v2 can call when it is one; the meaning its name gets.
    pub fn function_meaning(&self, def: &'p ast::StmtFunctionDef) -> Meaning {
        match callable_body(def) {
            Some(_) => {
                self.local.bodies.borrow_mut().insert(def.range(), def);
                Meaning::Pure(def.range())
            }
            None => Meaning::Function,
        }
    }

    /// A call of the module's own code (`func` evaluated to `callee`), or `None` when the
    /// callee is not the module's (the stdlib allowlist decides then).
    pub fn local_call(&self, call: &ast::ExprCall, callee: &Meaning) -> Option<Proof<Meaning>> {
        let fail = |why| Some(Err(Unproved::at(call.range(), why)));
        match callee {
            Meaning::Pure(def) => {
                let def = self.local.bodies.borrow().get(def).copied();
                let Some(def) = def else {
                    return fail(Why::NotAllowlisted);
                };
                // In a class body: the body in the module's globals, the arguments here
                // (werkzeug's `__setitem__ = _calls_update("__setitem__")`).
                if self.local.in_class {
                    let Some(globals) = &self.local.globals else {
                        return fail(Why::NotAllowlisted);
                    };
                    let mut module = self.nested(self.local.in_call());
                    module.env = (**globals).clone();
                    let depth = self.local.depth.get();
                    if depth >= MAX_DEPTH {
                        return fail(Why::NotAllowlisted);
                    }
                    self.local.depth.set(depth + 1);
                    let meaning = self.run_local(call, def, &module);
                    self.local.depth.set(depth);
                    return Some(meaning);
                }
                // On known arguments, run the body exactly ([`super::constant`]).
                if let Some(body) = callable_body(def)
                    && let Some(value) = self.evaluate_call(call, def, body)
                {
                    return Some(Ok(value.meaning()));
                }
                let depth = self.local.depth.get();
                if depth >= MAX_DEPTH {
                    return fail(Why::NotAllowlisted);
                }
                self.local.depth.set(depth + 1);
                let meaning = self.run_local(call, def, self);
                self.local.depth.set(depth);
                // A failure names the part of the function's body at fault.
                Some(meaning)
            }
            Meaning::Foreign(foreign) => Some(self.foreign_call(call, foreign)),
            Meaning::Class(info) => Some(self.instance(call, info.init)),
            _ => None,
        }
    }

    /// A call of a sibling's pure function: its body proved in the sibling's globals. A
    /// failure inside the body is reported at the call (the body is another file's).
    fn foreign_call(&self, call: &ast::ExprCall, foreign: &Foreign) -> Proof<Meaning> {
        let fail = || Err(Unproved::at(call.range(), Why::NotAllowlisted));
        let home = &foreign.home;
        let Some(def) = home.defs.get(&foreign.def) else {
            return fail();
        };
        let depth = self.local.depth.get();
        if depth >= MAX_DEPTH {
            return fail();
        }
        let prover = self.home_prover(home);
        self.local.depth.set(depth + 1);
        let meaning = self.run_local(call, def, &prover);
        self.local.depth.set(depth);
        meaning.map_err(|unproved| Unproved::at(call.range(), unproved.why))
    }

    /// `C(...)` of a class whose instantiation v2 proved ([`Init`]): the arguments must fit
    /// and be proved themselves; the instance may define `__eq__` without `__hash__` (and a
    /// named tuple may hold unhashable fields), so it is a value of unknown hashability.
    fn instance(&self, call: &ast::ExprCall, init: Init) -> Proof<Meaning> {
        let fail = |why| Err(Unproved::at(call.range(), why));
        let fits = match init {
            Init::Object => call.arguments.is_empty(),
            Init::Fields(signature) => signature.fits(&call.arguments),
            // `super` is looked up in the module's globals when `__init__` runs: now.
            Init::Stores { super_call, .. } if super_call && self.env.shadows("super") => {
                return fail(Why::NotAllowlisted);
            }
            Init::Stores { signature, .. } => signature.fits(&call.arguments),
            Init::Unknown => return fail(Why::NotAllowlisted),
        };
        if !fits {
            return fail(Why::Arguments);
        }
        for value in call
            .arguments
            .args
            .iter()
            .chain(call.arguments.keywords.iter().map(|k| &k.value))
        {
            self.value(value)?;
        }
        Ok(Meaning::Value(Kind::Other))
    }

    /// Bind the call's arguments (evaluated here) to the parameters of `def` and prove its
    /// body in the globals of `home` (this call site, or a sibling's end); the meaning of what
    /// it returns.
    fn run_local<'h>(
        &self,
        call: &ast::ExprCall,
        def: &'h ast::StmtFunctionDef,
        home: &Prover<'h>,
    ) -> Proof<Meaning> {
        self.run_call(call, def, home, false)
    }

    /// [`Self::run_local`]; with `keep_closure`, a nested function the body defines and
    /// returns is the closure it is ([`Self::local_decorator`]).
    fn run_call<'h>(
        &self,
        call: &ast::ExprCall,
        def: &'h ast::StmtFunctionDef,
        home: &Prover<'h>,
        keep_closure: bool,
    ) -> Proof<Meaning> {
        let fail = |why| Err(Unproved::at(call.range(), why));
        let params = positional_params(def);
        let keyword_only = &def.parameters.kwonlyargs;
        let mut bound: HashMap<&str, Meaning> = HashMap::new();
        // Arguments whose string value v2 folds keep it in the body (`s.encode("ascii")`).
        let mut strings: HashMap<&str, String> = HashMap::new();
        for (index, arg) in call.arguments.args.iter().enumerate() {
            let (Some(param), false) = (params.get(index), matches!(arg, Expr::Starred(_))) else {
                return fail(Why::Arguments);
            };
            bound.insert(param.name().as_str(), self.value(arg)?);
            if let Some(text) = self.str_value(arg) {
                strings.insert(param.name().as_str(), text);
            }
        }
        let positional_only = def.parameters.posonlyargs.len();
        for keyword in &call.arguments.keywords {
            let Some(name) = &keyword.arg else {
                return fail(Why::Arguments);
            };
            let name = name.as_str();
            let known = params[positional_only..]
                .iter()
                .copied()
                .chain(keyword_only.iter())
                .any(|p| p.name().as_str() == name);
            if !known || bound.contains_key(name) {
                return fail(Why::Arguments);
            }
            bound.insert(name, self.value(&keyword.value)?);
            if let Some(text) = self.str_value(&keyword.value) {
                strings.insert(name, text);
            }
        }
        for param in params.iter().copied().chain(keyword_only.iter()) {
            let name = param.name().as_str();
            if !bound.contains_key(name) {
                if param.default.is_none() {
                    return fail(Why::Arguments);
                }
                bound.insert(name, Meaning::Unknown);
            }
        }
        home.run_body(call.range(), def, (bound, strings), keep_closure)
    }

    /// Prove the body of `def` in this prover's globals with its parameters `bound` (and the
    /// strings v2 folded among them); `at` is the call. The meaning of what it returns.
    fn run_body(
        &self,
        at: TextRange,
        def: &'p ast::StmtFunctionDef,
        (bound, mut strings): (HashMap<&str, Meaning>, HashMap<&str, String>),
        keep_closure: bool,
    ) -> Proof<Meaning> {
        let Some(body) = callable_body(def) else {
            return Err(Unproved::at(at, Why::NotAllowlisted));
        };
        // The call's locals: every name the body binds is unbound until it is assigned.
        let mut inner = self.nested(self.local.in_call());
        let mut locals = Vec::new();
        super::stmt::collect_bound(body, &mut locals);
        for name in locals {
            inner.env.unbind(name);
        }
        for (name, meaning) in bound {
            match strings.remove(name) {
                Some(text) => inner.env.bind_str(name, text),
                None => inner.env.bind(name, meaning),
            }
        }
        let Some((last, init)) = body.split_last() else {
            return Ok(Meaning::Value(Kind::None));
        };
        for stmt in init {
            inner.local_statement(stmt)?;
        }
        match last {
            Stmt::Return(ret) => match &ret.value {
                Some(value) => {
                    let nested = match value.as_ref() {
                        Expr::Name(name) if keep_closure => returned_def(init, name.id.as_str()),
                        _ => None,
                    };
                    match nested {
                        Some(nested) => Ok(inner.closure(nested)),
                        None => inner.value(value),
                    }
                }
                None => Ok(Meaning::Value(Kind::None)),
            },
            other => {
                inner.local_statement(other)?;
                Ok(Meaning::Value(Kind::None))
            }
        }
    }

    /// The closure `nested` is once the call that defined it returned: its body reads the
    /// call's final locals (its cells) and this prover's globals — the same when the closure
    /// is applied at once ([`Self::local_decorator`]).
    fn closure(&self, nested: &ast::StmtFunctionDef) -> Meaning {
        let home = Arc::new(Home {
            module: self.module.to_string(),
            env: self.env.clone(),
            future_annotations: self.future_annotations,
            imported_modules: self.imported_modules.clone(),
            defs: HashMap::from([(nested.range(), nested.clone())]),
        });
        Meaning::Foreign(Foreign {
            home,
            def: nested.range(),
        })
    }

    /// A prover for the body of a function of `home`: its globals, its functions.
    fn home_prover<'h>(&self, home: &'h Home) -> Prover<'h>
    where
        'p: 'h,
    {
        let bodies: HashMap<TextRange, &ast::StmtFunctionDef> =
            home.defs.iter().map(|(range, def)| (*range, def)).collect();
        Prover {
            env: home.env.clone(),
            future_annotations: home.future_annotations,
            imported_modules: home.imported_modules.clone(),
            excused_imports: Default::default(),
            handled_imports: Default::default(),
            module: &home.module,
            package: self.package,
            local: Local {
                bodies: Rc::new(RefCell::new(bodies)),
                depth: self.local.depth.clone(),
                ..Local::default()
            },
            import_guarded: false,
            // The home's marker decorators are not lent (a marker there is refused here).
            markers: Default::default(),
        }
    }

    /// A decorator of the module's own code (or a proved sibling's) on a module-level `def`:
    /// `@factory(args)` whose call defines and returns a closure, or `@decorator`; the
    /// decorator (the closure) is then called with the function and must return a function
    /// — its own nested function, or the one it was given (after `functools.wraps`, say).
    /// Module level only: the functions allowlisted decorators make there are function
    /// objects or callables with a `__dict__` (in a class body a property or a classmethod
    /// object would be passed). `None` when the decorator is not the module's code.
    pub fn local_decorator(&self, decorator: &Expr) -> Option<Proof<()>> {
        match self.local_decoration(decorator, Meaning::Function)? {
            Ok(Meaning::Function) => Some(Ok(())),
            _ => Some(Err(Unproved::at(decorator.range(), Why::Decorator))),
        }
    }

    /// The decorator (as [`Self::local_decorator`]) called with `argument` — a function, or a
    /// class a class statement made ([`super::class`]): what it returns. `None` when the
    /// decorator is not the module's code (or in a class body).
    pub fn local_decoration(&self, decorator: &Expr, argument: Meaning) -> Option<Proof<Meaning>> {
        let fail = || Some(Err(Unproved::at(decorator.range(), Why::Decorator)));
        let (callee, factory) = match decorator {
            Expr::Call(call) => (self.value(&call.func).ok()?, Some(call)),
            other => (self.value(other).ok()?, None),
        };
        if !matches!(callee, Meaning::Pure(_) | Meaning::Foreign(_)) || self.local.in_class {
            return None;
        }
        let depth = self.local.depth.get();
        if depth >= MAX_DEPTH {
            return fail();
        }
        self.local.depth.set(depth + 1);
        let applied = self.apply_local_decorator(decorator, &callee, factory, argument);
        self.local.depth.set(depth);
        Some(applied)
    }

    fn apply_local_decorator(
        &self,
        decorator: &Expr,
        callee: &Meaning,
        factory: Option<&ast::ExprCall>,
        argument: Meaning,
    ) -> Proof<Meaning> {
        let fail = || Err(Unproved::at(decorator.range(), Why::Decorator));
        let decorator_fn = match (callee, factory) {
            (Meaning::Pure(def), Some(call)) => {
                let def = self.local.bodies.borrow().get(def).copied();
                let Some(def) = def else { return fail() };
                self.run_call(call, def, self, true)?
            }
            (Meaning::Foreign(foreign), Some(call)) => {
                let Some(def) = foreign.home.defs.get(&foreign.def) else {
                    return fail();
                };
                let home = self.home_prover(&foreign.home);
                self.run_call(call, def, &home, true)?
            }
            (other, None) => other.clone(),
            _ => return fail(),
        };
        // Call the decorator with the function being decorated.
        let at = decorator.range();
        match decorator_fn {
            Meaning::Pure(def) => {
                let def = self.local.bodies.borrow().get(&def).copied();
                let Some(def) = def else { return fail() };
                let Some(bound) = with_function(def, argument.clone()) else {
                    return fail();
                };
                self.run_body(at, def, (bound, HashMap::new()), false)
            }
            Meaning::Foreign(foreign) => {
                let Some(def) = foreign.home.defs.get(&foreign.def) else {
                    return fail();
                };
                let Some(bound) = with_function(def, argument.clone()) else {
                    return fail();
                };
                let home = self.home_prover(&foreign.home);
                home.run_body(at, def, (bound, HashMap::new()), false)
            }
            _ => fail(),
        }
    }

    /// A statement of a local function's body (not its last `return`).
    fn local_statement(&mut self, stmt: &'p Stmt) -> Proof<()> {
        match stmt {
            Stmt::Assign(_) | Stmt::AnnAssign(_) | Stmt::Expr(_) | Stmt::Pass(_) => {
                self.statement(stmt, false)
            }
            // A nested function: its decorators, defaults and annotations run now; it is only
            // a function (its body reads this call's locals, which the module's do not hold).
            Stmt::FunctionDef(nested) => {
                for decorator in &nested.decorator_list {
                    self.def_decorator(&decorator.expression, None)?;
                }
                self.signature(nested)?;
                self.env.bind(nested.name.as_str(), Meaning::Function);
                if nested.decorator_list.is_empty() {
                    self.env.mark(nested.name.as_str(), Mark::PlainFunction);
                }
                Ok(())
            }
            _ => Err(Unproved::at(stmt.range(), Why::Statement)),
        }
    }

    /// `b ** e`: an int literal to the power of a small exponent ([`MAX_EXPONENT`]).
    pub fn power(&self, b: &ast::ExprBinOp) -> Proof<Meaning> {
        let int_literal = |e: &Expr| match e {
            Expr::NumberLiteral(n) => match &n.value {
                Number::Int(i) => i.as_u64(),
                _ => None,
            },
            _ => None,
        };
        let exponent = match b.right.as_ref() {
            Expr::Name(n) => {
                self.local.exponents.iter().any(|e| e == n.id.as_str())
                    && self.env.lookup(n.id.as_str()) == Some(Meaning::Value(Kind::Int))
            }
            e => int_literal(e).is_some_and(|e| e <= MAX_EXPONENT),
        };
        if int_literal(&b.left).is_some() && exponent {
            Ok(Meaning::Value(Kind::Int))
        } else {
            Err(Unproved::at(b.range(), Why::Expression))
        }
    }

    /// `chr(<int literal>)` with the literal a code point, or of a comprehension's loop
    /// variable known to be one.
    pub fn chr(&self, call: &ast::ExprCall) -> Proof<Meaning> {
        if let ([Expr::Name(n)], true) = (
            call.arguments.args.as_ref(),
            call.arguments.keywords.is_empty(),
        ) && self.local.code_points.iter().any(|c| c == n.id.as_str())
            && self.env.lookup(n.id.as_str()) == Some(Meaning::Value(Kind::Int))
        {
            return Ok(Meaning::Value(Kind::Str));
        }
        let code_point = match (
            call.arguments.args.as_ref(),
            call.arguments.keywords.is_empty(),
        ) {
            (
                [
                    Expr::NumberLiteral(ast::ExprNumberLiteral {
                        value: Number::Int(i),
                        ..
                    }),
                ],
                true,
            ) => i.as_u64(),
            _ => None,
        };
        match code_point {
            Some(c) if c < 0x11_0000 => Ok(Meaning::Value(Kind::Str)),
            _ => Err(Unproved::at(call.range(), Why::Arguments)),
        }
    }
}
