//! Structured types: TypedDict candidates, their proofs in source order, and the
//! object TypeSpec of each proven shape (nested proven shapes inlined).
//!
//! A proof fails with exactly one problem string; the checks run in the reference's order,
//! and field annotations are inspected breadth-first (like Python's `ast.walk`), so the first
//! offending node in that order decides the problem.

use std::collections::{HashMap, VecDeque};

use apizr_ir::{ObjectField, ReasonCode, TypeKind, TypeSpec};
use ruff_python_ast::{self as ast, Expr, Stmt};

use super::inputs::{Context, is_typing_name};
use super::lower::{MAX_DEPTH, MAX_NODES, shape_size};
use super::pyrepr::duplicate_fields_error;
use crate::facts::{BindingId, BindingKind, ModuleFacts, StmtId, View};
use crate::module::ParsedModule;

pub const FUNCTIONAL: &str = "Functional TypedDict declarations are unsupported; use class form";
pub const GENERIC: &str = "Generic TypedDict type parameters are unsupported";
pub const BINDING: &str = "TypedDict must have one unconditional, unmodified module binding";
pub const BASE: &str =
    "TypedDict requires a proven stdlib base; inheritance and ambiguous bases are unsupported";
pub const DECORATORS: &str = "TypedDict decorators are unsupported";
pub const KEYWORDS: &str =
    "Only literal total=True/False is supported; metaclass and other keywords are unsupported";
pub const TOTAL: &str = "TypedDict total must be a literal boolean";
pub const BODY: &str = "TypedDict body supports only a docstring, annotated fields and pass";
pub const CALLS: &str = "Annotation calls are unsupported in TypedDict fields";
pub const REFERENCE: &str = "Forward, recursive or unsupported TypedDict field reference: ";
pub const TYPING: &str =
    "TypedDict field typing names require an earlier unambiguous stdlib import";
pub const FIELD_TYPE: &str = "Unsupported, forward or ambiguous TypedDict field type: ";
pub const BOUND: &str = "TypedDict shape exceeds the bounded 32-level/4096-node contract";

/// One candidate and its proof outcome.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub name: String,
    pub line: u32,
    pub end_line: u32,
    /// The declaring statement (used for the READY-004 exemption).
    pub stmt: StmtId,
    pub outcome: Result<TypeSpec, String>,
}

enum Declaration<'a> {
    Class {
        class: &'a ast::StmtClassDef,
        direct: bool,
    },
    Functional,
}

/// Find and prove every candidate, in source order.
pub fn prove_all<'a>(parsed: &ParsedModule, facts: &'a ModuleFacts<'a>) -> Vec<Candidate> {
    let found = find(facts);
    let all_names: Vec<String> = found.iter().map(|(n, _, _)| n.clone()).collect();
    let mut proven: HashMap<String, TypeSpec> = HashMap::new();
    let mut out = Vec::new();
    for (name, stmt, declaration) in found {
        let outcome = match declaration {
            Declaration::Functional => Err(FUNCTIONAL.to_string()),
            Declaration::Class { class, direct } => {
                let prover = Prover {
                    parsed,
                    facts,
                    class,
                    own: facts.own_binding(stmt),
                    all_names: &all_names,
                    proven: &proven,
                };
                prover.prove(direct)
            }
        };
        if let Ok(shape) = &outcome {
            proven.insert(name.clone(), shape.clone());
        }
        let node = facts.statement(stmt);
        out.push(Candidate {
            name,
            line: node.line,
            end_line: parsed.end_line(node.node),
            stmt,
            outcome,
        });
    }
    out
}

