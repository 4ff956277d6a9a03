//! Fixes for input and output types (READY-007/012/013/016/017/019).
//!
//! Readiness v1 understands exactly: `str int float bool None`, `list/List[T]`,
//! `set/Set[T]`, `dict/Dict[str, V]`, `tuple/Tuple[...]`, `Union`/`Optional`/`|`,
//! `Literal[<JSON scalars>]`, `Annotated` (with READY-017) and TypedDicts proven before the
//! function; typing names only through a direct, unrenamed `from typing import N` or
//! `import typing [as t]`. Every fix below stays inside that set.

use apizr_ir::ReasonCode;
use ruff_python_ast::{Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use super::Module;
use super::culprit::root_name;
use crate::facts::{BindingId, BindingKind};
use crate::readiness::Finding;
use crate::readiness::evidence::{TypeCause, Unresolved};
use crate::readiness::{outputs, typeddict};

const JSON_TYPES: &str = "use str, int, float, bool, None, list[T], dict[str, T], tuple[...], \
                          set[T], Literal[...] or a TypedDict declared before the function";

pub fn type_fix(
    module: &Module,
    code: ReasonCode,
    range: TextRange,
    cause: TypeCause,
    finding: &Finding,
) -> String {
    let text = module.text(range);
    let output = code == ReasonCode::R016;
    let rewritable = matches!(
        cause,
        TypeCause::UnknownType
            | TypeCause::UnknownGeneric
            | TypeCause::Unresolved(Unresolved::Attribute | Unresolved::Bound(_))
    );
    if rewritable && let Some(rewritten) = rewrite(module, finding.line, &text) {
        return format!("use `{rewritten}` instead of `{text}`");
    }
    match cause {
        TypeCause::Missing if output => {
            "annotate the return type (e.g. `-> str`) so results are checked".into()
        }
        TypeCause::Missing => {
            let name = finding.parameter.as_deref().unwrap_or("x");
            format!("annotate `{name}` with a JSON type (e.g. `{name}: str`) for a precise schema")
        }
        TypeCause::AnyValue => any_value_fix(&text),
        TypeCause::Constant if text.starts_with(['"', '\'']) => {
            let inner = text.trim_matches(['"', '\'']);
            if accepted(module, finding.line, inner) {
                format!(
                    "write the annotation without quotes, `{inner}`: string annotations are not resolved"
                )
            } else {
                format!(
                    "string annotations are not resolved, and `{inner}` is not a JSON type \
                     either: {JSON_TYPES}"
                )
            }
        }
        TypeCause::Constant => format!("`{text}` is a value, not a type: {JSON_TYPES}"),
        TypeCause::Unresolved(Unresolved::Bound(binding)) => {
            bound_fix(module, binding, &text, finding)
        }
        TypeCause::Unresolved(Unresolved::Rebound) => {
            let root = root_name(module, range);
            format!(
                "bind `{root}` only once (a direct `from typing import {root}`), or use a \
                 builtin type"
            )
        }
        TypeCause::Unresolved(Unresolved::Mutated) => format!(
            "remove the module-level attribute/subscript store into `{}`",
            root_name(module, range)
        ),
        TypeCause::Unresolved(Unresolved::Attribute | Unresolved::Expression) => {
            match suggestion(base(&text).rsplit('.').next().unwrap_or("")) {
                Some(instead) => format!("instead of `{text}`, {instead}"),
                None => format!("`{text}` is not a type readiness v1 knows: {JSON_TYPES}"),
            }
        }
        TypeCause::UnknownType | TypeCause::UnknownGeneric => match suggestion(base(&text)) {
            Some(instead) => format!("instead of `{text}`, {instead}"),
            None => format!("`{text}` is not a JSON type readiness v1 knows: {JSON_TYPES}"),
        },
        TypeCause::Arity => arity_fix(&text),
        TypeCause::Bytes if output => {
            "return `str` (e.g. base64 text) instead of bytes: a bytes result is not JSON".into()
        }
        TypeCause::Bytes => {
            "accept `str` instead of `bytes` (text or base64) and convert it inside the function"
                .into()
        }
        TypeCause::Callable => {
            "a function cannot come from JSON: accept its name (`str`) and look it up inside".into()
        }
        TypeCause::NonStringKey => format!(
            "JSON object keys are strings: use `str` keys instead of `{text}` and convert them \
             inside the function"
        ),
        TypeCause::NonScalarLiteral => format!(
            "use only str, int, float, bool or None values in `Literal[...]` (not `{text}`)"
        ),
        TypeCause::Annotated => match annotated_inner(&text) {
            Some(inner) if accepted(module, finding.line, &inner) => format!(
                "annotate with `{inner}` alone: the metadata of `Annotated[...]` is not understood"
            ),
            _ => "annotate with the first argument of `Annotated[...]` alone: its metadata is \
                  not understood"
                .into(),
        },
        TypeCause::Temporal if output => format!(
            "return `str` (e.g. `.isoformat()`) or a number of seconds instead of `{text}`: \
             datetime results are not encoded as JSON"
        ),
        TypeCause::Temporal => format!(
            "take a `list` instead of `{text}`: set members are compared as Python compares \
             datetime values (time zones, rounding), which JSON validation cannot check"
        ),
        TypeCause::RefusedTypedDict => typeddict_fix(module, &text),
        TypeCause::RefusedClass => format!(
            "make `{text}` an Enum whose members have literal values, or a dataclass (without \
             base classes, or with one proved dataclass of the module) or NamedTuple whose \
             fields have JSON types"
        ),
    }
}

/// Why a v2 input class (Enum, dataclass, NamedTuple) of the module was refused.
pub(super) fn class_problem<'m>(module: &'m Module, name: &str) -> Option<&'m str> {
    module
        .rules
        .classes
        .classes
        .iter()
        .rev()
        .find(|c| c.name == name)
        .and_then(|c| c.outcome.as_ref().err())
        .map(String::as_str)
}

