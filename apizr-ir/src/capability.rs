//! The Capability IR (`apizr.capability/v1`).
//!
//! Every field is emitted (nulls included): the canonical bytes of this document are hashed into
//! `ir_digest`, so field names and enum spellings are wire literals.

use serde::Serialize;

use crate::digest::Digest;

pub const CAPABILITY_SCHEMA: &str = "apizr.capability/v1";

/// `apizr.capability/v2`: v1 plus the parameter kinds `var_positional` and `var_keyword`.
/// Discovery emits them only under readiness v2, and an IR is labelled v2 only when one of its
/// signatures holds one ([`CapabilityIr::schema_for`]): every IR a v1 consumer can read keeps
/// its v1 label and bytes, and one it cannot read says so in its first field.
pub const CAPABILITY_SCHEMA_V2: &str = "apizr.capability/v2";

/// The whole IR document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapabilityIr {
    pub schema_version: &'static str,
    pub source: SourceRecord,
    /// Sorted by `id` (code-point order).
    pub capabilities: Vec<Capability>,
    /// Sorted by (`source.line`, `code`, `message`).
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    Python,
    Notebook,
}

/// Where the bytes came from. Identity never depends on the file path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceRecord {
    pub kind: SourceKind,
    pub module: String,
    /// sha256 of the exact file bytes.
    pub digest: Digest,
    /// Notebooks only: sha256 of the exported Python text. Always null for `.py`.
    pub transformed_digest: Option<Digest>,
}

