//! A bundle of several modules of a package (the manifest's `package.modules`): one source
//! per module, as `apizr serve DIR --select a.x:f,b.y:g` serves them. Each entry binds a
//! module: its executable (a listed artifact, checked against the entry's own
//! `executable_digest`), its import closure (`files`, each a listed artifact; absent: the
//! module stands alone and is served as its single file) and the capability ids it serves.
//! Every served capability belongs to exactly one module, or the bundle is refused.

use std::collections::BTreeMap;
use std::path::Path;

use apizr_ir::{Digest, Value};

use super::bundle::{digest_of, import_time, package_files, read, requirements, str_field};
use super::error::{BundleError, ServeError};
use super::spec::{ServeSource, ServeSpec};
use crate::request::Executable;

/// One module of a several-module bundle: its source and the capability ids it serves.
pub(super) struct ModuleSource {
    source: ServeSource,
    capabilities: Vec<String>,
}

/// The manifest's `package.modules`: each module's executable (a listed artifact matching the
/// entry's `executable_digest`) with its own import closure (`files`; absent: it stands alone)
/// and the package's requirements (one set per directory).
pub(super) fn sources(
    dir: &Path,
    package: &Value,
    listed: &dyn Fn(&str) -> bool,
) -> Result<Vec<ModuleSource>, ServeError> {
    let Some(Value::Array(entries)) = package.get("modules") else {
        return Err(BundleError::MissingField("package.modules").into());
    };
    let requirements = requirements(package)?;
    let mut modules = Vec::with_capacity(entries.len());
    for entry in entries {
        let module = entry
            .get("source")
            .map(|s| str_field(s, "module"))
            .transpose()?
            .ok_or(BundleError::MissingField("package.modules[].source.module"))?
            .to_string();
        let executable_path = str_field(entry, "executable_path")?.to_string();
        if !listed(&executable_path) {
            return Err(BundleError::PackageFile(executable_path).into());
        }
        let bound =
            entry
                .get("executable_digest")
                .and_then(digest_of)
                .ok_or(BundleError::MissingField(
                    "package.modules[].executable_digest",
                ))?;
        let mut executable = Executable::new(read(dir, &executable_path)?);
        if executable.digest.value != bound {
            return Err(ServeError::Digest(executable_path));
        }
        if entry.get("files").is_some() {
            let mut files = package_files(dir, entry, listed)?;
            files.requirements = requirements.clone();
            executable = executable.with_package(files);
        }
        if let Some(Value::Str(readiness)) = entry.get("readiness") {
            let in_package = executable.package.is_some();
            executable =
                executable.with_import_time(import_time(dir, readiness, listed, in_package)?);
        }
        let Some(Value::Array(ids)) = entry.get("capabilities") else {
            return Err(BundleError::MissingField("package.modules[].capabilities").into());
        };
        let capabilities = ids
            .iter()
            .map(|id| match id {
                Value::Str(id) => Ok(id.clone()),
                _ => Err(BundleError::MissingField("package.modules[].capabilities")),
            })
            .collect::<Result<_, _>>()?;
        let as_digest = |key: &str| {
            entry.get(key).and_then(digest_of).map(|value| Digest {
                algorithm: "sha256",
                value,
            })
        };
        modules.push(ModuleSource {
            source: ServeSource {
                executable,
                module,
                executable_path,
                ir_digest: as_digest("ir_digest"),
                readiness_digest: as_digest("readiness_digest"),
            },
            capabilities,
        });
    }
    Ok(modules)
}

/// One spec per module, each with the capabilities its entry names (in the manifest's contract
/// order, so the served documents are the bundle's); every capability in exactly one module.
pub(super) fn split(
    spec: ServeSpec,
    modules: Vec<ModuleSource>,
) -> Result<Vec<ServeSpec>, ServeError> {
    let mut owner = BTreeMap::new();
    for (index, module) in modules.iter().enumerate() {
        for id in &module.capabilities {
            if let Some(first) = owner.insert(id.as_str(), index) {
                return Err(BundleError::Modules(format!(
                    "{id} is listed by {} and by {}",
                    modules[first].source.module, module.source.module
                ))
                .into());
            }
        }
    }
    let mut specs: Vec<ServeSpec> = modules
        .iter()
        .map(|m| ServeSpec {
            capabilities: Vec::new(),
            source: m.source.clone(),
            ..spec.clone()
        })
        .collect();
    for capability in spec.capabilities {
        let id = capability.contract.capability_id.as_str();
        let index = *owner.get(id).ok_or_else(|| {
            BundleError::Modules(format!("{id} is served but listed by no module"))
        })?;
        specs[index].capabilities.push(capability);
    }
    if let Some(listed_only) = owner.keys().find(|id| {
        !specs.iter().any(|s| {
            s.capabilities
                .iter()
                .any(|c| c.contract.capability_id == **id)
        })
    }) {
        return Err(BundleError::Modules(format!("{listed_only} is listed but not served")).into());
    }
    Ok(specs)
}