/// The base of a subscript (`Sequence` of `Sequence[int]`).
fn base(text: &str) -> &str {
    text.split('[').next().unwrap_or(text).trim()
}

fn any_value_fix(text: &str) -> String {
    match base(text).rsplit('.').next().unwrap_or("") {
        "list" | "List" => format!(
            "give the item type: `{}[str]` (or another JSON type)",
            base(text)
        ),
        "set" | "Set" => format!("give the item type: `{}[str]`", base(text)),
        "tuple" | "Tuple" => format!("give the item types: `{}[int, ...]`", base(text)),
        "dict" | "Dict" => format!("give key and value types: `{}[str, int]`", base(text)),
        _ => format!("use a precise type instead of `{text}`"),
    }
}

/// The JSON container a well-known abstract collection name stands for.
fn container(name: &str) -> Option<&'static str> {
    Some(match name {
        "Sequence" | "Iterable" | "Collection" | "MutableSequence" | "Iterator" | "Generator"
        | "Reversible" => "list",
        "Mapping" | "MutableMapping" | "OrderedDict" | "defaultdict" | "DefaultDict" => "dict",
        "FrozenSet" | "frozenset" | "AbstractSet" | "MutableSet" => "set",
        _ => return None,
    })
}

/// `text` with abstract collections written as JSON containers (`Iterable[Iterable[str]]` →
/// `list[list[str]]`), if that changes anything and the result classifies as a JSON type in
/// this module at this line. Only a verified rewrite is offered.
fn rewrite(module: &Module, line: u32, text: &str) -> Option<String> {
    if text.ends_with('…') {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c.is_alphabetic() || c == '_' {
            let end = rest
                .find(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == '.'))
                .unwrap_or(rest.len());
            let (word, tail) = rest.split_at(end);
            match container(word.rsplit('.').next().unwrap_or(word)) {
                Some(json) => {
                    out.push_str(json);
                    changed = true;
                }
                None => out.push_str(word),
            }
            rest = tail;
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    if !changed {
        return None;
    }
    accepted(module, line, &out).then_some(out)
}

/// `text` parses as an annotation that gives no input reason in this module at `line`.
fn accepted(module: &Module, line: u32, text: &str) -> bool {
    let Ok(parsed) = ruff_python_parser::parse_expression(text) else {
        return false;
    };
    let ctx = outputs::context_at(
        module.facts,
        &module.rules.typed_dicts,
        &module.rules.classes,
        line,
    );
    ctx.codes(parsed.expr()).is_empty()
}

/// `int` of `Annotated[int, "meters"]`.
fn annotated_inner(text: &str) -> Option<String> {
    let parsed = ruff_python_parser::parse_expression(text).ok()?;
    let Expr::Subscript(subscript) = parsed.expr() else {
        return None;
    };
    let first = match subscript.slice.as_ref() {
        Expr::Tuple(t) => t.elts.first()?,
        other => other,
    };
    text.get(std::ops::Range::<usize>::from(first.range()))
        .map(str::to_string)
}

/// A replacement for a well-known non-JSON type name.
fn suggestion(name: &str) -> Option<&'static str> {
    Some(match name {
        "Sequence" | "Iterable" | "Collection" | "MutableSequence" | "Iterator" | "Generator" => {
            "use `list[...]`"
        }
        "Mapping" | "MutableMapping" | "OrderedDict" | "defaultdict" | "DefaultDict" => {
            "use `dict[str, ...]`"
        }
        "FrozenSet" | "frozenset" | "AbstractSet" | "MutableSet" => "use `set[...]`",
        "Decimal" | "Fraction" => "accept `str` (or `float`) and convert inside the function",
        "datetime" | "date" | "time" | "timedelta" => {
            "accept an ISO 8601 `str` and parse it inside the function"
        }
        "Path" | "PurePath" | "PathLike" => "accept `str` and build the path inside the function",
        "UUID" => "accept `str` and parse it inside the function",
        "bytearray" | "memoryview" => {
            "accept `str` (text or base64) and convert it inside the function"
        }
        "Pattern" => "accept the pattern as `str` and compile it inside the function",
        "Callable" => {
            "a function cannot come from JSON: accept its name (`str`) and look it up inside"
        }
        "object" => "use `Any` (any JSON value) or a precise type",
        _ => return None,
    })
}

