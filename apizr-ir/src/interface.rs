//! The shared interface contract: the `InvocationContract` of one eligible
//! capability, its digest, and the JSON Schema (2020-12 / OpenAPI 3.1) mapping of TypeSpecs.
//!
//! Why here: the same contract feeds `apizr execute` (inside the runtime plan, hashed into
//! `interface_digest`), `openapi.json` and `mcp-tools.json`, so it must be one pure data type
//! with one canonical encoding. Schemas are built as [`Value`]s so that they serialize with the
//! canonical encoder (sorted keys, Python floats) like every other artifact.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::capability::ParameterKind;
use crate::digest::Digest;
use crate::json::{CanonicalError, Value};
use crate::readiness::{TypeKind, TypeSpec};

/// `execution` of a contract: only plain functions and coroutines are eligible.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ContractExecution {
    Sync,
    Async,
}

/// One parameter of the contract, in signature order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContractParameter {
    pub kind: ParameterKind,
    pub name: String,
    pub required: bool,
    #[serde(rename = "type")]
    pub type_spec: TypeSpec,
}

impl ContractParameter {
    /// The type of the value the caller sends under this parameter's name: `list[T]` for
    /// `*args: T` (a JSON array of its items), `T` otherwise (for `**kwargs: T`, the type of
    /// each extra key's value). The request schema and Rust validation both read it, so the
    /// contract and the check are one rule.
    pub fn value_spec(&self) -> std::borrow::Cow<'_, TypeSpec> {
        match self.kind {
            ParameterKind::VarPositional => std::borrow::Cow::Owned(TypeSpec {
                items: vec![self.type_spec.clone()],
                ..TypeSpec::simple(TypeKind::List)
            }),
            _ => std::borrow::Cow::Borrowed(&self.type_spec),
        }
    }
}

/// The positional parameters a present `*args` needs (CPython fills the parameters before
/// `*args` by position before any item reaches it): the optional named positional parameters
/// before it (the required ones are required anyway). Empty without `*args`.
pub fn var_positional_needs(parameters: &[ContractParameter]) -> Vec<&ContractParameter> {
    if !parameters
        .iter()
        .any(|p| p.kind == ParameterKind::VarPositional)
    {
        return Vec::new();
    }
    parameters
        .iter()
        .filter(|p| p.kind.is_named_positional() && !p.required)
        .collect()
}

/// `{capability_id, description, execution, name, parameters, returns}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InvocationContract {
    pub capability_id: String,
    /// The docstring, or null.
    pub description: Option<String>,
    pub execution: ContractExecution,
    pub name: String,
    pub parameters: Vec<ContractParameter>,
    /// `any` whenever the outputs dimension has a reason.
    pub returns: TypeSpec,
}

impl InvocationContract {
    /// Canonical bytes (document + `\n`).
    pub fn canonical_bytes(&self) -> Result<Vec<u8>, CanonicalError> {
        crate::json::canonical_bytes(self)
    }

    /// `interface_digest`.
    pub fn digest(&self) -> Result<Digest, CanonicalError> {
        Ok(Digest::sha256(&self.canonical_bytes()?))
    }

    /// The request (tool input) schema of 5.3.
    pub fn request_schema(&self) -> Value {
        request_schema(&self.parameters)
    }
}

