//! Class statements: a class is safe when its bases, keywords and decorators are known and its
//! body — which runs at import, in its own namespace — is safe, with the rules the standard
//! library enforces for each kind of class (each would raise at import otherwise):
//!
//! * dataclass: no field without a default after one with a default (unless `kw_only=True`),
//!   no unhashable (mutable) default, `field()` with `default` or `default_factory`, not both;
//!   `order=True` only with `eq`;
//! * NamedTuple: fields without `_` prefix, no default-less field after a default, none of
//!   the attributes it forbids overwriting;
//! * Enum: members named without `_sunder_` names, each name once, values of the enum's data
//!   type (`IntEnum`: int, `StrEnum`: str, or `auto()`), no `__new__`/`__init__`/
//!   `_generate_next_value_` of its own when it has members (they would run at import);
//!   `@unique` only with literal values that differ;
//! * TypedDict: only annotations (typing checks each is a type);
//! * Protocol: only protocols as bases;
//! * every class: at most one base that brings a layout (a builtin, an exception, a class of
//!   the module with such a base or `__slots__`) — or only exception bases whose layouts
//!   CPython combines ([`super::exceptions`]) —, plus `ABC`, `Generic[...]` and plain classes
//!   of the module whose MROs Python can merge ([`super::mro`]); no duplicate base;
//!   metaclass only `ABCMeta`; a standard-library base of the generated table
//!   ([`super::stdlib_classes`]: metaclass `type`/`ABCMeta`, `object`'s `__init_subclass__`,
//!   subclassable) with its whole MRO and solid bases, `typing` aliases as their
//!   `__mro_entries__` give them, `Generic` as its `__init_subclass__` accepts it;
//!   no base that is an enum with members or defines `__init_subclass__`; methods with
//!   allowlisted decorators ([`super::decorators`]) and safe defaults and annotations.
//!
//! Classes a proved sibling module exports are bases with the facts proved there (kind,
//! lineage, layout, `__init_subclass__`, what calling them runs); a base imported from a
//! sibling v2 does not prove, or from the same import cycle, stays unproved and is named so
//! ([`Why::BaseFromUnproved`]). What calling the class runs is decided here, once
//! ([`super::instances`]).

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;

use super::env::{ClassInfo, ClassKind, Kind, Meaning};
use super::instances::{self, Init};
use super::known::{self, BaseKind, EnumValues};
use super::mro::Lineage;
use super::{Prover, Unproved, Why, stdlib_classes};
use crate::readiness::stdlib::is_stdlib;

type Proof<T> = Result<T, Unproved>;

/// The record of a proven TypedDict (v1's proof).
pub fn typed_dict_info() -> ClassInfo {
    ClassInfo {
        kind: ClassKind::TypedDict,
        has_members: false,
        init_subclass: false,
        init: Init::Unknown,
        lineage: Lineage::default(),
        layout: true,
        variable_size: false,
        exception_solid: None,
        type_params: 0,
        wrappable: false,
    }
}

/// What the bases of a class say about it.
struct Bases {
    kind: ClassKind,
    enum_values: Option<EnumValues>,
    /// A base defines `__init_subclass__`.
    init_subclass: bool,
    /// The bases' lineages, in order ([`super::mro`]).
    lineages: Vec<Lineage>,
    /// A base brings an instance layout.
    layout: bool,
    /// The solid bases of the bases that bring a layout ([`super::exceptions`]).
    solids: Vec<Option<&'static str>>,
}

/// What the decorators ask of the body.
#[derive(Default)]
struct Decorated {
    dataclass: Option<Dataclass>,
    total_ordering: bool,
    unique: bool,
    runtime_checkable: bool,
}

#[derive(Default, Clone, Copy)]
struct Dataclass {
    kw_only: bool,
    slots: bool,
}

const NAMEDTUPLE_RESERVED: [&str; 10] = [
    "__new__",
    "__init__",
    "__slots__",
    "__getnewargs__",
    "_fields",
    "_field_defaults",
    "_make",
    "_replace",
    "_asdict",
    "_source",
];

/// What `functools.update_wrapper` reads of a class (besides `__name__`, which a class body
/// cannot rebind): a class body binding one of them may put a value there that a function's
/// setter refuses (`__annotations__ = 1`) or a descriptor whose `__get__` runs.
const WRAPPER_READS: [&str; 5] = [
    "__module__",
    "__qualname__",
    "__doc__",
    "__annotations__",
    "__dict__",
];

