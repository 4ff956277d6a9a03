//! Readiness v2 inside a package directory: imports that resolve to the package's own modules
//! are followed instead of counted against every function (READY-015).
//!
//! The rule, and why it is sound. Importing module `M` runs the top level of every module in
//! its import-time closure ([`crate::package::PackageIndex::closure`]: the modules its imports
//! name, their parent packages' `__init__`, transitively). So an import of a local module `T`
//! is harmless when every module of `T`'s closure has a top level v2 proves harmless
//! ("own-proved": no READY-004/014/015 of its own) — `closure_safe` below. Names read from `T`
//! (`from T import Base`) mean what `T` bound them to at the end of its top level (its
//! [`Exports`]), so a class proved in `T` is a known base class in `M`.
//!
//! Cycles: while `M` runs, the modules on the import stack are half-initialised. Every one of
//! them reaches `M` in the import graph (each is running the import that led to `M`; an
//! import of `T` is an edge to `T` and to `T`'s parent packages, except the importer's own
//! ancestors, which started before it and cannot be started again), so they are in `M`'s
//! strongly connected component. Reading a *name* from a module of the same
//! component may therefore raise `ImportError` (the name may not be bound yet): such an import
//! is refused ([`ImportProblem::Cycle`]). Importing a submodule (`from . import util`,
//! `import pkg.util`) reads no name and is fine. A module of another component is either
//! finished or runs to completion during the import.
//!
//! An absolute import whose first component is a standard-library name (`import json`) stays
//! the standard library's even when the directory holds a module of that name (inspecting the
//! stdlib itself): the worker's interpreter has its own stdlib.
//!
//! Parents: a module that imports its package (a relative import, or any import of a module of
//! the directory) runs inside it — bundles import it by its dotted name with the package root
//! on `sys.path` — so its parent packages' `__init__` run first and must be proved too
//! ([`ModulePackage::needs_package`]). A module that imports no file of the directory, in a
//! package that declares no requirements ([`PackageIndex::stands_alone`]), is served as the
//! single file it is, its parents never run, and v2 judges it as v1 does (plus its own
//! proofs): the one rule bundling uses too.
//!
//! Third-party imports are accepted only for distributions the project declares
//! ([`crate::package::declared_dependencies`]); the assessment then carries READY-020, never silently.
//! An import name is a declared distribution's when it is that name (PEP 503 normalised) or
//! when the distribution's wheel installs it ([`PackageContext::provides`]); never guessed.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use ruff_text_size::TextRange;

use super::env::Meaning;
use crate::package::{ImportTarget, ImportTime, PackageIndex, ResolvedImport};
use crate::readiness::imports::ImportProblem;
use crate::readiness::stdlib::is_stdlib;

/// What a proved module binds at the end of its top level (names bound on every path).
pub type Exports = HashMap<String, Export>;

/// One name a proved module binds: its meaning, and its value when it is a bool fixed on every
/// worker (`WIN = sys.platform.startswith("win")`, [`super::fixed`]), which an importer's
/// `if WIN:` reads, a string v2 folds, or a tuple of them ([`super::strings`]), which an
/// importer's patterns use (`re.compile(r"(?:" + PREVENT_BACKSLASH + ...)`). The module has
/// finished its top level when an importer outside its import cycle reads them, and no proved
/// statement stores into another module or mutates a tuple, so they are the values read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    pub meaning: Meaning,
    pub fixed: Option<bool>,
    pub string: Option<String>,
    pub strings: Option<Vec<String>>,
}

