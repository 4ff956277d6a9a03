//! What to fix first in a directory under readiness v2 (`apizr inspect DIR --readiness v2
//! --blockers`, `apizr.blockers/v1`), from the module explanations.
//!
//! The rule. A function is servable only when every module its import runs — its own module,
//! the local modules that imports, their parent packages' `__init__`, transitively — has a top
//! level v2 proves: blockers are conjunctive and transitive. A module's explanation says which
//! of its module reasons are its own (a statement at fault in its file) and which are about
//! another module (a culprit with `runs`: a parent package, an import of a local module, a
//! base class from one; [`crate::explain`]). Following `runs` from a module reaches every
//! module whose own culprits it waits for. What blocks an importer is what makes a module not
//! "own-proved" (READY-004/014/015 of its own, [`crate::readiness::v2::package`]); a module's
//! own functions also wait for its other module reasons (READY-008).
//!
//! * [`link`] fills in each `runs` culprit's `leads_to` (and says it in the note): the first
//!   module, breadth first, with own culprits, the chain to it and its first culprit.
//! * [`Blockers::of`]: per function that is not ready, its culprit set (its module's own
//!   culprits and those of every module reached through `runs`). A function whose own reasons
//!   are all `ready` counts for its set: proving exactly those culprits makes it ready (as far
//!   as the model sees: a proof can reveal a later statement). Functions with own reasons
//!   (input types, ...) are counted separately, by code. Culprits are ranked by the
//!   functions they block; sets by the functions proving them gains.
//!
//! ```text
//! {"culprits":[{"also_own_reasons","alone","code","column","fix","functions","line","module",
//!               "note":str|null,"path","rank","text"}],
//!  "functions":{"blocked_by_both","blocked_by_top_levels","other","own_reasons_only","ready",
//!               "total"},
//!  "own_reasons":[{"code","functions","summary"}],
//!  "schema_version":"apizr.blockers/v1",
//!  "sets":[{"culprits":[rank],"functions"}]}
//! ```
//!
//! `functions`: functions whose set holds the culprit and whose own reasons are fine;
//! `also_own_reasons`: functions whose set holds it but that have own reasons too; `alone`:
//! functions whose set is this culprit only. `other` counts functions that are not ready
//! although neither their own reasons nor a culprit say why (a module reached through `runs`
//! could not be inspected).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use apizr_ir::{ReadinessState, ReasonCode};
use serde::Serialize;

use super::{ModuleEntry, ProjectInspection};
use crate::explain::{Culprit, ExplainedReason, Explanation, LeadsTo};

pub const BLOCKERS_SCHEMA: &str = "apizr.blockers/v1";

/// The reason is about another module of the directory (one of its culprits `runs` it).
fn derived(reason: &ExplainedReason) -> bool {
    reason.culprits.iter().any(|c| !c.runs.is_empty())
}

/// An own reason of the module that keeps it from being own-proved, so it blocks importers.
fn blocks_importers(reason: &ExplainedReason) -> bool {
    const CODES: [ReasonCode; 3] = [ReasonCode::R004, ReasonCode::R014, ReasonCode::R015];
    !derived(reason) && CODES.iter().any(|c| c.code() == reason.code)
}

/// An own reason that keeps the module's own functions from being ready.
fn blocks_own(reason: &ExplainedReason) -> bool {
    !derived(reason) && reason.state != ReadinessState::Ready
}

/// What the directory's explanations say about one module.
struct Node<'a> {
    path: &'a str,
    /// `None` when the module could not be inspected (or was not explained).
    explanation: Option<&'a Explanation>,
    /// The modules its derived module reasons run.
    runs: Vec<&'a str>,
}

fn nodes(modules: &[ModuleEntry]) -> HashMap<&str, Node<'_>> {
    let mut nodes = HashMap::new();
    for entry in modules {
        let Some(module) = entry.module.as_deref() else {
            continue;
        };
        let explanation = entry
            .result
            .as_ref()
            .ok()
            .and_then(|r| r.explanation.as_ref());
        let mut runs: Vec<&str> = explanation
            .into_iter()
            .flat_map(|e| &e.module_reasons)
            .flat_map(|r| &r.culprits)
            .flat_map(|c| c.runs.iter().map(String::as_str))
            .collect();
        runs.sort_unstable();
        runs.dedup();
        // The first entry of a name wins, as in the package index (a shadowed `a.py` next to
        // `a/__init__.py` is not the module).
        nodes.entry(module).or_insert(Node {
            path: &entry.path,
            explanation,
            runs,
        });
    }
    nodes
}

