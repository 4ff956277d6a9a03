//! Calls of the module's own code at import, proved without running anything v2 cannot see.
//!
//! * **Pure functions.** `def f(): return E` — no parameters, no decorators, not `async`,
//!   a body that is (after an optional docstring) a single `return E`. Calling `f()` evaluates
//!   `E` in the module's globals *at the time of the call*, so `E` is proved with the
//!   environment of the call site, not of the `def` (a name bound between the two counts; one
//!   deleted or rebound in between is seen as it is then). Generated data tables are written
//!   this way (`uts46data = tuple(_seg_0() + _seg_1() + ...)`). Calls nest at most
//!   [`MAX_DEPTH`] deep: recursion is never proved (it would raise `RecursionError` or loop).
//! * **Instances of constructible classes.** `C()` for a class proved in this module whose
//!   instantiation runs no code of the module ([`super::env::ClassInfo::constructible`]):
//!   `object.__new__` and `object.__init__` only. The instance may define `__eq__` without
//!   `__hash__`, so it counts as a value of unknown hashability.
//! * **`chr(i)`** with an int literal in `range(0x110000)` (`ValueError` otherwise), or a
//!   comprehension's loop variable over such a range ([`super::comprehension`]).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use ruff_python_ast::{self as ast, Expr, Number, Stmt};
use ruff_text_size::{Ranged, TextRange};

use super::env::{Kind, Meaning};
use super::{Prover, Unproved, Why};

type Proof<T> = Result<T, Unproved>;

/// Pure-function calls evaluated inside one another at most this deep.
pub const MAX_DEPTH: u8 = 4;

/// The returned expressions of the module's pure functions (shared with class-body provers).
#[derive(Debug, Clone, Default)]
pub struct Local {
    bodies: Rc<RefCell<HashMap<TextRange, Expr>>>,
    depth: Rc<Cell<u8>>,
    /// Proving a class body: its names shadow the module's for the prover but not for a
    /// function, which reads the module's globals; pure calls are not proved there.
    pub in_class: bool,
    /// Loop variables of the comprehension being proved that are code points
    /// ([`super::comprehension`]): `chr(x)` of them cannot fail.
    code_points: Vec<String>,
}

impl Local {
    /// The same functions, seen from a class body.
    pub fn in_class_body(&self) -> Local {
        Local {
            in_class: true,
            ..self.clone()
        }
    }

    /// The same, with `name` a code point.
    pub fn with_code_point(&self, name: &str) -> Local {
        let mut local = self.clone();
        local.code_points.push(name.to_string());
        local
    }
}

/// The expression a pure function returns, when `def` is one.
pub fn returned(def: &ast::StmtFunctionDef) -> Option<&Expr> {
    let params = &def.parameters;
    if def.is_async
        || !def.decorator_list.is_empty()
        || def.type_params.is_some()
        || !params.is_empty()
    {
        return None;
    }
    let body = match def.body.as_slice() {
        [Stmt::Expr(doc), rest @ ..] if matches!(doc.value.as_ref(), Expr::StringLiteral(_)) => {
            rest
        }
        body => body,
    };
    match body {
        [
            Stmt::Return(ast::StmtReturn {
                value: Some(value), ..
            }),
        ] => Some(value),
        _ => None,
    }
}

impl Prover<'_> {
    /// Record `def` as pure when it is one; the meaning its name gets.
    pub fn function_meaning(&self, def: &ast::StmtFunctionDef) -> Meaning {
        match returned(def) {
            Some(value) => {
                self.local
                    .bodies
                    .borrow_mut()
                    .insert(def.range(), value.clone());
                Meaning::Pure(def.range())
            }
            None => Meaning::Function,
        }
    }

    /// A call of the module's own code (`func` evaluated to `callee`), or `None` when the
    /// callee is not the module's (the stdlib allowlist decides then).
    pub fn local_call(&self, call: &ast::ExprCall, callee: &Meaning) -> Option<Proof<Meaning>> {
        let no_arguments = call.arguments.is_empty();
        let fail = |why| Some(Err(Unproved::at(call.range(), why)));
        match callee {
            Meaning::Pure(def) => {
                if !no_arguments {
                    return fail(Why::Arguments);
                }
                if self.local.in_class {
                    return fail(Why::NotAllowlisted);
                }
                let body = self.local.bodies.borrow().get(def).cloned();
                let Some(body) = body else {
                    return fail(Why::NotAllowlisted);
                };
                let depth = self.local.depth.get();
                if depth >= MAX_DEPTH {
                    return fail(Why::NotAllowlisted);
                }
                self.local.depth.set(depth + 1);
                let meaning = self.value(&body);
                self.local.depth.set(depth);
                // A failure names the part of the function's body at fault.
                Some(meaning)
            }
            Meaning::Class(info) if info.constructible && no_arguments => {
                Some(Ok(Meaning::Value(Kind::Other)))
            }
            Meaning::Class(_) => fail(Why::NotAllowlisted),
            _ => None,
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
