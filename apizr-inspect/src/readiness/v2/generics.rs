//! Generic classes of the module (or of a proved sibling module) subscripted at import:
//! `class environ_property(_DictAccessorProperty[_TAccessorValue])` (werkzeug.utils) and
//! annotations like `_DictAccessorProperty[str]` evaluated at import.
//!
//! `C[args]` of a class runs `C.__class_getitem__`, which `typing.Generic` provides: it checks
//! that there are exactly as many arguments as `C.__parameters__` (`TypeError` otherwise) and
//! that each is a type. v2 records how many parameters a class it proved has
//! (`ClassInfo::type_params`), and only when that `__class_getitem__` is the one that runs:
//!
//! * every base is `Generic[...]`/`Protocol[...]` (the parameters are its distinct type
//!   variables, which v2 checked when proving the base) or a subscripted generic class v2
//!   recorded (the parameters are the distinct type variables among the arguments, in order);
//! * no metaclass keyword (a metaclass `__getitem__` would run instead) and the body binds no
//!   `__class_getitem__`.
//!
//! Anything else has no recorded parameters and stays unproved when subscripted. As a base,
//! `C[T]` is `C` (`_GenericAlias.__mro_entries__` gives `C`, and `typing.Generic` only when no
//! later base is generic: it is already in `C`'s MRO, so the merge is `C`'s).

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

use super::env::Meaning;
use super::{Prover, Unproved, Why};

type Proof<T> = Result<T, Unproved>;

impl Prover<'_> {
    /// How many type parameters `class` takes when subscripted ([`self`]); 0 when v2 does not
    /// know `typing.Generic`'s `__class_getitem__` runs. `binds_class_getitem`: the body binds
    /// `__class_getitem__`.
    pub fn type_params(&self, class: &ast::StmtClassDef, binds_class_getitem: bool) -> u8 {
        let Some(arguments) = &class.arguments else {
            return 0;
        };
        if binds_class_getitem || !arguments.keywords.is_empty() || arguments.args.is_empty() {
            return 0;
        }
        let mut explicit: Option<usize> = None;
        let mut variables: Vec<&str> = Vec::new();
        for base in arguments.args.iter() {
            let Expr::Subscript(sub) = base else {
                return 0;
            };
            let args: Vec<&Expr> = match sub.slice.as_ref() {
                Expr::Tuple(t) => t.elts.iter().collect(),
                other => vec![other],
            };
            match self.value(&sub.value) {
                Ok(Meaning::Qualified(q)) if q == "typing.Generic" || q == "typing.Protocol" => {
                    explicit = Some(args.len());
                }
                Ok(Meaning::Class(info)) if info.type_params > 0 => {
                    for arg in args {
                        if let Expr::Name(n) = arg
                            && self.value(arg) == Ok(Meaning::TypeVar)
                            && !variables.contains(&n.id.as_str())
                        {
                            variables.push(n.id.as_str());
                        }
                    }
                }
                _ => return 0,
            }
        }
        u8::try_from(explicit.unwrap_or(variables.len())).unwrap_or(0)
    }

    /// `C[args]` of a class with recorded type parameters: as many arguments, each a type.
    /// `None` when `head` is not such a class.
    pub fn generic_class_subscript(
        &self,
        head: &Meaning,
        sub: &ast::ExprSubscript,
    ) -> Option<Proof<Meaning>> {
        let Meaning::Class(info) = head else {
            return None;
        };
        if info.type_params == 0 {
            return None;
        }
        let args: Vec<&Expr> = match sub.slice.as_ref() {
            Expr::Tuple(t) => t.elts.iter().collect(),
            other => vec![other],
        };
        if args.len() != usize::from(info.type_params) {
            return Some(Err(Unproved::at(sub.slice.range(), Why::Arity)));
        }
        for arg in args {
            if let Err(unproved) = self.type_expr(arg) {
                return Some(Err(unproved));
            }
        }
        Some(Ok(Meaning::TypeLike))
    }
}
