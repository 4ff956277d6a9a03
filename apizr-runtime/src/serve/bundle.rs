//! Loading a generated project (`--bundle DIR`): the transport manifest (`apizr-rest.json` or
//! `apizr-mcp.json`), the contracts it lists, the executable source (for a module of a
//! package, with the package's files the manifest's `package.files` names), and, when present,
//! the governed policy `execution/policy.json` (v1: local governed workers; v2: containers, with
//! the runtime image from `execution/bundle.json`).
//!
//! A bundle of several modules of a package (`package.modules`, one entry per module: its
//! binding, its capability ids and its import closure) is one source per module, as `apizr
//! serve DIR --select a.x:f,b.y:g` serves them ([`load_plan`]): each module's executable is
//! checked against its own digest and gets its own closure, and every capability belongs to
//! exactly one module.
//!
//! Why so strict: a bundle is the unit that was reviewed and hashed. Every artifact listed in
//! the manifest is re-hashed before anything is served, the executable must match its bound
//! digest, and each contract is decoded then re-encoded canonically and compared with the
//! manifest's own bytes, so the server serves exactly what was generated or refuses to start.

use std::path::{Component, Path};

use apizr_ir::admission::parse_permissive;
use apizr_ir::import_time::ImportTime;
use apizr_ir::policy::AnyPolicy;
use apizr_ir::policy_v2::PolicyV2;
use apizr_ir::{Digest, Value};

use super::error::{BundleError, ServeError};
use super::options::Transport;
use super::service::ServicePlan;
use super::spec::{ExecutionMode, Gates, ServeSource, ServeSpec, ServedCapability, default_python};
use super::{bundle_modules, decode};
use crate::call::ExecutorError;
use crate::oci::RuntimeImage;
use crate::request::{Executable, PackageFiles};

/// Largest manifest or contract file read (the reference's policy cap is 1 MiB; manifests of
/// large modules are bigger).
const MAX_FILE: u64 = 64 * 1024 * 1024;

pub(super) fn read(dir: &Path, rel: &str) -> Result<Vec<u8>, ServeError> {
    let rel_path = Path::new(rel);
    if rel_path
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(BundleError::UnsafePath(rel.to_string()).into());
    }
    let path = dir.join(rel_path);
    let meta = std::fs::symlink_metadata(&path).map_err(|source| ServeError::Io {
        path: path.clone(),
        source,
    })?;
    if !meta.is_file() || meta.len() > MAX_FILE {
        return Err(BundleError::NotAFile(rel.to_string()).into());
    }
    std::fs::read(&path).map_err(|source| ServeError::Io { path, source })
}

pub(super) fn digest_of(v: &Value) -> Option<String> {
    match (v.get("algorithm"), v.get("value")) {
        (Some(Value::Str(a)), Some(Value::Str(h))) if a == "sha256" => Some(h.clone()),
        _ => None,
    }
}

/// Whether the module may be imported ahead of its call, from its readiness document `rel`
/// (a listed artifact, so its digest was checked) by the one rule
/// ([`ImportTime::of_document`]); `Unknown` when the bundle lists none.
pub(super) fn import_time(
    dir: &Path,
    rel: &str,
    listed: &dyn Fn(&str) -> bool,
    in_package: bool,
) -> Result<ImportTime, ServeError> {
    if !listed(rel) {
        return Ok(ImportTime::Unknown);
    }
    let raw = read(dir, rel)?;
    let doc = parse_permissive(&raw).map_err(|source| BundleError::Json {
        file: rel.to_string(),
        source,
    })?;
    Ok(ImportTime::of_document(&doc, in_package))
}

pub(super) fn str_field<'a>(v: &'a Value, key: &'static str) -> Result<&'a str, BundleError> {
    match v.get(key) {
        Some(Value::Str(s)) => Ok(s),
        _ => Err(BundleError::MissingField(key)),
    }
}

impl ServeSpec {
    /// Read a generated project's contract files and verify every artifact digest (a bundle
    /// of one source; [`ServicePlan::from_bundle_dir`] loads any bundle).
    pub fn from_bundle_dir(dir: &Path) -> Result<ServeSpec, ServeError> {
        load(dir)
    }
}

impl ServicePlan {
    /// Read and verify a generated project: one source, or one per module of a package.
    pub fn from_bundle_dir(dir: &Path) -> Result<ServicePlan, ServeError> {
        load_plan(dir)
    }
}