fn arity_fix(text: &str) -> String {
    let name = base(text);
    match name.rsplit('.').next().unwrap_or(name) {
        "Optional" => format!("`{name}` takes exactly one type: `{name}[int]`"),
        "list" | "List" | "set" | "Set" => format!("`{name}` takes one item type: `{name}[str]`"),
        "dict" | "Dict" => format!("`{name}` takes a key and a value type: `{name}[str, int]`"),
        "Annotated" => format!("`{name}` needs a type and metadata: `{name}[int, ...]`"),
        _ => format!("`{name}` needs at least one type: `{name}[int, str]`"),
    }
}

/// The name is bound once, but not as a proven typing import.
fn bound_fix(module: &Module, binding: BindingId, text: &str, finding: &Finding) -> String {
    let facts = module.facts;
    let binding = facts.binding(binding);
    let name = binding.name;
    let direct = facts.is_direct(binding);
    match &binding.kind {
        BindingKind::FromImport {
            module: Some(from),
            level: 0,
            name: original,
        } if *from == "typing" => {
            if *original != name {
                format!("import it under its own name: `from typing import {original}`")
            } else if !direct {
                format!("import `{name}` from typing unconditionally, at the top of the module")
            } else {
                match suggestion(name) {
                    Some(instead) => format!("instead of `{text}`, {instead}"),
                    None => {
                        format!("`{name}` is not a typing name readiness v1 knows: {JSON_TYPES}")
                    }
                }
            }
        }
        BindingKind::Import {
            module: imported, ..
        } if *imported == "typing" => {
            "import typing unconditionally, at the top of the module".into()
        }
        BindingKind::Assignment => alias_fix(module, binding.stmt, name, finding),
        BindingKind::Class => format!(
            "`{name}` is a class: accept a TypedDict declared before the function (or other \
             JSON types) and build the `{name}` inside the function"
        ),
        BindingKind::Def => format!("`{name}` is a function, not a type: {JSON_TYPES}"),
        BindingKind::Import { module: from, .. }
        | BindingKind::FromImport {
            module: Some(from), ..
        } => match suggestion(name) {
            Some(instead) => format!("`{name}` comes from `{from}`: {instead}"),
            None => format!(
                "`{name}` comes from `{from}`, not a JSON type: accept JSON types and build the \
                 value inside the function ({JSON_TYPES})"
            ),
        },
        _ => format!("`{name}` is bound in this module, so it is not a type: {JSON_TYPES}"),
    }
}

