//! Calls of the package's own code at import, run by a concrete interpreter for a small
//! subset of Python that it models exactly (`html = create_markdown(escape=False, plugins=[...])`).
//!
//! When a top-level statement evaluates a call of a function or class of the package that
//! the other rules do not prove, the interpreter runs it on a heap of objects: lists, tuples,
//! dicts (str and int keys), instances with a `__dict__`, classes of the package (rebuilt
//! from their statements, [`modules`]), functions, bound methods, modules of the package,
//! `str`/`int`/`bool`/`None`, and [`Val::Opaque`] objects that exist but are not known. It
//! follows frames with locals, keyword and default binding, name mangling, `super()` (both
//! forms), loops under fuel, `try`/`except` of the builtin exceptions its modelled operations
//! raise where CPython raises them (`list.index` → `ValueError`, a missing key → `KeyError`,
//! `issubclass` of a non-class → `TypeError`, a missing attribute → `AttributeError`),
//! comprehensions, lambdas and nested `def`s (created, never called), `getattr`, `callable`,
//! `isinstance`/`issubclass`, `len`, `list`, `tuple`, `dict`, the list methods `append`,
//! `insert`, `index`, `copy`, `extend`, the dict methods `get`, `copy`, `setdefault`, the str
//! methods `rsplit`, `join`, `startswith`, `endswith`, and `importlib.import_module` of a
//! module of the package. The call is proved when it returns without raising; everything
//! else is *refused* (the statement stays unproved, with the span and why): a construct not
//! modelled, an unknown value used, a class with a metaclass, decorator, `__slots__` or a
//! base outside the package, a descriptor where it would run (a property read, any unknown
//! class attribute), a hook that would run (`__setattr__`, `__getattr__`, `__getattribute__`,
//! `__new__`, `__del__`, `__bool__`/`__len__` in a truth test, `==` on objects other than
//! ints, strs, bools and `None`; `isinstance` where `__class__` is rebound or hooked; a dunder
//! store on an instance), a name whose meaning CPython may change unseen (a global or builtin
//! of a package a submodule import binds; `is` between existing objects other than classes,
//! which are rebuilt at each read), a nested `def` with annotations, a call outside the
//! list, recursion deeper than [`objects`]' limit, or more steps than the fuel. A refusal
//! inside another module's code is shown at the call in the module proved. The result binds a value of unknown kind (a str,
//! int, bool or `None` when it is one): nothing more is claimed.
//!
//! Effects. The call may change the objects it created. Of the objects that existed before
//! it, it may only store items into a dict a module's top level bound with a display (the
//! mistune plugin cache `_cached_modules[name] = plugin`); any other change — an attribute
//! of a class or of an existing instance, a class attribute's dict, a list another rule may
//! know the items of ([`super::env::Mark::HashableItems`]), a module's globals — is refused.
//! v2 never knows a dict's contents outside the interpreter, so no export or mark describes
//! what changed (no [`super::env::Mark`] and no folded value is kept for a dict). Other interpreted statements would read stale contents, so the package
//! pass collects every interpreted statement's reads and writes of such dicts ([`Use`]): a
//! dict one statement writes and another reads or writes is *contested* — the modules whose
//! statements touch it lose their own proof after the first pass and their statements are
//! refused in the second ([`Settled`], [`crate::project`]'s packaged pass).
//!
//! `importlib.import_module(<dotted name of a module T of the package>)` is proved like a
//! static import of `T` at that point, when `T` is shipped with the module (it is in the
//! module's call-time closure, which every bundle that runs the module holds: the closure
//! holds the modules an `importlib` user names in a string literal, [`crate::package`]) and
//! the module does not stand alone (then it is shipped alone): the first pass records `T` ([`Use::dynamic`]); the
//! package pass then requires `T`'s import-time closure (and its parents not above the
//! module) to be own-proved, and that no module of it imports a name from the module being
//! proved or one of its ancestors (those may be half-initialised: the static cycle rule of
//! [`super::package`]), and that the module proved is not in that closure (else the import
//! would meet it half-initialised); `T` itself may not be the module or an ancestor of it.
//! The second pass requires `T` to be closure-safe. This is sound because `import_module`
//! runs exactly what `import T` runs (parents first, then `T`'s top level, each once) and
//! then returns `sys.modules[T]`, whose names the interpreter reads at the end of `T`'s top
//! level (finished: not on the import stack). The import also binds `T`'s last component in
//! its parent package, as a static import does; a parent that binds that name itself is
//! refused (it would be overwritten).

mod exec;
mod heap;
mod modules;
mod objects;

