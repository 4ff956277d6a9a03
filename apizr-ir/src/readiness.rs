//! The readiness report (`apizr.readiness/v1`) and the TypeSpec used by structured types and
//! interface contracts.

use serde::Serialize;

use crate::capability::{Effects, SourceRecord, Span};
use crate::digest::Digest;
use crate::json::Value;

pub const READINESS_POLICY: &str = "apizr.readiness/v1";
/// The opt-in policy that proves more top-level statements safe (`--readiness v2`). Its report
/// has the v1 shape; the `policy_version` (and so the digest) tells them apart.
pub const READINESS_POLICY_V2: &str = "apizr.readiness/v2";

/// Which readiness policy assesses a module. v1 (the default) is the reference's, byte for byte.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ReadinessPolicy {
    #[default]
    V1,
    V2,
}

impl ReadinessPolicy {
    /// The report's `policy_version`.
    pub fn schema(self) -> &'static str {
        match self {
            ReadinessPolicy::V1 => READINESS_POLICY,
            ReadinessPolicy::V2 => READINESS_POLICY_V2,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReadinessReport {
    /// Sorted by `capability_id`.
    pub assessments: Vec<Assessment>,
    pub ir_digest: Digest,
    pub policy_version: &'static str,
    pub source: SourceRecord,
    /// Omitted entirely when empty (one of the two documented omissions).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub structured_types: Vec<StructuredType>,
}

/// Readiness states, ordered by severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadinessState {
    Ready,
    Conditional,
    Unsupported,
    Ambiguous,
}

impl ReadinessState {
    pub fn as_str(self) -> &'static str {
        match self {
            ReadinessState::Ready => "ready",
            ReadinessState::Conditional => "conditional",
            ReadinessState::Unsupported => "unsupported",
            ReadinessState::Ambiguous => "ambiguous",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assessment {
    pub capability_id: String,
    pub source: Span,
    pub in_ir: bool,
    pub dimensions: Dimensions,
    pub effects: Effects,
    pub state: ReadinessState,
    pub can_generate_interface: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dimensions {
    pub binding: Dimension,
    pub execution: Dimension,
    pub inputs: Dimension,
    pub outputs: Dimension,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dimension {
    pub state: ReadinessState,
    /// De-duplicated, sorted by (line, code, parameter or "").
    pub reasons: Vec<Reason>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reason {
    pub code: &'static str,
    pub evidence: &'static str,
    pub line: u32,
    pub parameter: Option<String>,
}

/// The readiness reason codes: the reference's 19, and READY-020 (v2 only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReasonCode {
    R001,
    R002,
    R003,
    R004,
    R005,
    R006,
    R007,
    R008,
    R009,
    R010,
    R011,
    R012,
    R013,
    R014,
    R015,
    R016,
    R017,
    R018,
    R019,
    /// Readiness v2 only: the function relies on a third-party distribution the project
    /// declares (`pyproject.toml` `[project] dependencies` / `requirements.txt`). The state
    /// stays ready, explicitly: the bundle must install that distribution.
    R020,
}

/// The dimension a reason code belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DimensionName {
    Binding,
    Execution,
    Inputs,
    Outputs,
}

impl ReasonCode {
    pub const ALL: [ReasonCode; 20] = [
        ReasonCode::R001,
        ReasonCode::R002,
        ReasonCode::R003,
        ReasonCode::R004,
        ReasonCode::R005,
        ReasonCode::R006,
        ReasonCode::R007,
        ReasonCode::R008,
        ReasonCode::R009,
        ReasonCode::R010,
        ReasonCode::R011,
        ReasonCode::R012,
        ReasonCode::R013,
        ReasonCode::R014,
        ReasonCode::R015,
        ReasonCode::R016,
        ReasonCode::R017,
        ReasonCode::R018,
        ReasonCode::R019,
        ReasonCode::R020,
    ];

    pub fn code(self) -> &'static str {
        use ReasonCode::*;
        match self {
            R001 => "APIZR-READY-001",
            R002 => "APIZR-READY-002",
            R003 => "APIZR-READY-003",
            R004 => "APIZR-READY-004",
            R005 => "APIZR-READY-005",
            R006 => "APIZR-READY-006",
            R007 => "APIZR-READY-007",
            R008 => "APIZR-READY-008",
            R009 => "APIZR-READY-009",
            R010 => "APIZR-READY-010",
            R011 => "APIZR-READY-011",
            R012 => "APIZR-READY-012",
            R013 => "APIZR-READY-013",
            R014 => "APIZR-READY-014",
            R015 => "APIZR-READY-015",
            R016 => "APIZR-READY-016",
            R017 => "APIZR-READY-017",
            R018 => "APIZR-READY-018",
            R019 => "APIZR-READY-019",
            R020 => "APIZR-READY-020",
        }
    }

    pub fn dimension(self) -> DimensionName {
        use ReasonCode::*;
        match self {
            R001 | R002 | R003 | R008 | R009 | R010 => DimensionName::Binding,
            R004 | R005 | R006 | R014 | R015 | R018 | R020 => DimensionName::Execution,
            R007 | R011 | R012 | R013 | R017 | R019 => DimensionName::Inputs,
            R016 => DimensionName::Outputs,
        }
    }

    pub fn implied_state(self) -> ReadinessState {
        use ReasonCode::*;
        match self {
            R007 | R016 | R020 => ReadinessState::Ready,
            R001 | R002 | R003 | R004 | R008 | R013 | R014 | R015 | R017 => {
                ReadinessState::Conditional
            }
            R005 | R006 | R011 | R012 | R018 | R019 => ReadinessState::Unsupported,
            R009 | R010 => ReadinessState::Ambiguous,
        }
    }

    /// Our own one-line explanation, used by the text report.
    pub fn explanation(self) -> &'static str {
        use ReasonCode::*;
        match self {
            R001 => "defined inside module control flow, so it may not exist at run time",
            R002 => "a decorator may replace the function object",
            R003 => "the name is rebound or deleted later in the module",
            R004 => "a top-level statement may fail or change the module while it is imported",
            R005 => "generator functions need a streaming contract",
            R006 => "async generator functions need a streaming contract",
            R007 => "accepts any JSON value (no precise annotation)",
            R008 => {
                "the module uses star imports or namespace builtins (globals/locals/vars/exec/eval)"
            }
            R009 => "several concrete definitions share this name",
            R010 => "overload stubs cannot be tied to one implementation",
            R011 => "variadic parameters (*args/**kwargs) have no fixed contract",
            R012 => "the input type needs a non-JSON adapter",
            R013 => "the input type cannot be resolved statically",
            R014 => "a dynamic import call is made",
            R015 => "imports something outside the standard library (or relative / star import)",
            R016 => "the return type is not a precise JSON type",
            R017 => "Annotated[...] metadata semantics are unknown",
            R018 => "lambda assignments are not function definitions",
            R019 => "a TypedDict parameter type failed proof",
            R020 => {
                "imports a third-party package the project declares (ready under v2; the bundle \
                 must install it)"
            }
        }
    }
}

/// A structured (TypedDict) type found in the module, with its proof outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StructuredType {
    pub name: String,
    pub source: Span,
    #[serde(rename = "type")]
    pub type_spec: Option<TypeSpec>,
    pub problem: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TypeKind {
    Any,
    Int,
    Str,
    Float,
    Bool,
    Null,
    List,
    Dict,
    Tuple,
    Set,
    Union,
    Literal,
    Object,
    /// Readiness v2 only: `bytes` / `bytearray`, a base64 JSON string (RFC 4648, padded) the
    /// worker decodes. v1 never lowers them (READY-012/013), so v1 artifacts keep their bytes.
    Bytes,
    Bytearray,
    /// Readiness v2 only: `datetime.date`/`datetime`/`time` (strict RFC 3339 strings) and
    /// `datetime.timedelta` (seconds), as [`crate::temporal`] states. v1 never lowers them.
    Date,
    Datetime,
    Time,
    Timedelta,
    /// Readiness v2 only: `frozenset[T]`, a JSON array of unique items like `set` that the
    /// worker builds as a `frozenset` (hashable, so it may be a set member itself).
    Frozenset,
}

/// The lowered, JSON-level type of a parameter, return value or object field.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TypeSpec {
    pub items: Vec<TypeSpec>,
    pub kind: TypeKind,
    pub values: Vec<Value>,
    pub variadic: bool,
    /// Present only when `kind` is `object` (the second documented omission).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<ObjectField>>,
    /// The Python class a `literal` (an `Enum`, by value) or an `object` (a dataclass or a
    /// `NamedTuple`) stands for: the worker converts the JSON value into it and a returned
    /// instance back. Only readiness v2 lowers such types, and the member is omitted when
    /// absent, so every v1 artifact keeps the reference's bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub python: Option<PythonClass>,
}

/// A class of the inspected module that a TypeSpec converts to (`python` of a TypeSpec).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PythonClass {
    pub kind: PythonClassKind,
    /// The dotted module that defines it (the capability's own module, or under readiness v2
    /// over a package directory another module of the package).
    pub module: String,
    /// The class's name in that module's namespace.
    pub name: String,
}

