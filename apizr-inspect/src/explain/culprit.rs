//! Evidence → culprits: what the reason is about, where it is, and a short note on why.

use ruff_python_ast::Stmt;
use ruff_text_size::{Ranged, TextRange, TextSize};
use serde::Serialize;

use super::Module;
use crate::discovery::execution::first_yield;
use crate::facts::{Binding, BindingKind, StmtId};
use crate::notebook::CellLines;
use crate::readiness::Finding;
use crate::readiness::evidence::{Evidence, MainGuard, Risk, TypeCause, Unresolved};

/// One thing a reason is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Culprit {
    pub kind: CulpritKind,
    /// The source text (its first line, shortened when long).
    pub text: String,
    pub span: SourceSpan,
    /// For notebooks: the cell holding it.
    pub cell: Option<CellRef>,
    /// Why it counts, when the text alone does not say.
    pub note: Option<String>,
    /// Readiness v2 in a directory: the modules of the directory this culprit runs whose
    /// import v2 does not prove (the parent package, the imported module, the module a base
    /// class comes from). The module must be fixed there, not here. Left out when empty
    /// (always under v1, so v1 explanations keep their bytes).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<String>,
    /// Readiness v2 in a directory: where `runs` leads, the first statement at fault
    /// ([`crate::project::blockers`] fills it in once every module is explained).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leads_to: Option<Box<LeadsTo>>,
}

/// The statement at fault behind a culprit that runs another module: the import chain from
/// the module the culprit runs to the first one (breadth first) whose own top level v2 does
/// not prove, that module's file and its first culprit (`None` when it could not be
/// inspected).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeadsTo {
    pub chain: Vec<String>,
    pub module: String,
    pub path: String,
    pub culprit: Option<Culprit>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CulpritKind {
    /// A top-level statement (READY-004).
    Statement,
    /// The control flow around a definition (READY-001).
    ControlFlow,
    Decorator,
    /// A binding of the function's name (READY-003).
    Binding,
    Import,
    Call,
    /// A type expression, or the name of something without an annotation.
    Type,
    /// A parameter (`*args`).
    Parameter,
    Yield,
    /// A definition of a rejected symbol.
    Definition,
}

/// 1-based; columns count characters; the end is exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SourceSpan {
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
}

/// A notebook cell: its position in the notebook, its `In[n]` count, the line inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CellRef {
    pub number: usize,
    pub execution_count: Option<u64>,
    pub line: u32,
}

const MAX_TEXT_CHARS: usize = 100;

