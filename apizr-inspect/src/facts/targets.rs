//! Binding targets of the fact walk: assignment-like targets (names bind, attribute and
//! subscript targets mutate) and `case` patterns (captures bind).

use ruff_python_ast::visitor::Visitor;
use ruff_python_ast::{Expr, Pattern};
use ruff_text_size::Ranged;

use super::walk::Walker;
use super::{BindingKind, Mutation};

impl<'a> Walker<'a> {
    /// An assignment-like target: names bind, attribute and subscript targets mutate.
    pub(super) fn target(&mut self, expr: &'a Expr, kind: BindingKind<'a>) {
        match expr {
            Expr::Name(name) => {
                let line = self.parsed.start_line(name);
                self.bind(name.id.as_str(), kind, line, name.range());
            }
            Expr::Tuple(t) => t.elts.iter().for_each(|e| self.target(e, kind.clone())),
            Expr::List(l) => l.elts.iter().for_each(|e| self.target(e, kind.clone())),
            Expr::Starred(s) => self.target(&s.value, kind),
            Expr::Attribute(a) => {
                self.visit_expr(&a.value);
                self.mutation(expr, &a.value);
            }
            Expr::Subscript(s) => {
                self.visit_expr(&s.value);
                self.visit_expr(&s.slice);
                self.mutation(expr, &s.value);
            }
            other => self.visit_expr(other),
        }
    }

    fn mutation(&mut self, target: &Expr, mut value: &'a Expr) {
        let root = loop {
            match value {
                Expr::Name(name) => break Some(name.id.as_str()),
                Expr::Attribute(a) => value = &a.value,
                Expr::Subscript(s) => value = &s.value,
                _ => break None,
            }
        };
        self.out.mutations.push(Mutation {
            root,
            range: target.range(),
            stmt: self.stmt,
            context: self.context,
        });
    }

    pub(super) fn pattern(&mut self, pattern: &'a Pattern) {
        let line = self.parsed.start_line(pattern);
        let capture = BindingKind::MatchCapture;
        match pattern {
            Pattern::MatchAs(p) => {
                if let Some(inner) = &p.pattern {
                    self.pattern(inner);
                }
                if let Some(name) = &p.name {
                    self.bind(name.as_str(), capture, line, name.range());
                }
            }
            Pattern::MatchStar(p) => {
                if let Some(name) = &p.name {
                    self.bind(name.as_str(), capture, line, name.range());
                }
            }
            Pattern::MatchMapping(p) => {
                p.keys.iter().for_each(|k| self.visit_expr(k));
                p.patterns.iter().for_each(|q| self.pattern(q));
                if let Some(rest) = &p.rest {
                    self.bind(rest.as_str(), capture, line, rest.range());
                }
            }
            Pattern::MatchSequence(p) => p.patterns.iter().for_each(|q| self.pattern(q)),
            Pattern::MatchClass(p) => {
                self.visit_expr(&p.cls);
                p.arguments.patterns.iter().for_each(|q| self.pattern(q));
                p.arguments
                    .keywords
                    .iter()
                    .for_each(|k| self.pattern(&k.pattern));
            }
            Pattern::MatchOr(p) => p.patterns.iter().for_each(|q| self.pattern(q)),
            Pattern::MatchValue(p) => self.visit_expr(&p.value),
            Pattern::MatchSingleton(_) => {}
        }
    }
}