impl Prover<'_> {
    /// A class statement whose value is the class (not replaced by a decorator).
    pub fn class_def(&self, class: &ast::StmtClassDef) -> Proof<ClassInfo> {
        match self.class_statement(class)? {
            (Meaning::Class(info), _) => Ok(info),
            _ => Err(Unproved::at(class.name.range(), Why::Decorator)),
        }
    }

    /// The value the class statement binds (the class, or what the module's own decorators
    /// made of it, [`Self::decorated_class`]) and, for an undecorated class, the attributes
    /// whose reads through the class v2 knows run nothing, with the kind they give
    /// ([`BodyOutcome::members`]).
    pub fn class_statement(
        &self,
        class: &ast::StmtClassDef,
    ) -> Proof<(Meaning, Vec<(String, Kind)>)> {
        let (info, members) = self.proved_class(class)?;
        if self.local_class_decorators(class) == 0 {
            return Ok((Meaning::Class(info), members));
        }
        Ok((self.decorated_class(class, info)?, Vec::new()))
    }

    /// The proved class itself (before the module's own decorators run) and its members.
    fn proved_class(&self, class: &ast::StmtClassDef) -> Proof<(ClassInfo, Vec<(String, Kind)>)> {
        let decorated = self.class_decorators(class)?;
        let Bases {
            mut kind,
            enum_values,
            init_subclass: inherited_init_subclass,
            lineages,
            layout,
            solids,
        } = self.bases(class)?;
        let lineage = Lineage::of_class(
            self.module,
            class.name.as_str(),
            class.range().start().to_u32(),
            &lineages,
        )
        .ok_or(Unproved::at(class.name.range(), Why::Base))?;
        if decorated.dataclass.is_some() {
            if !matches!(kind, ClassKind::Plain) {
                return Err(Unproved::at(class.name.range(), Why::Decorator));
            }
            kind = ClassKind::Dataclass;
        }
        if decorated.runtime_checkable && kind != ClassKind::Protocol {
            return Err(Unproved::at(class.name.range(), Why::Decorator));
        }
        // A class body: the module's names plus the body's own.
        // A body that calls a local function keeps the module's names for it ([`super::pure`]).
        let globals = (!self.local.has_globals() && self.calls_local_function(class))
            .then(|| std::rc::Rc::new(self.env.clone()));
        let mut body = self.nested(self.local.in_class_body(globals));
        let outcome = body.class_body(class, kind, enum_values, &decorated)?;
        let init = self.class_init(class, kind, &outcome);
        let slots = self.slots(class, kind)?;
        let own_layout = slots
            || decorated.dataclass.is_some_and(|d| d.slots)
            || !matches!(
                kind,
                ClassKind::Plain | ClassKind::Protocol | ClassKind::Dataclass
            );
        let info = ClassInfo {
            kind,
            has_members: outcome.has_members,
            init_subclass: inherited_init_subclass || outcome.init_subclass,
            init,
            lineage,
            layout: layout || own_layout,
            variable_size: self.variable_size(class, kind),
            // Own `__slots__` may give the instances a layout of their own.
            exception_solid: match kind {
                ClassKind::Exception if !slots => super::exceptions::winner(&solids),
                _ => None,
            },
            type_params: self.type_params(class, {
                let mut names = Vec::new();
                super::stmt::collect_bound(&class.body, &mut names);
                names.contains(&"__class_getitem__")
            }),
            wrappable: matches!(
                kind,
                ClassKind::Plain | ClassKind::Exception | ClassKind::Dataclass
            ) && {
                let mut names = Vec::new();
                super::stmt::collect_bound(&class.body, &mut names);
                !names.iter().any(|n| WRAPPER_READS.contains(n))
            },
        };
        Ok((info, outcome.members))
    }

    /// The class statement's value once its decorators of the module's own code (or a proved
    /// sibling's, [`Prover::local_decoration`]) have run: the outermost decorators, applied
    /// bottom-up after the class exists (their factories ran before its body, in the
    /// environment of the statement, which is `self`'s); each must return a function or a
    /// class (Markdown's `@deprecated("…")` wrapping the class in a function with
    /// `functools.wraps`). The class itself when there is none.
    fn decorated_class(&self, class: &ast::StmtClassDef, info: ClassInfo) -> Proof<Meaning> {
        let local = self.local_class_decorators(class);
        let mut value = Meaning::Class(info);
        for decorator in class.decorator_list[..local].iter().rev() {
            let expr = &decorator.expression;
            value = match self.local_decoration(expr, value) {
                Some(Ok(meaning @ (Meaning::Function | Meaning::Class(_)))) => meaning,
                _ => return Err(Unproved::at(expr.range(), Why::Decorator)),
            };
        }
        Ok(value)
    }

    /// How many of the outermost decorators are the module's own code (the callee of the
    /// factory, or the decorator, is a local or a proved sibling's function).
    fn local_class_decorators(&self, class: &ast::StmtClassDef) -> usize {
        class
            .decorator_list
            .iter()
            .take_while(|d| {
                let callee = match &d.expression {
                    Expr::Call(call) => call.func.as_ref(),
                    other => other,
                };
                matches!(
                    self.value(callee),
                    Ok(Meaning::Pure(_) | Meaning::Foreign(_))
                )
            })
            .count()
    }

    fn class_decorators(&self, class: &ast::StmtClassDef) -> Proof<Decorated> {
        let mut out = Decorated::default();
        // The module's own decorators are applied last ([`Self::decorated_class`]).
        let local = self.local_class_decorators(class);
        for decorator in &class.decorator_list[local..] {
            let expr = &decorator.expression;
            let fail = || Err(Unproved::at(expr.range(), Why::Decorator));
            let (func, call) = match expr {
                Expr::Call(call) => (call.func.as_ref(), Some(call)),
                other => (other, None),
            };
            let Meaning::Qualified(q) = self.value(func)? else {
                return fail();
            };
            match (q.as_str(), call) {
                ("dataclasses.dataclass", None) => out.dataclass = Some(Dataclass::default()),
                ("dataclasses.dataclass", Some(call)) => {
                    let mut options = Dataclass::default();
                    let (mut eq, mut order) = (true, false);
                    if !call.arguments.args.is_empty() {
                        return fail();
                    }
                    for keyword in &call.arguments.keywords {
                        let (Some(name), Expr::BooleanLiteral(value)) =
                            (&keyword.arg, &keyword.value)
                        else {
                            return fail();
                        };
                        match name.as_str() {
                            "kw_only" => options.kw_only = value.value,
                            "slots" => options.slots = value.value,
                            "eq" => eq = value.value,
                            "order" => order = value.value,
                            "init" | "repr" | "unsafe_hash" | "frozen" | "match_args" => {}
                            _ => return fail(),
                        }
                    }
                    if order && !eq {
                        return fail();
                    }
                    out.dataclass = Some(options);
                }
                ("functools.total_ordering", None) => out.total_ordering = true,
                ("enum.unique", None) => out.unique = true,
                ("typing.final", None) => {}
                ("typing.runtime_checkable", None) => out.runtime_checkable = true,
                _ => return fail(),
            }
        }
        Ok(out)
    }

    /// The class's kind from its bases and keywords; the values its enum members take; whether
    /// a base defines `__init_subclass__`.
    fn bases(&self, class: &ast::StmtClassDef) -> Proof<Bases> {
        let Some(arguments) = &class.arguments else {
            return Ok(Bases {
                kind: ClassKind::Plain,
                enum_values: None,
                init_subclass: false,
                lineages: Vec::new(),
                layout: false,
                solids: Vec::new(),
            });
        };
        let mut lineages = Vec::new();
        for keyword in &arguments.keywords {
            let ok = match keyword.arg.as_ref().map(|a| a.as_str()) {
                Some("metaclass") => {
                    self.value(&keyword.value)? == Meaning::Qualified("abc.ABCMeta".into())
                }
                Some("total") => matches!(keyword.value, Expr::BooleanLiteral(_)),
                _ => false,
            };
            if !ok {
                return Err(Unproved::at(keyword.range(), Why::ClassKeyword));
            }
        }
        // A base named twice (`class C(A, A)`, `TypeError` in CPython) fails the MRO merge
        // ([`super::mro`]), which names the class.
        let (mut layout, mut kinds) = (0, Vec::new());
        let mut solids = Vec::new();
        let mut init_subclass = false;
        let mut enum_data: Option<EnumValues> = None;
        self.generic_bases(&arguments.args)?;
        for (index, base) in arguments.args.iter().enumerate() {
            let fail = || Err(Unproved::at(base.range(), Why::Base));
            let meaning = match (self.value(base)?, base) {
                // `C[T]` of a generic class v2 recorded is `C` ([`super::generics`]).
                (Meaning::TypeLike, Expr::Subscript(sub))
                    if let Ok(Meaning::Class(info)) = self.value(&sub.value)
                        && info.type_params > 0 =>
                {
                    Meaning::Class(info)
                }
                (meaning, _) => meaning,
            };
            // A standard-library class of the generated table, or a `typing` alias standing
            // for one ([`super::stdlib_classes`]).
            let table = match (&meaning, base) {
                (Meaning::Qualified(q), _) if known::base(q).is_none() => {
                    stdlib_classes::class(q).or_else(|| stdlib_classes::alias_origin(q))
                }
                (Meaning::TypeLike, Expr::Subscript(sub)) => match self.value(&sub.value)? {
                    Meaning::Qualified(q) => stdlib_classes::alias_origin(&q),
                    _ => None,
                },
                _ => None,
            };
            if let Some(table) = table {
                let Some(mut lineage) = Lineage::table(table) else {
                    return fail();
                };
                // An alias's `__mro_entries__` adds `Generic` unless a later base is generic.
                if self.is_alias(base) && !self.generic_after(&arguments.args[index + 1..]) {
                    lineages.push(lineage);
                    lineage = Lineage::stdlib("typing.Generic");
                }
                lineages.push(lineage);
                if !table.solid.is_empty() {
                    layout += 1;
                    solids.push(
                        table
                            .is_exception()
                            .then(|| table.solid[0].trim_start_matches("builtins.")),
                    );
                }
                kinds.push(if table.is_exception() {
                    BaseKind::Exception
                } else {
                    BaseKind::Builtin
                });
                continue;
            }
            let base_kind = match (&meaning, base) {
                (Meaning::TypeLike, Expr::Subscript(sub)) => match self.value(&sub.value)? {
                    Meaning::Qualified(q) if q == "typing.Generic" => {
                        // `__mro_entries__` gives nothing when a later base is an alias.
                        if !self.alias_after(&arguments.args[index + 1..]) {
                            lineages.push(Lineage::stdlib(&q));
                        }
                        BaseKind::Generic
                    }
                    Meaning::Qualified(q) if q == "typing.Protocol" => {
                        lineages.push(Lineage::stdlib(&q));
                        BaseKind::Protocol
                    }
                    _ => return fail(),
                },
                // `class C(Generic)`: `TypeError: Cannot inherit from plain Generic`.
                (Meaning::Qualified(q), _) if q == "typing.Generic" => return fail(),
                (Meaning::Qualified(q), _) => match known::base(q) {
                    Some(kind) => {
                        if kind != BaseKind::Object {
                            lineages.push(Lineage::stdlib(q));
                        }
                        kind
                    }
                    None => return fail(),
                },
                (Meaning::Class(info), _) => {
                    if info.init_subclass && !init_subclass {
                        return Err(Unproved::at(base.range(), Why::SubclassHook));
                    }
                    if info.has_members {
                        return fail();
                    }
                    init_subclass |= info.init_subclass;
                    lineages.push(info.lineage);
                    // A plain class of the module brings no layout of its own: several
                    // combine when their MROs do ([`super::mro`]).
                    if info.layout {
                        layout += 1;
                        solids.push(info.exception_solid);
                    }
                    kinds.push(match info.kind {
                        ClassKind::Enum => BaseKind::Enum(EnumValues::Any),
                        ClassKind::TypedDict => BaseKind::TypedDict,
                        ClassKind::Protocol => BaseKind::Protocol,
                        ClassKind::Exception => BaseKind::Exception,
                        _ => BaseKind::Builtin,
                    });
                    continue;
                }
                (Meaning::Unknown, Expr::Name(name))
                    if self
                        .package
                        .is_some_and(|p| p.imports_local_name(name.id.as_str())) =>
                {
                    return Err(Unproved::at(base.range(), Why::BaseFromUnproved));
                }
                _ => return fail(),
            };
            match base_kind {
                BaseKind::Builtin | BaseKind::Exception => {
                    layout += 1;
                    solids.push(match &meaning {
                        Meaning::Qualified(q) => q
                            .strip_prefix("builtins.")
                            .and_then(super::exceptions::solid),
                        _ => None,
                    });
                    if base_kind == BaseKind::Builtin
                        && let Meaning::Qualified(q) = &meaning
                    {
                        enum_data = match q.as_str() {
                            "builtins.int" => Some(EnumValues::Int),
                            "builtins.str" => Some(EnumValues::Str),
                            _ => None,
                        };
                    }
                }
                BaseKind::Object if arguments.args.len() > 1 => return fail(),
                _ => {}
            }
            kinds.push(base_kind);
        }
        let has = |wanted: fn(&BaseKind) -> bool| kinds.iter().any(wanted);
        let only = |allowed: fn(&BaseKind) -> bool| kinds.iter().all(allowed);
        let whole = || Err(Unproved::at(class.name.range(), Why::Base));
        let kind = if has(|k| matches!(k, BaseKind::Enum(_))) {
            let enum_values = kinds.iter().find_map(|k| match k {
                BaseKind::Enum(v) => Some(*v),
                _ => None,
            });
            // `class E(str, Enum)`: the data type first, then one enum base.
            let values = match (enum_data, enum_values) {
                (Some(data), Some(EnumValues::Any)) if kinds.len() == 2 && !matches!(kinds[0], BaseKind::Enum(_)) => data,
                (None, Some(values)) if kinds.len() == 1 => values,
                _ => return whole(),
            };
            return Ok(Bases {
                kind: ClassKind::Enum,
                enum_values: Some(values),
                init_subclass,
                lineages,
                layout: true,
                solids,
            });
        } else if has(|k| *k == BaseKind::NamedTuple) {
            if !only(|k| matches!(k, BaseKind::NamedTuple | BaseKind::Generic)) || kinds.iter().filter(|k| **k == BaseKind::NamedTuple).count() != 1 {
                return whole();
            }
            ClassKind::NamedTuple
        } else if has(|k| *k == BaseKind::TypedDict) {
            if !only(|k| matches!(k, BaseKind::TypedDict | BaseKind::Generic)) {
                return whole();
            }
            ClassKind::TypedDict
        } else if arguments.args.iter().any(|b| self.value(b) == Ok(Meaning::Qualified("typing.Protocol".into())) || matches!(b, Expr::Subscript(s) if self.value(&s.value) == Ok(Meaning::Qualified("typing.Protocol".into())))) {
            if !only(|k| matches!(k, BaseKind::Protocol | BaseKind::Generic)) {
                return whole();
            }
            ClassKind::Protocol
        } else {
            // Several layouts: only exception bases CPython can lay out together.
            if layout > 1 && !super::exceptions::compatible(&solids) {
                return whole();
            }
            if has(|k| *k == BaseKind::Exception) {
                ClassKind::Exception
            } else {
                ClassKind::Plain
            }
        };
        if arguments
            .keywords
            .iter()
            .any(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == "total"))
            && kind != ClassKind::TypedDict
        {
            return whole();
        }
        Ok(Bases {
            kind,
            enum_values: None,
            init_subclass,
            lineages,
            layout: layout > 0,
            solids,
        })
    }
}

