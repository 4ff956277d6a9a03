//! Decorators v2 accepts on a `def` at import: stdlib wrappers that only wrap or register the
//! function and cannot fail on a plain function.
//!
//! * anywhere: `functools.lru_cache` (bare, or with a literal `maxsize`/`typed`),
//!   `functools.cache`, `functools.singledispatch`, `typing.overload`, `typing.final`, `typing.no_type_check`,
//!   `contextlib.contextmanager`, `contextlib.asynccontextmanager`, `abc.abstractmethod`;
//! * outside class bodies: `functools.wraps(f)` of a function `f` (or of a class whose
//!   attributes it reads without running code, [`super::env::ClassInfo::wrappable`]), and the module's own
//!   decorators and decorator factories, or a proved sibling's ([`super::pure`]) — also on a
//!   class statement ([`super::class`]);
//! * in class bodies also: `property`, `staticmethod`, `classmethod`,
//!   `functools.cached_property`, and `<p>.setter` / `.getter` / `.deleter` of a property `p`
//!   defined earlier in the same body;
//! * a marker of the package ([`super::markers`]) applied to a plain function.

use ruff_python_ast::{Decorator, Expr, Number};
use ruff_text_size::Ranged;

use super::env::Meaning;
use super::{Prover, Unproved, Why};

pub fn is_decorator(qualified: &str) -> bool {
    is_function_decorator(qualified)
        || is_method_decorator(qualified)
        || is_class_decorator(qualified)
}

/// Class decorators; what each asks of the class is checked in [`super::class`].
fn is_class_decorator(qualified: &str) -> bool {
    matches!(
        qualified,
        "dataclasses.dataclass"
            | "functools.total_ordering"
            | "enum.unique"
            | "typing.final"
            | "typing.runtime_checkable"
    )
}

fn is_function_decorator(qualified: &str) -> bool {
    matches!(
        qualified,
        "functools.lru_cache"
            | "functools.cache"
            | "functools.singledispatch"
            | "typing.overload"
            | "typing.final"
            | "typing.no_type_check"
            | "contextlib.contextmanager"
            | "contextlib.asynccontextmanager"
            | "abc.abstractmethod"
    )
}

fn is_method_decorator(qualified: &str) -> bool {
    matches!(
        qualified,
        "builtins.property"
            | "builtins.staticmethod"
            | "builtins.classmethod"
            | "functools.cached_property"
    )
}

impl Prover<'_> {
    /// The decorators of a `def`, applied bottom-up: a marker ([`super::markers`]) while the
    /// function is still plain (every decorator applied before it is a marker), the others
    /// by [`Self::def_decorator`].
    pub fn def_decorators(
        &self,
        decorators: &[Decorator],
        properties: Option<&[String]>,
    ) -> Result<(), Unproved> {
        let mut plain = true;
        for decorator in decorators.iter().rev() {
            match self.value(&decorator.expression) {
                Ok(Meaning::Marker(marker)) if plain => {
                    self.marker_decoration(decorator, marker, properties.is_some())?;
                }
                Ok(Meaning::Marker(_)) => {
                    return Err(Unproved::at(decorator.expression.range(), Why::Decorator));
                }
                _ => {
                    self.def_decorator(&decorator.expression, properties)?;
                    plain = false;
                }
            }
        }
        Ok(())
    }

    /// One decorator of a `def`; `properties` are the properties defined earlier in the class
    /// body (`None` at module level).
    pub fn def_decorator(
        &self,
        decorator: &Expr,
        properties: Option<&[String]>,
    ) -> Result<(), Unproved> {
        let fail = || Err(Unproved::at(decorator.range(), Why::Decorator));
        if let (Some(properties), Expr::Attribute(attr)) = (properties, decorator)
            && matches!(attr.attr.as_str(), "setter" | "getter" | "deleter")
            && let Expr::Name(name) = attr.value.as_ref()
        {
            return if properties.iter().any(|p| p == name.id.as_str()) {
                Ok(())
            } else {
                fail()
            };
        }
        // The module's own decorators (or a proved sibling's), module level only.
        if properties.is_none()
            && let Some(proof) = self.local_decorator(decorator)
        {
            return proof;
        }
        // `functools.wraps(f)` of a function (its `__name__`, `__qualname__`, `__doc__`,
        // `__annotations__`, `__dict__` are what `update_wrapper` copies onto the new
        // function without failing) or of such a class, outside class bodies.
        if let Expr::Call(call) = decorator
            && properties.is_none()
            && let ([wrapped], true) = (
                call.arguments.args.as_ref(),
                call.arguments.keywords.is_empty(),
            )
            && self.value(&call.func) == Ok(Meaning::Qualified("functools.wraps".into()))
            && match self.value(wrapped) {
                Ok(Meaning::Function | Meaning::Pure(_) | Meaning::Foreign(_)) => true,
                // A class `update_wrapper` reads without running code ([`super::env::ClassInfo::wrappable`]).
                Ok(Meaning::Class(info)) => info.wrappable,
                _ => false,
            }
        {
            return Ok(());
        }
        // `functools.lru_cache(maxsize=128)` / `lru_cache(None)`.
        if let Expr::Call(call) = decorator {
            let Ok(Meaning::Qualified(q)) = self.value(&call.func) else {
                return fail();
            };
            let literal = |e: &Expr| {
                matches!(e, Expr::NoneLiteral(_) | Expr::BooleanLiteral(_))
                    || matches!(e, Expr::NumberLiteral(n) if matches!(n.value, Number::Int(_)))
            };
            let args_ok = call.arguments.args.len() <= 1
                && call.arguments.args.iter().all(literal)
                && call.arguments.keywords.iter().all(|k| {
                    k.arg
                        .as_ref()
                        .is_some_and(|a| matches!(a.as_str(), "maxsize" | "typed"))
                        && literal(&k.value)
                });
            return if q == "functools.lru_cache" && args_ok {
                Ok(())
            } else {
                fail()
            };
        }
        match self.value(decorator) {
            Ok(Meaning::Qualified(q)) if is_function_decorator(&q) => Ok(()),
            Ok(Meaning::Qualified(q)) if properties.is_some() && is_method_decorator(&q) => Ok(()),
            _ => fail(),
        }
    }
}
