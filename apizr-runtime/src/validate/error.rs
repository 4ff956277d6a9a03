//! Typed validation errors: the reference's wire detail ([`Reason`]), plus where (a JSON
//! pointer into the arguments object) and what (the expectation and what was found).
//!
//! Why both: the `detail` strings are the reference's and stay byte-identical on every
//! surface, but they never say which field was wrong. The location and expectation travel
//! beside them (REST `errors`, MCP `structuredContent`), a documented addition.
//!
//! Paths are built while an error unwinds (each container level prepends its segment), so
//! the happy path allocates nothing for them.

use apizr_ir::{TypeKind, TypeSpec, Value};

/// The reference's refusal reasons; `Display` is the wire `detail` string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Reason {
    #[error("Expected a JSON object")]
    NotAnObject,
    #[error("Expected a finite JSON value")]
    NotFinite,
    #[error("Unexpected request field")]
    UnexpectedField,
    #[error("Missing required field: {0}")]
    MissingField(String),
    #[error("Value does not match the declared input type")]
    Mismatch,
    #[error("Tuple length mismatch")]
    TupleLength,
    #[error("Set members must be hashable")]
    SetUnhashable,
    #[error("Set members must be unique")]
    SetDuplicate,
    #[error("Unexpected object field")]
    UnexpectedObjectField,
    #[error("Missing required object field: {0}")]
    MissingObjectField(String),
    #[error("Supply preceding positional-only field: {0}")]
    PositionalGap(String),
    /// Readiness v2: `*args` is given but a positional parameter before it is not.
    #[error("Supply preceding positional field: {0}")]
    VarPositionalGap(String),
    /// A `bytes`/`bytearray` argument (readiness v2) that is not canonical padded base64.
    #[error("Invalid base64 value")]
    Base64,
    /// A `datetime` argument (readiness v2) outside the grammar or range of
    /// `apizr_ir::temporal`.
    #[error("Invalid date/time value")]
    Temporal,
}

/// What the request had at the error's location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A value of this JSON kind (`string`, `integer`, …).
    Kind(&'static str),
    /// A value shown with its kind (literals: which choice was given matters).
    Value { kind: &'static str, text: String },
    /// Nothing: a required field is absent.
    Missing,
    /// A field the contract does not declare.
    UndeclaredField,
    /// An array of this many items.
    Items(usize),
    /// The same set member as an earlier one (its index).
    DuplicateOf(usize),
}

impl std::fmt::Display for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Found::Kind(kind) => f.write_str(kind),
            Found::Value { kind, text } => write!(f, "{kind} {text}"),
            Found::Missing => f.write_str("missing"),
            Found::UndeclaredField => f.write_str("undeclared field"),
            Found::Items(n) => write!(f, "array of {n} items"),
            Found::DuplicateOf(i) => write!(f, "duplicate of item {i}"),
        }
    }
}

/// Why arguments were refused. `Display` is the reference's wire `detail` string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct ValidationError {
    pub reason: Reason,
    /// Path segments from the arguments object down, in reverse (see [`Self::pointer`]).
    segments: Vec<String>,
    /// What the contract expects there (`integer`, `array of 2 items`, `one of "a", 1`).
    pub expected: String,
    pub found: Found,
}

impl ValidationError {
    pub(crate) fn new(reason: Reason, expected: impl Into<String>, found: Found) -> Self {
        ValidationError {
            reason,
            segments: Vec::new(),
            expected: expected.into(),
            found,
        }
    }

    /// A type mismatch of `value` against `spec` at this level.
    pub(crate) fn mismatch(spec: &TypeSpec, value: &Value) -> Self {
        let found = match spec.kind {
            TypeKind::Literal => Found::Value {
                kind: kind_of(value),
                text: short(value),
            },
            _ => Found::Kind(kind_of(value)),
        };
        ValidationError::new(Reason::Mismatch, describe(spec), found)
    }

    /// The same error, one level further down: under `segment` (a field name or an index).
    pub(crate) fn under(mut self, segment: impl ToString) -> Self {
        self.segments.push(segment.to_string());
        self
    }

    /// The location as an RFC 6901 JSON pointer into the arguments object (`""`: the whole
    /// object, `/items/2`, `/a~1b` for the field `a/b`).
    pub fn pointer(&self) -> String {
        let mut out = String::new();
        for segment in self.segments.iter().rev() {
            out.push('/');
            out.push_str(&segment.replace('~', "~0").replace('/', "~1"));
        }
        out
    }

    /// The wire form of the location and expectation.
    pub fn field_error(&self) -> FieldError {
        FieldError {
            path: self.pointer(),
            expected: self.expected.clone(),
            found: self.found.to_string(),
        }
    }
}

/// One entry of the `errors` list that 422 bodies and MCP error results carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// JSON pointer into the arguments object.
    pub path: String,
    pub expected: String,
    pub found: String,
}

impl FieldError {
    /// `{"expected","found","path"}` as a JSON object.
    pub fn to_value(&self) -> Value {
        Value::Object(
            [
                ("expected", &self.expected),
                ("found", &self.found),
                ("path", &self.path),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), Value::Str(v.clone())))
            .collect(),
        )
    }
}

/// The JSON kind of a value, in JSON Schema's words.
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Int(_) | Value::BigInt(_) => "integer",
        Value::Float(_) => "number",
        Value::Str(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A value's JSON text, cut to 40 characters.
fn short(value: &Value) -> String {
    let text = value
        .canonical_string()
        .unwrap_or_else(|_| kind_of(value).to_string());
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// A TypeSpec in JSON words: `integer`, `array of string`, `integer | null`,
/// `one of "a", 1`, `object {x, y}`.
pub fn describe(spec: &TypeSpec) -> String {
    let item = |i: usize| {
        spec.items
            .get(i)
            .map_or_else(|| "any".to_string(), describe)
    };
    match spec.kind {
        TypeKind::Any => "any JSON value".into(),
        TypeKind::Int => "integer".into(),
        TypeKind::Float => "number".into(),
        TypeKind::Str => "string".into(),
        TypeKind::Bool => "boolean".into(),
        TypeKind::Null => "null".into(),
        TypeKind::List => format!("array of {}", item(0)),
        TypeKind::Dict => format!("object of {}", item(0)),
        TypeKind::Tuple if spec.variadic => format!("array of {}", item(0)),
        TypeKind::Tuple => format!(
            "array [{}]",
            spec.items
                .iter()
                .map(describe)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        TypeKind::Set => format!("array of unique {}", item(0)),
        TypeKind::Frozenset => format!("array of unique {} (frozenset)", item(0)),
        TypeKind::Bytes => "base64 string (bytes)".into(),
        TypeKind::Bytearray => "base64 string (bytearray)".into(),
        TypeKind::Date => "date string YYYY-MM-DD".into(),
        TypeKind::Datetime => "date-time string YYYY-MM-DDTHH:MM:SS[.ffffff][Z|±HH:MM]".into(),
        TypeKind::Time => "time string HH:MM:SS[.ffffff][Z|±HH:MM]".into(),
        TypeKind::Timedelta => "number of seconds (timedelta)".into(),
        TypeKind::Union => spec
            .items
            .iter()
            .map(describe)
            .collect::<Vec<_>>()
            .join(" | "),
        TypeKind::Literal => format!(
            "one of {}",
            spec.values.iter().map(short).collect::<Vec<_>>().join(", ")
        ),
        TypeKind::Object => format!(
            "object {{{}}}",
            spec.fields
                .as_deref()
                .unwrap_or_default()
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
