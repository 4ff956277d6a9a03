//! Readiness v2 input classes: `Enum` subclasses, `@dataclass` classes and `NamedTuple`
//! classes of the inspected module as JSON values with exact schemas.
//!
//! The rule: a class is usable as a parameter or return type when its JSON form and its
//! construction are both known from the source alone —
//!
//! * an `Enum` (`Enum`, `IntEnum`, `StrEnum`, optionally mixed with `str`/`int`) whose members
//!   are `NAME = <JSON scalar literal>`: a `literal` of the member values, converted in the
//!   worker by value (`C(value)`), returned by value;
//! * a `@dataclass` (plain or with keyword options other than `init`) without bases or with
//!   one proved dataclass of the module as base ([`inherited`]), or a `class C(NamedTuple)`:
//!   a closed `object` of its annotated fields (a field with a default,
//!   `field(default=...)` or `field(default_factory=...)` is optional), converted in the worker
//!   with `C(**fields)`, returned as an object of its fields.
//!
//! A member `NAME = auto()` has the value the worker's stdlib gives it where that is fixed
//! ([`auto`]): lower-cased names for `StrEnum`, 1, 2, ... for int enums.
//!
//! Why so narrow: the worker builds instances from the JSON the server validated, so the
//! schema must be exactly what the constructor accepts. Other inherited fields, `init=False`
//! fields, `InitVar`, other `auto()` values, decorators that could change `__init__`, or a class
//! bound more than once are refused with the reason (a READY-013 of the parameter names it).
//! Every field type must itself lower to a precise JSON type (READY-007 "any" allowed, as
//! for TypedDict fields); classes and TypedDicts declared earlier in the module may nest.
//!
//! Only readiness v2 builds these candidates: under v1 the same annotations keep READY-013.

use std::collections::HashSet;

use apizr_ir::{ObjectField, PythonClass, PythonClassKind, ReasonCode, TypeKind, TypeSpec, Value};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::TextRange;

use super::inputs::Context;
use super::lower::{MAX_DEPTH, MAX_NODES, literal_value, shape_size};
use super::typeddict;
use crate::facts::{BindingKind, ModuleFacts, View};
use crate::module::ParsedModule;
use crate::package::PackageIndex;

/// One class of the module that v2 may use as an input type, with its lowered shape or why
/// not.
#[derive(Debug, Clone)]
pub struct ClassCandidate {
    pub name: String,
    pub line: u32,
    pub outcome: Result<TypeSpec, String>,
}

/// What readiness v2 adds to the classifier: the module's classes and type aliases, each
/// with the line it is bound at (a function sees those declared before its `def`).
#[derive(Debug, Clone, Default)]
pub struct V2Types {
    pub classes: Vec<ClassCandidate>,
    pub aliases: Vec<super::aliases::AliasCandidate>,
    /// Import statements under `if TYPE_CHECKING:` that bind a class of another module of the
    /// package ([`super::imported`]): the worker imports that module to build instances, so
    /// the statement is judged as a call-time import, never excused.
    pub worker_imports: HashSet<TextRange>,
    /// Built under readiness v2 (the classifier's v2-only types apply; see `inputs::Context`).
    pub enabled: bool,
}

/// Every Enum, dataclass and NamedTuple class statement and every type alias of the module,
/// in source order: each is lowered with what was declared before it.
pub fn prove_all(
    parsed: &ParsedModule,
    facts: &ModuleFacts,
    typed_dicts: &[typeddict::Candidate],
) -> V2Types {
    prove_all_in(parsed, facts, typed_dicts, None)
}

/// [`prove_all`] for a module of a package directory: names imported from the package's own
/// modules are their classes, TypedDicts and aliases ([`super::imported`]).
pub fn prove_in_package(
    parsed: &ParsedModule,
    facts: &ModuleFacts,
    typed_dicts: &[typeddict::Candidate],
    index: Option<&PackageIndex>,
) -> V2Types {
    let Some(index) = index else {
        return prove_all(parsed, facts, typed_dicts);
    };
    let wanted = super::imported::annotation_names(facts);
    let imported = super::imported::Imported::new(index);
    prove_all_in(parsed, facts, typed_dicts, Some((&imported, &wanted)))
}