impl Module<'_> {
    pub(super) fn culprit(
        &self,
        kind: CulpritKind,
        range: TextRange,
        note: Option<String>,
    ) -> Culprit {
        let span = self.span(range);
        Culprit {
            kind,
            text: self.text(range),
            span,
            cell: CellLines::locate(self.cells, span.line).map(|(cell, line)| CellRef {
                number: cell.number,
                execution_count: cell.execution_count,
                line,
            }),
            note,
            runs: Vec::new(),
            leads_to: None,
        }
    }

    pub(super) fn span(&self, range: TextRange) -> SourceSpan {
        let start = self.parsed.position(range.start());
        let end = self.parsed.position(range.end());
        SourceSpan {
            line: start.line,
            column: start.column,
            end_line: end.line,
            end_column: end.column,
        }
    }

    /// The first line of the source in `range`, shortened to [`MAX_TEXT_CHARS`].
    pub(super) fn text(&self, range: TextRange) -> String {
        let full = self
            .parsed
            .text
            .get(std::ops::Range::<usize>::from(range))
            .unwrap_or("");
        let mut lines = full.lines();
        let first = lines.next().unwrap_or("").trim_end();
        let cut: String = first.chars().take(MAX_TEXT_CHARS).collect();
        if cut.len() < first.len() || lines.next().is_some() {
            format!("{cut} …")
        } else {
            cut
        }
    }

    /// A statement's range from its CPython line (skipping decorators) to its end.
    pub(super) fn statement_range(&self, id: StmtId) -> TextRange {
        let statement = self.facts.statement(id);
        let start = match statement.node {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {
                // The keyword's line, after its indentation.
                let line_start = self.parsed.line_start(statement.line);
                let rest = self
                    .parsed
                    .text
                    .get(usize::from(line_start)..)
                    .unwrap_or("");
                let indent = rest.len() - rest.trim_start_matches([' ', '\t']).len();
                line_start + TextSize::from(indent as u32)
            }
            other => other.start(),
        };
        TextRange::new(start.min(statement.node.end()), statement.node.end())
    }

    /// An imported module as written: `numpy`, `.i18n`, `..` (for `from .. import x`).
    pub(super) fn written_module(
        &self,
        range: TextRange,
        statement: TextRange,
        level: u32,
    ) -> String {
        let dots = ".".repeat(level as usize);
        if range == statement {
            dots
        } else {
            format!("{dots}{}", self.text(range))
        }
    }

    /// How a binding came about, for notes: "an assignment at line 12 (under `if X:`)".
    pub(super) fn binding_note(&self, binding: &Binding) -> String {
        let alias = |imported: &str| {
            let last = imported.rsplit('.').next().unwrap_or(imported);
            if binding.name == last || imported.starts_with(&format!("{}.", binding.name)) {
                String::new()
            } else {
                format!(" as {}", binding.name)
            }
        };
        let how = match &binding.kind {
            BindingKind::Import { module, .. } => format!("`import {module}{}`", alias(module)),
            BindingKind::FromImport {
                module,
                level,
                name,
            } => format!(
                "`from {}{} import {name}{}`",
                ".".repeat(*level as usize),
                module.unwrap_or(""),
                alias(name)
            ),
            BindingKind::Def => "a `def`".into(),
            BindingKind::Class => "a `class` statement".into(),
            BindingKind::Assignment => "an assignment".into(),
            BindingKind::AugmentedAssignment => "an augmented assignment".into(),
            BindingKind::Deletion => "`del`".into(),
            BindingKind::LoopTarget => "a `for` loop".into(),
            BindingKind::WithTarget => "a `with` statement".into(),
            BindingKind::Handler => "an `except ... as` clause".into(),
            BindingKind::MatchCapture => "a `case` pattern".into(),
            BindingKind::Walrus => "an assignment expression (`:=`)".into(),
            BindingKind::ComprehensionTarget => "a comprehension".into(),
            BindingKind::AnnotationOnly => "an annotation".into(),
        };
        let statement = self.facts.statement(binding.stmt);
        let under = match statement.parent {
            Some(parent) => {
                let header = self.text(self.statement_range(parent));
                format!(", under `{}`", header.trim_end_matches(" …"))
            }
            None => String::new(),
        };
        format!("bound by {how} at line {}{under}", binding.line)
    }
}

