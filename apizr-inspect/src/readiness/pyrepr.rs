//! The reference's refusal text for duplicate TypedDict field names: a pydantic validation error
//! whose `input_value` is the Python `repr` of the field tuple (source order), truncated by
//! pydantic-core to its first 25 and last 24 characters. The text is pydantic-version dependent
//! (2.14 here); only the head (first field name) and tail (closing structure) are visible, so the
//! middle of the repr is an approximation that never reaches the output.

use std::collections::HashSet;

use apizr_ir::{ObjectField, TypeSpec};

/// `Some(problem)` when two fields share a (mangled) name.
pub fn duplicate_fields_error(fields: &[ObjectField]) -> Option<String> {
    let mut seen = HashSet::new();
    if fields.iter().all(|f| seen.insert(f.name.as_str())) {
        return None;
    }
    let items: Vec<String> = fields.iter().map(field_repr).collect();
    let repr = tuple_repr(&items);
    Some(format!(
        "1 validation error for TypeSpec\nfields\n  Value error, Duplicate object fields \
         [type=value_error, input_value={}, input_type=tuple]\n    For further information \
         visit https://errors.pydantic.dev/2.14/v/value_error",
        truncate(&repr)
    ))
}

fn truncate(repr: &str) -> String {
    let chars: Vec<char> = repr.chars().collect();
    if chars.len() <= 50 {
        return repr.to_string();
    }
    let head: String = chars.iter().take(25).collect();
    let tail: String = chars.iter().skip(chars.len() - 24).collect();
    format!("{head}...{tail}")
}

fn tuple_repr(items: &[String]) -> String {
    match items {
        [] => "()".into(),
        [one] => format!("({one},)"),
        many => format!("({})", many.join(", ")),
    }
}

fn field_repr(field: &ObjectField) -> String {
    let required = if field.required { "True" } else { "False" };
    format!(
        "ObjectField(name='{}', required={required}, type={})",
        field.name,
        spec_repr(&field.type_spec)
    )
}

fn spec_repr(spec: &TypeSpec) -> String {
    let kind = apizr_ir::to_value(&spec.kind)
        .ok()
        .and_then(|v| match v {
            apizr_ir::Value::Str(s) => Some(s),
            _ => None,
        })
        .unwrap_or_default();
    let items: Vec<String> = spec.items.iter().map(spec_repr).collect();
    let values: Vec<String> = spec
        .values
        .iter()
        .map(|v| v.canonical_string().unwrap_or_default())
        .collect();
    let fields: Vec<String> = spec.fields.iter().flatten().map(field_repr).collect();
    let variadic = if spec.variadic { "True" } else { "False" };
    format!(
        "TypeSpec(kind='{kind}', items={}, values={}, variadic={variadic}, fields={})",
        tuple_repr(&items),
        tuple_repr(&values),
        tuple_repr(&fields)
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use apizr_ir::TypeKind;

    fn field(name: &str, spec: TypeSpec) -> ObjectField {
        ObjectField {
            name: name.into(),
            required: true,
            type_spec: spec,
        }
    }

    #[test]
    fn no_duplicates_no_error() {
        let fields = [
            field("a", TypeSpec::simple(TypeKind::Int)),
            field("b", TypeSpec::simple(TypeKind::Int)),
        ];
        assert_eq!(duplicate_fields_error(&fields), None);
    }

    #[test]
    fn oracle_vector_nested_object_tail() {
        // Oracle: `a: int` then `a: Inner` with Inner = {q: int}.
        let inner = TypeSpec {
            fields: Some(vec![field("q", TypeSpec::simple(TypeKind::Int))]),
            python: None,
            ..TypeSpec::simple(TypeKind::Object)
        };
        let fields = [
            field("a", TypeSpec::simple(TypeKind::Int)),
            field("a", inner),
        ];
        let message = duplicate_fields_error(&fields).unwrap();
        assert!(message.contains(
            "input_value=(ObjectField(name='a', re...=False, fields=())),)))), input_type=tuple]"
        ));
    }
}