impl Prover<'_> {
    /// What calling the class runs ([`instances`]), from its kind, bases and body.
    fn class_init(&self, class: &ast::StmtClassDef, kind: ClassKind, body: &BodyOutcome) -> Init {
        let mut bound = Vec::new();
        super::stmt::collect_bound(&class.body, &mut bound);
        if instances::runs_code_when_stored(&bound) {
            return Init::Unknown;
        }
        if kind == ClassKind::NamedTuple {
            let fields: Vec<(&str, bool)> =
                body.fields.iter().map(|(n, d)| (n.as_str(), *d)).collect();
            return instances::fields(&fields).map_or(Init::Unknown, Init::Fields);
        }
        let (args, keywords) = match &class.arguments {
            Some(arguments) => (&arguments.args[..], &arguments.keywords[..]),
            None => (&[][..], &[][..]),
        };
        if kind != ClassKind::Plain || !keywords.is_empty() {
            return Init::Unknown;
        }
        let bases: Vec<Option<Meaning>> = args.iter().map(|b| self.value(b).ok()).collect();
        let qualified =
            |m: &Option<Meaning>, name: &str| matches!(m, Some(Meaning::Qualified(q)) if q == name);
        if !body.lifecycle {
            let plain = bases.iter().all(|m| {
                qualified(m, "builtins.object")
                    || matches!(m, Some(Meaning::Class(info)) if info.init == Init::Object)
            });
            return if plain { Init::Object } else { Init::Unknown };
        }
        let simple = match bases.as_slice() {
            [] => true,
            [base] => qualified(base, "builtins.object") || qualified(base, "builtins.dict"),
            _ => false,
        };
        let init = class.body.iter().find_map(|stmt| match stmt {
            Stmt::FunctionDef(def) if def.name.as_str() == "__init__" => Some(def),
            _ => None,
        });
        match init {
            Some(def) if simple => instances::stores_init(class, def, &bound).unwrap_or_default(),
            _ => Init::Unknown,
        }
    }
}