/// What importing `module` as another module's dependency runs besides its own `runs`: its
/// parent packages (the import graph's edge to a local module includes them; when they are
/// the importer's own ancestors they are running already, which the breadth-first walk sees
/// as modules it has reached).
fn parents<'a>(nodes: &HashMap<&'a str, Node<'a>>, module: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut rest = module;
    while let Some((parent, _)) = rest.rsplit_once('.') {
        if let Some((name, _)) = nodes.get_key_value(parent) {
            out.push(*name);
        }
        rest = parent;
    }
    out
}

impl Node<'_> {
    fn importer_blockers(&self) -> impl Iterator<Item = &ExplainedReason> {
        self.explanation
            .into_iter()
            .flat_map(|e| &e.module_reasons)
            .filter(|r| blocks_importers(r))
    }
}

/// Breadth first from `start`: the chain to the first module that cannot be proved by
/// proving others (it has own culprits, or it could not be inspected).
fn leads_to(nodes: &HashMap<&str, Node>, start: &[String]) -> Option<LeadsTo> {
    // Each module reached, and the one it was reached from (`None` for a start).
    let mut from: HashMap<&str, Option<&str>> = HashMap::new();
    let mut queue: VecDeque<&str> = VecDeque::new();
    for module in start {
        if let Some((name, _)) = nodes.get_key_value(module.as_str())
            && from.insert(name, None).is_none()
        {
            queue.push_back(name);
        }
    }
    while let Some(current) = queue.pop_front() {
        let Some(node) = nodes.get(current) else {
            continue;
        };
        let first = node.importer_blockers().next();
        if node.explanation.is_none() || first.is_some() {
            let mut chain = vec![current.to_string()];
            let mut at = current;
            while let Some(Some(previous)) = from.get(at) {
                chain.push(previous.to_string());
                at = previous;
            }
            chain.reverse();
            let mut culprit = first.and_then(|r| r.culprits.first()).cloned();
            if let Some(c) = culprit.as_mut() {
                c.leads_to = None;
            }
            return Some(LeadsTo {
                chain,
                module: current.to_string(),
                path: node.path.to_string(),
                culprit,
            });
        }
        for next in node.runs.iter().copied().chain(parents(nodes, current)) {
            if nodes.contains_key(next) && !from.contains_key(next) {
                from.insert(next, Some(current));
                queue.push_back(next);
            }
        }
    }
    None
}

/// The note's tail naming the statement at fault.
fn at_fault(to: &LeadsTo) -> String {
    let through = match to.chain.as_slice() {
        [_] => String::new(),
        chain => format!(
            " (through {})",
            chain
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(" → ")
        ),
    };
    match &to.culprit {
        Some(c) => format!(
            "at fault{through}: {}:{}:{} `{}`",
            to.path, c.span.line, c.span.column, c.text
        ),
        None => format!("at fault{through}: {} could not be inspected", to.path),
    }
}

/// Fills in `leads_to` of every culprit that runs another module, and appends where it leads
/// to the note. Readiness v2 in a directory only: elsewhere no culprit has `runs`.
pub fn link(modules: &mut [ModuleEntry]) {
    let mut found: HashMap<Vec<String>, Option<LeadsTo>> = HashMap::new();
    {
        let nodes = nodes(modules);
        let all_runs = modules
            .iter()
            .filter_map(|e| e.result.as_ref().ok()?.explanation.as_ref())
            .flat_map(|e| {
                let shared = e.module_reasons.iter();
                shared.chain(e.capabilities.iter().flat_map(|c| &c.reasons))
            })
            .flat_map(|r| &r.culprits)
            .filter(|c| !c.runs.is_empty())
            .map(|c| &c.runs);
        for runs in all_runs {
            if !found.contains_key(runs) {
                found.insert(runs.clone(), leads_to(&nodes, runs));
            }
        }
    }
    for entry in modules.iter_mut() {
        let Some(explanation) = entry
            .result
            .as_mut()
            .ok()
            .and_then(|r| r.explanation.as_mut())
        else {
            continue;
        };
        let reasons = explanation.module_reasons.iter_mut().chain(
            explanation
                .capabilities
                .iter_mut()
                .flat_map(|c| c.reasons.iter_mut()),
        );
        for culprit in reasons.flat_map(|r| r.culprits.iter_mut()) {
            if let Some(Some(to)) = found.get(&culprit.runs) {
                let tail = at_fault(to);
                culprit.note = Some(match culprit.note.take() {
                    Some(note) => format!("{note}; {tail}"),
                    None => tail,
                });
                culprit.leads_to = Some(Box::new(to.clone()));
            }
        }
    }
}

