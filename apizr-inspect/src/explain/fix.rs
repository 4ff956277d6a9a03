//! One line per reason saying what to change. A fix is only offered when it would work under
//! the readiness rules (`apizr.readiness/v1`); where v1 can never accept something (a class
//! statement, a third-party import), the fix says so and names the way out: serve from a module
//! without it, or expose the function as it is with `--allow-conditional`.

use apizr_ir::{Assessment, DiagnosticKind, ReadinessState, ReasonCode};
use ruff_python_ast::{Expr, Stmt};
use ruff_text_size::Ranged;

use super::{ExplainedReason, Module};
use crate::facts::StmtId;
use crate::readiness::Finding;
use crate::readiness::evidence::{Evidence, MainGuard, Risk};
use crate::readiness::imports::ImportProblem;

/// What a module whose functions can be ready may contain.
const SAFE_MODULE: &str = "standard-library imports, literal constants, function definitions, \
                           proven TypedDict classes and one `if __name__ == \"__main__\":` block";

pub fn fix(module: &Module, finding: &Finding, symbol: Option<&str>) -> String {
    let name = symbol.unwrap_or("the function");
    match &finding.evidence {
        Evidence::ControlFlow { parent } => format!(
            "define `{name}` at module level, not inside `{}`",
            header(module, *parent)
        ),
        Evidence::Decorated { .. } => format!(
            "serve an undecorated function: remove the decorator, or add a plain `def` that \
             calls `{name}` and select that one"
        ),
        Evidence::Rebinding { binding } => {
            let line = module.facts.binding(*binding).line;
            format!("remove the later binding of `{name}` at line {line}, or rename one of them")
        }
        Evidence::Statement { stmt, risk } => statement_fix(module, *stmt, *risk),
        Evidence::Generator { .. } => {
            "return the items instead of yielding them (e.g. collect them and `return items` \
             with `-> list[T]`); generators need a streaming contract"
                .into()
        }
        Evidence::Type { range, cause } => {
            super::types::type_fix(module, finding.code, *range, *cause, finding)
        }
        Evidence::StarImport { range } => format!(
            "import the names you use explicitly instead of `{}`",
            module.text(*range)
        ),
        Evidence::Call { range } if finding.code == ReasonCode::R008 => format!(
            "remove `{}` from module scope: a namespace builtin there can rebind any name",
            module.text(*range)
        ),
        Evidence::Call { range } => format!(
            "import the module statically (`import name`) instead of calling `{}`",
            module.text(*range)
        ),
        Evidence::Import {
            range,
            statement,
            level,
            problem,
        } => {
            let written = module.written_module(*range, *statement, *level);
            let declared = module.rules.declared();
            import_fix(
                &written,
                &module.text(*statement),
                *problem,
                symbol,
                &declared,
            )
        }
        Evidence::Declared { distributions, .. } => format!(
            "nothing to change: `{}` is declared by the project, so readiness v2 counts the \
             import as ready provided the bundle installs it",
            distributions.join("`, `")
        ),
        Evidence::ParentPackage { package } => format!(
            "make the top level of package `{package}` (its `__init__.py` and what it imports) \
             provably harmless, or serve `{name}` from a module outside that package"
        ),
        Evidence::Rejected { kind } => rejected_fix(*kind, name),
    }
}

/// The first line of a compound statement, without a trailing `…`.
fn header(module: &Module, id: StmtId) -> String {
    module
        .text(module.statement_range(id))
        .trim_end_matches(" …")
        .to_string()
}