/// What readiness v2 knows about the other modules of the inspected directory.
#[derive(Debug)]
pub struct PackageContext<'i> {
    pub index: &'i PackageIndex,
    /// The strongly connected component of each module in the import-time graph.
    pub component: &'i HashMap<String, usize>,
    /// The exports of every own-proved module assessed so far.
    pub exports: HashMap<String, Exports>,
    /// Modules whose import runs only own-proved top levels. `None` while they are not all
    /// known yet (the first pass, which only computes own-proofs and exports).
    pub closure_safe: Option<HashSet<String>>,
    /// While `closure_safe` is not known: modules whose closure already holds a module known
    /// not to be own-proved (their verdict is final; the others are assumed).
    pub closure_unsafe: HashSet<String>,
    /// Normalised names of the distributions the project declares.
    pub declared: &'i BTreeSet<String>,
    /// Import name → normalised distribution, from the wheels the bundle installs
    /// ([`crate::package::wheelhouse_imports`]): `yaml` → `pyyaml`. Empty without a wheelhouse.
    pub provides: &'i BTreeMap<String, String>,
    /// What the package pass settled about interpreted calls after the first pass
    /// ([`super::interp::Settled`]); `None` during it.
    pub settled: Option<super::interp::Settled>,
}

/// The package-aware verdict on one import statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Harmless: every module or name it imports is local and proved, or standard library.
    Accept,
    /// Harmless if the bundle installs these declared third-party distributions (READY-020).
    Declared(Vec<String>),
    /// Not proved, and why.
    Refuse(ImportProblem),
}

/// What v2 learned about one module inside a package (for the modules that import it).
#[derive(Debug, Clone, Default)]
pub struct PackageOutcome {
    /// No READY-004/014/015 of its own at module level.
    pub own_proved: bool,
    /// Its exports when own-proved.
    pub exports: Exports,
    /// The modules whose import the verdicts assumed harmless (closures not known yet):
    /// accepted local targets and the parent packages.
    pub assumed: BTreeSet<String>,
    /// The modules whose exports a verdict needed but were not known.
    pub missing: BTreeSet<String>,
    /// Its interpreted top-level statements (by offset) and what each used
    /// ([`super::interp::Use`]).
    pub interpreted: Vec<(u32, super::interp::Use)>,
}

/// A module's parse, shown by its name.
#[derive(Clone, Copy)]
pub struct ParsedRef<'c>(pub &'c crate::ParsedModule);

impl std::fmt::Debug for ParsedRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ParsedModule({})", self.0.module)
    }
}

/// One module's view of its package: the context and the module's own resolved imports.
#[derive(Debug)]
pub struct ModulePackage<'c> {
    pub ctx: &'c PackageContext<'c>,
    pub module: &'c str,
    /// The module's parse (the interpreter reads its top level, [`super::interp`]).
    pub parsed: ParsedRef<'c>,
    imports: Vec<ResolvedImport>,
    /// Statements under `if TYPE_CHECKING:` the worker runs to build arguments
    /// ([`crate::readiness::classes::V2Types::worker_imports`]): judged as call-time imports.
    worker_imports: HashSet<TextRange>,
    /// See [`PackageOutcome::assumed`] and [`PackageOutcome::missing`].
    assumed: RefCell<BTreeSet<String>>,
    missing: RefCell<BTreeSet<String>>,
    interpreted: RefCell<Vec<(u32, super::interp::Use)>>,
}

impl<'c> ModulePackage<'c> {
    pub fn new(ctx: &'c PackageContext<'c>, parsed: &'c crate::ParsedModule) -> Self {
        ModulePackage {
            ctx,
            module: &parsed.module,
            parsed: ParsedRef(parsed),
            imports: ctx.index.imports_in(parsed),
            worker_imports: HashSet::new(),
            assumed: RefCell::default(),
            missing: RefCell::default(),
            interpreted: RefCell::default(),
        }
    }

    /// Record what the interpreted statement at `statement` used.
    pub fn record_interpreted(&self, statement: TextRange, used: super::interp::Use) {
        let at = u32::from(statement.start());
        let mut all = self.interpreted.borrow_mut();
        all.retain(|(s, _)| *s != at);
        all.push((at, used));
    }

    /// The interpreted statements and what each used, for [`PackageOutcome`].
    pub fn interpreted(&self) -> Vec<(u32, super::interp::Use)> {
        self.interpreted.borrow().clone()
    }

