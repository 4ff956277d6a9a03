//! PEP 263 decoding. OWNER: front-end helper.
use crate::error::InspectError;

pub fn decode_python(bytes: &[u8]) -> Result<String, InspectError> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    String::from_utf8(bytes.to_vec()).map_err(|e| InspectError::Decode {
        message: e.to_string(),
        position: None,
    })
}
