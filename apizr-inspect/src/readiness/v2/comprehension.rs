//! Comprehensions at import (`frozenset(chr(i) for i in range(32))`, `[x for x in "ab"]`):
//! one `for`, no condition, not `async`, over an iterable v2 knows the items of, with the
//! element expression proved for any item. The loop variable lives in the comprehension's own
//! scope; every other name is the module's (a comprehension in a class body cannot see the
//! class's names, so there only an element that reads nothing but the loop variable is
//! proved: `{c: rf"\x{c:02x}" for c in [*range(0x20)]}` in werkzeug's `WSGIRequestHandler`).
//!
//! | iterable | the loop variable is |
//! | --- | --- |
//! | `range(stop)`, `range(start, stop)` with int literals `0 <= start`, `stop <= 0x110000` | an int, and a code point (`chr(x)` cannot fail) |
//! | a string literal | a one-character string |
//! | a tuple or list display of int (or of str) literals | an int (a str); an exponent of `**` when every literal is at most [`MAX_EXPONENT`] |
//! | a list or tuple display of int literals, `*range(...)` and `*b"..."` ([`super::ints`]) | an int below the largest item + 1 ([`Mark::IntBelow`]; a code point when that is at most `0x110000`) |

use ruff_python_ast::{Comprehension, Expr, Number};
use ruff_text_size::Ranged;

use super::env::{Kind, Mark, Meaning};
use super::pure::MAX_EXPONENT;
use super::{Prover, Unproved, Why};

type Proof<T> = Result<T, Unproved>;

/// The end (exclusive) of the code points.
const CODE_POINTS: u64 = 0x11_0000;

impl Prover<'_> {
    /// Prove `elt` for every item of the one generator; the element's meaning.
    pub fn comprehension(
        &self,
        elt: &Expr,
        generators: &[Comprehension],
        whole: &Expr,
    ) -> Proof<Meaning> {
        // A display of proved values, or with conditions ([`super::displays`]).
        if let Some(proof) = self.comprehension_over_display(elt, generators) {
            return proof;
        }
        let fail = || Err(Unproved::at(whole.range(), Why::Expression));
        let [generator] = generators else {
            return fail();
        };
        if generator.is_async || !generator.ifs.is_empty() {
            return fail();
        }
        let Expr::Name(target) = &generator.target else {
            return fail();
        };
        // In a class body the element runs in a scope that sees the module's names, not the
        // class's (which the prover's environment holds): proved only when it reads nothing
        // but the loop variable. The iterable runs in the class body, as proved here.
        if self.local.in_class && !reads_only(elt, target.id.as_str()) {
            return fail();
        }
        let mut exponent = false;
        // The loop variable is an int in `0..n` ([`super::ints`]).
        let mut below = None;
        let (kind, code_point) = match &generator.iter {
            Expr::Call(call)
                if call.arguments.keywords.is_empty()
                    && self.value(&call.func)
                        == Ok(Meaning::Qualified("builtins.range".into())) =>
            {
                let bounds: Option<Vec<u64>> =
                    call.arguments.args.iter().map(int_literal).collect();
                match bounds.as_deref() {
                    Some([stop]) | Some([_, stop]) => {
                        below = Some(*stop);
                        (Kind::Int, *stop <= CODE_POINTS)
                    }
                    _ => return fail(),
                }
            }
            Expr::StringLiteral(_) => (Kind::Str, false),
            Expr::Tuple(ruff_python_ast::ExprTuple { elts, .. })
            | Expr::List(ruff_python_ast::ExprList { elts, .. }) => {
                if let Some(bound) = self.int_items_bound(elts) {
                    exponent = elts
                        .iter()
                        .all(|e| int_literal(e).is_some_and(|i| i <= MAX_EXPONENT));
                    below = Some(bound);
                    (Kind::Int, bound <= CODE_POINTS)
                } else if elts.iter().all(|e| matches!(e, Expr::StringLiteral(_))) {
                    (Kind::Str, false)
                } else {
                    return fail();
                }
            }
            _ => return fail(),
        };
        let mut scope = self.nested(self.local.clone());
        scope.env.bind(target.id.as_str(), Meaning::Value(kind));
        if let Some(below) = below {
            scope.env.mark(target.id.as_str(), Mark::IntBelow(below));
        }
        if code_point {
            scope.local = scope.local.with_code_point(target.id.as_str());
        }
        if exponent {
            scope.local = scope.local.with_exponent(target.id.as_str());
        }
        scope.value(elt)
    }
}

/// A non-negative int literal (`-1` is a unary minus, not a literal).
pub(super) fn int_literal(expr: &Expr) -> Option<u64> {
    match expr {
        Expr::NumberLiteral(n) => match &n.value {
            Number::Int(i) => i.as_u64(),
            _ => None,
        },
        _ => None,
    }
}

/// `expr` reads no name but `name` (a comprehension element in a class body).
fn reads_only(expr: &Expr, name: &str) -> bool {
    use ruff_python_ast::visitor::{Visitor, walk_expr};
    struct Names<'n> {
        name: &'n str,
        other: bool,
    }
    impl<'a> Visitor<'a> for Names<'_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            match expr {
                Expr::Name(n) => self.other |= n.id.as_str() != self.name,
                // A nested scope may bind names of its own: not followed.
                Expr::Lambda(_)
                | Expr::ListComp(_)
                | Expr::SetComp(_)
                | Expr::DictComp(_)
                | Expr::Generator(_)
                | Expr::Named(_) => self.other = true,
                other => walk_expr(self, other),
            }
        }
    }
    let mut names = Names { name, other: false };
    names.visit_expr(expr);
    !names.other
}
