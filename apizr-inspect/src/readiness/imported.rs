//! Readiness v2 input types imported from the inspected package's own modules:
//! `from .models import Point` (or `from pkg.types import Color`, also directly under
//! `if TYPE_CHECKING:`) makes `Point` the class, TypedDict or type alias that module proves,
//! with the same exact JSON Schema and worker conversion as if it were declared here.
//!
//! The rule, and why it is sound:
//!
//! * the import is resolved by the package index ([`crate::package`], the resolution the
//!   import-following of readiness v2 and bundling use), so `Point` is what the worker's
//!   import binds; only a name the other module binds once at top level counts (its own
//!   proof, [`super::classes`], [`super::aliases`], [`super::typeddict`], refuses a name bound
//!   twice); a name re-exported by that module is followed the same way;
//! * the importing module's name must be bound once and never modified;
//! * the class keeps its real module in `python: {kind, module, name}`: the worker builds
//!   instances from that module's namespace. An import at module level has loaded it
//!   already, and its harmlessness is the import's own verdict (READY-015 unless the package
//!   proves it). An import under `if TYPE_CHECKING:` never runs, so the worker imports the
//!   module itself: such an import is then judged as a call-time import
//!   ([`V2Types::worker_imports`]), never excused;
//! * a module of the import chain that is already being proved (a cycle) or a chain longer
//!   than [`MAX_CHAIN`] gives a refusal, never a guess; a module that cannot be parsed gives
//!   nothing (the name keeps v1's READY-013).
//!
//! Only the names that annotations of the importing module use are resolved (each other
//! module is parsed once per importer), so modules without such imports cost nothing.

use std::collections::{BTreeMap, HashSet};

use apizr_ir::TypeSpec;
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr, Stmt};
use ruff_text_size::Ranged;

use super::classes::{self, ClassCandidate, V2Types};
use super::typeddict;
use crate::facts::{ModuleFacts, Statement, View};
use crate::module::ParsedModule;
use crate::package::{ImportTime, PackageIndex, ResolvedImport};
use crate::readiness::v2::package::{local_target, reads_name};

/// The longest chain of modules an imported type is followed through.
pub const MAX_CHAIN: usize = 4;

/// Resolves names imported from the package's modules (see the module documentation).
#[derive(Debug, Clone)]
pub struct Imported<'i> {
    pub index: &'i PackageIndex,
    /// The modules whose types are being proved, outermost first.
    chain: Vec<String>,
}

impl<'i> Imported<'i> {
    pub fn new(index: &'i PackageIndex) -> Self {
        Imported {
            index,
            chain: Vec::new(),
        }
    }
}

/// The candidates the import statement `statement` of `parsed` binds, for the names in
/// `wanted`; pushed onto `out` (with `worker_imports` updated).
pub fn candidates(
    (imported, parsed, facts, resolved): (
        &Imported,
        &ParsedModule,
        &ModuleFacts,
        &[ResolvedImport],
    ),
    statement: &Statement,
    wanted: &HashSet<String>,
    out: &mut V2Types,
) {
    let Stmt::ImportFrom(_) = statement.node else {
        return;
    };
    let type_checking = !statement.is_direct();
    if type_checking && !super::aliases::in_type_checking(facts, statement) {
        return;
    }
    let range = statement.node.range();
    // Group the names by the module they are read from: each is proved once.
    let mut by_target: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for import in resolved.iter().filter(|i| i.statement == range) {
        let (Some(bound), Some(name), Some(target)) = (
            import.bound.as_deref(),
            import.name.as_deref(),
            local_target(import),
        ) else {
            continue;
        };
        let time_ok = match import.time {
            ImportTime::Import => !type_checking,
            ImportTime::TypeChecking => type_checking,
            ImportTime::Call => false,
        };
        let once =
            facts.bindings_of(bound, View::Namespace).count() == 1 && !facts.is_mutated(bound);
        if time_ok && once && wanted.contains(bound) && reads_name(import, target) {
            by_target.entry(target).or_default().push((bound, name));
        }
    }
    for (target, names) in by_target {
        let wanted_there: HashSet<String> = names.iter().map(|(_, n)| n.to_string()).collect();
        let proved = module_types(imported, parsed, target, wanted_there);
        for (bound, name) in names {
            let Some(outcome) = lookup(&proved, target, name) else {
                continue;
            };
            if type_checking && outcome.as_ref().is_ok_and(TypeSpec::has_python_class) {
                out.worker_imports.insert(range);
            }
            out.classes.push(ClassCandidate {
                name: bound.to_string(),
                line: statement.line,
                outcome,
            });
        }
    }
}