fn object(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn typed(name: &str) -> Value {
    object(vec![("type", Value::Str(name.into()))])
}

/// The JSON Schema `type` name of a literal value.
fn literal_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Str(_) => "string",
        Value::Int(_) | Value::BigInt(_) => "integer",
        Value::Float(_) => "number",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn constant(value: &Value) -> Value {
    object(vec![
        ("const", value.clone()),
        ("type", Value::Str(literal_type(value).into())),
    ])
}

fn first_item(spec: &TypeSpec) -> Value {
    spec.items
        .first()
        .map_or_else(|| object(vec![]), type_schema)
}

/// The JSON Schema of one TypeSpec (the reference's mapping, kind by kind).
pub fn type_schema(spec: &TypeSpec) -> Value {
    match spec.kind {
        TypeKind::Any => object(vec![]),
        TypeKind::Int => typed("integer"),
        TypeKind::Float => typed("number"),
        TypeKind::Str => typed("string"),
        TypeKind::Bool => typed("boolean"),
        TypeKind::Null => typed("null"),
        TypeKind::Literal => match spec.values.as_slice() {
            [one] => constant(one),
            many => object(vec![(
                "anyOf",
                Value::Array(many.iter().map(constant).collect()),
            )]),
        },
        TypeKind::Union => object(vec![(
            "anyOf",
            Value::Array(spec.items.iter().map(type_schema).collect()),
        )]),
        TypeKind::Object => {
            let fields = spec.fields.as_deref().unwrap_or(&[]);
            let properties: BTreeMap<String, Value> = fields
                .iter()
                .map(|f| (f.name.clone(), type_schema(&f.type_spec)))
                .collect();
            let required = fields
                .iter()
                .filter(|f| f.required)
                .map(|f| Value::Str(f.name.clone()))
                .collect();
            object(vec![
                ("additionalProperties", Value::Bool(false)),
                ("properties", Value::Object(properties)),
                ("required", Value::Array(required)),
                ("type", Value::Str("object".into())),
            ])
        }
        TypeKind::Dict => object(vec![
            ("additionalProperties", first_item(spec)),
            ("type", Value::Str("object".into())),
        ]),
        TypeKind::Tuple if !spec.variadic => {
            let n = Value::Int(i64::try_from(spec.items.len()).unwrap_or(i64::MAX));
            object(vec![
                ("maxItems", n.clone()),
                ("minItems", n),
                (
                    "prefixItems",
                    Value::Array(spec.items.iter().map(type_schema).collect()),
                ),
                ("type", Value::Str("array".into())),
            ])
        }
        TypeKind::List | TypeKind::Tuple => object(vec![
            ("items", first_item(spec)),
            ("type", Value::Str("array".into())),
        ]),
        TypeKind::Bytes | TypeKind::Bytearray => object(vec![
            ("contentEncoding", Value::Str("base64".into())),
            ("type", Value::Str("string".into())),
        ]),
        TypeKind::Date | TypeKind::Datetime | TypeKind::Time | TypeKind::Timedelta => {
            crate::temporal::schema(spec.kind).unwrap_or_else(|| typed("string"))
        }
        TypeKind::Set | TypeKind::Frozenset => object(vec![
            ("items", first_item(spec)),
            ("type", Value::Str("array".into())),
            ("uniqueItems", Value::Bool(true)),
        ]),
    }
}

/// The request schema: an object of the parameters, `required` in signature order, and
/// `dependentRequired` (only when non-empty) for positional-only parameters that need their
/// earlier optional positional-only siblings, and for `*args` (an array property of its items)
/// that needs every positional parameter before it ([`var_positional_needs`]). Closed
/// (`additionalProperties: false`) unless the function takes `**kwargs: T`: then every other key
/// is one of its entries (`additionalProperties` = T), except its own name (`propertyNames`),
/// which CPython would accept as an entry but a client would take for the dict itself. A key
/// named after a parameter always binds that parameter — also a positional-only one, which
/// CPython would put into `**kwargs` (`def f(a, /, **kw)`, `f(1, a=2)`): one JSON object has
/// one such key, so that entry cannot be sent.
pub fn request_schema(parameters: &[ContractParameter]) -> Value {
    let properties: BTreeMap<String, Value> = parameters
        .iter()
        .filter(|p| p.kind != ParameterKind::VarKeyword)
        .map(|p| (p.name.clone(), type_schema(&p.value_spec())))
        .collect();
    let required: Vec<Value> = parameters
        .iter()
        .filter(|p| p.required)
        .map(|p| Value::Str(p.name.clone()))
        .collect();
    let mut dependent = BTreeMap::new();
    let mut earlier_optional: Vec<Value> = Vec::new();
    for p in parameters
        .iter()
        .filter(|p| p.kind == ParameterKind::PositionalOnly)
    {
        if !earlier_optional.is_empty() {
            dependent.insert(p.name.clone(), Value::Array(earlier_optional.clone()));
        }
        if !p.required {
            earlier_optional.push(Value::Str(p.name.clone()));
        }
    }
    let needs = var_positional_needs(parameters);
    if let Some(args) = parameters
        .iter()
        .find(|p| p.kind == ParameterKind::VarPositional)
        && !needs.is_empty()
    {
        let names = needs.iter().map(|p| Value::Str(p.name.clone())).collect();
        dependent.insert(args.name.clone(), Value::Array(names));
    }
    let kwargs = parameters
        .iter()
        .find(|p| p.kind == ParameterKind::VarKeyword);
    let additional = kwargs.map_or(Value::Bool(false), |p| type_schema(&p.type_spec));
    let mut schema = vec![
        ("additionalProperties", additional),
        ("properties", Value::Object(properties)),
        ("required", Value::Array(required)),
        ("type", Value::Str("object".into())),
    ];
    if !dependent.is_empty() {
        schema.push(("dependentRequired", Value::Object(dependent)));
    }
    if let Some(kwargs) = kwargs {
        let not = object(vec![("const", Value::Str(kwargs.name.clone()))]);
        schema.push(("propertyNames", object(vec![("not", not)])));
    }
    object(schema)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(name: &str, kind: ParameterKind, required: bool) -> ContractParameter {
        ContractParameter {
            kind,
            name: name.into(),
            required,
            type_spec: TypeSpec::simple(TypeKind::Int),
        }
    }

    #[test]
    fn dependent_required_vector() {
        let po = ParameterKind::PositionalOnly;
        let params = vec![
            param("a", po, false),
            param("b", po, false),
            param("c", po, false),
            param("d", ParameterKind::PositionalOrKeyword, false),
        ];
        let schema = request_schema(&params).canonical_string().unwrap();
        assert!(
            schema.contains(r#""dependentRequired":{"b":["a"],"c":["a","b"]}"#),
            "{schema}"
        );
        let plain = request_schema(&[param("x", po, true)])
            .canonical_string()
            .unwrap();
        assert_eq!(
            plain,
            r#"{"additionalProperties":false,"properties":{"x":{"type":"integer"}},"required":["x"],"type":"object"}"#
        );
    }

    /// `def f(a, /, b=1, *rest: int, c, **kw: str)`: `rest` is an array of its items that
    /// needs `b` (a present `*args` fills every positional parameter before it); other keys are
    /// entries of `kw` (strings), `kw` itself excepted; without `**kwargs` the object is closed.
    #[test]
    fn variadic_schemas() {
        let params = vec![
            param("a", ParameterKind::PositionalOnly, true),
            param("b", ParameterKind::PositionalOrKeyword, false),
            param("rest", ParameterKind::VarPositional, false),
            param("c", ParameterKind::KeywordOnly, true),
            ContractParameter {
                type_spec: TypeSpec::simple(TypeKind::Str),
                ..param("kw", ParameterKind::VarKeyword, false)
            },
        ];
        assert_eq!(
            request_schema(&params).canonical_string().unwrap(),
            concat!(
                r#"{"additionalProperties":{"type":"string"},"dependentRequired":{"rest":["b"]},"#,
                r#""properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"},"#,
                r#""rest":{"items":{"type":"integer"},"type":"array"}},"#,
                r#""propertyNames":{"not":{"const":"kw"}},"required":["a","c"],"type":"object"}"#
            )
        );
        let closed = request_schema(&params[..3]).canonical_string().unwrap();
        assert!(
            closed.starts_with(r#"{"additionalProperties":false,"#),
            "{closed}"
        );
        assert!(!closed.contains("propertyNames"), "{closed}");
    }

    #[test]
    fn literal_schemas() {
        let one = TypeSpec {
            values: vec![Value::Int(1)],
            ..TypeSpec::simple(TypeKind::Literal)
        };
        assert_eq!(
            type_schema(&one).canonical_string().unwrap(),
            r#"{"const":1,"type":"integer"}"#
        );
        let many = TypeSpec {
            values: vec![Value::Null, Value::Float(1.5), Value::Str("a".into())],
            ..TypeSpec::simple(TypeKind::Literal)
        };
        assert_eq!(
            type_schema(&many).canonical_string().unwrap(),
            r#"{"anyOf":[{"const":null,"type":"null"},{"const":1.5,"type":"number"},{"const":"a","type":"string"}]}"#
        );
    }
}