#[derive(Default)]
struct BodyOutcome {
    has_members: bool,
    /// An enum's members whose value is a builtin value or `auto()` (a value with `__get__`,
    /// an instance of some class, would be a descriptor that reading the name runs), when the
    /// enum defines no dunder method; a plain or exception class's data attributes
    /// ([`Prover::data_attributes`]). With the kind of value reading them gives.
    members: Vec<(String, Kind)>,
    init_subclass: bool,
    /// The body binds `__new__`, `__init__` or `__del__` (code that instantiating runs).
    lifecycle: bool,
    /// A named tuple's fields in order, and whether each has a default.
    fields: Vec<(String, bool)>,
}

/// Names whose binding in a class body makes `C()` (or dropping the instance) run its code.
fn is_lifecycle(name: &str) -> bool {
    matches!(name, "__new__" | "__init__" | "__del__")
}

impl Prover<'_> {
    fn class_body(
        &mut self,
        class: &ast::StmtClassDef,
        kind: ClassKind,
        enum_values: Option<EnumValues>,
        decorated: &Decorated,
    ) -> Proof<BodyOutcome> {
        let mut out = BodyOutcome::default();
        let mut properties: Vec<String> = Vec::new();
        let mut defined: Vec<&str> = Vec::new();
        let mut members: Vec<(&str, &Expr)> = Vec::new();
        let mut seen_default = false;
        // Names the body itself has bound so far (a `del` of another name raises `NameError`:
        // the class namespace holds only these).
        let mut bound_here: Vec<&str> = Vec::new();
        for stmt in &class.body {
            let fail = |why| Err(Unproved::at(stmt.range(), why));
            let mut names = Vec::new();
            super::stmt::collect_bound(std::slice::from_ref(stmt), &mut names);
            out.lifecycle |= names.iter().any(|n| is_lifecycle(n));
            match stmt {
                Stmt::Pass(_) => {}
                // `import json` in a plain class body (werkzeug's `EnvironBuilder`): a standard
                // library module bound as a class attribute, proved like a module-level import.
                Stmt::Import(node)
                    if kind == ClassKind::Plain
                        && node.names.iter().all(|a| {
                            let module = a.name.as_str();
                            is_stdlib(module.split('.').next().unwrap_or(module))
                        }) =>
                {
                    self.import_statement(node)?;
                }
                // `del json` of a name this body bound: removes it from the class namespace.
                Stmt::Delete(node)
                    if kind == ClassKind::Plain
                        && node.targets.iter().all(
                            |t| matches!(t, Expr::Name(n) if bound_here.contains(&n.id.as_str())),
                        ) =>
                {
                    for target in &node.targets {
                        if let Expr::Name(name) = target {
                            self.env.unbind(name.id.as_str());
                        }
                    }
                    bound_here.retain(|b| {
                        !node
                            .targets
                            .iter()
                            .any(|t| matches!(t, Expr::Name(n) if n.id.as_str() == *b))
                    });
                    continue;
                }
                Stmt::Expr(e)
                    if matches!(
                        e.value.as_ref(),
                        Expr::StringLiteral(_) | Expr::EllipsisLiteral(_)
                    ) => {}
                Stmt::AnnAssign(a) => {
                    let Expr::Name(name) = a.target.as_ref() else {
                        return fail(Why::Target);
                    };
                    let name = name.id.as_str();
                    match kind {
                        ClassKind::TypedDict | ClassKind::NamedTuple
                            if !self.future_annotations =>
                        {
                            self.type_expr(&a.annotation)?
                        }
                        _ => self.annotation(&a.annotation)?,
                    }
                    let class_var = is_class_var(&a.annotation);
                    match (kind, &a.value) {
                        (ClassKind::TypedDict, Some(_)) => return fail(Why::ClassBody),
                        (ClassKind::NamedTuple | ClassKind::Dataclass, _) if !class_var => {
                            if kind == ClassKind::NamedTuple
                                && (name.starts_with('_') || NAMEDTUPLE_RESERVED.contains(&name))
                            {
                                return fail(Why::ClassBody);
                            }
                            let kw_only = decorated.dataclass.is_some_and(|d| d.kw_only);
                            match &a.value {
                                Some(value) => {
                                    let has_default = if kind == ClassKind::Dataclass {
                                        self.dataclass_default(value)?
                                    } else {
                                        self.value(value).map(|_| true)?
                                    };
                                    if !has_default && seen_default && !kw_only {
                                        return fail(Why::FieldOrder);
                                    }
                                    seen_default |= has_default;
                                    out.fields.push((name.to_string(), has_default));
                                }
                                None if seen_default && !kw_only => return fail(Why::FieldOrder),
                                None => out.fields.push((name.to_string(), false)),
                            }
                        }
                        (ClassKind::Enum, Some(value)) => members.push((name, value)),
                        (_, Some(value)) => {
                            let meaning = self.value(value)?;
                            self.bind_value(name, value, meaning);
                        }
                        (_, None) => {}
                    }
                }
                // `D[k] = v` of a dict the module or this body built ([`super::dicts`]).
                Stmt::Assign(a)
                    if kind == ClassKind::Plain
                        && let [target] = a.targets.as_slice()
                        && let Some(store) = self.dict_item_store(target) =>
                {
                    self.value(&a.value)?;
                    store?;
                }
                Stmt::Assign(a) if kind != ClassKind::TypedDict => {
                    let [Expr::Name(target)] = a.targets.as_slice() else {
                        return fail(Why::Target);
                    };
                    let name = target.id.as_str();
                    if kind == ClassKind::NamedTuple && NAMEDTUPLE_RESERVED.contains(&name)
                        || name == "__slots__" && decorated.dataclass.is_some_and(|d| d.slots)
                    {
                        return fail(Why::ClassBody);
                    }
                    if kind == ClassKind::Enum && !is_dunder(name) {
                        members.push((name, &a.value));
                        continue;
                    }
                    let meaning = self.value(&a.value)?;
                    self.bind_value(name, &a.value, meaning);
                }
                Stmt::FunctionDef(def) if kind != ClassKind::TypedDict => {
                    let name = def.name.as_str();
                    if kind == ClassKind::NamedTuple && NAMEDTUPLE_RESERVED.contains(&name) {
                        return fail(Why::ClassBody);
                    }
                    self.def_decorators(&def.decorator_list, Some(&properties))?;
                    self.signature(def)?;
                    let is_property = def.decorator_list.iter().any(|d| matches!(self.value(&d.expression), Ok(Meaning::Qualified(q)) if q == "builtins.property" || q == "functools.cached_property"));
                    if is_property {
                        properties.push(name.to_string());
                    }
                    out.init_subclass |= name == "__init_subclass__";
                    defined.push(name);
                    self.env.bind(name, Meaning::Function);
                }
                Stmt::ClassDef(nested)
                    if !matches!(kind, ClassKind::TypedDict | ClassKind::Enum) =>
                {
                    let info = self.class_def(nested)?;
                    self.env.bind(nested.name.as_str(), Meaning::Class(info));
                }
                _ => return fail(Why::ClassBody),
            }
            bound_here.extend(names);
        }
        if decorated.total_ordering
            && !defined
                .iter()
                .any(|d| matches!(*d, "__lt__" | "__le__" | "__gt__" | "__ge__"))
        {
            return Err(Unproved::at(class.name.range(), Why::Decorator));
        }
        if kind == ClassKind::Enum {
            self.enum_members(
                class,
                &members,
                &defined,
                enum_values.unwrap_or(EnumValues::Any),
                decorated.unique,
            )?;
            out.has_members = !members.is_empty();
            // Members are hashed, compared and tested by v2 as stdlib objects: not when the
            // enum defines a dunder method (`__eq__`, `__hash__`, `__bool__`, ...).
            let dunders = defined.iter().any(|d| is_dunder(d));
            out.members = members
                .iter()
                .filter(|_| !dunders)
                .filter(|(_, value)| {
                    self.is_auto(value)
                        || matches!(self.value(value), Ok(Meaning::Value(k)) if !matches!(k, Kind::Other | Kind::Object))
                })
                .map(|(name, _)| (name.to_string(), Kind::Object))
                .collect();
        }
        if matches!(kind, ClassKind::Plain | ClassKind::Exception) {
            out.members = self.data_attributes(&bound_here);
        }
        Ok(out)
    }

    /// A direct assignment of the class body calls a local function of the module by name
    /// (`x = _make("x")`): a cheap test, so that only such bodies copy the module's names.
    fn calls_local_function(&self, class: &ast::StmtClassDef) -> bool {
        class.body.iter().any(|stmt| {
            let value = match stmt {
                Stmt::Assign(a) => Some(a.value.as_ref()),
                Stmt::AnnAssign(a) => a.value.as_deref(),
                _ => None,
            };
            matches!(value, Some(Expr::Call(call))
                if matches!(call.func.as_ref(), Expr::Name(n)
                    if matches!(self.env.lookup(n.id.as_str()), Some(Meaning::Pure(_)))))
        })
    }

    /// A plain or exception class's own attributes whose read through the class gives the
    /// value its body bound (`BadRequest.description`), neither dunder nor private (`__x`,
    /// stored as `_C__x`): `type.__getattribute__` (the
    /// metaclass of every class v2 proves is `type` or `ABCMeta`) first looks for a data
    /// descriptor of that name on the metaclass — only dunder names there, and `mro` a
    /// method —, then in the class's MRO, where the class's own namespace comes first; a
    /// value of a builtin data kind (a str, int, tuple, list, dict, ...) has no `__get__`, so
    /// the read returns it. Names the body bound last to such a value, not deleted; a class
    /// decorator v2 proves returns the class itself; nothing v2 proves stores into a class
    /// attribute afterwards (only `__module__`/`__doc__`).
    fn data_attributes(&self, bound_here: &[&str]) -> Vec<(String, Kind)> {
        let mut out: Vec<(String, Kind)> = Vec::new();
        for name in bound_here {
            // `__x` is stored mangled (`_C__x`): `C.__x` outside the body raises.
            if name.starts_with("__") || *name == "mro" || out.iter().any(|(n, _)| n == name) {
                continue;
            }
            if let Some(Meaning::Value(kind)) = self.env.lookup(name)
                && !matches!(kind, Kind::Other | Kind::Object)
            {
                out.push((name.to_string(), kind));
            }
        }
        out
    }

    /// A dataclass field's default: `field(...)` or a hashable value; whether it gives the
    /// field a default (`field(repr=False)` does not).
    fn dataclass_default(&self, value: &Expr) -> Proof<bool> {
        let fail = |why| Err(Unproved::at(value.range(), why));
        if let Expr::Call(call) = value
            && self.value(&call.func)? == Meaning::Qualified("dataclasses.field".into())
        {
            if !call.arguments.args.is_empty() {
                return fail(Why::Arguments);
            }
            let mut defaults = 0;
            for keyword in &call.arguments.keywords {
                let Some(name) = &keyword.arg else {
                    return fail(Why::Arguments);
                };
                match name.as_str() {
                    "default" => {
                        defaults += 1;
                        self.hashable_default(&keyword.value)?;
                    }
                    "default_factory" => {
                        defaults += 1;
                        match self.value(&keyword.value)? {
                            Meaning::Qualified(q) if q.starts_with("builtins.") => {}
                            Meaning::Function
                            | Meaning::Pure(_)
                            | Meaning::Foreign(_)
                            | Meaning::Class(_)
                            | Meaning::Value(Kind::Other) => {}
                            _ => return Err(Unproved::at(keyword.value.range(), Why::Arguments)),
                        }
                    }
                    "init" | "repr" | "hash" | "compare" | "kw_only"
                        if matches!(
                            keyword.value,
                            Expr::BooleanLiteral(_) | Expr::NoneLiteral(_)
                        ) => {}
                    "metadata" => {
                        self.value(&keyword.value)?;
                    }
                    _ => return fail(Why::Arguments),
                }
            }
            return if defaults <= 1 {
                Ok(defaults == 1)
            } else {
                fail(Why::Arguments)
            };
        }
        self.hashable_default(value).map(|()| true)
    }

    /// dataclasses refuse a default whose type is unhashable (`ValueError: mutable default`).
    fn hashable_default(&self, value: &Expr) -> Proof<()> {
        match self.value(value)? {
            Meaning::Value(kind) if kind.hashable() => Ok(()),
            Meaning::Qualified(_)
            | Meaning::Class(_)
            | Meaning::Function
            | Meaning::Pure(_)
            | Meaning::Foreign(_)
            | Meaning::TypeLike
            | Meaning::TypeVar => Ok(()),
            _ => Err(Unproved::at(value.range(), Why::MutableDefault)),
        }
    }

    /// `enum.auto()`.
    fn is_auto(&self, value: &Expr) -> bool {
        matches!(value, Expr::Call(c) if c.arguments.is_empty() && self.value(&c.func) == Ok(Meaning::Qualified("enum.auto".into())))
    }

    fn enum_members(
        &self,
        class: &ast::StmtClassDef,
        members: &[(&str, &Expr)],
        defined: &[&str],
        values: EnumValues,
        unique: bool,
    ) -> Proof<()> {
        if !members.is_empty()
            && defined
                .iter()
                .any(|d| matches!(*d, "__new__" | "__init__" | "_generate_next_value_"))
        {
            return Err(Unproved::at(class.name.range(), Why::EnumMember));
        }
        let mut names: Vec<&str> = Vec::new();
        let mut literals: Vec<String> = Vec::new();
        for (name, value) in members {
            let fail = || Err(Unproved::at(value.range(), Why::EnumMember));
            if is_sunder(name) || names.contains(name) || defined.contains(name) || *name == "mro" {
                return fail();
            }
            names.push(name);
            let is_auto = self.is_auto(value);
            let kind = if is_auto {
                None
            } else {
                match self.value(value)? {
                    Meaning::Value(kind) => Some(kind),
                    _ => return fail(),
                }
            };
            let fits = match (values, kind) {
                (_, None) => true,
                (EnumValues::Int, Some(k)) => k == Kind::Int,
                (EnumValues::Str, Some(k)) => k == Kind::Str,
                // `EnumType` hashes each value and compares it with the earlier ones (aliases):
                // an instance of some class would run its `__hash__`/`__eq__`.
                (EnumValues::Any, Some(k)) => k != Kind::Other,
            };
            if !fits {
                return fail();
            }
            if unique && !is_auto {
                let literal = match value {
                    Expr::StringLiteral(s) => format!("s{}", s.value.to_str()),
                    Expr::NumberLiteral(ast::ExprNumberLiteral {
                        value: ast::Number::Int(i),
                        ..
                    }) => format!("i{i}"),
                    _ => return fail(),
                };
                if literals.contains(&literal) {
                    return fail();
                }
                literals.push(literal);
            }
        }
        Ok(())
    }
}

