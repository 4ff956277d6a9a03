//! Marker decorators: a module's own function that only sets attributes on the function it
//! decorates and returns it (`def pass_context(f): f.jinja_pass_arg = _PassArg.context;
//! return f`, used as `@pass_context` on many of jinja2's filters).
//!
//! The rule, and why it is sound. Such a `def` (not `async`, no decorators or type
//! parameters, exactly one positional parameter and no other, a body of an optional
//! docstring, `p.name = value` statements and `return p`) is bound to [`Meaning::Marker`].
//! Applied to a plain function (it is the first decorator applied, or every one applied
//! before it is a marker too: a `property` has no `__dict__`), calling it:
//! * stores into the function's `__dict__`: `name` is not a dunder (`__name__ = 1`,
//!   `__code__`, `__globals__` would raise or change the function), which always succeeds and
//!   runs no code of anyone;
//! * evaluates each `value` in the defining module's globals at the time of the call: a value
//!   is a name, a literal or an attribute chain of them, never the parameter, so v2 proves it
//!   with [`Prover::value`] over the module's names: at the decoration in its own module (at
//!   module level only: a class body's names shadow the module's for the prover, not for the
//!   function), and at the end of the module for importers ([`Prover::settle_markers`]),
//!   which call it once the module has finished (an importer in its import cycle cannot read
//!   the name, [`super::package`]) and no proved statement stores into another module;
//! * returns the function itself, so the name is bound to the function.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use ruff_python_ast::{self as ast, Decorator, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use super::env::Meaning;
use super::package::Exports;
use super::{Prover, Unproved, Why};

type Proof<T> = Result<T, Unproved>;

/// The values each marker of the module stores, by the range of its `def`.
pub type Markers<'p> = Rc<RefCell<HashMap<TextRange, Vec<&'p Expr>>>>;

/// The values `def` stores when it is a marker; `None` when it is not one.
fn stored_values(def: &ast::StmtFunctionDef) -> Option<Vec<&Expr>> {
    let positional = super::pure::positional_params(def);
    if !super::pure::plain_def(def)
        || !def.parameters.kwonlyargs.is_empty()
        || positional.len() != 1
    {
        return None;
    }
    let param = positional.first()?.parameter.name.as_str();
    let body = super::pure::body_after_docstring(def);
    let (Stmt::Return(ret), stores) = body.split_last()? else {
        return None;
    };
    if !matches!(ret.value.as_deref(), Some(Expr::Name(n)) if n.id.as_str() == param) {
        return None;
    }
    stores
        .iter()
        .map(|stmt| match stmt {
            Stmt::Assign(assign)
                if matches!(
                    assign.targets.as_slice(),
                    [Expr::Attribute(a)]
                        if !is_dunder(a.attr.as_str())
                            && matches!(a.value.as_ref(), Expr::Name(n) if n.id.as_str() == param)
                ) && global_read(&assign.value, param) =>
            {
                Some(assign.value.as_ref())
            }
            _ => None,
        })
        .collect()
}

fn is_dunder(name: &str) -> bool {
    name.len() > 4 && name.starts_with("__") && name.ends_with("__")
}

/// A literal, or a name other than the parameter, or an attribute chain of one.
fn global_read(value: &Expr, param: &str) -> bool {
    match value {
        Expr::Name(n) => n.id.as_str() != param,
        Expr::Attribute(a) => global_read(&a.value, param),
        Expr::StringLiteral(_)
        | Expr::BytesLiteral(_)
        | Expr::NumberLiteral(_)
        | Expr::BooleanLiteral(_)
        | Expr::NoneLiteral(_) => true,
        _ => false,
    }
}

impl<'p> Prover<'p> {
    /// The meaning of a module-level `def` that is a marker; `None` when it is not one.
    pub fn marker(&self, def: &'p ast::StmtFunctionDef) -> Option<Meaning> {
        let values = stored_values(def)?;
        self.markers.borrow_mut().insert(def.range(), values);
        Some(Meaning::Marker(Some(def.range())))
    }

    /// Applying `decorator` (a marker) to the plain function it decorates is harmless now;
    /// `in_class` when the decoration runs in a class body.
    pub fn marker_decoration(
        &self,
        decorator: &Decorator,
        marker: Option<TextRange>,
        in_class: bool,
    ) -> Proof<()> {
        let fail = || Err(Unproved::at(decorator.expression.range(), Why::Decorator));
        let Some(def) = marker else {
            return Ok(());
        };
        if in_class {
            return fail();
        }
        self.stored_values_read(def)
            .then_some(())
            .map_or_else(fail, Ok)
    }

    /// Every value the marker at `def` stores reads harmlessly from the module's names now.
    fn stored_values_read(&self, def: TextRange) -> bool {
        let markers = self.markers.borrow();
        markers
            .get(&def)
            .is_some_and(|values| values.iter().all(|v| self.value(v).is_ok()))
    }

    /// At the end of the module: a marker whose values read harmlessly from its final names is
    /// a marker for importers too; any other is only a function.
    pub fn settle_markers(&self, exports: &mut Exports) {
        for export in exports.values_mut() {
            if let Meaning::Marker(Some(def)) = export.meaning {
                export.meaning = if self.stored_values_read(def) {
                    Meaning::Marker(None)
                } else {
                    Meaning::Function
                };
            }
        }
    }
}