/// The culprits of one finding (`symbol` is the capability's name, for rejected symbols).
pub fn culprits(module: &Module, finding: &Finding, symbol: Option<&str>) -> Vec<Culprit> {
    use CulpritKind as K;
    let facts = module.facts;
    match &finding.evidence {
        Evidence::ControlFlow { parent } => {
            let range = module.statement_range(*parent);
            vec![module.culprit(K::ControlFlow, first_line(module, range), None)]
        }
        Evidence::Decorated { def } => match facts.statement(*def).node {
            Stmt::FunctionDef(node) => node
                .decorator_list
                .iter()
                .map(|d| module.culprit(K::Decorator, d.range(), None))
                .collect(),
            _ => Vec::new(),
        },
        Evidence::Rebinding { binding } => {
            let binding = facts.binding(*binding);
            let note = module.binding_note(binding);
            vec![module.culprit(K::Binding, binding.range, Some(note))]
        }
        Evidence::Statement { stmt, risk } => {
            let range = module.statement_range(*stmt);
            let mut culprits =
                vec![module.culprit(K::Statement, range, Some(risk_note(module, *risk)))];
            // v2: also the part of the statement it could not prove.
            if let Risk::Unproved(unproved) = risk
                && unproved.range != range
            {
                let note = why_note(module, *unproved);
                culprits.push(module.culprit(K::Statement, unproved.range, Some(note)));
            }
            // A base class from an unproved module of the package: the fault is there.
            if let Risk::Unproved(unproved) = risk
                && unproved.why == crate::readiness::v2::Why::BaseFromUnproved
                && let Some(package) = module.rules.package()
                && let Some(source) = package.local_source_of(&module.text(unproved.range))
                && let Some(last) = culprits.last_mut()
            {
                last.runs = vec![source.to_string()];
            }
            culprits
        }
        Evidence::Generator { def } => def
            .and_then(|id| match facts.statement(id).node {
                Stmt::FunctionDef(node) => first_yield(node),
                _ => None,
            })
            .map(|range| vec![module.culprit(K::Yield, range, None)])
            .unwrap_or_default(),
        Evidence::Type { range, cause } => {
            let kind = match cause {
                TypeCause::Missing => K::Parameter,
                _ => K::Type,
            };
            vec![module.culprit(kind, *range, type_note(module, *range, *cause))]
        }
        Evidence::StarImport { range } => vec![module.culprit(K::Import, *range, None)],
        Evidence::Call { range } => vec![module.culprit(K::Call, *range, None)],
        Evidence::Import {
            range,
            statement,
            level,
            problem,
        } => {
            let mut culprit = module.culprit(K::Import, *range, None);
            culprit.text = module.written_module(*range, *statement, *level);
            if culprit.text != module.text(*statement) {
                culprit.note = Some(format!("in `{}`", module.text(*statement)));
            }
            if *problem == crate::readiness::imports::ImportProblem::LocalUnproved
                && let Some(package) = module.rules.package()
            {
                culprit.runs = package.unproved_targets(*statement);
            }
            vec![culprit]
        }
        Evidence::Declared { statement, .. } => {
            vec![module.culprit(K::Import, first_line(module, *statement), None)]
        }
        Evidence::ParentPackage { package } => {
            // The statement is in the package's `__init__`, not in this file: point at the
            // file's start and name the package.
            let start = ruff_text_size::TextRange::empty(0.into());
            let mut culprit = module.culprit(K::Import, start, None);
            culprit.text = format!("package `{package}`");
            culprit.note = Some(format!(
                "importing `{}` first runs `{package}`'s `__init__.py`",
                module.parsed.module
            ));
            culprit.runs = vec![package.clone()];
            vec![culprit]
        }
        Evidence::Rejected { kind } => symbol
            .map(|name| super::rejected::culprits(module, *kind, name))
            .unwrap_or_default(),
    }
}

/// The first line of `range` (for headers of compound statements).
pub(super) fn first_line(module: &Module, range: TextRange) -> TextRange {
    let text = module
        .parsed
        .text
        .get(std::ops::Range::<usize>::from(range))
        .unwrap_or("");
    let len = text.find('\n').unwrap_or(text.len());
    TextRange::at(range.start(), TextSize::from(len as u32))
}

fn risk_note(module: &Module, risk: Risk) -> String {
    match risk {
        Risk::Call(range) => format!("calls `{}` at import", module.text(range)),
        Risk::NotLiteral(range) => format!("`{}` is not a literal", module.text(range)),
        Risk::Default(range) => format!("the default `{}` is not a literal", module.text(range)),
        Risk::Decorated => "a decorator runs at import and may replace the function".into(),
        Risk::Class => "a class statement runs its body at import".into(),
        Risk::ControlFlow => "top-level control flow runs at import".into(),
        Risk::Modifies => "modifies module state at import".into(),
        Risk::MayFail => "may raise at import".into(),
        Risk::MainGuard(why) => match why {
            MainGuard::Else => "the `__main__` guard has an `elif`/`else` branch".into(),
            MainGuard::ModuleIsMain => "the module itself is named `__main__`".into(),
            MainGuard::NameBound(binding) => {
                let binding = module.facts.binding(binding);
                format!("`__name__` is {}", module.binding_note(binding))
            }
            MainGuard::Namespace => {
                "the module uses a star import or a namespace builtin (READY-008)".into()
            }
            MainGuard::Mutation(range) => format!(
                "the module stores into `{}` at line {}",
                module.text(range),
                module.span(range).line
            ),
        },
        Risk::Other => "not a statement readiness can prove harmless".into(),
        Risk::Unproved(unproved) => {
            let span = module.span(unproved.range);
            let what = match unproved.why {
                crate::readiness::v2::Why::NotBound(_) => why_note(module, unproved),
                why => format!("{} `{}`", why_text(why), module.text(unproved.range)),
            };
            format!(
                "readiness v2 cannot prove it harmless: {what} (line {}, column {})",
                span.line, span.column
            )
        }
    }
}