/// `X = <type>` / `X: TypeAlias = <type>`: v1 does not follow aliases. Suggest writing the
/// value out, but only if the value itself would classify as a JSON type here.
fn alias_fix(module: &Module, stmt: crate::facts::StmtId, name: &str, finding: &Finding) -> String {
    let value = match module.facts.statement(stmt).node {
        Stmt::Assign(a) if a.targets.len() == 1 => Some(a.value.as_ref()),
        Stmt::AnnAssign(a) => a.value.as_deref(),
        _ => None,
    };
    let Some(value) = value else {
        return format!("`{name}` is assigned in this module, so it is not a type: {JSON_TYPES}");
    };
    let ctx = outputs::context_at(
        module.facts,
        &module.rules.typed_dicts,
        &module.rules.classes,
        finding.line,
    );
    let clean = ctx.codes(value).iter().all(|c| *c == ReasonCode::R007);
    let written = module.text(value.range());
    let plain = !matches!(value, Expr::Call(_)) && !written.ends_with('…');
    match finding.parameter.as_deref() {
        Some(param) if clean && plain => format!(
            "readiness v1 does not follow aliases: write the type out, `{param}: {written}`"
        ),
        None if clean && plain => {
            format!("readiness v1 does not follow aliases: write the type out, `-> {written}`")
        }
        _ => format!(
            "readiness v1 does not follow aliases, and `{written}` is not a JSON type it accepts \
             either: {JSON_TYPES}"
        ),
    }
}

fn typeddict_fix(module: &Module, name: &str) -> String {
    let problem = module
        .report
        .structured_types
        .iter()
        .find(|t| t.name == name)
        .and_then(|t| t.problem.as_deref())
        .unwrap_or("");
    let how = if problem == typeddict::FUNCTIONAL {
        format!("use the class form, `class {name}(TypedDict): ...`")
    } else if problem == typeddict::GENERIC {
        "remove its type parameters".into()
    } else if problem == typeddict::BINDING {
        "define it once, unconditionally, at module level, and never modify it".into()
    } else if problem == typeddict::BASE {
        "derive it directly from `TypedDict`, imported with `from typing import TypedDict` \
         before the class"
            .into()
    } else if problem == typeddict::DECORATORS {
        "remove its decorators".into()
    } else if problem == typeddict::KEYWORDS || problem == typeddict::TOTAL {
        "use no class keyword except `total=True` or `total=False`".into()
    } else if problem == typeddict::BODY {
        "keep only a docstring, `field: type` lines and `pass` in its body".into()
    } else if problem == typeddict::CALLS {
        "remove calls from its field annotations".into()
    } else if problem.starts_with(typeddict::REFERENCE) {
        "declare the TypedDicts it uses before it, and make sure they are proven".into()
    } else if problem == typeddict::TYPING {
        "import the typing names its fields use (`from typing import ...`) before the class".into()
    } else if problem.starts_with(typeddict::FIELD_TYPE) {
        format!("give every field a JSON type ({JSON_TYPES})")
    } else if problem == typeddict::BOUND {
        "make the shape smaller (at most 32 levels and 4096 nodes)".into()
    } else {
        "give every field a distinct name".into()
    };
    format!("fix TypedDict `{name}`: {how}")
}