fn is_class_var(annotation: &Expr) -> bool {
    let head = match annotation {
        Expr::Subscript(s) => s.value.as_ref(),
        other => other,
    };
    match head {
        Expr::Name(n) => n.id.as_str() == "ClassVar",
        Expr::Attribute(a) => a.attr.as_str() == "ClassVar",
        Expr::StringLiteral(s) => s.value.to_str().contains("ClassVar"),
        _ => false,
    }
}

fn is_dunder(name: &str) -> bool {
    name.len() > 4 && name.starts_with("__") && name.ends_with("__")
}

fn is_sunder(name: &str) -> bool {
    name.len() > 2 && name.starts_with('_') && name.ends_with('_') && !is_dunder(name)
}

impl Prover<'_> {
    /// A `typing` alias standing for a stdlib class (`typing.MutableMapping[str, str]`, or
    /// unsubscripted): a `_BaseGenericAlias` whose `__mro_entries__` gives its origin.
    fn is_alias(&self, base: &Expr) -> bool {
        let head = match base {
            Expr::Subscript(sub) => sub.value.as_ref(),
            other => other,
        };
        matches!(self.value(head), Ok(Meaning::Qualified(q)) if stdlib_classes::alias_origin(&q).is_some())
    }

    /// One of `bases` is a `_BaseGenericAlias` (a subscripted `typing` generic or an alias):
    /// a `Generic[...]` before it gives no base of its own.
    fn alias_after(&self, bases: &[Expr]) -> bool {
        // Every subscripted base v2 accepts is one (typing generics and aliases, the
        // module's generic classes subscripted); `list[int]` is refused as a base anyway.
        bases
            .iter()
            .any(|b| self.is_alias(b) || matches!(b, Expr::Subscript(_)))
    }

    /// One of `bases` is an alias or a subclass of `Generic`: an alias before it adds no
    /// `Generic` (typing's `_BaseGenericAlias.__mro_entries__`).
    fn generic_after(&self, bases: &[Expr]) -> bool {
        self.alias_after(bases)
            || bases.iter().any(|b| match self.value(b) {
                Ok(Meaning::Class(info)) => info.lineage.has_generic(),
                Ok(Meaning::Qualified(q)) => {
                    matches!(q.as_str(), "typing.Generic" | "typing.Protocol")
                }
                _ => false,
            })
    }

    /// `Generic.__init_subclass__` when the bases subscript typing generics: at most one
    /// `Generic[...]` (`Cannot inherit from Generic[...] multiple times`), and with one,
    /// every type variable of the other subscripted bases listed in it (`Some type variables
    /// ... are not listed in Generic[...]`). Type variables are compared by name: the same
    /// name in one statement is the same object; different names may not be (refused).
    fn generic_bases(&self, bases: &[Expr]) -> Proof<()> {
        let is_generic = |b: &Expr| matches!(b, Expr::Subscript(s) if matches!(self.value(&s.value), Ok(Meaning::Qualified(q)) if q == "typing.Generic"));
        let generics: Vec<&Expr> = bases.iter().filter(|b| is_generic(b)).collect();
        let [generic] = generics.as_slice() else {
            return match generics.get(1) {
                Some(second) => Err(Unproved::at(second.range(), Why::Base)),
                None => Ok(()),
            };
        };
        let mut listed = Vec::new();
        self.type_variables(generic, &mut listed);
        for base in bases.iter().filter(|b| !is_generic(b)) {
            let mut used = Vec::new();
            self.type_variables(base, &mut used);
            if let Some(missing) = used
                .iter()
                .find(|(name, _)| !listed.iter().any(|(l, _)| l == name))
            {
                return Err(Unproved::at(missing.1, Why::NotATypeVar));
            }
        }
        Ok(())
    }

    /// The names bound to type variables in a subscripted base, with their ranges.
    fn type_variables(&self, expr: &Expr, out: &mut Vec<(String, ruff_text_size::TextRange)>) {
        match expr {
            Expr::Subscript(sub) => self.type_variables(&sub.slice, out),
            Expr::Tuple(t) => t.elts.iter().for_each(|e| self.type_variables(e, out)),
            Expr::List(l) => l.elts.iter().for_each(|e| self.type_variables(e, out)),
            Expr::Name(n) if self.value(expr) == Ok(Meaning::TypeVar) => {
                out.push((n.id.to_string(), n.range()));
            }
            // Anything else inside the subscript (`t.T`, a string) that may name one.
            Expr::Attribute(a) if self.value(expr) == Ok(Meaning::TypeVar) => {
                out.push((format!("?{}", a.attr), a.range()));
            }
            _ => {}
        }
    }
}