/// Load and verify a bundle of one source (a bundle of several modules is refused, naming
/// [`load_plan`]).
pub fn load(dir: &Path) -> Result<ServeSpec, ServeError> {
    let mut specs = load_specs(dir)?;
    match specs.len() {
        1 => Ok(specs.remove(0)),
        n => Err(BundleError::SeveralModules(n).into()),
    }
}

/// Load and verify any bundle: one spec, or one per module of a package, in manifest order.
pub fn load_plan(dir: &Path) -> Result<ServicePlan, ServeError> {
    let mut specs = load_specs(dir)?.into_iter();
    let first = specs
        .next()
        .ok_or(BundleError::MissingField("package.modules"))?;
    let mut plan = ServicePlan::from(first);
    plan.specs.extend(specs);
    Ok(plan)
}

fn load_specs(dir: &Path) -> Result<Vec<ServeSpec>, ServeError> {
    let transport = Transport::ALL
        .into_iter()
        .find(|t| dir.join(t.manifest_file()).is_file())
        .ok_or_else(|| BundleError::NoManifest(dir.to_path_buf()))?;
    let manifest_name = transport.manifest_file();
    let raw = read(dir, manifest_name)?;
    let manifest = parse_permissive(&raw).map_err(|source| BundleError::Json {
        file: manifest_name.to_string(),
        source,
    })?;

    // 1. Every listed artifact hashes to its recorded digest.
    let Some(Value::Object(artifacts)) = manifest.get("artifacts") else {
        return Err(BundleError::MissingSection("artifacts").into());
    };
    for (rel, digest) in artifacts {
        let want = digest_of(digest).ok_or_else(|| BundleError::MalformedDigest(rel.clone()))?;
        if Digest::sha256(&read(dir, rel)?).value != want {
            return Err(ServeError::Digest(rel.clone()));
        }
    }
    let listed = |rel: &str| artifacts.contains_key(rel);

    // 2. The executable matches its bound digest.
    let executable_path = str_field(&manifest, "executable_path")?.to_string();
    let bound = manifest
        .get("executable_digest")
        .and_then(digest_of)
        .ok_or(BundleError::MissingField("executable_digest"))?;
    let bytes = read(dir, &executable_path)?;
    let mut executable = Executable::new(bytes);
    if executable.digest.value != bound {
        return Err(ServeError::Digest(executable_path));
    }
    if let Some(package) = manifest.get("package") {
        executable = executable.with_package(package_files(dir, package, &listed)?);
    }
    let in_package = executable.package.is_some();
    executable =
        executable.with_import_time(import_time(dir, "readiness.json", &listed, in_package)?);
    let module = manifest
        .get("source")
        .map(|s| str_field(s, "module"))
        .transpose()?
        .ok_or(BundleError::MissingField("source.module"))?
        .to_string();
    let as_digest = |key: &str| {
        manifest.get(key).and_then(digest_of).map(|value| Digest {
            algorithm: "sha256",
            value,
        })
    };
    let ir_digest = as_digest("ir_digest");
    let readiness_digest = as_digest("readiness_digest");

    // 3. Contracts: decoded strictly and checked against their own canonical bytes.
    let key = transport.contracts_key();
    let Some(Value::Array(entries)) = manifest.get(key) else {
        return Err(BundleError::MissingSection(key).into());
    };
    let mut capabilities = Vec::with_capacity(entries.len());
    for entry in entries {
        let contract = decode::contract(entry).map_err(BundleError::from)?;
        let Value::Object(map) = entry else {
            return Err(BundleError::MissingSection("contract object").into());
        };
        let mut core = map.clone();
        for extra in ["route", "method", "tool_name", "input_schema"] {
            core.remove(extra);
        }
        let want = Value::Object(core)
            .canonical_bytes()
            .map_err(BundleError::from)?;
        let got = contract.canonical_bytes().map_err(BundleError::from)?;
        if want != got {
            return Err(BundleError::NotRoundTrip(contract.capability_id).into());
        }
        capabilities.push(ServedCapability::new(contract));
    }

    // 4. Mode: governed when the bundle carries a policy (which must itself be an artifact).
    let mode = if dir.join("execution/policy.json").exists() {
        if !listed("execution/policy.json") {
            return Err(BundleError::NotListed("execution/policy.json").into());
        }
        let raw = read(dir, "execution/policy.json")?;
        match AnyPolicy::from_slice(&raw)? {
            AnyPolicy::V2(policy) => oci_mode(dir, policy, &listed)?,
            policy @ AnyPolicy::V1(_) => ExecutionMode::Governed {
                policy,
                image: None,
            },
        }
    } else {
        ExecutionMode::Direct {
            workers: default_workers(),
            timeout: None,
        }
    };
    let optional = |rel: &str| -> Result<Option<Vec<u8>>, ServeError> {
        if listed(rel) {
            read(dir, rel).map(Some)
        } else {
            Ok(None)
        }
    };
    let modules = match manifest.get("package") {
        Some(package) if package.get("modules").is_some() => {
            Some(bundle_modules::sources(dir, package, &listed)?)
        }
        _ => None,
    };
    let spec = ServeSpec {
        capabilities,
        mode,
        source: ServeSource {
            executable,
            module,
            executable_path,
            ir_digest,
            readiness_digest,
        },
        openapi: optional(Transport::Rest.interface_file())?,
        mcp_tools: optional(Transport::Mcp.interface_file())?,
        gates: Gates::default(),
        python: default_python(),
        launcher: crate::local::runtime::LauncherLocation::CurrentExe,
        oci_pool: super::spec::DEFAULT_OCI_POOL,
        v1_prestart: crate::local::prestart::DEFAULT_SIZE,
        audit: None,
    };
    let Some(modules) = modules else {
        return Ok(vec![spec]);
    };
    bundle_modules::split(spec, modules)
}