/// Candidates in source order: classes anywhere in module scope whose bases mention
/// `TypedDict` or an earlier candidate class, and direct `X = TypedDict(...)` assignments.
fn find<'a>(facts: &ModuleFacts<'a>) -> Vec<(String, StmtId, Declaration<'a>)> {
    let mut found: Vec<(String, StmtId, Declaration<'a>)> = Vec::new();
    for (id, statement) in facts.statements() {
        let direct = statement.is_direct();
        match statement.node {
            Stmt::ClassDef(class) => {
                let previous: Vec<&str> = found
                    .iter()
                    .filter(|(_, _, d)| matches!(d, Declaration::Class { .. }))
                    .map(|(n, _, _)| n.as_str())
                    .collect();
                let mentions = class.arguments.as_ref().is_some_and(|a| {
                    a.args.iter().any(|base| {
                        mentions_typeddict(base, facts)
                            || matches!(base, Expr::Name(n) if previous.contains(&n.id.as_str()))
                    })
                });
                if mentions {
                    found.push((
                        class.name.to_string(),
                        id,
                        Declaration::Class { class, direct },
                    ));
                }
            }
            Stmt::Assign(node) if direct && is_typeddict_call(&node.value, facts) => {
                for target in &node.targets {
                    if let Expr::Name(n) = target {
                        found.push((n.id.to_string(), id, Declaration::Functional));
                    }
                }
            }
            Stmt::AnnAssign(node) if direct => {
                if let (Expr::Name(n), Some(value)) = (node.target.as_ref(), &node.value)
                    && is_typeddict_call(value, facts)
                {
                    found.push((n.id.to_string(), id, Declaration::Functional));
                }
            }
            _ => {}
        }
    }
    found
}

/// `TypedDict`, a name imported as `TypedDict`, or any `<x>.TypedDict` attribute.
fn mentions_typeddict(expr: &Expr, facts: &ModuleFacts) -> bool {
    match expr {
        Expr::Name(n) => {
            n.id.as_str() == "TypedDict"
                || facts
                    .bindings_of(n.id.as_str(), View::Namespace)
                    .any(|(_, b)| {
                        matches!(&b.kind, BindingKind::FromImport { name, .. } if *name == "TypedDict")
                    })
        }
        Expr::Attribute(a) => a.attr.as_str() == "TypedDict",
        _ => false,
    }
}

fn is_typeddict_call(value: &Expr, facts: &ModuleFacts) -> bool {
    matches!(value, Expr::Call(call) if mentions_typeddict(&call.func, facts))
}

struct Prover<'a> {
    parsed: &'a ParsedModule,
    facts: &'a ModuleFacts<'a>,
    class: &'a ast::StmtClassDef,
    /// The class statement's binding of its own name.
    own: Option<BindingId>,
    all_names: &'a [String],
    proven: &'a HashMap<String, TypeSpec>,
}

impl Prover<'_> {
    /// True when `binding` is evaluated before this class binds its name.
    fn before_class(&self, binding: BindingId) -> bool {
        self.own.is_none_or(|own| binding < own)
    }

    /// `name` is bound exactly once, unconditionally, before this class, by an import matching
    /// `accept`, and never mutated.
    fn proven_import(&self, name: &str, accept: impl Fn(&BindingKind) -> bool) -> bool {
        let facts = self.facts;
        !facts.is_mutated(name)
            && facts
                .unique_binding(name, View::Namespace)
                .is_some_and(|(id, b)| {
                    facts.is_direct(b) && self.before_class(id) && accept(&b.kind)
                })
    }

    fn typing_from(&self, name: &str, wanted: &str) -> bool {
        self.proven_import(name, |k| k.is_from_import("typing", wanted))
    }

    fn typing_module(&self, name: &str) -> bool {
        self.proven_import(name, |k| k.is_import_of("typing"))
    }

    fn proven_base(&self, base: &Expr) -> bool {
        match base {
            Expr::Name(n) => self.typing_from(n.id.as_str(), "TypedDict"),
            Expr::Attribute(a) if a.attr.as_str() == "TypedDict" => {
                matches!(a.value.as_ref(), Expr::Name(m) if self.typing_module(m.id.as_str()))
            }
            _ => false,
        }
    }

    fn prove(&self, direct: bool) -> Result<TypeSpec, String> {
        let class = self.class;
        let name = class.name.as_str();
        if class.type_params.is_some() {
            return Err(GENERIC.into());
        }
        if !direct
            || self.facts.bindings_of(name, View::Namespace).count() != 1
            || self.facts.is_mutated(name)
        {
            return Err(BINDING.into());
        }
        let (bases, keywords) = match &class.arguments {
            Some(a) => (&a.args[..], &a.keywords[..]),
            None => (&[][..], &[][..]),
        };
        if !matches!(bases, [base] if self.proven_base(base)) {
            return Err(BASE.into());
        }
        if !class.decorator_list.is_empty() {
            return Err(DECORATORS.into());
        }
        let total = match keywords {
            [] => true,
            [k] if k.arg.as_ref().is_some_and(|a| a.as_str() == "total") => match &k.value {
                Expr::BooleanLiteral(b) => b.value,
                _ => return Err(TOTAL.into()),
            },
            _ => return Err(KEYWORDS.into()),
        };
        let candidates = self
            .all_names
            .iter()
            .map(|n| (n.clone(), self.proven.get(n)))
            .collect();
        let ctx = Context::new(self.facts, candidates);
        // Body statements and field checks run in one pass, in source order.
        let mut fields = Vec::new();
        for (index, stmt) in class.body.iter().enumerate() {
            let (field, annotation) = match stmt {
                Stmt::Pass(_) => continue,
                Stmt::Expr(e)
                    if index == 0 && matches!(e.value.as_ref(), Expr::StringLiteral(_)) =>
                {
                    continue;
                }
                Stmt::AnnAssign(a) if a.value.is_none() => match a.target.as_ref() {
                    Expr::Name(n) => (n.id.as_str(), a.annotation.as_ref()),
                    _ => return Err(BODY.into()),
                },
                _ => return Err(BODY.into()),
            };
            self.walk_field(&ctx, annotation)?;
            let (required, inner) = self.requiredness(&ctx, annotation, total);
            let codes = ctx.codes(inner);
            if codes.iter().any(|c| *c != ReasonCode::R007) {
                return Err(format!("{FIELD_TYPE}{}", self.parsed.declared_text(inner)));
            }
            fields.push(ObjectField {
                name: mangle(name, field),
                required,
                type_spec: ctx.lower(inner),
            });
        }
        if let Some(message) = duplicate_fields_error(&fields) {
            return Err(message);
        }
        fields.sort_by(|a, b| a.name.cmp(&b.name));
        let shape = TypeSpec {
            fields: Some(fields),
            python: None,
            ..TypeSpec::simple(TypeKind::Object)
        };
        let (nodes, depth) = shape_size(&shape);
        if nodes > MAX_NODES || depth > MAX_DEPTH || ctx.inlined.get() > MAX_NODES {
            return Err(BOUND.into());
        }
        Ok(shape)
    }

    /// `Required[T]` / `NotRequired[T]` (resolved through proven imports) override `total`.
    fn requiredness<'e>(
        &self,
        ctx: &Context,
        annotation: &'e Expr,
        total: bool,
    ) -> (bool, &'e Expr) {
        if let Expr::Subscript(s) = annotation {
            match ctx.resolve(&s.value).as_deref() {
                Some("Required") => return (true, s.slice.as_ref()),
                Some("NotRequired") => return (false, s.slice.as_ref()),
                _ => {}
            }
        }
        (total, annotation)
    }

    /// Breadth-first scan of a field annotation for calls, unproven candidate references and
    /// typing names whose resolving import is missing or not earlier than the class.
    fn walk_field(&self, ctx: &Context, annotation: &Expr) -> Result<(), String> {
        let mut queue: VecDeque<&Expr> = VecDeque::from([annotation]);
        while let Some(expr) = queue.pop_front() {
            match expr {
                Expr::Call(_) => return Err(CALLS.into()),
                Expr::Name(n) => {
                    let id = n.id.as_str();
                    if self.all_names.iter().any(|c| c == id) && !self.proven.contains_key(id) {
                        return Err(format!("{REFERENCE}{id}"));
                    }
                    if !self.typing_spelling_proven(ctx, expr, id) {
                        return Err(TYPING.into());
                    }
                }
                Expr::Attribute(a) => {
                    if let Expr::Name(root) = a.value.as_ref()
                        && !self.typing_spelling_proven(ctx, expr, root.id.as_str())
                    {
                        return Err(TYPING.into());
                    }
                }
                _ => {}
            }
            push_children(expr, &mut queue);
        }
        Ok(())
    }

    /// False when `expr` resolves to a typing name but `root` is not bound by an import placed
    /// before this class (resolution already guarantees the binding is unique and a typing import).
    fn typing_spelling_proven(&self, ctx: &Context, expr: &Expr, root: &str) -> bool {
        if !ctx.resolve(expr).is_some_and(|n| is_typing_name(&n)) {
            return true;
        }
        self.facts
            .unique_binding(root, View::Namespace)
            .is_some_and(|(id, _)| self.before_class(id))
    }
}

