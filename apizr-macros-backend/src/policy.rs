//! The policy a binding runs under, read and checked at compile time.
//!
//! * no `policy` → the default v1 policy `{}` (a fresh governed process per call);
//! * `policy = "…"` → a v1 (`apizr.execution/v1`) or v2 (`apizr.execution/v2`) document,
//!   parsed with the same strict parsers as `apizr execute`; a v2 policy runs in a container
//!   and needs `runtime_image` (a `sha256:` image ID) and `runtime_platform`;
//! * `mode = "direct"` → the warm pool of ungoverned workers: no policy applies, so giving one
//!   is an error rather than a silently ignored file.
//!
//! Policies that can never run are refused here instead of failing every call: a v2 policy
//! the container backend refuses, and `effects.require_known` (effects are never inferred, so
//! every such call would be `policy_refused`).

use std::io::Read;

use apizr_ir::Digest;
use apizr_ir::policy::PolicyV1;
use apizr_ir::policy_v2::{POLICY_V2_SCHEMA, PolicyV2};
use syn::LitStr;

use crate::attr::{Mode, PythonArgs};
use crate::errors::Errors;
use crate::source::ManifestDir;

/// Policy files are read up to this many bytes (as `apizr execute` does).
const MAX_POLICY_BYTES: u64 = 1_048_576;

/// The two platforms a worker image may be built for.
pub const PLATFORMS: [&str; 2] = ["linux/amd64", "linux/arm64"];

/// How a binding is governed, with the canonical policy bytes it embeds.
#[derive(Debug, Clone)]
pub enum Governance {
    Direct,
    V1 {
        policy: PolicyV1,
        canonical: String,
        digest: Digest,
    },
    V2 {
        /// The policy the worker inside the container applies (limits, environment, effects).
        worker: PolicyV1,
        canonical: String,
        digest: Digest,
        image: String,
        platform: String,
    },
}

impl Governance {
    /// The v1 policy that goes into the runtime plan (`None` in direct mode).
    pub fn plan_policy(&self) -> Option<&PolicyV1> {
        match self {
            Governance::Direct => None,
            Governance::V1 { policy, .. } => Some(policy),
            Governance::V2 { worker, .. } => Some(worker),
        }
    }
}

/// Decide the governance of a binding; every problem is recorded on its own token.
pub fn resolve(args: &PythonArgs, dir: &ManifestDir, errors: &mut Errors) -> Option<Governance> {
    if args.mode == Mode::Direct {
        if let Some(policy) = &args.policy {
            errors.spanned(
                policy.span(),
                "`mode = \"direct\"` runs ungoverned warm workers: remove `policy` or the mode",
            );
        }
        for lit in [&args.runtime_image, &args.runtime_platform]
            .into_iter()
            .flatten()
        {
            errors.spanned(
                lit.span(),
                "`runtime_image`/`runtime_platform` need a v2 policy, not `mode = \"direct\"`",
            );
        }
        return Some(Governance::Direct);
    }
    let Some(lit) = &args.policy else {
        for lit in [&args.runtime_image, &args.runtime_platform]
            .into_iter()
            .flatten()
        {
            errors.spanned(
                lit.span(),
                "`runtime_image`/`runtime_platform` need an `apizr.execution/v2` policy",
            );
        }
        return v1(PolicyV1::default(), errors, None);
    };
    let doc = read_policy(lit, dir).map_err(|e| errors.push(e)).ok()?;
    if doc.get("schema_version").and_then(|v| v.as_str()) == Some(POLICY_V2_SCHEMA) {
        return v2(args, lit, &doc, errors);
    }
    for extra in [&args.runtime_image, &args.runtime_platform]
        .into_iter()
        .flatten()
    {
        errors.spanned(extra.span(), format!("`{}` is a v1 policy: `runtime_image`/`runtime_platform` need an `apizr.execution/v2` policy", lit.value()));
    }
    match PolicyV1::from_json(&doc) {
        Ok(policy) => v1(policy, errors, Some(lit)),
        Err(error) => {
            errors.spanned(
                lit.span(),
                format!("invalid policy `{}`: {error}", lit.value()),
            );
            None
        }
    }
}

fn v1(policy: PolicyV1, errors: &mut Errors, lit: Option<&LitStr>) -> Option<Governance> {
    if let (Some(effect), Some(lit)) = (policy.effects.require_known.first(), lit) {
        errors.spanned(lit.span(), unknown_effect(lit, effect));
        return None;
    }
    let canonical = canonical(policy.canonical_bytes(), errors, lit)?;
    let digest = Digest::sha256(canonical.as_bytes());
    Some(Governance::V1 {
        policy,
        canonical,
        digest,
    })
}