/// [`prove_all`], following imports of the names `imported` wants.
pub fn prove_all_in(
    parsed: &ParsedModule,
    facts: &ModuleFacts,
    typed_dicts: &[typeddict::Candidate],
    imported: Option<(&super::imported::Imported, &HashSet<String>)>,
) -> V2Types {
    let mut out = V2Types {
        enabled: true,
        ..V2Types::default()
    };
    let resolved = imported
        .map(|(i, _)| i.index.imports_in(parsed))
        .unwrap_or_default();
    for (_, statement) in facts.statements() {
        let line = statement.line;
        if let Some((imported, wanted)) = imported
            && let Stmt::ImportFrom(_) = statement.node
        {
            let args = (imported, parsed, facts, resolved.as_slice());
            super::imported::candidates(args, statement, wanted, &mut out);
            continue;
        }
        if let Some(alias) = super::aliases::alias(facts, statement) {
            let ctx = super::outputs::context_at(facts, typed_dicts, &out, line);
            let candidate = super::aliases::lowered(&ctx, alias, line);
            out.aliases.push(candidate);
            continue;
        }
        let Stmt::ClassDef(class) = statement.node else {
            continue;
        };
        let Some(kind) = class_kind(facts, class) else {
            continue;
        };
        let outcome = if !statement.is_direct() {
            Err("the class must be defined unconditionally at module level".into())
        } else {
            let ctx = super::outputs::context_at(facts, typed_dicts, &out, line);
            prove(&ctx, &parsed.module, class, kind)
        };
        out.classes.push(ClassCandidate {
            name: class.name.to_string(),
            line,
            outcome,
        });
    }
    out
}

/// `name` is bound once, unconditionally, by an import accepted by `accept`.
pub fn imported(facts: &ModuleFacts, name: &str, accept: impl Fn(&BindingKind) -> bool) -> bool {
    !facts.is_mutated(name)
        && facts
            .unique_binding(name, View::Namespace)
            .is_some_and(|(_, b)| facts.is_direct(b) && accept(&b.kind))
}

/// `expr` names `module.wanted` (`from module import wanted` or `import module`).
pub fn is_stdlib(
    facts: &ModuleFacts,
    expr: &Expr,
    module: &str,
    wanted: &[&str],
) -> Option<String> {
    match expr {
        Expr::Name(n) => wanted
            .iter()
            .find(|w| imported(facts, n.id.as_str(), |k| k.is_from_import(module, w)))
            .map(|w| w.to_string()),
        Expr::Attribute(a) => match a.value.as_ref() {
            Expr::Name(m)
                if wanted.contains(&a.attr.as_str())
                    && imported(facts, m.id.as_str(), |k| k.is_import_of(module)) =>
            {
                Some(a.attr.to_string())
            }
            _ => None,
        },
        _ => None,
    }
}

const ENUM_BASES: [&str; 3] = ["Enum", "IntEnum", "StrEnum"];

fn class_kind(facts: &ModuleFacts, class: &ast::StmtClassDef) -> Option<PythonClassKind> {
    let dataclass = class.decorator_list.iter().any(|d| {
        let target = match &d.expression {
            Expr::Call(call) => call.func.as_ref(),
            other => other,
        };
        is_stdlib(facts, target, "dataclasses", &["dataclass"]).is_some()
    });
    if dataclass {
        return Some(PythonClassKind::Dataclass);
    }
    let bases = class.bases();
    if bases
        .iter()
        .any(|b| is_stdlib(facts, b, "typing", &["NamedTuple"]).is_some())
    {
        return Some(PythonClassKind::NamedTuple);
    }
    bases
        .iter()
        .any(|b| is_stdlib(facts, b, "enum", &ENUM_BASES).is_some())
        .then_some(PythonClassKind::Enum)
}

