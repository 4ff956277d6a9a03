//! Readiness v2 `datetime` types: `datetime.date`, `datetime.datetime`, `datetime.time` and
//! `datetime.timedelta`, spelled through a `datetime` import, are JSON types
//! (`TypeKind::Date`/`Datetime`/`Time`/`Timedelta`, the contract of `apizr_ir::temporal`) that
//! the worker builds from the validated JSON.
//!
//! Why sound: the worker makes the value with the stdlib's own classes from a grammar the
//! server checked identically (`apizr_ir::temporal`); the annotation only names which one.
//! Names resolve as other types do under v2: bound once, by `from datetime import X [as Y]`
//! or `import datetime [as m]`, directly or under `if TYPE_CHECKING:` (never evaluated by the
//! worker). Two places keep a reason: a set holding them (Python's set equality of aware
//! datetimes and rounded timedeltas is not the JSON text's, so the server could not check
//! uniqueness as the worker sees it), and return types (no result encoding: READY-016).

use apizr_ir::{TypeKind, TypeSpec};
use ruff_python_ast::Expr;

use super::inputs::Context;
use crate::facts::{BindingKind, View};

/// The `datetime` classes v2 knows, with the spelling `resolve` gives them.
const CLASSES: [(&str, &str, TypeKind); 4] = [
    ("date", "datetime.date", TypeKind::Date),
    ("datetime", "datetime.datetime", TypeKind::Datetime),
    ("time", "datetime.time", TypeKind::Time),
    ("timedelta", "datetime.timedelta", TypeKind::Timedelta),
];

/// The kind of a spelling from [`Context::temporal_spelling`].
pub fn kind(spelled: &str) -> Option<TypeKind> {
    CLASSES
        .iter()
        .find(|(_, s, _)| *s == spelled)
        .map(|(_, _, k)| *k)
}

/// `spec` or a type nested in it is a temporal kind.
pub fn holds_temporal(spec: &TypeSpec) -> bool {
    matches!(
        spec.kind,
        TypeKind::Date | TypeKind::Datetime | TypeKind::Time | TypeKind::Timedelta
    ) || spec.items.iter().any(holds_temporal)
        || spec
            .fields
            .iter()
            .flatten()
            .any(|f| holds_temporal(&f.type_spec))
}

impl Context<'_> {
    /// `datetime.X` as spelled by a `datetime` import of the module (see the module doc).
    pub(super) fn temporal_spelling(&self, expr: &Expr) -> Option<&'static str> {
        let facts = self.facts;
        let binding = |name: &str| {
            (!facts.is_mutated(name))
                .then(|| facts.unique_binding(name, View::Namespace))
                .flatten()
                .filter(|(_, b)| self.names_a_type(b))
                .map(|(_, b)| b.kind.clone())
        };
        let class = |wanted: &str| {
            CLASSES
                .iter()
                .find(|(n, _, _)| *n == wanted)
                .map(|(_, s, _)| *s)
        };
        match expr {
            Expr::Name(n) => match binding(n.id.as_str())? {
                BindingKind::FromImport {
                    module: Some("datetime"),
                    level: 0,
                    name,
                } => class(name),
                _ => None,
            },
            Expr::Attribute(a) => match a.value.as_ref() {
                Expr::Name(root) if binding(root.id.as_str())?.is_import_of("datetime") => {
                    class(a.attr.as_str())
                }
                _ => None,
            },
            _ => None,
        }
    }
}
