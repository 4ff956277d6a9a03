//! Worker protocol `apizr.worker/v1` (our own; see `PROTOCOL.md` in the crate root).
//!
//! One request on the worker's stdin, one response on its original stdout, each framed as an
//! 8-byte unsigned big-endian length followed by exactly that many bytes of canonical JSON
//! that end with `\n`. The request is at most [`MAX_REQUEST_BYTES`]; the response (JSON + LF,
//! not counting the header) is at most the policy's `max_output_bytes`. Bytes after a frame are
//! a protocol error. The response is the v1 result envelope itself; the parent re-encodes it
//! and requires byte equality, so a worker cannot smuggle non-canonical output through.

use std::collections::BTreeMap;

use apizr_ir::Digest;
use apizr_ir::json::{CanonicalError, Value, to_value};

use crate::envelope::Envelope;
use crate::request::{CallRequest, PackageFiles};

/// Protocol identifier carried in every request.
pub const PROTOCOL_V1: &str = "apizr.worker/v1";
/// Protocol identifier of the prepare frame a pre-started worker may get before its request
/// (pre-import: PROTOCOL.md).
pub const PREPARE_V1: &str = "apizr.worker-prepare/v1";
/// The frame a worker writes on its response channel once a prepare frame's module is
/// imported: [`encode_frame`] of this payload.
pub const PREPARED_PAYLOAD: &[u8] = b"prepared\n";
/// Largest request frame payload (64 MiB).
pub const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;
/// Length of the frame header.
pub const HEADER_BYTES: usize = 8;