/// Direct child expressions in `ast.iter_child_nodes` order (for the node kinds annotations use).
fn push_children<'e>(expr: &'e Expr, queue: &mut VecDeque<&'e Expr>) {
    match expr {
        Expr::Subscript(s) => {
            queue.push_back(&s.value);
            queue.push_back(&s.slice);
        }
        Expr::Attribute(a) => queue.push_back(&a.value),
        Expr::Tuple(t) => queue.extend(t.elts.iter()),
        Expr::List(l) => queue.extend(l.elts.iter()),
        Expr::BinOp(b) => {
            queue.push_back(&b.left);
            queue.push_back(&b.right);
        }
        Expr::UnaryOp(u) => queue.push_back(&u.operand),
        Expr::Starred(s) => queue.push_back(&s.value),
        Expr::Call(c) => {
            queue.push_back(&c.func);
            queue.extend(c.arguments.args.iter());
            queue.extend(c.arguments.keywords.iter().map(|k| &k.value));
        }
        Expr::Dict(d) => d.items.iter().for_each(|item| {
            queue.extend(item.key.iter());
            queue.push_back(&item.value);
        }),
        Expr::Set(set) => queue.extend(set.elts.iter()),
        Expr::BoolOp(b) => queue.extend(b.values.iter()),
        Expr::Compare(c) => {
            queue.push_back(&c.left);
            queue.extend(c.comparators.iter());
        }
        Expr::If(i) => {
            queue.push_back(&i.test);
            queue.push_back(&i.body);
            queue.push_back(&i.orelse);
        }
        _ => {}
    }
}

/// Class-private name mangling: `__x` in class `_Input` becomes `_Input__x`.
pub fn mangle(class: &str, field: &str) -> String {
    let stripped = class.trim_start_matches('_');
    if field.starts_with("__") && !field.ends_with("__") && !stripped.is_empty() {
        format!("_{stripped}{field}")
    } else {
        field.to_string()
    }
}