fn prove(
    ctx: &Context,
    module: &str,
    class: &ast::StmtClassDef,
    kind: PythonClassKind,
) -> Result<TypeSpec, String> {
    let facts = ctx.facts;
    let name = class.name.as_str();
    if class.type_params.is_some() {
        return Err("generic classes are unsupported".into());
    }
    if facts.bindings_of(name, View::Namespace).count() != 1 || facts.is_mutated(name) {
        return Err(format!(
            "`{name}` must have one unconditional, unmodified module binding"
        ));
    }
    let keywords = class.arguments.as_ref().map_or(0, |a| a.keywords.len());
    if keywords != 0 {
        return Err("class keywords (metaclass, ...) are unsupported".into());
    }
    let python = Some(PythonClass {
        kind,
        module: module.to_string(),
        name: name.to_string(),
    });
    let shape = match kind {
        PythonClassKind::Enum => enum_shape(ctx, class)?,
        PythonClassKind::Dataclass | PythonClassKind::NamedTuple => record_shape(ctx, class, kind)?,
    };
    let shape = TypeSpec { python, ..shape };
    let (nodes, depth) = shape_size(&shape);
    if nodes > MAX_NODES || depth > MAX_DEPTH {
        return Err(typeddict::BOUND.replace("TypedDict", "class"));
    }
    Ok(shape)
}

fn enum_shape(ctx: &Context, class: &ast::StmtClassDef) -> Result<TypeSpec, String> {
    let facts = ctx.facts;
    let mut enum_bases = 0;
    let (mut str_enum, mut str_mixin) = (false, false);
    for base in class.bases() {
        if let Some(base) = is_stdlib(facts, base, "enum", &ENUM_BASES) {
            enum_bases += 1;
            str_enum = base == "StrEnum";
        } else if let Expr::Name(n) = base
            && matches!(n.id.as_str(), "str" | "int")
            && !facts.is_bound(n.id.as_str(), View::Namespace)
        {
            str_mixin |= n.id.as_str() == "str";
        } else {
            return Err("an enum's bases must be one enum base, optionally with str or int".into());
        }
    }
    if enum_bases != 1 {
        return Err("an enum's bases must be one enum base, optionally with str or int".into());
    }
    for decorator in &class.decorator_list {
        let unique = is_stdlib(facts, &decorator.expression, "enum", &["unique"]).is_some();
        if !unique && !total_ordering(facts, &decorator.expression, &class.body) {
            return Err("enum decorators other than `unique`, or `total_ordering` over an ordering method, are unsupported".into());
        }
    }
    let mut values: Vec<Value> = Vec::new();
    // Every member's value in order, aliases included (what `auto()` sees).
    let mut assigned: Vec<Value> = Vec::new();
    for stmt in &class.body {
        match stmt {
            Stmt::Assign(assign) => {
                let [Expr::Name(target)] = assign.targets.as_slice() else {
                    return Err("enum members must be `NAME = <literal>`".into());
                };
                let member = target.id.as_str();
                if member.starts_with('_') {
                    return Err(format!("enum attribute `{member}` is unsupported"));
                }
                let value = match auto_value(facts, &assign.value) {
                    true => auto(member, &assigned, str_enum, str_mixin)?,
                    false => literal_value(&assign.value).ok_or_else(|| {
                        format!("enum member `{member}` must have a JSON scalar literal value")
                    })?,
                };
                assigned.push(value.clone());
                if !values.contains(&value) {
                    values.push(value);
                }
            }
            other => plain_body(other)?,
        }
    }
    if values.is_empty() {
        return Err("an enum without members has no JSON value".into());
    }
    Ok(TypeSpec {
        values,
        ..TypeSpec::simple(TypeKind::Literal)
    })
}

/// `functools.total_ordering` over a class body that defines one of `__lt__`, `__le__`,
/// `__gt__`, `__ge__` itself: it then only adds the missing comparison methods and returns the
/// class (without one it raises `ValueError`), so members, values and `C(value)` are unchanged.
fn total_ordering(facts: &ModuleFacts, decorator: &Expr, body: &[Stmt]) -> bool {
    is_stdlib(facts, decorator, "functools", &["total_ordering"]).is_some()
        && body.iter().any(|stmt| {
            matches!(stmt, Stmt::FunctionDef(def)
                if matches!(def.name.as_str(), "__lt__" | "__le__" | "__gt__" | "__ge__"))
        })
}

/// `enum.auto()` without arguments.
fn auto_value(facts: &ModuleFacts, value: &Expr) -> bool {
    matches!(value, Expr::Call(call) if call.arguments.is_empty()
        && is_stdlib(facts, &call.func, "enum", &["auto"]).is_some())
}