fn statement_fix(module: &Module, id: StmtId, risk: Risk) -> String {
    let node = module.facts.statement(id).node;
    let targets = assigned_names(node);
    if let Risk::Unproved(unproved) = risk {
        if unproved.why == crate::readiness::v2::Why::BaseFromUnproved {
            return format!(
                "make the top level of the module `{}` is imported from provably harmless (its \
                 own reasons are listed with it), and keep it out of this module's import cycle",
                module.text(unproved.range)
            );
        }
        return format!(
            "make `{}` one of the forms readiness v2 proves (literals, names bound earlier, \
             allowlisted stdlib constructors and decorators), or move it into the function that \
             needs it",
            module.text(unproved.range)
        );
    }
    if let Some(Expr::Lambda(_)) = assigned_value(node) {
        return format!(
            "write `def {}(...):` instead of assigning a lambda",
            targets.trim_matches('`')
        );
    }
    if let Some(value) = assigned_value(node)
        && looks_like_type(module, value)
    {
        return format!(
            "{targets} is a type alias, which readiness v1 does not follow: delete it and write \
             `{}` where it is used",
            module.text(value.range())
        );
    }
    match risk {
        Risk::Call(range) | Risk::NotLiteral(range) => match node {
            Stmt::Assign(_) | Stmt::AnnAssign(_) => format!(
                "assign a literal to {targets}, or compute it inside the functions that use it \
                 (`{}` runs at import)",
                module.text(range)
            ),
            Stmt::FunctionDef(def) => format!(
                "take the call `{}` out of the signature of `{}` (use a literal default such \
                 as `None`)",
                module.text(range),
                def.name
            ),
            _ => format!(
                "take `{}` out of module scope: into a function that the served code calls, or \
                 under `if __name__ == \"__main__\":` if it only matters when run as a script",
                module.text(range)
            ),
        },
        Risk::Default(range) => {
            let def = match node {
                Stmt::FunctionDef(def) => def.name.as_str(),
                _ => "the function",
            };
            let default = module.text(range);
            match constant_value(module, range) {
                Some(literal) => format!(
                    "write the value `{literal}` instead of the name `{default}` as the default"
                ),
                None => format!(
                    "use a literal default (e.g. `None`) instead of `{default}` and build the \
                     value inside `{def}`"
                ),
            }
        }
        Risk::Decorated if is_overload_stub(node) => format!(
            "make the overload group of `{}` valid (READY-010): stubs tied to one \
             implementation do not count here",
            defined_name(node)
        ),
        Risk::Decorated => format!(
            "remove the decorator, or move `{}` to another module",
            defined_name(node)
        ),
        Risk::Class => format!(
            "move class `{}` to another module: readiness v1 accepts no class statements except \
             proven TypedDicts (importing it back from your package would be READY-015)",
            defined_name(node)
        ),
        Risk::ControlFlow => control_flow_fix(module, id),
        Risk::Modifies => "remove the augmented assignment or `del` from module level".into(),
        Risk::MayFail => "move the `raise`/`assert` into a function".into(),
        Risk::MainGuard(why) => match why {
            MainGuard::Else => "remove the `elif`/`else` branch of the `__main__` guard".into(),
            MainGuard::ModuleIsMain => {
                "inspect the file under another module name (`--module-name`)".into()
            }
            MainGuard::NameBound(binding) => format!(
                "do not bind `__name__` (line {})",
                module.facts.binding(binding).line
            ),
            MainGuard::Namespace => {
                "remove the star import or namespace builtin call (READY-008); the guard is \
                 safe again without them"
                    .into()
            }
            MainGuard::Mutation(range) => format!(
                "remove the module-level store into `{}` (line {}); the guard is safe again \
                 without it",
                module.text(range),
                module.span(range).line
            ),
        },
        Risk::Other => "move this statement into a function".into(),
        Risk::Unproved(_) => unreachable_unproved(),
    }
}

/// The value of a single-target assignment.
fn assigned_value(stmt: &Stmt) -> Option<&Expr> {
    match stmt {
        Stmt::Assign(a) if a.targets.len() == 1 => Some(&a.value),
        Stmt::AnnAssign(a) => a.value.as_deref(),
        _ => None,
    }
}

/// `Literal[...]`, `Union[...]`, `list[int]`, `int | None`, ...: a value that only makes sense
/// as a type.
fn looks_like_type(module: &Module, value: &Expr) -> bool {
    let ctx = crate::readiness::outputs::context_at(
        module.facts,
        &module.rules.typed_dicts,
        &module.rules.classes,
        0,
    );
    let typing = |base: &Expr| {
        ctx.resolve(base).is_some_and(|name| {
            crate::readiness::inputs::is_typing_name(&name)
                || matches!(
                    name.as_str(),
                    "list" | "dict" | "set" | "tuple" | "frozenset" | "type"
                )
        })
    };
    match value {
        Expr::Subscript(s) => typing(&s.value),
        Expr::BinOp(b) if b.op == ruff_python_ast::Operator::BitOr => {
            let side = |e: &Expr| {
                looks_like_type(module, e)
                    || matches!(e, Expr::NoneLiteral(_))
                    || matches!(e, Expr::Name(n) if matches!(n.id.as_str(),
                        "str" | "int" | "float" | "bool" | "bytes"))
            };
            side(&b.left) && side(&b.right)
        }
        _ => false,
    }
}