use std::collections::{BTreeSet, HashMap, HashSet};

use ruff_python_ast::Expr;
use ruff_text_size::{Ranged, TextRange, TextSize};

use super::env::{Kind, Meaning};
use super::package::ModulePackage;
use super::{Prover, Unproved, Why};
pub use heap::Refused;
use heap::{Entry, Id, ModId, Obj, Origin, Run, Stop, Val, refuse};
use modules::Loaded;

/// Modules one interpretation may load.
pub const MAX_MODULES: usize = 48;
/// Steps (statements, expressions, name lookups) one interpretation may take.
const FUEL: usize = 200_000;

/// What one interpreted top-level statement read and changed of what existed before it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Use {
    /// Module-global dicts (the module, the offset of the statement binding them) it read.
    pub reads: BTreeSet<(String, u32)>,
    /// The same, that it changed.
    pub writes: BTreeSet<(String, u32)>,
    /// Modules it imported with `importlib.import_module`.
    pub dynamic: BTreeSet<String>,
}

impl Use {
    fn is_empty(&self) -> bool {
        self.reads.is_empty() && self.writes.is_empty() && self.dynamic.is_empty()
    }
}

/// What the package pass settled after the first pass (see the module comment).
#[derive(Debug, Clone, Default)]
pub struct Settled {
    /// Dicts more than one interpreted statement touches, one of them changing them.
    pub contested: HashSet<(String, u32)>,
    /// `(module, target)` pairs whose `import_module` is not proved.
    pub refused_imports: HashSet<(String, String)>,
    /// What each interpreted statement (module, offset) used in the first pass: a statement
    /// of the second pass that uses something must have used the same then (the settlement
    /// covered it).
    pub uses: HashMap<(String, u32), Use>,
}

/// One interpretation.
pub struct Interp<'c> {
    package: &'c ModulePackage<'c>,
    modules: Vec<Loaded<'c>>,
    heap: Vec<Entry>,
    /// Values of top-level statements recalled so far ([`modules`]).
    recalled: HashMap<(ModId, TextSize), Val>,
    classes: HashMap<(ModId, TextSize), Val>,
    fuel: usize,
    depth: usize,
    /// Globals being recalled inside one another ([`modules`]).
    recalls: usize,
    used: Use,
    /// The modules shipped with the module proved, once an `import_module` needs them.
    shipped: Option<BTreeSet<String>>,
}

impl Interp<'_> {
    fn alloc(&mut self, obj: Obj, origin: Origin) -> Val {
        self.heap.push(Entry {
            obj,
            origin,
            version: 0,
        });
        Val::Ref(self.heap.len() - 1)
    }

    /// One step of fuel.
    fn step(&mut self, m: ModId, range: TextRange) -> Run<()> {
        self.fuel += 1;
        if self.fuel > FUEL {
            return refuse(m, range, Refused::Fuel);
        }
        Ok(())
    }

    fn settled(&self) -> Option<&Settled> {
        self.package.ctx.settled.as_ref()
    }

    /// A module-global dict was read: recorded, and refused when contested.
    fn note_read(&mut self, m: ModId, at: TextSize, range: TextRange) -> Run<()> {
        let key = (self.modules[m].name.clone(), u32::from(at));
        if self.settled().is_some_and(|s| s.contested.contains(&key)) {
            return refuse(m, range, Refused::Mutation);
        }
        self.used.reads.insert(key);
        Ok(())
    }

    /// The object `id`, to change it: one the call created, or a module's dict display.
    fn mutate(&mut self, m: ModId, range: TextRange, id: Id) -> Run<&mut Obj> {
        match self.heap[id].origin.clone() {
            Origin::Fresh => {}
            Origin::Global { module, at } if matches!(self.heap[id].obj, Obj::Dict(_)) => {
                let key = (self.modules[module].name.clone(), u32::from(at));
                if self.settled().is_some_and(|s| s.contested.contains(&key)) {
                    return refuse(m, range, Refused::Mutation);
                }
                self.used.writes.insert(key);
            }
            _ => return refuse(m, range, Refused::Mutation),
        }
        let entry = &mut self.heap[id];
        entry.version += 1;
        Ok(&mut entry.obj)
    }

    /// `importlib.import_module(name)` of a module of the package (see the module comment).
    fn import_module(&mut self, m: ModId, range: TextRange, name: &str) -> Run<Val> {
        let ctx = self.package.ctx;
        let current = self.modules[0].name.clone();
        let above = current.starts_with(&format!("{name}."));
        if !ctx.index.contains(name) || name == current || above || self.package.stands_alone() {
            return refuse(m, range, Refused::Import);
        }
        // The bundle of every module whose import runs this one holds this one's call-time
        // closure ([`crate::package::PackageIndex::closure`]): the target must be in it.
        if self.shipped.is_none() {
            self.shipped = Some(
                ctx.index
                    .closure(&[current.as_str()], true)
                    .unwrap_or_default(),
            );
        }
        if !self.shipped.as_ref().is_some_and(|s| s.contains(name)) {
            return refuse(m, range, Refused::Import);
        }
        let refused = match (&ctx.closure_safe, self.settled()) {
            (Some(safe), Some(settled)) => {
                !safe.contains(name)
                    || settled
                        .refused_imports
                        .contains(&(current.clone(), name.to_string()))
            }
            _ => ctx.closure_unsafe.contains(name),
        };
        if refused {
            return refuse(m, range, Refused::Import);
        }
        // The parent package gets the submodule as an attribute: it must not bind that name.
        if let Some((parent, last)) = name.rsplit_once('.') {
            let p = self.load(parent, (m, range))?;
            if self.modules[p].bindings.contains_key(last) {
                return refuse(m, range, Refused::Import);
            }
        }
        let t = self.load(name, (m, range))?;
        self.used.dynamic.insert(name.to_string());
        Ok(self.alloc(Obj::Module(t), Origin::Existing))
    }
}