/// A module of a package: the manifest's `package.files` (`source/<path>`: `.py` files and
/// `*.dist-info/METADATA`), each a listed artifact (so its digest was checked above), keyed by
/// its path under `source/`.
pub(super) fn package_files(
    dir: &Path,
    package: &Value,
    listed: &dyn Fn(&str) -> bool,
) -> Result<PackageFiles, ServeError> {
    let Some(Value::Array(paths)) = package.get("files") else {
        return Err(BundleError::MissingField("package.files").into());
    };
    let mut files = PackageFiles::default();
    for path in paths {
        let Value::Str(path) = path else {
            return Err(BundleError::MissingField("package.files").into());
        };
        let relative = path
            .strip_prefix("source/")
            .filter(|rel| (rel.ends_with(".py") || is_metadata(rel)) && listed(path))
            .ok_or_else(|| BundleError::PackageFile(path.clone()))?;
        files.files.insert(relative.to_string(), read(dir, path)?);
    }
    files.requirements = requirements(package)?;
    Ok(files)
}

/// `<name>.dist-info/METADATA` directly under `source/`: a distribution's metadata the worker
/// serves to `importlib.metadata` (`apizr_inspect::package::dist_info`).
fn is_metadata(rel: &str) -> bool {
    rel.strip_suffix("/METADATA")
        .is_some_and(|dir| dir.ends_with(".dist-info") && !dir.contains('/') && dir.len() > 10)
}

/// The package's declared requirements (`package.requirements`): they decide where calls may
/// run (a v2 image must carry them).
pub(super) fn requirements(package: &Value) -> Result<Vec<String>, ServeError> {
    let mut specifiers = Vec::new();
    if let Some(Value::Array(requirements)) = package.get("requirements") {
        for requirement in requirements {
            let Value::Str(requirement) = requirement else {
                return Err(BundleError::MissingField("package.requirements").into());
            };
            specifiers.push(requirement.clone());
        }
    }
    Ok(specifiers)
}

/// A v2 bundle: the policy, and the runtime image recorded in `execution/bundle.json` (a
/// listed artifact, so already verified).
fn oci_mode(
    dir: &Path,
    policy: PolicyV2,
    listed: &dyn Fn(&str) -> bool,
) -> Result<ExecutionMode, ServeError> {
    if let Some(refusal) = policy.refusal() {
        return Err(ExecutorError::Refused(refusal).into());
    }
    if !listed("execution/bundle.json") {
        return Err(BundleError::NotListed("execution/bundle.json").into());
    }
    let raw = read(dir, "execution/bundle.json")?;
    let bundle: serde_json::Value =
        serde_json::from_slice(&raw).map_err(|e| BundleError::Document {
            file: "execution/bundle.json",
            message: e.to_string(),
        })?;
    let field = |key: &'static str| {
        bundle
            .get("runtime")
            .and_then(|r| r.get(key))
            .and_then(|v| v.as_str())
            .ok_or(BundleError::RuntimeField(key))
    };
    let image =
        RuntimeImage::parse(field("image")?, field("platform")?).map_err(BundleError::from)?;
    Ok(ExecutionMode::Governed {
        policy: AnyPolicy::V2(policy),
        image: Some(image),
    })
}

/// Direct-mode default: one worker per available core, at least 2.
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().max(2))
}