fn v2(
    args: &PythonArgs,
    lit: &LitStr,
    doc: &serde_json::Value,
    errors: &mut Errors,
) -> Option<Governance> {
    let shown = lit.value();
    let policy = match PolicyV2::from_json(doc) {
        Ok(policy) => policy,
        Err(error) => {
            errors.spanned(lit.span(), format!("invalid policy `{shown}`: {error}"));
            return None;
        }
    };
    let mut ok = true;
    if let Some(refusal) = policy.refusal() {
        errors.spanned(
            lit.span(),
            format!("policy `{shown}` would refuse every call: {refusal}"),
        );
        ok = false;
    }
    if let Some(effect) = policy.effects.require_known.first() {
        errors.spanned(lit.span(), unknown_effect(lit, effect));
        ok = false;
    }
    let image = match &args.runtime_image {
        None => {
            errors.spanned(lit.span(), format!("`{shown}` is a v2 (container) policy: add `runtime_image = \"sha256:…\"` (see `apizr image build`) and `runtime_platform`"));
            None
        }
        Some(image) if !is_image_id(&image.value()) => {
            errors.spanned(image.span(), "`runtime_image` must be an image ID `sha256:<64 lowercase hex>`: a tag could name different images over time");
            None
        }
        Some(image) => Some(image.value()),
    };
    let platform = match &args.runtime_platform {
        None => {
            if image.is_some() {
                errors.spanned(
                    lit.span(),
                    "a v2 policy needs `runtime_platform = \"linux/amd64\"` or `\"linux/arm64\"`",
                );
            }
            None
        }
        Some(p) if !PLATFORMS.contains(&p.value().as_str()) => {
            errors.spanned(
                p.span(),
                format!(
                    "unknown platform `{}`; expected \"linux/amd64\" or \"linux/arm64\"",
                    p.value()
                ),
            );
            None
        }
        Some(p) => Some(p.value()),
    };
    let canonical = canonical(policy.canonical_bytes(), errors, Some(lit))?;
    let (Some(image), Some(platform), true) = (image, platform, ok) else {
        return None;
    };
    Some(Governance::V2 {
        worker: policy.worker_policy(),
        digest: Digest::sha256(canonical.as_bytes()),
        canonical,
        image,
        platform,
    })
}

fn unknown_effect(lit: &LitStr, effect: &str) -> String {
    format!(
        "policy `{}` requires the effect `{effect}` to be known, but effects are never inferred (always `unknown`): every call would be `policy_refused`",
        lit.value()
    )
}

fn canonical(
    bytes: Result<Vec<u8>, apizr_ir::CanonicalError>,
    errors: &mut Errors,
    lit: Option<&LitStr>,
) -> Option<String> {
    let span = lit.map_or_else(proc_macro2::Span::call_site, LitStr::span);
    match bytes.map(String::from_utf8) {
        Ok(Ok(text)) => Some(text),
        Ok(Err(error)) => {
            errors.spanned(span, format!("policy is not UTF-8 after encoding: {error}"));
            None
        }
        Err(error) => {
            errors.spanned(span, format!("policy cannot be encoded: {error}"));
            None
        }
    }
}

/// `sha256:` + 64 lowercase hex digits.
pub fn is_image_id(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// Read and decode a policy document; JSON errors carry `file:line:column`.
fn read_policy(lit: &LitStr, dir: &ManifestDir) -> syn::Result<serde_json::Value> {
    let path = dir.resolve(lit, "policy")?;
    let shown = lit.value();
    let fail = |message: String| syn::Error::new(lit.span(), message);
    let file = std::fs::File::open(&path).map_err(|e| {
        fail(format!("cannot read policy `{shown}`: {e} (paths are relative to the crate's manifest directory)"))
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_POLICY_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(format!("cannot read policy `{shown}`: {e}")))?;
    if bytes.len() as u64 > MAX_POLICY_BYTES {
        return Err(fail(format!(
            "policy `{shown}` is larger than {MAX_POLICY_BYTES} bytes"
        )));
    }
    serde_json::from_slice(&bytes).map_err(|e| {
        let text = e.to_string();
        let message = text
            .rsplit_once(" at line ")
            .map_or(text.as_str(), |(m, _)| m);
        fail(format!(
            "invalid policy {shown}:{}:{}: {message}",
            e.line(),
            e.column()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_ids() {
        assert!(is_image_id(&format!("sha256:{}", "a".repeat(64))));
        assert!(!is_image_id(&format!("sha256:{}", "A".repeat(64))));
        assert!(!is_image_id("apizr-worker:latest"));
    }
}
