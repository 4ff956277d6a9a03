//! A serde `Serializer` that builds a [`Value`], so contract types can `#[derive(Serialize)]`
//! and still be encoded canonically (sorted keys, Python floats, big integers).

use std::collections::BTreeMap;

use serde::ser::{self, Serialize};

use super::{CanonicalError, Value};

/// Newtype-struct name through which [`Value::BigInt`] survives a round trip through serde.
pub(crate) const BIGINT_TOKEN: &str = "$apizr::BigInt";

/// Convert any serializable value to a [`Value`].
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, CanonicalError> {
    value.serialize(ValueSerializer)
}

impl ser::Error for CanonicalError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        CanonicalError::Unsupported(msg.to_string())
    }
}

impl Serialize for Value {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use ser::{SerializeMap, SerializeSeq};
        match self {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(i) => s.serialize_i64(*i),
            Value::BigInt(digits) => s.serialize_newtype_struct(BIGINT_TOKEN, digits),
            Value::Float(f) => s.serialize_f64(*f),
            Value::Str(text) => s.serialize_str(text),
            Value::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Object(map) => {
                let mut m = s.serialize_map(Some(map.len()))?;
                for (k, v) in map {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
        }
    }
}

struct ValueSerializer;

fn int_value<T: TryInto<i64> + ToString + Copy>(v: T) -> Value {
    match v.try_into() {
        Ok(i) => Value::Int(i),
        Err(_) => Value::BigInt(v.to_string()),
    }
}

impl ser::Serializer for ValueSerializer {
    type Ok = Value;
    type Error = CanonicalError;
    type SerializeSeq = SeqBuilder;
    type SerializeTuple = SeqBuilder;
    type SerializeTupleStruct = SeqBuilder;
    type SerializeTupleVariant = ser::Impossible<Value, CanonicalError>;
    type SerializeMap = MapBuilder;
    type SerializeStruct = MapBuilder;
    type SerializeStructVariant = ser::Impossible<Value, CanonicalError>;

    fn serialize_bool(self, v: bool) -> Result<Value, CanonicalError> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, CanonicalError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Value, CanonicalError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Value, CanonicalError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Value, CanonicalError> {
        Ok(Value::Int(v))
    }
    fn serialize_i128(self, v: i128) -> Result<Value, CanonicalError> {
        Ok(int_value(v))
    }
    fn serialize_u8(self, v: u8) -> Result<Value, CanonicalError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Value, CanonicalError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Value, CanonicalError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Value, CanonicalError> {
        Ok(int_value(v))
    }
    fn serialize_u128(self, v: u128) -> Result<Value, CanonicalError> {
        Ok(int_value(v))
    }
    fn serialize_f32(self, v: f32) -> Result<Value, CanonicalError> {
        Ok(Value::Float(v.into()))
    }
    fn serialize_f64(self, v: f64) -> Result<Value, CanonicalError> {
        Ok(Value::Float(v))
    }
    fn serialize_char(self, v: char) -> Result<Value, CanonicalError> {
        Ok(Value::Str(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Value, CanonicalError> {
        Ok(Value::Str(v.to_owned()))
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<Value, CanonicalError> {
        Err(CanonicalError::Unsupported("bytes".into()))
    }
    fn serialize_none(self) -> Result<Value, CanonicalError> {
        Ok(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Value, CanonicalError> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, CanonicalError> {
        Ok(Value::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value, CanonicalError> {
        Ok(Value::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value, CanonicalError> {
        Ok(Value::Str(variant.to_owned()))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        v: &T,
    ) -> Result<Value, CanonicalError> {
        let inner = v.serialize(ValueSerializer)?;
        if name == BIGINT_TOKEN {
            return match inner {
                Value::Str(digits) => Ok(Value::BigInt(digits)),
                other => Ok(other),
            };
        }
        Ok(inner)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<Value, CanonicalError> {
        let mut map = BTreeMap::new();
        map.insert(variant.to_owned(), v.serialize(ValueSerializer)?);
        Ok(Value::Object(map))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqBuilder, CanonicalError> {
        Ok(SeqBuilder(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqBuilder, CanonicalError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<SeqBuilder, CanonicalError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, CanonicalError> {
        Err(CanonicalError::Unsupported(format!(
            "tuple variant of {name}"
        )))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<MapBuilder, CanonicalError> {
        Ok(MapBuilder::default())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<MapBuilder, CanonicalError> {
        Ok(MapBuilder::default())
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, CanonicalError> {
        Err(CanonicalError::Unsupported(format!(
            "struct variant of {name}"
        )))
    }
}

pub struct SeqBuilder(Vec<Value>);

impl ser::SerializeSeq for SeqBuilder {
    type Ok = Value;
    type Error = CanonicalError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), CanonicalError> {
        self.0.push(v.serialize(ValueSerializer)?);
        Ok(())
    }
    fn end(self) -> Result<Value, CanonicalError> {
        Ok(Value::Array(self.0))
    }
}

impl ser::SerializeTuple for SeqBuilder {
    type Ok = Value;
    type Error = CanonicalError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), CanonicalError> {
        ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<Value, CanonicalError> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for SeqBuilder {
    type Ok = Value;
    type Error = CanonicalError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), CanonicalError> {
        ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<Value, CanonicalError> {
        ser::SerializeSeq::end(self)
    }
}

#[derive(Default)]
pub struct MapBuilder {
    map: BTreeMap<String, Value>,
    pending_key: Option<String>,
}

impl ser::SerializeMap for MapBuilder {
    type Ok = Value;
    type Error = CanonicalError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), CanonicalError> {
        match key.serialize(ValueSerializer)? {
            Value::Str(k) => {
                self.pending_key = Some(k);
                Ok(())
            }
            other => Err(CanonicalError::Unsupported(format!(
                "non-string key {other:?}"
            ))),
        }
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), CanonicalError> {
        let key = self
            .pending_key
            .take()
            .ok_or_else(|| CanonicalError::Unsupported("map value without key".into()))?;
        self.map.insert(key, v.serialize(ValueSerializer)?);
        Ok(())
    }
    fn end(self) -> Result<Value, CanonicalError> {
        Ok(Value::Object(self.map))
    }
}

impl ser::SerializeStruct for MapBuilder {
    type Ok = Value;
    type Error = CanonicalError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), CanonicalError> {
        self.map
            .insert(key.to_owned(), v.serialize(ValueSerializer)?);
        Ok(())
    }
    fn skip_field(&mut self, _key: &'static str) -> Result<(), CanonicalError> {
        Ok(())
    }
    fn end(self) -> Result<Value, CanonicalError> {
        Ok(Value::Object(self.map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    struct Sample {
        zeta: Option<u32>,
        alpha: Vec<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        omitted: Option<bool>,
        big: Value,
    }

    #[test]
    fn derived_structs_encode_canonically() {
        let sample = Sample {
            zeta: None,
            alpha: vec![1e16, 0.5],
            omitted: None,
            big: Value::BigInt("-123456789012345678901234567890".into()),
        };
        let bytes = crate::json::canonical_bytes(&sample).unwrap();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "{\"alpha\":[1e+16,0.5],\"big\":-123456789012345678901234567890,\"zeta\":null}\n"
        );
    }
}
