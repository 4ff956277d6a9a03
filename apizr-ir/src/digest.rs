//! Digest objects: `{"algorithm":"sha256","value":"<64 lowercase hex>"}`.

use serde::Serialize;
use sha2::{Digest as _, Sha256};

/// A sha256 digest as it appears in every apizr artifact.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Digest {
    /// Always `sha256`.
    pub algorithm: &'static str,
    /// 64 lowercase hex characters.
    pub value: String,
}

impl Digest {
    /// sha256 of `bytes`.
    pub fn sha256(bytes: &[u8]) -> Self {
        let hash = Sha256::digest(bytes);
        Digest {
            algorithm: "sha256",
            value: to_hex(&hash),
        }
    }

    /// `sha256:<hex>`, the form used by text reports.
    pub fn prefixed(&self) -> String {
        format!("sha256:{}", self.value)
    }
}

fn to_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(HEX[(b >> 4) as usize] as char);
        out.push(HEX[(b & 0xf) as usize] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_input_vector() {
        assert_eq!(
            Digest::sha256(b"").value,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert!(Digest::sha256(b"").prefixed().starts_with("sha256:e3b0"));
    }
}