/// Why a response frame was rejected. `Oversized` maps to `output_limit`, everything else to
/// `worker_failed`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("no response (stdout closed before a complete header)")]
    TruncatedHeader,
    #[error("response frame of {0} bytes exceeds the output limit")]
    Oversized(u64),
    #[error("response payload shorter than its header")]
    TruncatedPayload,
    #[error("extra bytes after the response frame")]
    TrailingBytes,
    #[error("response payload does not end with a newline")]
    MissingNewline,
    #[error("response is not JSON: {0}")]
    Json(#[from] apizr_ir::json::ParseError),
    #[error("response is not a v1 envelope: {0}")]
    Envelope(#[from] crate::envelope::EnvelopeError),
    #[error("response is not canonical JSON")]
    NotCanonical,
}

/// Prefix `payload` with its 8-byte big-endian length.
pub fn encode_frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES + payload.len());
    out.extend_from_slice(&(payload.len() as u64).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// Parse the bytes read from the worker's stdout (everything up to EOF, or the bounded prefix
/// when the reader stopped at `max_output + HEADER_BYTES + 1` bytes).
pub fn decode_response(stdout: &[u8], max_output: u64) -> Result<Envelope, FrameError> {
    let (header, rest) = stdout
        .split_first_chunk::<HEADER_BYTES>()
        .ok_or(FrameError::TruncatedHeader)?;
    let declared = u64::from_be_bytes(*header);
    if declared > max_output {
        return Err(FrameError::Oversized(declared));
    }
    let declared_len = usize::try_from(declared).map_err(|_| FrameError::Oversized(declared))?;
    if rest.len() < declared_len {
        return Err(FrameError::TruncatedPayload);
    }
    if rest.len() > declared_len {
        // More than limit + header bytes means the worker kept writing: output_limit.
        if stdout.len() as u64 > max_output + HEADER_BYTES as u64 {
            return Err(FrameError::Oversized(stdout.len() as u64));
        }
        return Err(FrameError::TrailingBytes);
    }
    if rest.last() != Some(&b'\n') {
        return Err(FrameError::MissingNewline);
    }
    let doc = apizr_ir::json::parse(rest, apizr_ir::json::Dialect::Strict)?;
    let envelope = Envelope::from_value(doc)?;
    match envelope.canonical_bytes() {
        Ok(bytes) if bytes == rest => Ok(envelope),
        _ => Err(FrameError::NotCanonical),
    }
}

/// Build the canonical request payload (JSON + LF, without the header).
pub fn encode_request(
    call: &CallRequest,
    seccomp_programs: Option<&[Vec<u8>]>,
) -> Result<Vec<u8>, CanonicalError> {
    let mut root = BTreeMap::new();
    let mut arguments = BTreeMap::new();
    arguments.insert("positional".into(), Value::Array(call.positional.clone()));
    arguments.insert("keyword".into(), Value::Object(call.keyword.clone()));
    root.insert("arguments".into(), Value::Object(arguments));
    root.insert(
        "call".into(),
        object([
            ("execution", Value::Str(call.execution.wire_name().into())),
            ("function", Value::Str(call.function.clone())),
            ("module", Value::Str(call.module.clone())),
            ("path", Value::Str(call.executable_path())),
        ]),
    );
    insert_source(&mut root, call)?;
    let limits = &call.policy.limits;
    root.insert(
        "limits".into(),
        object([
            ("max_input_bytes", int(limits.max_input_bytes)),
            ("max_output_bytes", int(limits.max_output_bytes)),
        ]),
    );
    let mut params = Vec::with_capacity(call.parameters.len());
    for p in &call.parameters {
        params.push(object([
            ("kind", to_value(&p.kind)?),
            ("name", Value::Str(p.name.clone())),
            ("required", Value::Bool(p.required)),
            ("type", to_value(&p.type_spec)?),
        ]));
    }
    root.insert("parameters".into(), Value::Array(params));
    // Only when the return type holds a class (readiness v2): the worker turns such
    // instances back into JSON values; absent, the request is byte-identical to before.
    if let Some(returns) = &call.returns {
        root.insert("returns".into(), to_value(returns)?);
    }
    root.insert("protocol".into(), Value::Str(PROTOCOL_V1.into()));
    root.insert("seccomp".into(), seccomp_value(seccomp_programs));
    Value::Object(root).canonical_bytes()
}

/// The prepare frame's payload (pre-import): what the worker needs to import `call`'s module
/// exactly as the request would have it imported (its bytes, package and the seccomp
/// programs installed first), and nothing of any one call. The request that follows must
/// carry the same `executable`, `package`, `seccomp`, module and path.
pub fn encode_prepare(
    call: &CallRequest,
    seccomp_programs: Option<&[Vec<u8>]>,
) -> Result<Vec<u8>, CanonicalError> {
    let mut root = BTreeMap::new();
    root.insert(
        "call".into(),
        object([
            ("module", Value::Str(call.module.clone())),
            ("path", Value::Str(call.executable_path())),
        ]),
    );
    insert_source(&mut root, call)?;
    root.insert("protocol".into(), Value::Str(PREPARE_V1.into()));
    root.insert("seccomp".into(), seccomp_value(seccomp_programs));
    Value::Object(root).canonical_bytes()
}

/// `executable` (bytes and digest) and, for a module of a package, `package`.
fn insert_source(
    root: &mut BTreeMap<String, Value>,
    call: &CallRequest,
) -> Result<(), CanonicalError> {
    root.insert(
        "executable".into(),
        object([
            ("base64", Value::Str(base64(&call.executable.bytes))),
            ("digest", to_value(&call.executable.digest)?),
        ]),
    );
    if let Some(package) = &call.executable.package {
        root.insert("package".into(), package_value(package)?);
    }
    Ok(())
}

fn seccomp_value(programs: Option<&[Vec<u8>]>) -> Value {
    match programs {
        Some(programs) => Value::Array(programs.iter().map(|p| Value::Str(hex(p))).collect()),
        None => Value::Null,
    }
}

/// `{"files": {path: {"base64", "digest"}}}`: a package's files as the worker reads them
/// (only present for a module of a package, so a single file's request bytes are unchanged).
pub fn package_value(package: &PackageFiles) -> Result<Value, CanonicalError> {
    let mut files = BTreeMap::new();
    for (path, bytes) in &package.files {
        files.insert(
            path.clone(),
            object([
                ("base64", Value::Str(base64(bytes))),
                ("digest", to_value(&Digest::sha256(bytes))?),
            ]),
        );
    }
    Ok(object([("files", Value::Object(files))]))
}

fn object<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn int(n: u64) -> Value {
    i64::try_from(n).map_or_else(|_| Value::BigInt(n.to_string()), Value::Int)
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    out
}

/// Standard base64 with padding (RFC 4648), decoded in the worker by `binascii`.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                let idx = ((n >> (18 - 6 * i)) & 0x3f) as usize;
                out.push(char::from(ALPHABET[idx]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Status;

    fn frame(payload: &[u8]) -> Vec<u8> {
        encode_frame(payload)
    }

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (input, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), want);
        }
    }

    #[test]
    fn frame_level_errors() {
        let ok = Envelope::success(Value::Int(3)).canonical_bytes().unwrap();
        assert_eq!(
            decode_response(&frame(&ok), 128).unwrap().status,
            Status::Success
        );
        assert_eq!(
            decode_response(&[0, 0, 0], 128),
            Err(FrameError::TruncatedHeader)
        );
        assert_eq!(decode_response(&[], 128), Err(FrameError::TruncatedHeader));
        let mut big = frame(&ok);
        big[..8].copy_from_slice(&129u64.to_be_bytes());
        assert_eq!(decode_response(&big, 128), Err(FrameError::Oversized(129)));
        let short = &frame(&ok)[..20];
        assert_eq!(
            decode_response(short, 128),
            Err(FrameError::TruncatedPayload)
        );
        let mut extra = frame(&ok);
        extra.push(b'x');
        assert_eq!(decode_response(&extra, 128), Err(FrameError::TrailingBytes));
        let spaced = b"{\"schema_version\": \"apizr.execution-result/v1\",\"status\":\"success\",\"value\":1}\n";
        assert_eq!(
            decode_response(&frame(spaced), 1000),
            Err(FrameError::NotCanonical)
        );
        let failed_with_value = b"{\"schema_version\":\"apizr.execution-result/v1\",\"status\":\"timeout\",\"value\":1}\n";
        assert!(matches!(
            decode_response(&frame(failed_with_value), 1000),
            Err(FrameError::Envelope(_))
        ));
    }
}