/// What `target` proves about its top-level types (`Err` when it cannot be followed).
fn module_types(
    imported: &Imported,
    importer: &ParsedModule,
    target: &str,
    wanted: HashSet<String>,
) -> Result<(V2Types, Vec<typeddict::Candidate>), String> {
    let chain = &imported.chain;
    if target == importer.module || chain.iter().any(|m| m == target) {
        return Err(format!("`{target}` is part of an import cycle of types"));
    }
    if chain.len() >= MAX_CHAIN {
        return Err(format!(
            "`{target}` is reached through more than {MAX_CHAIN} modules"
        ));
    }
    let parsed = imported
        .index
        .parse(target)
        .map_err(|e| format!("`{target}` cannot be read: {e}"))?;
    let facts = ModuleFacts::collect(&parsed);
    let typed_dicts = typeddict::prove_all(&parsed, &facts);
    let mut next = imported.clone();
    next.chain.push(importer.module.clone());
    let mut wanted = wanted;
    wanted.extend(annotation_names(&facts));
    let types = classes::prove_all_in(&parsed, &facts, &typed_dicts, Some((&next, &wanted)));
    Ok((types, typed_dicts))
}

/// The proved shape (or refusal) `name` has in `target`; `None` when it is no type there.
fn lookup(
    proved: &Result<(V2Types, Vec<typeddict::Candidate>), String>,
    target: &str,
    name: &str,
) -> Option<Result<TypeSpec, String>> {
    let (types, typed_dicts) = match proved {
        Ok(found) => found,
        Err(why) => return Some(Err(why.clone())),
    };
    let from = |why: &str| format!("`{name}` of `{target}`: {why}");
    if let Some(class) = types.classes.iter().rev().find(|c| c.name == name) {
        // The worker would import modules the other one reads only for type checkers.
        if !types.worker_imports.is_empty() {
            return Some(Err(from("it imports types only under `if TYPE_CHECKING:`")));
        }
        return Some(class.outcome.clone().map_err(|why| from(&why)));
    }
    if let Some(alias) = types.aliases.iter().find(|a| a.name == name) {
        return Some(
            match alias.findings.is_empty() && types.worker_imports.is_empty() {
                true => Ok(alias.spec.clone()),
                false => Err(from("the alias is not a precise JSON type")),
            },
        );
    }
    let typed_dict = typed_dicts.iter().find(|c| c.name == name)?;
    Some(typed_dict.outcome.clone().map_err(|why| from(&why)))
}

/// The names annotations of `facts`' module read: parameters and returns of its functions,
/// class-body fields, and the values of type aliases.
pub fn annotation_names(facts: &ModuleFacts) -> HashSet<String> {
    let mut names = Names(HashSet::new());
    for (_, statement) in facts.statements() {
        match statement.node {
            Stmt::FunctionDef(def) => {
                // `*args`/`**kwargs` too: under v2 their annotations are parameter types.
                for param in def.parameters.iter() {
                    if let Some(annotation) = param.annotation() {
                        names.visit_expr(annotation);
                    }
                }
                if let Some(returns) = def.returns.as_deref() {
                    names.visit_expr(returns);
                }
            }
            Stmt::ClassDef(class) => {
                for stmt in &class.body {
                    if let Stmt::AnnAssign(field) = stmt {
                        names.visit_expr(&field.annotation);
                    }
                }
            }
            Stmt::Assign(a) => names.visit_expr(&a.value),
            Stmt::AnnAssign(a) => {
                if let Some(value) = a.value.as_deref() {
                    names.visit_expr(value);
                }
            }
            Stmt::TypeAlias(t) => names.visit_expr(&t.value),
            _ => {}
        }
    }
    names.0
}

struct Names(HashSet<String>);

impl<'a> Visitor<'a> for Names {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Name(name) = expr {
            self.0.insert(name.id.to_string());
        }
        visitor::walk_expr(self, expr);
    }
}
