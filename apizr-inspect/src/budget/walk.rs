//! Count nodes and depth the way CPython's `ast` module sees the tree: an iterative walk over
//! every child node, including `Load`/`Store`/`Del`, operator nodes, `arguments`, `arg`,
//! `keyword`, `alias`, `withitem`, `comprehension`, `excepthandler`, `match_case` and patterns.
//!
//! Ruff's tree differs from CPython's in a few places, each mapped here:
//! `elif` clauses are nested `If` nodes in `orelse` (one level deeper per `elif`); decorators,
//! call `Arguments` and `ParameterWithDefault` have no CPython node; a lambda always has an
//! `arguments` node; an f-string (with its implicitly concatenated parts) is one `JoinedStr`
//! whose adjacent literal pieces (and `=` debug texts) merge into one `Constant`.
//! The walk stops as soon as a limit is exceeded, so its cost is bounded by the limits.

use ruff_python_ast::{
    Comprehension, ElifElseClause, ExceptHandler, Expr, FStringPart, InterpolatedElement,
    InterpolatedStringElement, Keyword, MatchCase, Parameter, Parameters, Pattern, Stmt, WithItem,
};

/// One CPython AST node to visit.
#[derive(Clone, Copy)]
enum Node<'a> {
    /// A node without children (context, operator, `Constant`, `alias`, `Pass`, ...).
    Leaf,
    Stmt(&'a Stmt),
    Expr(&'a Expr),
    Pattern(&'a Pattern),
    /// An `If` made from the first clause of an `elif` chain.
    Elif(&'a [ElifElseClause]),
    Arguments(Option<&'a Parameters>),
    Arg(&'a Parameter),
    Keyword(&'a Keyword),
    WithItem(&'a WithItem),
    Comprehension(&'a Comprehension),
    Handler(&'a ExceptHandler),
    Case(&'a MatchCase),
    Formatted(&'a InterpolatedElement),
    /// The `JoinedStr` of a format spec.
    Spec(&'a [InterpolatedStringElement]),
}

/// Node count (the module included) and maximum depth (the module at depth 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub nodes: usize,
    pub depth: usize,
}

/// Walk `body` (a module's statements). Stops early once `nodes > max_nodes` or
/// `depth > max_depth`; the returned shape then exceeds that limit.
pub fn measure(body: &[Stmt], max_nodes: usize, max_depth: usize) -> Shape {
    let mut shape = Shape { nodes: 1, depth: 0 };
    let mut stack: Vec<(Node<'_>, usize)> = body.iter().map(|s| (Node::Stmt(s), 1)).collect();
    let mut children = Vec::new();
    while let Some((node, depth)) = stack.pop() {
        shape.nodes += 1;
        shape.depth = shape.depth.max(depth);
        if shape.nodes > max_nodes || shape.depth > max_depth {
            break;
        }
        children.clear();
        push_children(node, &mut children);
        stack.extend(children.drain(..).map(|child| (child, depth + 1)));
    }
    shape
}

fn exprs<'a>(out: &mut Vec<Node<'a>>, items: impl IntoIterator<Item = &'a Expr>) {
    out.extend(items.into_iter().map(Node::Expr));
}

fn stmts<'a>(out: &mut Vec<Node<'a>>, items: &'a [Stmt]) {
    out.extend(items.iter().map(Node::Stmt));
}

fn push_children<'a>(node: Node<'a>, out: &mut Vec<Node<'a>>) {
    match node {
        Node::Leaf => {}
        Node::Stmt(stmt) => stmt_children(stmt, out),
        Node::Expr(expr) => expr_children(expr, out),
        Node::Pattern(pattern) => pattern_children(pattern, out),
        Node::Elif(clauses) => {
            if let Some((first, rest)) = clauses.split_first() {
                exprs(out, first.test.as_ref());
                stmts(out, &first.body);
                orelse(rest, out);
            }
        }
        Node::Arguments(parameters) => {
            let Some(p) = parameters else { return };
            for pwd in p.posonlyargs.iter().chain(&p.args).chain(&p.kwonlyargs) {
                out.push(Node::Arg(&pwd.parameter));
                exprs(out, pwd.default.as_deref());
            }
            out.extend(p.vararg.as_deref().map(Node::Arg));
            out.extend(p.kwarg.as_deref().map(Node::Arg));
        }
        Node::Arg(parameter) => exprs(out, parameter.annotation.as_deref()),
        Node::Keyword(keyword) => out.push(Node::Expr(&keyword.value)),
        Node::WithItem(item) => {
            out.push(Node::Expr(&item.context_expr));
            exprs(out, item.optional_vars.as_deref());
        }
        Node::Comprehension(c) => {
            out.push(Node::Expr(&c.target));
            out.push(Node::Expr(&c.iter));
            exprs(out, &c.ifs);
        }
        Node::Handler(ExceptHandler::ExceptHandler(h)) => {
            exprs(out, h.type_.as_deref());
            stmts(out, &h.body);
        }
        Node::Case(case) => {
            out.push(Node::Pattern(&case.pattern));
            exprs(out, case.guard.as_deref());
            stmts(out, &case.body);
        }
        Node::Formatted(element) => {
            out.push(Node::Expr(&element.expression));
            if let Some(spec) = &element.format_spec {
                out.push(Node::Spec(&spec.elements));
            }
        }
        Node::Spec(elements) => {
            let mut joined = Joined::default();
            joined.elements(elements, out);
            joined.finish(out);
        }
    }
}

/// `orelse` of an `If` whose remaining clauses are `rest`.
fn orelse<'a>(rest: &'a [ElifElseClause], out: &mut Vec<Node<'a>>) {
    match rest.first() {
        None => {}
        Some(clause) if clause.test.is_some() => out.push(Node::Elif(rest)),
        Some(clause) => stmts(out, &clause.body),
    }
}

/// Builds the values of a `JoinedStr`: each run of adjacent non-empty literal text (and the
/// `x=` text of a debug field) is one `Constant`; each replacement field a `FormattedValue`.
#[derive(Default)]
struct Joined {
    literal: bool,
}

impl Joined {
    fn literal(&mut self, non_empty: bool) {
        self.literal |= non_empty;
    }

    fn elements<'a>(&mut self, elements: &'a [InterpolatedStringElement], out: &mut Vec<Node<'a>>) {
        for element in elements {
            match element {
                InterpolatedStringElement::Literal(text) => self.literal(!text.value.is_empty()),
                InterpolatedStringElement::Interpolation(field) => {
                    if self.literal || field.debug_text.is_some() {
                        out.push(Node::Leaf);
                    }
                    self.literal = false;
                    out.push(Node::Formatted(field));
                }
            }
        }
    }

    fn finish(self, out: &mut Vec<Node<'_>>) {
        if self.literal {
            out.push(Node::Leaf);
        }
    }
}

fn stmt_children<'a>(stmt: &'a Stmt, out: &mut Vec<Node<'a>>) {
    match stmt {
        Stmt::FunctionDef(f) => {
            out.push(Node::Arguments(Some(&f.parameters)));
            stmts(out, &f.body);
            exprs(out, f.decorator_list.iter().map(|d| &d.expression));
            exprs(out, f.returns.as_deref());
        }
        Stmt::ClassDef(c) => {
            if let Some(arguments) = &c.arguments {
                exprs(out, arguments.args.iter());
                out.extend(arguments.keywords.iter().map(Node::Keyword));
            }
            stmts(out, &c.body);
            exprs(out, c.decorator_list.iter().map(|d| &d.expression));
        }
        Stmt::Return(r) => exprs(out, r.value.as_deref()),
        Stmt::Delete(d) => exprs(out, &d.targets),
        Stmt::TypeAlias(t) => {
            out.push(Node::Expr(&t.name));
            out.push(Node::Expr(&t.value));
        }
        Stmt::Assign(a) => {
            exprs(out, &a.targets);
            out.push(Node::Expr(&a.value));
        }
        Stmt::AugAssign(a) => {
            out.push(Node::Expr(&a.target));
            out.push(Node::Leaf);
            out.push(Node::Expr(&a.value));
        }
        Stmt::AnnAssign(a) => {
            out.push(Node::Expr(&a.target));
            out.push(Node::Expr(&a.annotation));
            exprs(out, a.value.as_deref());
        }
        Stmt::For(f) => {
            out.push(Node::Expr(&f.target));
            out.push(Node::Expr(&f.iter));
            stmts(out, &f.body);
            stmts(out, &f.orelse);
        }
        Stmt::While(w) => {
            out.push(Node::Expr(&w.test));
            stmts(out, &w.body);
            stmts(out, &w.orelse);
        }
        Stmt::If(i) => {
            out.push(Node::Expr(&i.test));
            stmts(out, &i.body);
            orelse(&i.elif_else_clauses, out);
        }
        Stmt::With(w) => {
            out.extend(w.items.iter().map(Node::WithItem));
            stmts(out, &w.body);
        }
        Stmt::Match(m) => {
            out.push(Node::Expr(&m.subject));
            out.extend(m.cases.iter().map(Node::Case));
        }
        Stmt::Raise(r) => {
            exprs(out, r.exc.as_deref());
            exprs(out, r.cause.as_deref());
        }
        Stmt::Try(t) => {
            stmts(out, &t.body);
            out.extend(t.handlers.iter().map(Node::Handler));
            stmts(out, &t.orelse);
            stmts(out, &t.finalbody);
        }
        Stmt::Assert(a) => {
            out.push(Node::Expr(&a.test));
            exprs(out, a.msg.as_deref());
        }
        Stmt::Import(i) => out.extend(i.names.iter().map(|_| Node::Leaf)),
        Stmt::ImportFrom(i) => out.extend(i.names.iter().map(|_| Node::Leaf)),
        Stmt::Expr(e) => out.push(Node::Expr(&e.value)),
        Stmt::Global(_)
        | Stmt::Nonlocal(_)
        | Stmt::Pass(_)
        | Stmt::Break(_)
        | Stmt::Continue(_)
        | Stmt::IpyEscapeCommand(_) => {}
    }
}

fn expr_children<'a>(expr: &'a Expr, out: &mut Vec<Node<'a>>) {
    match expr {
        Expr::BoolOp(b) => {
            out.push(Node::Leaf);
            exprs(out, &b.values);
        }
        Expr::Named(n) => {
            out.push(Node::Expr(&n.target));
            out.push(Node::Expr(&n.value));
        }
        Expr::BinOp(b) => {
            out.push(Node::Expr(&b.left));
            out.push(Node::Leaf);
            out.push(Node::Expr(&b.right));
        }
        Expr::UnaryOp(u) => {
            out.push(Node::Leaf);
            out.push(Node::Expr(&u.operand));
        }
        Expr::Lambda(l) => {
            out.push(Node::Arguments(l.parameters.as_deref()));
            out.push(Node::Expr(&l.body));
        }
        Expr::If(i) => {
            out.push(Node::Expr(&i.test));
            out.push(Node::Expr(&i.body));
            out.push(Node::Expr(&i.orelse));
        }
        Expr::Dict(d) => {
            for item in &d.items {
                exprs(out, item.key.as_ref());
                out.push(Node::Expr(&item.value));
            }
        }
        Expr::Set(s) => exprs(out, &s.elts),
        Expr::ListComp(c) => comprehension(&c.elt, &c.generators, out),
        Expr::SetComp(c) => comprehension(&c.elt, &c.generators, out),
        Expr::Generator(c) => comprehension(&c.elt, &c.generators, out),
        Expr::DictComp(c) => {
            exprs(out, c.key.as_deref());
            comprehension(&c.value, &c.generators, out);
        }
        Expr::Await(a) => out.push(Node::Expr(&a.value)),
        Expr::Yield(y) => exprs(out, y.value.as_deref()),
        Expr::YieldFrom(y) => out.push(Node::Expr(&y.value)),
        Expr::Compare(c) => {
            out.push(Node::Expr(&c.left));
            out.extend(c.ops.iter().map(|_| Node::Leaf));
            exprs(out, c.comparators.iter());
        }
        Expr::Call(c) => {
            out.push(Node::Expr(&c.func));
            exprs(out, c.arguments.args.iter());
            out.extend(c.arguments.keywords.iter().map(Node::Keyword));
        }
        Expr::FString(f) => {
            let mut joined = Joined::default();
            for part in f.value.as_slice() {
                match part {
                    FStringPart::Literal(literal) => joined.literal(!literal.value.is_empty()),
                    FStringPart::FString(fstring) => joined.elements(&fstring.elements, out),
                }
            }
            joined.finish(out);
        }
        Expr::Attribute(a) => {
            out.push(Node::Expr(&a.value));
            out.push(Node::Leaf);
        }
        Expr::Subscript(s) => {
            out.push(Node::Expr(&s.value));
            out.push(Node::Expr(&s.slice));
            out.push(Node::Leaf);
        }
        Expr::Starred(s) => {
            out.push(Node::Expr(&s.value));
            out.push(Node::Leaf);
        }
        Expr::Name(_) => out.push(Node::Leaf),
        Expr::List(l) => {
            exprs(out, &l.elts);
            out.push(Node::Leaf);
        }
        Expr::Tuple(t) => {
            exprs(out, &t.elts);
            out.push(Node::Leaf);
        }
        Expr::Slice(s) => {
            exprs(out, s.lower.as_deref());
            exprs(out, s.upper.as_deref());
            exprs(out, s.step.as_deref());
        }
        Expr::TString(_)
        | Expr::StringLiteral(_)
        | Expr::BytesLiteral(_)
        | Expr::NumberLiteral(_)
        | Expr::BooleanLiteral(_)
        | Expr::NoneLiteral(_)
        | Expr::EllipsisLiteral(_)
        | Expr::IpyEscapeCommand(_) => {}
    }
}

fn comprehension<'a>(elt: &'a Expr, generators: &'a [Comprehension], out: &mut Vec<Node<'a>>) {
    out.push(Node::Expr(elt));
    out.extend(generators.iter().map(Node::Comprehension));
}

fn pattern_children<'a>(pattern: &'a Pattern, out: &mut Vec<Node<'a>>) {
    match pattern {
        Pattern::MatchValue(v) => out.push(Node::Expr(&v.value)),
        Pattern::MatchSingleton(_) | Pattern::MatchStar(_) => {}
        Pattern::MatchSequence(s) => out.extend(s.patterns.iter().map(Node::Pattern)),
        Pattern::MatchMapping(m) => {
            exprs(out, m.keys.iter());
            out.extend(m.patterns.iter().map(Node::Pattern));
        }
        Pattern::MatchClass(c) => {
            out.push(Node::Expr(&c.cls));
            out.extend(c.arguments.patterns.iter().map(Node::Pattern));
            out.extend(
                c.arguments
                    .keywords
                    .iter()
                    .map(|k| Node::Pattern(&k.pattern)),
            );
        }
        Pattern::MatchAs(a) => out.extend(a.pattern.as_deref().map(Node::Pattern)),
        Pattern::MatchOr(o) => out.extend(o.patterns.iter().map(Node::Pattern)),
    }
}