/// When a default is a name bound once, directly, to a literal (`SEP = "-"`), that literal.
fn constant_value(module: &Module, range: ruff_text_size::TextRange) -> Option<String> {
    let name = module.text(range);
    let (_, binding) = module
        .facts
        .unique_binding(&name, crate::facts::View::Namespace)?;
    if !module.facts.is_direct(binding) {
        return None;
    }
    let value = assigned_value(module.facts.statement(binding.stmt).node)?;
    crate::readiness::init::literal_only(value).then(|| module.text(value.range()))
}

fn control_flow_fix(module: &Module, id: StmtId) -> String {
    let node = module.facts.statement(id).node;
    match node {
        Stmt::If(branch) if mentions(&branch.test, "TYPE_CHECKING") => {
            "delete the `if TYPE_CHECKING:` block: readiness v1 does not read it, so write the \
             types out in the annotations"
                .into()
        }
        Stmt::Try(_) => {
            "import unconditionally (a top-level `try` runs at import; a missing optional \
             dependency is not something a served function can rely on)"
                .into()
        }
        _ => format!(
            "move `{}` into a function: top-level control flow runs at import",
            header(module, id)
        ),
    }
}

fn mentions(expr: &Expr, name: &str) -> bool {
    match expr {
        Expr::Name(n) => n.id.as_str() == name,
        Expr::Attribute(a) => a.attr.as_str() == name,
        _ => false,
    }
}

/// `` `X` `` or `` `X`, `Y` `` for the names an assignment binds.
fn assigned_names(stmt: &Stmt) -> String {
    fn collect<'a>(expr: &'a Expr, out: &mut Vec<&'a str>) {
        match expr {
            Expr::Name(n) => out.push(n.id.as_str()),
            Expr::Tuple(t) => t.elts.iter().for_each(|e| collect(e, out)),
            Expr::List(l) => l.elts.iter().for_each(|e| collect(e, out)),
            Expr::Starred(s) => collect(&s.value, out),
            _ => {}
        }
    }
    let mut names = Vec::new();
    match stmt {
        Stmt::Assign(a) => a.targets.iter().for_each(|t| collect(t, &mut names)),
        Stmt::AnnAssign(a) => collect(&a.target, &mut names),
        _ => {}
    }
    if names.is_empty() {
        return "the target".into();
    }
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A `def` whose only decorator looks like `overload` / `x.overload`.
fn is_overload_stub(stmt: &Stmt) -> bool {
    let Stmt::FunctionDef(def) = stmt else {
        return false;
    };
    matches!(def.decorator_list.as_slice(), [decorator] if match &decorator.expression {
        Expr::Name(n) => n.id.as_str() == "overload",
        Expr::Attribute(a) => a.attr.as_str() == "overload",
        _ => false,
    })
}

fn defined_name(stmt: &Stmt) -> &str {
    match stmt {
        Stmt::FunctionDef(def) => def.name.as_str(),
        Stmt::ClassDef(class) => class.name.as_str(),
        _ => "it",
    }
}

fn import_fix(
    written: &str,
    statement: &str,
    problem: ImportProblem,
    symbol: Option<&str>,
    declared: &[String],
) -> String {
    let root = written.split('.').next().unwrap_or(written);
    let whose = match symbol {
        Some(name) => format!("`{name}` imports"),
        None => "this module imports".into(),
    };
    match problem {
        ImportProblem::Relative => format!(
            "{whose} from its own package (`{statement}`), and readiness v1 proves no package \
             import safe: serve functions from a module that imports only the standard library, \
             or expose them with `--allow-conditional`"
        ),
        ImportProblem::NotStdlib => format!(
            "{whose} `{root}`, which is not in the standard library, and readiness v1 proves \
             only standard-library imports safe: serve functions from a module that does not \
             import it, or expose them with `--allow-conditional` (the server then needs \
             `{root}` installed)"
        ),
        ImportProblem::Star => {
            format!("import the names you use from `{written}` explicitly instead of `*`")
        }
        ImportProblem::Unresolvable => format!(
            "`{statement}` fails when it runs: the directory has no such module, or the relative \
             import climbs above the top-level package; fix the module name"
        ),
        ImportProblem::LocalUnproved => format!(
            "{whose} `{written}` from its own package, and importing it runs a top level \
             readiness v2 does not prove harmless: inspect that module and fix its reasons"
        ),
        ImportProblem::Cycle => format!(
            "`{statement}` reads a name from a module of the same import cycle, which may not be \
             bound yet when it runs: import the module (`from . import m`) and use `m.name` \
             inside functions, or break the cycle"
        ),
        ImportProblem::Undeclared => format!(
            "{whose} `{root}`, which is neither in the standard library nor declared by the \
             project: declare its distribution in `pyproject.toml` (`[project] dependencies`) or \
             `requirements.txt` so the bundle installs it, or serve functions from a module that \
             does not import it. A declared distribution installing `{root}` under another \
             name (`PyYAML` installs `yaml`) counts only when its wheel says so: pass the wheels \
             the bundle installs with `--wheelhouse DIR`{declared}",
            declared = match declared {
                [] => String::new(),
                names => format!(" (declared here: {})", names.join(", ")),
            }
        ),
        ImportProblem::MissingName => format!(
            "`{statement}` imports a name `{written}` does not bind on every path \
             (`ImportError` at import): define it there unconditionally"
        ),
    }
}