    /// The module is served with its package's files (it does not stand alone as a single
    /// file, [`crate::package::PackageIndex::stands_alone_with`]), so the bundle also carries
    /// the directory's distribution metadata ([`crate::package::dist_info`]).
    pub fn carries_package_files(&self) -> bool {
        !self
            .ctx
            .index
            .stands_alone_with(self.module, &self.imports, !self.ctx.declared.is_empty())
    }

    /// The statements the worker runs although they sit under `if TYPE_CHECKING:`.
    pub fn with_worker_imports(self, worker_imports: HashSet<TextRange>) -> Self {
        ModulePackage {
            worker_imports,
            ..self
        }
    }

    /// What the verdicts assumed or missed, for [`PackageOutcome`].
    pub fn assumptions(&self) -> (BTreeSet<String>, BTreeSet<String>) {
        let mut assumed = self.assumed.borrow().clone();
        if self.ctx.closure_safe.is_none() && self.needs_package() {
            let parents = self.ctx.index.with_parents(self.module);
            assumed.extend(
                parents
                    .into_iter()
                    .filter(|p| *p != self.module && !self.ctx.closure_unsafe.contains(*p))
                    .map(str::to_string),
            );
        }
        (assumed, self.missing.borrow().clone())
    }

    fn exports_of(&self, target: &str) -> Option<&Exports> {
        let found = self.ctx.exports.get(target);
        if found.is_none() {
            self.missing.borrow_mut().insert(target.to_string());
        }
        found
    }