impl<'p> Prover<'p> {
    /// Run the call `value` of the package's own code at the top-level statement `statement`
    /// ([`self`]); `None` when it is no such call (another rule's business).
    pub fn interpret(
        &self,
        value: &Expr,
        statement: TextRange,
    ) -> Option<Result<Meaning, Unproved>> {
        let package = self.package?;
        // Only a statement of the top level itself: in a class body or in the body of a call
        // proved by kinds ([`super::pure`]) names are not the module's globals.
        if self.local.in_class || self.local.calling() {
            return None;
        }
        let Expr::Call(call) = value else {
            return None;
        };
        let Expr::Name(callee) = call.func.as_ref() else {
            return None;
        };
        match self.env.lookup(callee.id.as_str()) {
            Some(
                Meaning::Function
                | Meaning::Class(_)
                | Meaning::Unknown
                | Meaning::Pure(_)
                | Meaning::Foreign(_),
            ) => {}
            _ => return None,
        }
        let mut interp = Interp {
            package,
            modules: Vec::new(),
            heap: Vec::new(),
            recalled: HashMap::new(),
            classes: HashMap::new(),
            fuel: 0,
            depth: 0,
            recalls: 0,
            used: Use::default(),
            shipped: None,
        };
        let unproved = |r: heap::Refusal| Unproved::at(r.range, Why::Interpreted(r.why));
        let outside = |why| Unproved::at(call.range(), Why::Interpreted(why));
        if let Err(stop) = interp.load(self.module, (0, call.range())) {
            return Some(Err(match stop {
                Stop::Refuse(r) => outside(r.why),
                Stop::Raise(..) => outside(Refused::Raises),
            }));
        }
        interp.modules[0].limit = statement.start();
        let mut frame = exec::Frame {
            module: 0,
            locals: HashMap::new(),
            local_names: HashSet::new(),
            owner: None,
            first: None,
        };
        let result = interp.expr(&mut frame, value);
        Some(match result {
            Ok(_)
                if !interp.used.is_empty()
                    && self
                        .package
                        .and_then(|p| p.ctx.settled.as_ref())
                        .is_some_and(|s| {
                            s.uses
                                .get(&(self.module.to_string(), u32::from(statement.start())))
                                != Some(&interp.used)
                        }) =>
            {
                Err(outside(Refused::Mutation))
            }
            Ok(v) => {
                package.record_interpreted(statement, interp.used);
                Ok(match v {
                    Val::Str(_) | Val::SomeStr(_) => Meaning::Value(Kind::Str),
                    Val::Int(_) => Meaning::Value(Kind::Int),
                    Val::Bool(_) => Meaning::Value(Kind::Bool),
                    Val::None => Meaning::Value(Kind::None),
                    Val::Ref(_) | Val::Opaque => Meaning::Unknown,
                })
            }
            Err(Stop::Refuse(r)) if r.module == 0 => Err(unproved(r)),
            Err(Stop::Refuse(r)) => Err(outside(r.why)),
            Err(Stop::Raise(_, 0, range)) => {
                Err(Unproved::at(range, Why::Interpreted(Refused::Raises)))
            }
            Err(Stop::Raise(..)) => Err(outside(Refused::Raises)),
        })
    }
}