/// The value `auto()` gives member `member` after `before`, where the stdlib of the worker's
/// CPython (3.11) fixes it: a `StrEnum` member's lower-cased (ASCII) name; an `Enum` or
/// `IntEnum` member without a `str` mixin whose earlier members all have int values, the last
/// the largest: the last value plus one, or 1 for the first (3.11 adds one to the last value,
/// 3.12 to the largest: equal here). Anything else (a `(str, Enum)` mixin, other earlier
/// values) is refused.
fn auto(member: &str, before: &[Value], str_enum: bool, str_mixin: bool) -> Result<Value, String> {
    let refused = || format!("enum member `{member}`: this `auto()` value is not fixed statically");
    if str_enum {
        return match member.is_ascii() {
            true => Ok(Value::Str(member.to_ascii_lowercase())),
            false => Err(refused()),
        };
    }
    if str_mixin {
        return Err(refused());
    }
    match before.last() {
        None => Ok(Value::Int(1)),
        Some(Value::Int(last))
            if before
                .iter()
                .all(|v| matches!(v, Value::Int(i) if i <= last)) =>
        {
            last.checked_add(1).map(Value::Int).ok_or_else(refused)
        }
        Some(_) => Err(refused()),
    }
}

fn record_shape(
    ctx: &Context,
    class: &ast::StmtClassDef,
    kind: PythonClassKind,
) -> Result<TypeSpec, String> {
    let facts = ctx.facts;
    match kind {
        PythonClassKind::Dataclass => {
            if class.decorator_list.len() != 1 {
                return Err("a dataclass takes no other decorators".into());
            }
            if let Expr::Call(call) = &class.decorator_list[0].expression
                && (!call.arguments.args.is_empty()
                    || call
                        .arguments
                        .keywords
                        .iter()
                        .any(|k| k.arg.as_ref().is_none_or(|a| a.as_str() == "init")))
            {
                return Err("`@dataclass(init=...)` or positional options are unsupported".into());
            }
        }
        _ => {
            if class.bases().len() != 1 || !class.decorator_list.is_empty() {
                return Err(
                    "a NamedTuple class takes only `NamedTuple` as base, no decorators".into(),
                );
            }
        }
    }
    let mut fields = match (kind, class.bases()) {
        (PythonClassKind::Dataclass, [Expr::Name(base)]) => inherited(ctx, class, base)?,
        (PythonClassKind::Dataclass, []) | (PythonClassKind::NamedTuple, _) => Vec::new(),
        _ => return Err("a dataclass takes at most one base class".into()),
    };
    let inherited_names: HashSet<String> = fields.iter().map(|f| f.name.clone()).collect();
    let mut seen: HashSet<String> = HashSet::new();
    for stmt in &class.body {
        let Stmt::AnnAssign(field) = stmt else {
            if let Stmt::Assign(_) = stmt {
                continue; // A class attribute without annotation is not a field.
            }
            plain_body(stmt)?;
            continue;
        };
        let Expr::Name(target) = field.target.as_ref() else {
            return Err("fields must be simple names".into());
        };
        let fname = target.id.to_string();
        let annotation = field.annotation.as_ref();
        let base = match annotation {
            Expr::Subscript(s) => s.value.as_ref(),
            other => other,
        };
        if is_stdlib(facts, base, "typing", &["ClassVar"]).is_some() {
            continue;
        }
        if is_stdlib(facts, base, "dataclasses", &["InitVar", "KW_ONLY"]).is_some() {
            return Err(format!(
                "field `{fname}`: InitVar and KW_ONLY are unsupported"
            ));
        }
        let required = match field.value.as_deref() {
            None => true,
            Some(Expr::Call(call))
                if is_stdlib(facts, &call.func, "dataclasses", &["field"]).is_some() =>
            {
                let has = |k: &str| {
                    call.arguments
                        .keywords
                        .iter()
                        .any(|kw| kw.arg.as_ref().is_some_and(|a| a.as_str() == k))
                };
                if has("init") || !call.arguments.args.is_empty() {
                    return Err(format!("field `{fname}`: `field(init=...)` is unsupported"));
                }
                !has("default") && !has("default_factory")
            }
            Some(_) => false,
        };
        if ctx
            .findings(annotation)
            .iter()
            .any(|f| f.code != ReasonCode::R007)
        {
            return Err(format!("field `{fname}` does not have a precise JSON type"));
        }
        if !seen.insert(fname.clone()) {
            return Err(format!("field `{fname}` is declared twice"));
        }
        let field = ObjectField {
            name: fname,
            required,
            type_spec: ctx.lower(annotation),
        };
        // A redefined field keeps its place among the inherited ones (the dataclass rule),
        // with its new type and default.
        match fields.iter_mut().find(|f| f.name == field.name) {
            Some(old) if inherited_names.contains(&field.name) => *old = field,
            _ => fields.push(field),
        }
    }
    // With inherited fields, a field without default after one with a default makes class
    // creation raise: refused here whatever the top-level proof says.
    let mut defaulted = false;
    for field in fields.iter().filter(|_| !inherited_names.is_empty()) {
        if field.required && defaulted {
            return Err(format!(
                "field `{}` has no default but follows a field with one",
                field.name
            ));
        }
        defaulted |= !field.required;
    }
    Ok(TypeSpec {
        fields: Some(fields),
        ..TypeSpec::simple(TypeKind::Object)
    })
}