/// The blockers summary of a directory.
#[derive(Debug, Clone, Serialize)]
pub struct Blockers {
    pub culprits: Vec<RankedCulprit>,
    pub functions: FunctionCounts,
    pub own_reasons: Vec<OwnReason>,
    pub schema_version: &'static str,
    pub sets: Vec<CulpritSet>,
}

#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct FunctionCounts {
    /// Not ready: only culprits of module top levels block them.
    pub blocked_by_top_levels: usize,
    /// Not ready: culprits and their own reasons.
    pub blocked_by_both: usize,
    /// Not ready: their own reasons only.
    pub own_reasons_only: usize,
    /// Not ready, for no reason an explanation names (a module could not be inspected).
    pub other: usize,
    pub ready: usize,
    /// Every assessment of every explained module.
    pub total: usize,
}

/// One statement at fault and what it blocks.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RankedCulprit {
    /// 1-based position in the ranking (what [`CulpritSet::culprits`] refers to).
    pub rank: usize,
    pub module: String,
    pub path: String,
    pub code: &'static str,
    pub line: u32,
    pub column: u32,
    pub text: String,
    pub note: Option<String>,
    /// The reason's fix (what to change).
    pub fix: String,
    pub functions: usize,
    pub also_own_reasons: usize,
    pub alone: usize,
}

/// Proving exactly these culprits makes `functions` functions ready.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct CulpritSet {
    pub culprits: Vec<usize>,
    pub functions: usize,
}

/// Functions kept from being ready by an own reason with this code.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct OwnReason {
    pub code: &'static str,
    pub summary: &'static str,
    pub functions: usize,
}

/// A culprit's identity: module, line, column, code.
type Key<'a> = (&'a str, u32, u32, &'static str);

/// What the summary shows of a culprit: its reason and the reason's first culprit.
type About<'a> = (&'a ExplainedReason, Option<&'a Culprit>);

fn key<'a>(module: &'a str, reason: &'a ExplainedReason) -> (Key<'a>, About<'a>) {
    let first = reason.culprits.first();
    let column = first.map_or(0, |c| c.span.column);
    ((module, reason.line, column, reason.code), (reason, first))
}

