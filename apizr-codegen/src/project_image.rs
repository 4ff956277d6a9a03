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
        "{0}: the package has requirements but no wheelhouse: apizr image build installs them \
         offline only (generate with --wheelhouse DIR), or use docker build with a package index"
    )]
    RequirementsOnline(PathBuf),
    #[error(
        "{path}: {detail} (regenerate the project; the image would not install what its manifest says)"
    )]
    Install { path: PathBuf, detail: String },
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
    /// A package's third-party requirements: the project's `python/` directory, which the
    /// image runs `python/install.sh` from (as the `Dockerfile`'s `RUN` step does).
    pub install: Option<Install>,
}

/// The project's `python/` files (path relative to `python/`, bytes): `requirements.txt` equal
/// to the manifest's `package.requirements`, every wheel of `package.wheelhouse` matching its
/// digest, and `install.sh`.
#[derive(Debug, Clone)]
pub struct Install {
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
        let install = install_files(dir, &manifest)?;
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
            install,
        })
    }

    /// The Engine API image configuration (what the project's `Dockerfile` sets).
    pub fn config(&self) -> Json {
        let python = deploy::worker_python(self.install.is_some());
        deploy::image_config(&self.package, self.transport, &self.bundle_digest, &python)
    }

    /// Where the server binary goes in the image.
    pub fn binary_path(&self) -> String {
        format!("/usr/local/bin/{}", self.package)
    }
}

/// The `python/` files of a package with requirements, checked against the manifest: the
/// requirement list is the manifest's (its digest is the image tag), each wheel matches its
/// digest and no other wheel is there. `None` when the manifest lists no requirements.
fn install_files(dir: &Path, manifest: &Json) -> Result<Option<Install>, ProjectError> {
    let requirements: Vec<&str> = manifest
        .pointer("/package/requirements")
        .and_then(Json::as_array)
        .map(|r| r.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    if requirements.is_empty() {
        return Ok(None);
    }
    let wheels = manifest
        .pointer("/package/wheelhouse")
        .and_then(Json::as_object)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| ProjectError::RequirementsOnline(dir.to_path_buf()))?;
    let python = dir.join("python");
    let bad = |path: PathBuf, detail: String| ProjectError::Install { path, detail };
    let listed = read(&python.join("requirements.txt"))?;
    if listed != format!("{}\n", requirements.join("\n")).into_bytes() {
        return Err(bad(
            python.join("requirements.txt"),
            format!(
                "differs from the manifest's package.requirements ({})",
                requirements.join(", ")
            ),
        ));
    }
    let mut files = vec![
        ("install.sh".to_string(), read(&python.join("install.sh"))?),
        ("requirements.txt".to_string(), listed),
    ];
    for (name, digest) in wheels {
        if !is_plain_relative(name) || name.contains('/') {
            return Err(bad(
                python.join("wheelhouse"),
                format!("wheel name {name:?}"),
            ));
        }
        let path = python.join("wheelhouse").join(name);
        let bytes = read(&path)?;
        if digest.get("value").and_then(Json::as_str)
            != Some(apizr_ir::Digest::sha256(&bytes).value.as_str())
        {
            return Err(bad(
                path,
                "does not match its digest in package.wheelhouse".into(),
            ));
        }
        files.push((format!("wheelhouse/{name}"), bytes));
    }
    let extra = std::fs::read_dir(python.join("wheelhouse"))
        .map_err(|source| ProjectError::Read {
            path: python.join("wheelhouse"),
            source,
        })?
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .find(|name| !wheels.contains_key(name));
    if let Some(name) = extra {
        return Err(bad(
            python.join("wheelhouse").join(name),
            "is not in the manifest's package.wheelhouse".into(),
        ));
    }
    files.sort();
    Ok(Some(Install { files }))
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

    /// A REST project of a package with one requirement and the wheel `w-1-py3-none-any.whl`.
    fn project_with_requirements(dir: &Path, wheelhouse: bool) {
        let wheel = b"wheel bytes";
        let wheels = if wheelhouse {
            serde_json::json!({"w-1-py3-none-any.whl": {"algorithm": "sha256",
                "value": apizr_ir::Digest::sha256(wheel).value}})
        } else {
            serde_json::json!({})
        };
        let manifest = serde_json::json!({
            "schema_version": Transport::Rest.schema(),
            "source": {"module": "pkg.mod"},
            "artifacts": {},
            "package": {"files": [], "requirements": ["w>=1"], "wheelhouse": wheels},
        });
        std::fs::write(
            dir.join(Transport::Rest.manifest_file()),
            manifest.to_string(),
        )
        .unwrap();
        std::fs::create_dir_all(dir.join("python/wheelhouse")).unwrap();
        std::fs::write(dir.join("python/requirements.txt"), "w>=1\n").unwrap();
        std::fs::write(dir.join("python/install.sh"), "#!/bin/sh\n").unwrap();
        std::fs::write(dir.join("python/wheelhouse/w-1-py3-none-any.whl"), wheel).unwrap();
    }

    /// The install step runs only what the manifest (whose digest is the image tag) names.
    #[test]
    fn requirements_are_installed_only_as_the_manifest_says() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        project_with_requirements(root, true);
        let image = ProjectImage::read(root).unwrap();
        let install = image.install.as_ref().unwrap();
        let names: Vec<&str> = install.files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "install.sh",
                "requirements.txt",
                "wheelhouse/w-1-py3-none-any.whl"
            ]
        );
        assert_eq!(
            image.config()["Env"],
            serde_json::json!(["APIZR_PYTHON=/opt/apizr/venv/bin/python"])
        );
        let refused = |edit: &dyn Fn(&Path), want: &str| {
            project_with_requirements(root, true);
            edit(root);
            let error = ProjectImage::read(root).unwrap_err().to_string();
            assert!(error.contains(want), "{error}");
            let _ = std::fs::remove_file(root.join("python/wheelhouse/extra.whl"));
        };
        refused(
            &|d| std::fs::write(d.join("python/requirements.txt"), "w>=1\nevil\n").unwrap(),
            "python/requirements.txt: differs from the manifest's package.requirements (w>=1)",
        );
        refused(
            &|d| std::fs::write(d.join("python/wheelhouse/w-1-py3-none-any.whl"), "x").unwrap(),
            "w-1-py3-none-any.whl: does not match its digest in package.wheelhouse",
        );
        refused(
            &|d| std::fs::write(d.join("python/wheelhouse/extra.whl"), "x").unwrap(),
            "extra.whl: is not in the manifest's package.wheelhouse",
        );
        refused(
            &|d| std::fs::remove_file(d.join("python/install.sh")).unwrap(),
            "python/install.sh: No such file",
        );
        project_with_requirements(root, false);
        let error = ProjectImage::read(root).unwrap_err().to_string();
        assert!(
            error.contains("has requirements but no wheelhouse"),
            "{error}"
        );
    }

    #[test]
    fn a_directory_without_a_manifest_is_not_a_project() {
        let dir = tempfile::tempdir().unwrap();
        let error = ProjectImage::read(dir.path()).unwrap_err();
        assert!(matches!(error, ProjectError::NotAProject(_)));
        assert!(error.to_string().contains("not a generated apizr project"));
    }
}