    fn local<'r>(&self, import: &'r ResolvedImport) -> Option<&'r str> {
        local_target(import)
    }

    fn reads_name(import: &ResolvedImport, target: &str) -> bool {
        reads_name(import, target)
    }

    fn same_component(&self, target: &str) -> bool {
        let component = |m: &str| self.ctx.component.get(m).copied();
        component(self.module).is_some() && component(self.module) == component(target)
    }

    /// What the name a `from` import binds (the alias at `alias`) means, when the import is
    /// local; `None` when it is not (the caller's usual rules apply).
    pub fn meaning(&self, alias: TextRange) -> Option<Export> {
        let import = self.imports.iter().find(|i| i.range == alias)?;
        let target = self.local(import)?;
        let unknown = |meaning| Export {
            meaning,
            fixed: None,
            string: None,
            strings: None,
        };
        if !Self::reads_name(import, target) {
            return Some(unknown(Meaning::Module(target.to_string())));
        }
        if import.time == ImportTime::Import && self.same_component(target) {
            return Some(unknown(Meaning::Unknown));
        }
        let name = import.name.as_deref().unwrap_or("");
        Some(
            self.exports_of(target)
                .and_then(|exports| exports.get(name))
                .cloned()
                .unwrap_or(unknown(Meaning::Unknown)),
        )
    }

    /// `name` is bound by an import of a name from a local module (`from .m import name`),
    /// whose exports v2 has when that module is proved and outside this module's cycle.
    pub fn imports_local_name(&self, name: &str) -> bool {
        self.imports.iter().any(|import| {
            import.bound.as_deref() == Some(name)
                && import.time == ImportTime::Import
                && self
                    .local(import)
                    .is_some_and(|target| Self::reads_name(import, target))
        })
    }

    /// The import statement at `statement` imports a module of the package (its top level
    /// runs when the import succeeds, whatever handler would catch its failure).
    pub fn runs_local(&self, statement: TextRange) -> bool {
        self.imports
            .iter()
            .any(|i| i.statement == statement && local_target(i).is_some())
    }

    /// What `module.name` means when `module` is a proved module of the package outside this
    /// module's import cycle (so it has finished running when this one reads it).
    pub fn attribute(&self, module: &str, name: &str) -> Option<Export> {
        let top = module.split('.').next().unwrap_or(module);
        if is_stdlib(top) || !self.ctx.index.contains(module) || self.same_component(module) {
            return None;
        }
        self.exports_of(module)?.get(name).cloned()
    }

    /// The local modules the import statement at `statement` runs whose import-time closure
    /// is not known to be proved: what a [`ImportProblem::LocalUnproved`] refusal is about
    /// (explanations follow them to the statement at fault). All its local targets when none
    /// is known unsafe (an import under a `TYPE_CHECKING` that is not typing's).
    pub fn unproved_targets(&self, statement: TextRange) -> Vec<String> {
        let targets: Vec<&str> = self
            .imports
            .iter()
            .filter(|i| i.statement == statement)
            .filter_map(local_target)
            .collect();
        let unsafe_ = |t: &str| match &self.ctx.closure_safe {
            Some(safe) => !safe.contains(t),
            None => self.ctx.closure_unsafe.contains(t),
        };
        let mut found: Vec<String> = targets
            .iter()
            .filter(|t| unsafe_(t))
            .map(|t| t.to_string())
            .collect();
        if found.is_empty() {
            found = targets.iter().map(|t| t.to_string()).collect();
        }
        found.dedup();
        found
    }

    /// The local module the module-level name `name` is imported from (`from .m import name`):
    /// where a base class refused as [`super::Why::BaseFromUnproved`] comes from.
    pub fn local_source_of(&self, name: &str) -> Option<&str> {
        self.imports
            .iter()
            .filter(|i| i.bound.as_deref() == Some(name) && i.time == ImportTime::Import)
            .find_map(local_target)
    }

    /// The verdict on the import statement at `statement`; `None` when it is not one of the
    /// module's (it is then v1's business).
    pub fn verdict(&self, statement: TextRange) -> Option<Verdict> {
        let mut declared = Vec::new();
        let mut found = false;
        for import in self.imports.iter().filter(|i| i.statement == statement) {
            found = true;
            match self.one(import) {
                Verdict::Accept => {}
                Verdict::Declared(names) => declared.extend(names),
                refuse @ Verdict::Refuse(_) => return Some(refuse),
            }
        }
        if !found {
            return None;
        }
        declared.sort();
        declared.dedup();
        Some(if declared.is_empty() {
            Verdict::Accept
        } else {
            Verdict::Declared(declared)
        })
    }

    fn one(&self, import: &ResolvedImport) -> Verdict {
        // An import the index files under `if TYPE_CHECKING:` (by its spelling) reaches this
        // verdict only when the prover did not excuse it: either that `TYPE_CHECKING` is not
        // typing's (it runs, and the import graph, which left it out, says nothing of what a
        // local one runs), or the worker imports its module to build an argument
        // (`worker_imports`), which is judged below as a call-time import.
        if import.time == ImportTime::TypeChecking
            && matches!(import.target, ImportTarget::Local(_))
            && !self.worker_imports.contains(&import.statement)
        {
            return Verdict::Refuse(ImportProblem::LocalUnproved);
        }
        let star = import.name.as_deref() == Some("*");
        match &import.target {
            ImportTarget::Unresolvable(_) => Verdict::Refuse(ImportProblem::Unresolvable),
            ImportTarget::External(top) if is_stdlib(top) => match star {
                true => Verdict::Refuse(ImportProblem::Star),
                false => Verdict::Accept,
            },
            ImportTarget::External(top) if self.ctx.declared.contains(&normalise(top)) => {
                Verdict::Declared(vec![top.clone()])
            }
            // A declared distribution whose wheel installs this import name.
            ImportTarget::External(top)
                if self
                    .ctx
                    .provides
                    .get(top)
                    .is_some_and(|d| self.ctx.declared.contains(d)) =>
            {
                Verdict::Declared(vec![top.clone()])
            }
            ImportTarget::External(_) => Verdict::Refuse(ImportProblem::Undeclared),
            ImportTarget::Local(_) => match self.local(import) {
                None if star => Verdict::Refuse(ImportProblem::Star),
                None => Verdict::Accept,
                Some(target) => self.local_verdict(import, target),
            },
        }
    }

    fn local_verdict(&self, import: &ResolvedImport, target: &str) -> Verdict {
        let reads = Self::reads_name(import, target);
        if reads && import.time == ImportTime::Import && self.same_component(target) {
            return Verdict::Refuse(ImportProblem::Cycle);
        }
        match &self.ctx.closure_safe {
            Some(safe) if !safe.contains(target) => {
                return Verdict::Refuse(ImportProblem::LocalUnproved);
            }
            Some(_) => {}
            None if self.ctx.closure_unsafe.contains(target) => {
                return Verdict::Refuse(ImportProblem::LocalUnproved);
            }
            None => {
                self.assumed.borrow_mut().insert(target.to_string());
            }
        }
        if !reads {
            return Verdict::Accept;
        }
        let Some(exports) = self.exports_of(target) else {
            return Verdict::Refuse(ImportProblem::LocalUnproved);
        };
        match import.name.as_deref() {
            Some("*") | None => Verdict::Accept,
            Some(name) if exports.contains_key(name) => Verdict::Accept,
            Some(_) => Verdict::Refuse(ImportProblem::MissingName),
        }
    }

    /// The module's resolved imports.
    pub fn imports(&self) -> &[ResolvedImport] {
        &self.imports
    }

    /// The module is served as the single file it is ([`PackageIndex::stands_alone`]).
    pub fn stands_alone(&self) -> bool {
        self.ctx
            .index
            .stands_alone_with(self.module, &self.imports, !self.ctx.declared.is_empty())
    }

    /// The module runs inside its package: importing it runs its parent packages' `__init__`
    /// first. A module with a parent package does unless it [stands
    /// alone](PackageIndex::stands_alone) (no import of the directory's modules, no declared
    /// requirements): `serve DIR`/`generate DIR` then serve it as a single file, with empty
    /// parents. A top-level module has no parents to prove.
    pub fn needs_package(&self) -> bool {
        self.carries_package_files()
            && self
                .ctx
                .index
                .with_parents(self.module)
                .iter()
                .any(|p| *p != self.module)
    }

    /// The packages above this module whose import is not proved harmless (importing
    /// `pkg.mod` runs `pkg/__init__.py` first), when it [needs its package](Self::
    /// needs_package); while closures are not all known, those already known unsafe.
    pub fn unproved_parents(&self) -> Vec<String> {
        if !self.needs_package() {
            return Vec::new();
        }
        let unsafe_ = |p: &str| match &self.ctx.closure_safe {
            Some(safe) => !safe.contains(p),
            None => self.ctx.closure_unsafe.contains(p),
        };
        self.ctx
            .index
            .with_parents(self.module)
            .into_iter()
            .filter(|p| *p != self.module && unsafe_(p))
            .map(str::to_string)
            .collect()
    }
}

/// The local module an import runs, unless it is an absolute import of a stdlib name (which
/// stays the worker's own stdlib).
pub fn local_target(import: &ResolvedImport) -> Option<&str> {
    match &import.target {
        ImportTarget::Local(target) => {
            let top = import.module.split('.').next().unwrap_or("");
            (import.relative || !is_stdlib(top)).then_some(target.as_str())
        }
        _ => None,
    }
}

/// The import reads a name (or, with `*`, every name) of `target`: not a submodule, not
/// `import a.b`.
pub fn reads_name(import: &ResolvedImport, target: &str) -> bool {
    match &import.name {
        Some(name) => target != format!("{}.{name}", import.module),
        None => false,
    }
}

/// A distribution or import name as pip compares them (PEP 503): lower case, runs of `-`, `_`
/// and `.` as one `_`.
pub fn normalise(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut separator = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            separator = true;
            continue;
        }
        if separator && !out.is_empty() {
            out.push('_');
        }
        separator = false;
        out.extend(c.to_lowercase());
    }
    out
}