impl Blockers {
    /// The summary of `inspection`'s explanations (inspected with
    /// [`crate::InspectOptions::explain`] under readiness v2).
    pub fn of(inspection: &ProjectInspection) -> Blockers {
        let nodes = nodes(&inspection.modules);
        let mut counts = FunctionCounts::default();
        let mut own_codes: BTreeMap<&'static str, (&'static str, usize)> = BTreeMap::new();
        // Culprit → (functions, also_own_reasons, alone); set → functions.
        let mut per: HashMap<Key, (usize, usize, usize)> = HashMap::new();
        let mut about: HashMap<Key, About> = HashMap::new();
        let mut sets: HashMap<BTreeSet<Key>, usize> = HashMap::new();
        let mut closures: HashMap<&str, (BTreeSet<Key>, bool)> = HashMap::new();
        for (&module, node) in &nodes {
            let Some(explanation) = node.explanation else {
                continue;
            };
            for cap in &explanation.capabilities {
                counts.total += 1;
                if cap.can_generate_interface {
                    counts.ready += 1;
                    continue;
                }
                let (set, unexplained) = if cap.module_reasons {
                    let closure = closures
                        .entry(module)
                        .or_insert_with(|| closure(&nodes, module, &mut about));
                    (closure.0.clone(), closure.1)
                } else {
                    (BTreeSet::new(), false)
                };
                let mut codes: Vec<(&'static str, &'static str)> = cap
                    .reasons
                    .iter()
                    .filter(|r| r.state != ReadinessState::Ready)
                    .map(|r| (r.code, r.summary))
                    .collect();
                codes.sort_unstable();
                codes.dedup();
                let own_ok = codes.is_empty();
                for (code, summary) in &codes {
                    own_codes.entry(code).or_insert((summary, 0)).1 += 1;
                }
                match (set.is_empty(), own_ok) {
                    (true, true) => counts.other += 1,
                    (true, false) => counts.own_reasons_only += 1,
                    (false, ok) => {
                        if ok && !unexplained {
                            counts.blocked_by_top_levels += 1;
                        } else if ok {
                            counts.other += 1;
                        } else {
                            counts.blocked_by_both += 1;
                        }
                        for k in &set {
                            let entry = per.entry(*k).or_default();
                            if ok && !unexplained {
                                entry.0 += 1;
                                if set.len() == 1 {
                                    entry.2 += 1;
                                }
                            } else {
                                entry.1 += 1;
                            }
                        }
                        if ok && !unexplained {
                            *sets.entry(set).or_default() += 1;
                        }
                    }
                }
            }
        }
        let mut ranked: Vec<(Key, (usize, usize, usize))> = per.into_iter().collect();
        let path_of = |m: &str| nodes.get(m).map_or("", |n| n.path);
        ranked.sort_by(|(ka, a), (kb, b)| {
            (b.0, b.1, path_of(ka.0), ka.1, ka.2, ka.3).cmp(&(
                a.0,
                a.1,
                path_of(kb.0),
                kb.1,
                kb.2,
                kb.3,
            ))
        });
        let rank_of: HashMap<Key, usize> = ranked
            .iter()
            .enumerate()
            .map(|(i, (k, _))| (*k, i + 1))
            .collect();
        let culprits = ranked
            .iter()
            .enumerate()
            .map(|(i, (k, (functions, also, alone)))| {
                let reason = about.get(k).map(|(r, _)| *r);
                let first = about.get(k).and_then(|(_, c)| *c);
                RankedCulprit {
                    rank: i + 1,
                    module: k.0.to_string(),
                    path: path_of(k.0).to_string(),
                    code: k.3,
                    line: k.1,
                    column: k.2,
                    text: first.map(|c| c.text.clone()).unwrap_or_default(),
                    note: first.and_then(|c| c.note.clone()),
                    fix: reason.map(|r| r.fix.clone()).unwrap_or_default(),
                    functions: *functions,
                    also_own_reasons: *also,
                    alone: *alone,
                }
            })
            .collect();
        let mut sets: Vec<CulpritSet> = sets
            .into_iter()
            .map(|(set, functions)| {
                let mut culprits: Vec<usize> =
                    set.iter().filter_map(|k| rank_of.get(k).copied()).collect();
                culprits.sort_unstable();
                CulpritSet {
                    culprits,
                    functions,
                }
            })
            .collect();
        sets.sort_by(|a, b| {
            (b.functions, a.culprits.len(), &a.culprits).cmp(&(
                a.functions,
                b.culprits.len(),
                &b.culprits,
            ))
        });
        let mut own_reasons: Vec<OwnReason> = own_codes
            .into_iter()
            .map(|(code, (summary, functions))| OwnReason {
                code,
                summary,
                functions,
            })
            .collect();
        own_reasons.sort_by(|a, b| b.functions.cmp(&a.functions).then(a.code.cmp(b.code)));
        Blockers {
            culprits,
            functions: counts,
            own_reasons,
            schema_version: BLOCKERS_SCHEMA,
            sets,
        }
    }

    /// Canonical JSON bytes.
    pub fn canonical_bytes(&self) -> Result<Vec<u8>, apizr_ir::json::CanonicalError> {
        apizr_ir::canonical_bytes(self)
    }
}

/// The culprits a function of `module` waits for (its module's own culprits and the
/// importer-blocking culprits of every module reached through `runs`), and whether a module
/// reached could not be explained.
fn closure<'a>(
    nodes: &'a HashMap<&'a str, Node<'a>>,
    module: &'a str,
    about: &mut HashMap<Key<'a>, About<'a>>,
) -> (BTreeSet<Key<'a>>, bool) {
    let mut set = BTreeSet::new();
    let mut unexplained = false;
    let mut seen: HashSet<&str> = HashSet::new();
    let mut stack = vec![module];
    while let Some(current) = stack.pop() {
        if !seen.insert(current) {
            continue;
        }
        let Some(node) = nodes.get(current) else {
            unexplained = true;
            continue;
        };
        let Some(explanation) = node.explanation else {
            unexplained = true;
            continue;
        };
        let own = current == module;
        for reason in &explanation.module_reasons {
            let counts = if own {
                blocks_own(reason)
            } else {
                blocks_importers(reason)
            };
            if counts {
                let (k, shown) = key(current, reason);
                about.entry(k).or_insert(shown);
                set.insert(k);
            }
        }
        stack.extend(node.runs.iter().copied());
        // A module reached through an import runs inside its packages (the start module's
        // own parents are in its `runs` when it needs them).
        if !own {
            stack.extend(parents(nodes, current));
        }
    }
    (set, unexplained)
}