fn rejected_fix(kind: DiagnosticKind, name: &str) -> String {
    match kind {
        DiagnosticKind::DuplicateDefinition => {
            format!("keep one definition of `{name}`: rename or delete the others")
        }
        DiagnosticKind::AmbiguousOverload => format!(
            "import `overload` once with `from typing import overload` before the stubs, and \
             put the `@overload` stubs of `{name}` directly above one undecorated implementation"
        ),
        DiagnosticKind::Variadic => {
            // Rejected only under readiness v1 (v2 keeps them as parameters).
            "replace `*args`/`**kwargs` with named parameters (a v1 contract needs a fixed list), \
             or inspect with `--readiness v2`, which serves them"
                .into()
        }
        DiagnosticKind::LambdaAssignment => {
            format!("write `def {name}(...):` instead of assigning a lambda")
        }
        DiagnosticKind::Decorated => "serve an undecorated function: remove the decorator".into(),
        DiagnosticKind::ControlFlow | DiagnosticKind::UnknownTypeStructure => {
            "see the IR diagnostics".into()
        }
    }
}

/// What to do about the module reasons as a whole.
pub fn module_advice(reasons: &[ExplainedReason]) -> Option<String> {
    if reasons.is_empty() {
        return None;
    }
    let these = match reasons.len() {
        1 => "this reason makes".to_string(),
        n => format!("these {n} reasons make"),
    };
    Some(format!(
        "{these} every function in this module at least conditional; a module whose functions \
         can be ready holds only {SAFE_MODULE}: move the functions you want to serve into such a \
         module, or expose them as they are with `--allow-conditional`"
    ))
}

/// Readiness v2, a module that defines no function: its top level still runs whenever a
/// module of the directory imports it (and, for a package `__init__`, before each submodule
/// that runs inside the package), so its reasons are what their functions wait for.
pub fn importers_advice(reasons: &[ExplainedReason]) -> Option<String> {
    let blocking = reasons
        .iter()
        .filter(|r| r.state != ReadinessState::Ready)
        .count();
    (blocking > 0).then(|| {
        let these = match blocking {
            1 => "this statement".to_string(),
            n => format!("these {n} statements"),
        };
        format!(
            "the module defines no function, but every module that imports it (and every \
             submodule of a package `__init__`) runs its top level: fix {these} and their \
             functions can be ready (`inspect DIR --readiness v2 --blockers` ranks them)"
        )
    })
}

/// The next step for a capability that cannot be generated as it is.
pub fn next_step(assessment: &Assessment) -> Option<String> {
    let symbol = &assessment.source.symbol;
    match assessment.state {
        _ if assessment.can_generate_interface => None,
        ReadinessState::Conditional if assessment.in_ir => Some(format!(
            "fix the reasons, or expose `{symbol}` as it is with `--select {symbol} \
             --allow-conditional` (the reasons are then recorded in the generated manifest)"
        )),
        _ => Some(format!(
            "fix the {} reasons first: `--allow-conditional` covers only conditional functions",
            match assessment.state {
                ReadinessState::Ambiguous => "ambiguous",
                _ => "unsupported",
            }
        )),
    }
}

/// `statement_fix` answers v2's reasons before it looks at v1's risks.
fn unreachable_unproved() -> String {
    "move this statement into a function".into()
}