/// A source span: `line` is the `def` line (decorators excluded), `end_line` the last body line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Span {
    pub module: String,
    pub symbol: String,
    pub line: u32,
    pub end_line: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    Declared,
    Observed,
    Inferred,
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionKind {
    Sync,
    Async,
    Generator,
    AsyncGenerator,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CapabilityKind {
    Function,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Capability {
    /// `python:<module>:<name>`
    pub id: String,
    pub name: String,
    pub qualified_name: String,
    pub kind: CapabilityKind,
    pub source: Span,
    pub docstring: Option<String>,
    pub execution: ExecutionKind,
    pub signature: Signature,
    pub decorators: Vec<Expression>,
    pub overloads: Vec<Overload>,
    pub availability: Availability,
    pub effects: Effects,
    pub evidence: Evidence,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Signature {
    pub parameters: Vec<Parameter>,
    pub returns: Returns,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Returns {
    pub annotation: Option<DeclaredType>,
    /// Always `none` in v1: return annotations are never enforced.
    pub enforcement: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ParameterKind {
    PositionalOnly,
    PositionalOrKeyword,
    /// `*args` (IR v2 only): its annotation is the type of each item.
    VarPositional,
    KeywordOnly,
    /// `**kwargs` (IR v2 only): its annotation is the type of each value.
    VarKeyword,
}

impl ParameterKind {
    /// `*args` or `**kwargs`.
    pub fn is_variadic(self) -> bool {
        matches!(
            self,
            ParameterKind::VarPositional | ParameterKind::VarKeyword
        )
    }

    /// Filled by position when a call passes positional arguments up to it.
    pub fn is_named_positional(self) -> bool {
        matches!(
            self,
            ParameterKind::PositionalOnly | ParameterKind::PositionalOrKeyword
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Parameter {
    pub name: String,
    pub kind: ParameterKind,
    /// True iff `default` is null, except for the variadic kinds (never required).
    pub required: bool,
    pub annotation: Option<DeclaredType>,
    pub default: Option<Expression>,
    pub evidence: Evidence,
}

/// The syntactic form of an annotation, decided by its top AST node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TypeForm {
    Name,
    Attribute,
    Subscript,
    Union,
    ForwardReference,
    Literal,
    Unknown,
}

/// An annotation as CPython 3.11 `ast.unparse` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeclaredType {
    pub declared: String,
    pub form: TypeForm,
    pub evidence: Evidence,
}

/// A default value or decorator as CPython 3.11 `ast.unparse` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Expression {
    pub declared: String,
    pub evidence: Evidence,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overload {
    pub evidence: Evidence,
    pub signature: Signature,
    pub source: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AvailabilityValue {
    Unconditional,
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Availability {
    pub value: AvailabilityValue,
    pub evidence: Evidence,
}

impl Availability {
    pub const UNCONDITIONAL: Availability = Availability {
        value: AvailabilityValue::Unconditional,
        evidence: Evidence::Observed,
    };
    pub const UNKNOWN: Availability = Availability {
        value: AvailabilityValue::Unknown,
        evidence: Evidence::Unknown,
    };
}

/// One effect category. v1 never infers effects, so every value is `unknown`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Effect {
    pub value: &'static str,
    pub evidence: Evidence,
}

impl Effect {
    pub const UNKNOWN: Effect = Effect {
        value: "unknown",
        evidence: Evidence::Unknown,
    };
}

/// The eight effect categories (exact wire keys).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Effects {
    pub filesystem_read: Effect,
    pub filesystem_write: Effect,
    pub network: Effect,
    pub environment: Effect,
    pub subprocess: Effect,
    pub state_mutation: Effect,
    pub secrets: Effect,
    pub external_service: Effect,
}

impl Effects {
    pub const UNKNOWN: Effects = Effects {
        filesystem_read: Effect::UNKNOWN,
        filesystem_write: Effect::UNKNOWN,
        network: Effect::UNKNOWN,
        environment: Effect::UNKNOWN,
        subprocess: Effect::UNKNOWN,
        state_mutation: Effect::UNKNOWN,
        secrets: Effect::UNKNOWN,
        external_service: Effect::UNKNOWN,
    };

    /// The wire names, in sorted order.
    pub const NAMES: [&'static str; 8] = [
        "environment",
        "external_service",
        "filesystem_read",
        "filesystem_write",
        "network",
        "secrets",
        "state_mutation",
        "subprocess",
    ];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

/// IR diagnostic codes with their exact (hashed) messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagnosticKind {
    DuplicateDefinition,
    Variadic,
    ControlFlow,
    AmbiguousOverload,
    Decorated,
    LambdaAssignment,
    UnknownTypeStructure,
}

impl DiagnosticKind {
    pub const ALL: [DiagnosticKind; 7] = [
        DiagnosticKind::DuplicateDefinition,
        DiagnosticKind::Variadic,
        DiagnosticKind::ControlFlow,
        DiagnosticKind::AmbiguousOverload,
        DiagnosticKind::Decorated,
        DiagnosticKind::LambdaAssignment,
        DiagnosticKind::UnknownTypeStructure,
    ];

    pub fn code(self) -> &'static str {
        match self {
            DiagnosticKind::DuplicateDefinition => "APIZR-CAP-001",
            DiagnosticKind::Variadic => "APIZR-CAP-002",
            DiagnosticKind::ControlFlow => "APIZR-CAP-003",
            DiagnosticKind::AmbiguousOverload => "APIZR-CAP-004",
            DiagnosticKind::Decorated | DiagnosticKind::LambdaAssignment => "APIZR-CAP-005",
            DiagnosticKind::UnknownTypeStructure => "APIZR-CAP-006",
        }
    }

    pub fn severity(self) -> Severity {
        match self {
            DiagnosticKind::DuplicateDefinition
            | DiagnosticKind::Variadic
            | DiagnosticKind::AmbiguousOverload => Severity::Error,
            DiagnosticKind::ControlFlow
            | DiagnosticKind::Decorated
            | DiagnosticKind::LambdaAssignment => Severity::Warning,
            DiagnosticKind::UnknownTypeStructure => Severity::Info,
        }
    }

    pub fn message(self) -> &'static str {
        match self {
            DiagnosticKind::DuplicateDefinition => {
                "Multiple concrete definitions have the same logical symbol; none was selected."
            }
            DiagnosticKind::Variadic => "Variadic signatures are not executable v1 contracts.",
            DiagnosticKind::ControlFlow => {
                "Definition is under module control flow; runtime availability is unknown."
            }
            DiagnosticKind::AmbiguousOverload => {
                "Overload declarations cannot be associated unambiguously with one implementation."
            }
            DiagnosticKind::Decorated => {
                "Decorators may replace the function binding; their semantics are unknown."
            }
            DiagnosticKind::LambdaAssignment => {
                "Lambda assignments are not module-level function-definition contracts."
            }
            DiagnosticKind::UnknownTypeStructure => {
                "Type structure is unknown; the complete declaration is retained."
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    pub code: &'static str,
    pub severity: Severity,
    pub message: &'static str,
    pub source: Span,
    /// The kind `code`, `severity` and `message` come from (two kinds share CAP-005), so
    /// consumers never recover it from the message text.
    #[serde(skip)]
    pub kind: DiagnosticKind,
}

impl Diagnostic {
    pub fn new(kind: DiagnosticKind, source: Span) -> Self {
        Diagnostic {
            kind,
            code: kind.code(),
            severity: kind.severity(),
            message: kind.message(),
            source,
        }
    }
}

impl CapabilityIr {
    /// Sort capabilities and diagnostics into their contractual order.
    pub fn normalize_order(&mut self) {
        self.capabilities.sort_by(|a, b| a.id.cmp(&b.id));
        self.diagnostics.sort_by(|a, b| {
            (a.source.line, a.code, a.message).cmp(&(b.source.line, b.code, b.message))
        });
    }

    /// The schema version that describes these capabilities: v2 exactly when a signature
    /// (implementation or overload) has a variadic parameter.
    pub fn schema_for(capabilities: &[Capability]) -> &'static str {
        let variadic = |s: &Signature| s.parameters.iter().any(|p| p.kind.is_variadic());
        let any = capabilities
            .iter()
            .any(|c| variadic(&c.signature) || c.overloads.iter().any(|o| variadic(&o.signature)));
        if any {
            CAPABILITY_SCHEMA_V2
        } else {
            CAPABILITY_SCHEMA
        }
    }

    /// Canonical bytes (hashed into `ir_digest`).
    pub fn canonical_bytes(&self) -> Result<Vec<u8>, crate::json::CanonicalError> {
        crate::json::canonical_bytes(self)
    }
}

/// `python:<module>:<symbol>`
pub fn capability_id(module: &str, symbol: &str) -> String {
    format!("python:{module}:{symbol}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_ir_vector_for_module_empty() {
        let ir = CapabilityIr {
            schema_version: CAPABILITY_SCHEMA,
            source: SourceRecord {
                kind: SourceKind::Python,
                module: "empty".into(),
                digest: Digest::sha256(b""),
                transformed_digest: None,
            },
            capabilities: vec![],
            diagnostics: vec![],
        };
        let bytes = ir.canonical_bytes().unwrap();
        assert_eq!(
            Digest::sha256(&bytes).value,
            "4dca669986c32017a34dbddc854c32311792fe16619237947e49b9c9673b5edc"
        );
    }
}