/// The fields a dataclass inherits from its one base: a dataclass of this module declared
/// (and proved) before it, decorated alike as to `frozen` (CPython refuses a frozen dataclass
/// inheriting from a non-frozen one and the reverse at class creation). Fields come in the
/// base's order, then the class's own; an own field of the same name replaces the base's.
fn inherited(
    ctx: &Context,
    class: &ast::StmtClassDef,
    base: &ast::ExprName,
) -> Result<Vec<ObjectField>, String> {
    let name = base.id.as_str();
    let unsupported = || {
        format!(
            "base class `{name}`: dataclass base classes other than a dataclass of the module \
             are unsupported (inherited fields)"
        )
    };
    let local = ctx
        .facts
        .classes()
        .filter(|(_, _, c)| c.name.as_str() == name)
        .map(|(_, _, c)| c)
        .last()
        .ok_or_else(unsupported)?;
    let spec = match ctx.classes.get(name) {
        Some(Ok(spec)) => *spec,
        Some(Err(why)) => return Err(format!("base class `{name}`: {why}")),
        None => return Err(unsupported()),
    };
    if spec.python.as_ref().map(|p| p.kind) != Some(PythonClassKind::Dataclass) {
        return Err(unsupported());
    }
    let (frozen, base_frozen) = (frozen(&class.decorator_list), frozen(&local.decorator_list));
    if frozen.is_none() || frozen != base_frozen {
        return Err(format!(
            "base class `{name}`: both must be `frozen` alike, as literals"
        ));
    }
    Ok(spec.fields.clone().unwrap_or_default())
}

/// The `frozen=` option of a class's one `@dataclass` decorator (`Some(false)` when absent,
/// `None` when not a literal).
fn frozen(decorators: &[ast::Decorator]) -> Option<bool> {
    let [decorator] = decorators else {
        return None;
    };
    let Expr::Call(call) = &decorator.expression else {
        return Some(false);
    };
    match call
        .arguments
        .keywords
        .iter()
        .find(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == "frozen"))
    {
        None => Some(false),
        Some(keyword) => match &keyword.value {
            Expr::BooleanLiteral(b) => Some(b.value),
            _ => None,
        },
    }
}

/// The statements every class body may hold besides fields and members: a docstring, `pass`
/// and methods (methods do not change the JSON form or how the instance is built, except
/// these, which are refused: `_generate_next_value_` changes what `auto()` gives).
fn plain_body(stmt: &Stmt) -> Result<(), String> {
    match stmt {
        Stmt::Pass(_) => Ok(()),
        Stmt::Expr(e) if matches!(e.value.as_ref(), Expr::StringLiteral(_)) => Ok(()),
        Stmt::FunctionDef(def)
            if !matches!(
                def.name.as_str(),
                "__init__" | "__new__" | "__post_init__" | "_missing_" | "_generate_next_value_"
            ) =>
        {
            Ok(())
        }
        Stmt::FunctionDef(def) => Err(format!("a class defining `{}` is unsupported", def.name)),
        _ => Err(
            "the class body holds a statement other than fields, methods and a docstring".into(),
        ),
    }
}