/// How the worker builds an instance: `Enum` by value (`C(value)`), a dataclass or a
/// `NamedTuple` from its fields as keyword arguments (`C(**fields)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PythonClassKind {
    Enum,
    Dataclass,
    NamedTuple,
}

impl PythonClassKind {
    pub fn wire_name(self) -> &'static str {
        match self {
            PythonClassKind::Enum => "enum",
            PythonClassKind::Dataclass => "dataclass",
            PythonClassKind::NamedTuple => "named_tuple",
        }
    }

    pub fn from_wire(name: &str) -> Option<Self> {
        [Self::Enum, Self::Dataclass, Self::NamedTuple]
            .into_iter()
            .find(|k| k.wire_name() == name)
    }
}

impl TypeSpec {
    /// Whether this type or one nested in it converts to a Python class.
    pub fn has_python_class(&self) -> bool {
        self.python.is_some()
            || self.items.iter().any(TypeSpec::has_python_class)
            || self
                .fields
                .iter()
                .flatten()
                .any(|f| f.type_spec.has_python_class())
    }
}

impl TypeSpec {
    pub fn simple(kind: TypeKind) -> Self {
        TypeSpec {
            items: vec![],
            kind,
            values: vec![],
            variadic: false,
            fields: None,
            python: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObjectField {
    pub name: String,
    pub required: bool,
    #[serde(rename = "type")]
    pub type_spec: TypeSpec,
}
