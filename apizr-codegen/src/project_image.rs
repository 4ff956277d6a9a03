//! A generated project read back from disk, for `apizr image build --project`: which server it
//! is, the bundle files (each checked against its digest in the transport manifest, as the
//! server will at start-up), and the image reference and configuration the project's own
//! `Dockerfile` gives it ([`crate::deploy`]), so both ways of building make the same image.

use std::path::{Component, Path, PathBuf};

use serde_json::Value as Json;

use crate::deploy::{self, ExecutionKind};
use crate::manifest::{BUNDLE_SCHEMA_V1, BUNDLE_SCHEMA_V2};
use crate::model::Transport;
use crate::project::package_name;

/// Why a directory cannot be turned into an image.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error(
        "{0}: not a generated apizr project (no apizr-rest.json or apizr-mcp.json; run apizr generate rest|mcp first)"
    )]
    NotAProject(PathBuf),
    #[error("{0}: holds both apizr-rest.json and apizr-mcp.json; one project per directory")]
    Ambiguous(PathBuf),
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not an apizr manifest: {detail}")]
    Manifest { path: PathBuf, detail: String },
    #[error(
        "{0}: the package's requirements (python/requirements.txt) are installed by the \
         Dockerfile's RUN step, which this build does not run: use docker build (see README.md)"
    )]
    Requirements(PathBuf),
    #[error("{path}: does not match its digest in {manifest} (the server would refuse to start)")]
    Digest {
        path: PathBuf,
        manifest: &'static str,
    },
}

/// What goes into a project's image.
#[derive(Debug, Clone)]
pub struct ProjectImage {
    pub transport: Transport,
    /// The Cargo package and binary name (`apizr-<transport>-<module>`).
    pub package: String,
    pub kind: ExecutionKind,
    /// `<name>:<tag>`, as in the project's `Dockerfile`, README and `k8s/`.
    pub reference: String,
    /// `sha256:<hex>` of the transport manifest.
    pub bundle_digest: String,
    /// The bundle: (path relative to the project, bytes), the manifest included, sorted.
    pub files: Vec<(String, Vec<u8>)>,
}

impl ProjectImage {
    /// Read and check the project in `dir`.
    pub fn read(dir: &Path) -> Result<Self, ProjectError> {
        let present = |t: Transport| dir.join(t.manifest_file()).is_file();
        let transport = match (present(Transport::Rest), present(Transport::Mcp)) {
            (true, false) => Transport::Rest,
            (false, true) => Transport::Mcp,
            (true, true) => return Err(ProjectError::Ambiguous(dir.to_path_buf())),
            (false, false) => return Err(ProjectError::NotAProject(dir.to_path_buf())),
        };
        let manifest_name = transport.manifest_file();
        let manifest_path = dir.join(manifest_name);
        let manifest_bytes = read(&manifest_path)?;
        let bad = |detail: &str| ProjectError::Manifest {
            path: manifest_path.clone(),
            detail: detail.to_string(),
        };
        let manifest: Json =
            serde_json::from_slice(&manifest_bytes).map_err(|e| bad(&e.to_string()))?;
        if manifest.get("schema_version").and_then(Json::as_str) != Some(transport.schema()) {
            return Err(bad(&format!(
                "schema_version is not {}",
                transport.schema()
            )));
        }
        let module = manifest
            .pointer("/source/module")
            .and_then(Json::as_str)
            .ok_or_else(|| bad("no source.module"))?;
        if manifest
            .pointer("/package/requirements")
            .and_then(Json::as_array)
            .is_some_and(|r| !r.is_empty())
        {
            return Err(ProjectError::Requirements(dir.to_path_buf()));
        }
        let artifacts = manifest
            .get("artifacts")
            .and_then(Json::as_object)
            .ok_or_else(|| bad("no artifacts"))?;
        let mut files = vec![(manifest_name.to_string(), manifest_bytes.clone())];
        for (relative, digest) in artifacts {
            if !is_plain_relative(relative) {
                return Err(bad(&format!(
                    "artifact path {relative:?} leaves the project"
                )));
            }
            let path = dir.join(relative);
            let bytes = read(&path)?;
            let expected = digest.get("value").and_then(Json::as_str);
            if expected != Some(apizr_ir::Digest::sha256(&bytes).value.as_str()) {
                return Err(ProjectError::Digest {
                    path,
                    manifest: manifest_name,
                });
            }
            files.push((relative.clone(), bytes));
        }
        files.sort();
        let kind = match files.iter().find(|(p, _)| p == "execution/bundle.json") {
            None => ExecutionKind::Direct,
            Some((_, bytes)) => {
                let bundle: Json =
                    serde_json::from_slice(bytes).map_err(|e| bad(&e.to_string()))?;
                match bundle.get("schema_version").and_then(Json::as_str) {
                    Some(BUNDLE_SCHEMA_V1) => ExecutionKind::Governed,
                    Some(BUNDLE_SCHEMA_V2) => ExecutionKind::GovernedOci,
                    _ => return Err(bad("execution/bundle.json has an unknown schema_version")),
                }
            }
        };
        let package = package_name(transport, module);
        Ok(ProjectImage {
            reference: deploy::image_reference(&package, kind, &manifest_bytes),
            bundle_digest: apizr_ir::Digest::sha256(&manifest_bytes).prefixed(),
            transport,
            package,
            kind,
            files,
        })
    }

    /// The Engine API image configuration (what the project's `Dockerfile` sets).
    pub fn config(&self) -> Json {
        deploy::image_config(&self.package, self.transport, &self.bundle_digest)
    }

    /// Where the server binary goes in the image.
    pub fn binary_path(&self) -> String {
        format!("/usr/local/bin/{}", self.package)
    }
}

fn read(path: &Path) -> Result<Vec<u8>, ProjectError> {
    std::fs::read(path).map_err(|source| ProjectError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Only `a/b/c` forms: no root, no `..`, no `.`, not empty.
fn is_plain_relative(path: &str) -> bool {
    !path.is_empty()
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn artifact_paths_stay_inside() {
        assert!(is_plain_relative("source/pkg/mod.py"));
        for bad in ["", "/etc/passwd", "../x", "a/../b", "./a"] {
            assert!(!is_plain_relative(bad), "{bad}");
        }
    }

    #[test]
    fn a_directory_without_a_manifest_is_not_a_project() {
        let dir = tempfile::tempdir().unwrap();
        let error = ProjectImage::read(dir.path()).unwrap_err();
        assert!(matches!(error, ProjectError::NotAProject(_)));
        assert!(error.to_string().contains("not a generated apizr project"));
    }
}
