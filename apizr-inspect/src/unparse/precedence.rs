//! CPython 3.11 `ast._Precedence`, the table that drives every parenthesis decision.
//!
//! The numeric order matters: a node is wrapped in parentheses when the precedence its parent
//! assigned to it is *greater* than the node's own operator precedence. `EXPR` and `BOR` share a
//! value in CPython, so they are one variant here.

use ruff_python_ast::Operator;

/// Operator precedence, weakest first (same order and values as `ast._Precedence`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Precedence {
    NamedExpr = 1,
    Tuple,
    Yield,
    Test,
    Or,
    And,
    Not,
    Cmp,
    /// Also `BOR` (`|`).
    Expr,
    BXor,
    BAnd,
    Shift,
    Arith,
    Term,
    Factor,
    Power,
    Await,
    Atom,
}

impl Precedence {
    /// `_Precedence.next()`: one step tighter, saturating at `ATOM`.
    pub(crate) fn next(self) -> Self {
        use Precedence::*;
        match self {
            NamedExpr => Tuple,
            Tuple => Yield,
            Yield => Test,
            Test => Or,
            Or => And,
            And => Not,
            Not => Cmp,
            Cmp => Expr,
            Expr => BXor,
            BXor => BAnd,
            BAnd => Shift,
            Shift => Arith,
            Arith => Term,
            Term => Factor,
            Factor => Power,
            Power => Await,
            Await | Atom => Atom,
        }
    }

    /// `_Precedence.BOR`, an alias of `EXPR` in CPython.
    pub(crate) const BOR: Precedence = Precedence::Expr;
}

/// `binop` precedence of a binary operator.
pub(super) fn binop_precedence(op: Operator) -> Precedence {
    match op {
        Operator::Add | Operator::Sub => Precedence::Arith,
        Operator::Mult | Operator::MatMult | Operator::Div | Operator::Mod | Operator::FloorDiv => {
            Precedence::Term
        }
        Operator::LShift | Operator::RShift => Precedence::Shift,
        Operator::BitOr => Precedence::BOR,
        Operator::BitXor => Precedence::BXor,
        Operator::BitAnd => Precedence::BAnd,
        Operator::Pow => Precedence::Power,
    }
}

#[cfg(test)]
mod tests {
    use super::Precedence;

    #[test]
    fn next_walks_the_table_in_order_and_saturates() {
        let mut p = Precedence::NamedExpr;
        let mut steps = 0;
        while p != Precedence::Atom {
            let q = p.next();
            assert!(q > p);
            assert_eq!(q as u8, p as u8 + 1);
            p = q;
            steps += 1;
        }
        assert_eq!(steps, 17);
        assert_eq!(Precedence::Atom.next(), Precedence::Atom);
        assert_eq!(Precedence::BOR, Precedence::Expr);
    }
}
