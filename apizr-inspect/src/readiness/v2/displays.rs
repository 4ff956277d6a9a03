//! Comprehensions over a short list or tuple display of values v2 proves, with conditions:
//! `list(sep for sep in [os.sep, os.path.altsep] if sep is not None and sep != "/")`
//! (werkzeug.security). The display is evaluated once, item by item; then, for each item,
//! the conditions run with the loop variable bound to that item (its meaning, and its string
//! when v2 folds it) and, when they hold, the element. v2 proves the conditions as branch tests
//! ([`Prover::test`]) and the element as a value for every item, whichever conditions hold.
//!
//! Literal displays without conditions keep the rules of [`super::comprehension`]; this rule
//! takes the comprehensions that one refuses: a condition, or items that are not all int or
//! all str literals. One `for`, not async, a name as target, no starred item, at most
//! [`MAX_ITEMS`] items, never in a class body (its comprehensions cannot see the class's
//! names).

use ruff_python_ast::{Comprehension, Expr};

use super::env::Meaning;
use super::{Prover, Unproved};

type Proof<T> = Result<T, Unproved>;

/// Items of a display this rule proves one by one.
pub const MAX_ITEMS: usize = 64;

impl Prover<'_> {
    /// The element's meaning when every item's is the same (`Unknown` otherwise); `None` when
    /// the comprehension is not one this rule takes.
    pub fn comprehension_over_display(
        &self,
        elt: &Expr,
        generators: &[Comprehension],
    ) -> Option<Proof<Meaning>> {
        let [generator] = generators else {
            return None;
        };
        let Expr::Name(target) = &generator.target else {
            return None;
        };
        let items = match &generator.iter {
            Expr::List(l) => &l.elts,
            Expr::Tuple(t) => &t.elts,
            _ => return None,
        };
        let literals = items.iter().all(|i| matches!(i, Expr::NumberLiteral(_)))
            || items.iter().all(|i| matches!(i, Expr::StringLiteral(_)));
        if self.local.in_class
            || generator.is_async
            || items.len() > MAX_ITEMS
            || items.iter().any(|i| matches!(i, Expr::Starred(_)))
            || literals && generator.ifs.is_empty()
        {
            return None;
        }
        Some(self.display_items(elt, generator, items, target.id.as_str()))
    }

    fn display_items(
        &self,
        elt: &Expr,
        generator: &Comprehension,
        items: &[Expr],
        target: &str,
    ) -> Proof<Meaning> {
        // The display runs first, in the enclosing scope.
        let meanings = items
            .iter()
            .map(|item| self.value(item))
            .collect::<Proof<Vec<Meaning>>>()?;
        let mut element: Option<Meaning> = None;
        for (item, meaning) in items.iter().zip(meanings) {
            let mut scope = self.nested(self.local.clone());
            match self.str_value(item) {
                Some(text) => scope.env.bind_str(target, text),
                None => scope.env.bind(target, meaning),
            }
            for condition in &generator.ifs {
                scope.test(condition)?;
            }
            let this = scope.value(elt)?;
            element = Some(match element {
                None => this,
                Some(same) if same == this => same,
                Some(_) => Meaning::Unknown,
            });
        }
        Ok(element.unwrap_or(Meaning::Unknown))
    }
}