/// What v2 could not prove about the part at fault, naming the module for a missing name.
fn why_note(module: &Module, unproved: crate::readiness::v2::Unproved) -> String {
    match unproved.why {
        crate::readiness::v2::Why::NotBound(from) => format!(
            "`{}` binds no name `{}` on CPython 3.11",
            module.text(from),
            module.text(unproved.range)
        ),
        why => why_text(why).to_string(),
    }
}

/// What v2 could not prove, as a phrase before the culprit's text.
pub(super) fn why_text(why: crate::readiness::v2::Why) -> &'static str {
    use crate::readiness::v2::Why::*;
    match why {
        Unbound => {
            "the name is not bound at this point of the import (or a builtin v2 does not know)"
        }
        MaybeUnbound => "the name is bound on some paths only",
        TypeCheckingOnly => "the name is only imported under `if TYPE_CHECKING:`",
        Attribute => "an attribute v2 does not know exists",
        NotAllowlisted => "a call that is not on the allowlist of pure stdlib constructors",
        Arguments => "arguments v2 cannot check for this call",
        Regex => "a pattern `re.compile` may refuse",
        NotGeneric => "a subscript of something that is not a known generic",
        Arity => "the wrong number of type arguments",
        NotAType => "not a type where typing needs one",
        NotALiteral => "a `Literal[...]` member that is not a literal",
        NotATypeVar => "not distinct type variables",
        BadForwardRef => "a forward reference that does not parse",
        Unhashable => "a key or set element that may be unhashable",
        Decorator => "a decorator that is not on the allowlist (or does not fit the class)",
        Base => "a base class v2 does not know is safe to subclass",
        BaseFromUnproved => {
            "a base class imported from a module of the package whose top level v2 does not prove (or from the same import cycle)"
        }
        SubclassHook => "a base class whose `__init_subclass__` runs when it is subclassed",
        ClassKeyword => "a class keyword v2 does not know",
        ClassBody => "a class-body statement v2 does not prove",
        FieldOrder => "a field without a default after one with a default",
        MutableDefault => "a mutable (unhashable) field default",
        EnumMember => "an enum member that does not fit the enum",
        Target => "a target that stores into an attribute or subscript, or may not unpack",
        Test => "a branch test v2 cannot evaluate",
        Expression => "an expression v2 does not evaluate",
        Statement => "a statement kind v2 never proves",
        Unavailable => "a standard-library module the Linux workers do not have",
        NoModule => "a standard-library module the workers' CPython 3.11 does not have",
        ImportEffects => "a standard-library module whose import has effects",
        NotBound(_) => "a name the standard-library module does not bind",
        Interpreted(refused) => refused.text(),
    }
}

fn type_note(module: &Module, range: TextRange, cause: TypeCause) -> Option<String> {
    let name = module.text(range);
    Some(match cause {
        TypeCause::Missing => "no annotation".into(),
        TypeCause::Unresolved(Unresolved::Bound(binding)) => {
            let binding = module.facts.binding(binding);
            format!("`{}` is {}", binding.name, module.binding_note(binding))
        }
        TypeCause::Unresolved(Unresolved::Rebound) => {
            let root = root_name(module, range);
            let lines: Vec<String> = module
                .facts
                .bindings_of(&root, crate::facts::View::Namespace)
                .map(|(_, b)| b.line.to_string())
                .collect();
            format!(
                "`{root}` is bound {} times (lines {})",
                lines.len(),
                lines.join(", ")
            )
        }
        TypeCause::Unresolved(Unresolved::Mutated) => format!(
            "`{}` is modified by an attribute or subscript store at module level",
            root_name(module, range)
        ),
        TypeCause::Unresolved(Unresolved::Attribute) => "not a typing name readiness knows".into(),
        TypeCause::RefusedTypedDict => {
            let problem = module
                .report
                .structured_types
                .iter()
                .find(|t| t.name == name)
                .and_then(|t| t.problem.clone())?;
            format!("TypedDict `{name}` is not proven: {problem}")
        }
        TypeCause::RefusedClass => {
            let problem = super::types::class_problem(module, &name)?;
            format!("class `{name}` is not usable as a JSON type: {problem}")
        }
        _ => return None,
    })
}

/// The name at the root of a type expression (`t` of `t.List[int]`).
pub(super) fn root_name(module: &Module, range: TextRange) -> String {
    let text = module
        .parsed
        .text
        .get(std::ops::Range::<usize>::from(range))
        .unwrap_or("");
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("")
        .to_string()
}
