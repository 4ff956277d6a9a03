//! Signatures: parameters in binding order, declared types and defaults.
//!
//! Every expression text is CPython 3.11 `ast.unparse` output ([`ParsedModule::declared_text`]).
//! The annotation form is decided by the top AST node alone; each annotation whose
//! form is `unknown` is counted so the caller can emit one CAP-006 per occurrence.

use apizr_ir::{
    DeclaredType, Evidence, Expression, Parameter, ParameterKind, Returns, Signature, TypeForm,
};
use ruff_python_ast::{AnyParameterRef, Expr, Operator, StmtFunctionDef};

use crate::module::ParsedModule;

/// The form of an annotation, by its top node.
pub fn type_form(expr: &Expr) -> TypeForm {
    match expr {
        Expr::Name(_) => TypeForm::Name,
        Expr::Attribute(_) => TypeForm::Attribute,
        Expr::Subscript(_) => TypeForm::Subscript,
        Expr::BinOp(binop) if binop.op == Operator::BitOr => TypeForm::Union,
        Expr::StringLiteral(_) => TypeForm::ForwardReference,
        Expr::BytesLiteral(_)
        | Expr::NumberLiteral(_)
        | Expr::BooleanLiteral(_)
        | Expr::NoneLiteral(_)
        | Expr::EllipsisLiteral(_) => TypeForm::Literal,
        _ => TypeForm::Unknown,
    }
}

pub fn expression(parsed: &ParsedModule, expr: &Expr) -> Expression {
    Expression {
        declared: parsed.declared_text(expr),
        evidence: Evidence::Declared,
    }
}

fn declared_type(parsed: &ParsedModule, expr: &Expr, unknown: &mut usize) -> DeclaredType {
    let form = type_form(expr);
    if form == TypeForm::Unknown {
        *unknown += 1;
    }
    DeclaredType {
        declared: parsed.declared_text(expr),
        form,
        evidence: Evidence::Declared,
    }
}

/// A function's signature and the number of `unknown`-form annotations in it.
pub struct BuiltSignature {
    pub signature: Signature,
    pub unknown_annotations: usize,
}

/// True when the function takes `*args` or `**kwargs`.
pub fn is_variadic(def: &StmtFunctionDef) -> bool {
    def.parameters.vararg.is_some() || def.parameters.kwarg.is_some()
}

/// The kind of each parameter, in CPython's signature order (positional-only, positional or
/// keyword, `*args`, keyword-only, `**kwargs`).
pub fn parameter_kinds(def: &StmtFunctionDef) -> Vec<(AnyParameterRef<'_>, ParameterKind)> {
    let params = &def.parameters;
    fn named(
        list: &[ruff_python_ast::ParameterWithDefault],
        kind: ParameterKind,
    ) -> impl Iterator<Item = (AnyParameterRef<'_>, ParameterKind)> {
        list.iter()
            .map(move |p| (AnyParameterRef::NonVariadic(p), kind))
    }
    let mut out: Vec<_> = named(&params.posonlyargs, ParameterKind::PositionalOnly).collect();
    out.extend(named(&params.args, ParameterKind::PositionalOrKeyword));
    if let Some(p) = params.vararg.as_deref() {
        out.push((AnyParameterRef::Variadic(p), ParameterKind::VarPositional));
    }
    out.extend(named(&params.kwonlyargs, ParameterKind::KeywordOnly));
    if let Some(p) = params.kwarg.as_deref() {
        out.push((AnyParameterRef::Variadic(p), ParameterKind::VarKeyword));
    }
    out
}

/// Build the signature of a function (variadics included: discovery rejects a variadic
/// function before this under readiness v1).
pub fn build_signature(parsed: &ParsedModule, def: &StmtFunctionDef) -> BuiltSignature {
    let mut unknown = 0usize;
    let parameters = parameter_kinds(def)
        .into_iter()
        .map(|(parameter, kind)| build_parameter(parsed, parameter, kind, &mut unknown))
        .collect();
    let returns = Returns {
        annotation: def
            .returns
            .as_deref()
            .map(|e| declared_type(parsed, e, &mut unknown)),
        enforcement: "none",
    };
    BuiltSignature {
        signature: Signature {
            parameters,
            returns,
        },
        unknown_annotations: unknown,
    }
}

fn build_parameter(
    parsed: &ParsedModule,
    parameter: AnyParameterRef<'_>,
    kind: ParameterKind,
    unknown: &mut usize,
) -> Parameter {
    let annotation = parameter
        .annotation()
        .map(|e| declared_type(parsed, e, unknown));
    let default = parameter.default().map(|e| expression(parsed, e));
    Parameter {
        name: parameter.name().as_str().to_string(),
        kind,
        // `*args`/`**kwargs` take no default yet are never required (empty when not given).
        required: default.is_none() && !kind.is_variadic(),
        annotation,
        default,
        evidence: Evidence::Observed,
    }
}
