//! Worker images that carry a package's third-party requirements, for `apizr.execution/v2`.
//!
//! Under a v2 policy every call runs in the runtime image, so a package that declares
//! requirements can only be served by an image that has them. Such an image is a worker image
//! (built by [`super::build`]) plus one layer: a virtual environment [`ENVIRONMENT_DIR`]
//! installed offline from a local wheelhouse, every wheel pinned by version and sha256
//! (`pip --require-hashes --no-deps` on a lock written from the wheelhouse), then the declared
//! requirements resolved against what is installed (a missing dependency fails the build).
//! The image records what it holds in labels: [`REQUIREMENTS_LABEL`] (the declared set, as
//! [`requirement_set`] orders it) and [`WHEELS_LABEL`] (every installed wheel's digest).
//!
//! The rule servers apply ([`check_requirements`]): a package with requirements is served
//! under v2 only when the pinned image's label is exactly its requirement set; the image is
//! named by ID, so the label cannot change under a running server. Its calls then run the
//! environment's interpreter ([`interpreter`]), which the worker recognises as a virtual
//! environment and puts its `site-packages` after the package's own files. Every container
//! control is unchanged (read-only root, no network, non-root user, seccomp, no capabilities):
//! the environment is part of the image, read-only like the rest of it.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value as Json, json};

use super::build::{BuildError, accepted};
use super::container::PYTHON;
use super::engine::Engine;
use super::image::{ImageError, PROVIDER, Platform, RuntimeImage, WORKER_LABEL};
use super::layer::{Step, add_layer_with_step};
use crate::request::Executable;

/// The virtual environment in the image, and its interpreter (the calls' entrypoint).
pub const ENVIRONMENT_DIR: &str = "/opt/apizr/venv";
pub const ENVIRONMENT_PYTHON: &str = "/opt/apizr/venv/bin/python";
/// Where the build step finds its lock, requirements, wheelhouse and script (left in the
/// image, read-only: what the environment was installed from).
const INSTALL_DIR: &str = "/opt/apizr/requirements";
/// The declared requirement set, a JSON array of strings ([`requirement_set`]).
pub const REQUIREMENTS_LABEL: &str = "org.apizr.requirements";
/// `{"<wheel file>": "sha256:<hex>"}` of every wheel installed.
pub const WHEELS_LABEL: &str = "org.apizr.requirements.wheels";
/// The worker image the environment was layered on (makes `--tag` builds idempotent).
pub const ENVIRONMENT_BASE_LABEL: &str = "org.apizr.requirements.base";
/// Installing from local wheels only; pip's start-up dominates.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(600);

/// The build step: a virtual environment from the worker image's interpreter, pip from the
/// wheelhouse's own `pip-*.whl` when there is one (minimal bases have no `ensurepip`), the
/// lock installed with hashes required, then the declared requirements checked against it.
const INSTALL_PY: &str = r#"import glob, subprocess, sys, venv
here, env = sys.argv[1], sys.argv[2]
pips = sorted(glob.glob(here + "/wheelhouse/pip-*.whl"))
try:
    venv.create(env, with_pip=not pips, symlinks=True)
except Exception as e:
    sys.exit("creating the environment failed (%s): add a pip wheel to the wheelhouse" % e)
pip = [env + "/bin/python", pips[-1] + "/pip"] if pips else [env + "/bin/python", "-m", "pip"]
common = ["install", "--no-cache-dir", "--disable-pip-version-check", "--no-input",
          "--no-index", "--find-links", here + "/wheelhouse"]
for extra in (["--require-hashes", "--no-deps", "--requirement", here + "/lock.txt"],
              ["--requirement", here + "/requirements.txt"]):
    done = subprocess.run(pip + common + extra)
    if done.returncode:
        sys.exit("pip %s exited with status %d" % (extra[-1], done.returncode))
"#;

/// The requirement set as images record it and servers compare it: distinct specifiers,
/// sorted (the order a package declares them in does not change what is installed).
pub fn requirement_set(specifiers: &[String]) -> Vec<String> {
    let mut set: Vec<String> = specifiers.iter().map(|s| s.trim().to_string()).collect();
    set.sort();
    set.dedup();
    set
}

/// The interpreter a call of `executable` runs in its container: the environment's when its
/// package declares requirements (the server checked the image carries them), else the
/// worker image's.
pub fn interpreter(executable: &Executable) -> &'static str {
    let needs = executable
        .package
        .as_ref()
        .is_some_and(|p| !p.requirements.is_empty());
    if needs { ENVIRONMENT_PYTHON } else { PYTHON }
}

/// A package's requirements and the wheels to install them from.
#[derive(Debug, Clone)]
pub struct Environment {
    pub requirements: Vec<String>,
    /// Wheel file name → bytes (`pip-*.whl` is the installer, not installed).
    pub wheels: BTreeMap<String, Vec<u8>>,
}

impl Environment {
    /// `{"<wheel>": "sha256:<hex>"}` of the wheels installed (pip's own excluded).
    fn wheel_digests(&self) -> BTreeMap<String, String> {
        self.installed()
            .map(|(name, bytes)| (name.clone(), apizr_ir::Digest::sha256(bytes).prefixed()))
            .collect()
    }

    fn installed(&self) -> impl Iterator<Item = (&String, &Vec<u8>)> {
        self.wheels.iter().filter(|(name, _)| !is_pip(name))
    }

    /// `name==version --hash=sha256:…` per distribution: every wheel pinned by its bytes.
    fn lock(&self) -> Result<String, BuildError> {
        // Normalised name (PEP 503) → (name, version, hashes).
        let mut pins: BTreeMap<String, (&str, &str, Vec<String>)> = BTreeMap::new();
        for (file, bytes) in self.installed() {
            let (name, version) = wheel_name_version(file).ok_or_else(|| {
                BuildError::Environment(format!(
                    "{file}: not a wheel file name (NAME-VERSION[-BUILD]-PY-ABI-PLATFORM.whl)"
                ))
            })?;
            let key = name.to_lowercase().replace(['-', '.'], "_");
            let hash = format!("--hash=sha256:{}", apizr_ir::Digest::sha256(bytes).value);
            let entry = pins.entry(key).or_insert((name, version, Vec::new()));
            if entry.1 != version {
                return Err(BuildError::Environment(format!(
                    "the wheelhouse holds two versions of {name} ({} and {version}): an \
                     environment has one",
                    entry.1
                )));
            }
            entry.2.push(hash);
        }
        Ok(pins
            .values()
            .map(|(name, version, hashes)| format!("{name}=={version} {}\n", hashes.join(" ")))
            .collect())
    }
}

fn is_pip(file: &str) -> bool {
    file.starts_with("pip-")
}

/// `(name, version)` of `NAME-VERSION[-BUILD]-PY-ABI-PLATFORM.whl`.
fn wheel_name_version(file: &str) -> Option<(&str, &str)> {
    let stem = file.strip_suffix(".whl")?;
    let parts: Vec<&str> = stem.split('-').collect();
    if !(5..=6).contains(&parts.len()) || parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    Some((parts[0], parts[1]))
}

/// Build the environment image on `base` (a worker image already on the engine; never
/// pulled), tagged `tag`. With a tag that already names such an image of the same base,
/// requirement set and wheels, that image is returned (nothing is rebuilt).
pub fn build_environment_image(
    engine: &Engine,
    base: &str,
    environment: &Environment,
    tag: Option<&str>,
    progress: &mut dyn FnMut(&str),
) -> Result<RuntimeImage, BuildError> {
    let set = requirement_set(&environment.requirements);
    if set.is_empty() {
        return Err(BuildError::Environment(
            "no requirements: a plain worker image serves a package that declares none".into(),
        ));
    }
    if !environment.wheels.keys().any(|w| !is_pip(w)) {
        return Err(BuildError::Environment(
            "the wheelhouse holds no wheel to install (the build is offline: every \
             requirement and its dependencies must be a wheel there)"
                .into(),
        ));
    }
    let doc = engine
        .image_inspect(base)?
        .ok_or_else(|| BuildError::BaseAbsent(base.to_string()))?;
    let text = |k: &str| doc.get(k).and_then(Json::as_str).unwrap_or_default();
    let base_id = text("Id").to_string();
    let platform = Platform::from_image(text("Os"), text("Architecture"))
        .ok_or_else(|| BuildError::Platform(format!("{}/{}", text("Os"), text("Architecture"))))?;
    let base_config = doc.get("Config").cloned().unwrap_or(Json::Null);
    if base_config["Labels"][WORKER_LABEL.0].as_str() != Some(WORKER_LABEL.1) {
        return Err(BuildError::Environment(format!(
            "{base} is not a worker image (no label {}={}): build one first with \
             apizr image build --base IMAGE",
            WORKER_LABEL.0, WORKER_LABEL.1
        )));
    }
    let mut labels = base_config["Labels"].clone();
    labels[REQUIREMENTS_LABEL] = json!(label_text(&set));
    labels[WHEELS_LABEL] =
        json!(serde_json::to_string(&environment.wheel_digests()).unwrap_or_default());
    labels[ENVIRONMENT_BASE_LABEL] = json!(base_id);
    progress(&format!(
        "base {base} = {base_id} ({platform}); requirements {}",
        set.join(", ")
    ));
    if let Some(tag) = tag
        && let Some(existing) = up_to_date(engine, tag, &labels, &base_config["User"])?
    {
        progress(&format!("{tag} is up to date ({existing})"));
        return Ok(RuntimeImage {
            image: existing,
            platform,
            provider: PROVIDER,
        });
    }
    let config = json!({
        "User": base_config["User"],
        "Labels": labels,
        "Entrypoint": base_config["Entrypoint"],
        "Cmd": base_config["Cmd"],
        "WorkingDir": base_config["WorkingDir"],
        "Volumes": null,
    });
    let archive = archive(environment, &set)?;
    let step = Step {
        argv: vec![
            PYTHON.into(),
            "-I".into(),
            format!("{INSTALL_DIR}/install.py"),
            INSTALL_DIR.into(),
            ENVIRONMENT_DIR.into(),
        ],
        user: "0:0",
        what: "installing the requirements",
        timeout: INSTALL_TIMEOUT,
    };
    progress(&format!(
        "installing {} wheel(s) into {ENVIRONMENT_DIR} (no network, hashes required)",
        environment.installed().count()
    ));
    let id = add_layer_with_step(engine, &base_id, &archive, &config, &step, tag)?;
    accepted(engine, id, platform, ENVIRONMENT_PYTHON, progress)
}

/// The label's text for a requirement set.
fn label_text(set: &[String]) -> String {
    serde_json::to_string(set).unwrap_or_default()
}

/// The ID of `tag` when its labels are `labels` (same base, requirements and wheels) and its
/// user the worker image's.
fn up_to_date(
    engine: &Engine,
    tag: &str,
    labels: &Json,
    user: &Json,
) -> Result<Option<String>, BuildError> {
    let Some(doc) = engine.image_inspect(tag)? else {
        return Ok(None);
    };
    let have = &doc["Config"]["Labels"];
    let same = [REQUIREMENTS_LABEL, WHEELS_LABEL, ENVIRONMENT_BASE_LABEL]
        .iter()
        .all(|key| have[*key] == labels[*key])
        && doc["Config"]["User"] == *user;
    Ok(same
        .then(|| doc["Id"].as_str().map(str::to_string))
        .flatten())
}

/// The layer: the install script, the declared requirements, the lock and the wheels.
fn archive(environment: &Environment, set: &[String]) -> Result<Vec<u8>, BuildError> {
    let root = &INSTALL_DIR[1..];
    let mut requirements = set.join("\n");
    requirements.push('\n');
    let mut tar = super::build::TarWriter::default();
    tar.dir(root, 0o755);
    tar.dir(&format!("{root}/wheelhouse"), 0o755);
    tar.file(&format!("{root}/install.py"), INSTALL_PY.as_bytes(), 0o444);
    tar.file(
        &format!("{root}/requirements.txt"),
        requirements.as_bytes(),
        0o444,
    );
    tar.file(
        &format!("{root}/lock.txt"),
        environment.lock()?.as_bytes(),
        0o444,
    );
    for (name, bytes) in &environment.wheels {
        let path = format!("{root}/wheelhouse/{name}");
        if path.len() > 99 || name.contains('/') {
            return Err(BuildError::Environment(format!(
                "{name}: wheel file name too long for the image layer"
            )));
        }
        tar.file(&path, bytes, 0o444);
    }
    Ok(tar.finish())
}

/// A package with `required` requirements may run in the image whose labels are `labels`
/// only when it carries exactly that set (see the module documentation).
pub fn check_requirements(
    image: &str,
    labels: &BTreeMap<String, String>,
    required: &[String],
) -> Result<(), ImageError> {
    let required = requirement_set(required);
    if required.is_empty() {
        return Ok(());
    }
    let has = labels
        .get(REQUIREMENTS_LABEL)
        .and_then(|text| serde_json::from_str::<Vec<String>>(text).ok());
    if has.as_deref() == Some(required.as_slice()) {
        return Ok(());
    }
    Err(ImageError::Requirements {
        image: image.to_string(),
        has: match has {
            Some(set) => format!("the requirement set {}", label_text(&set)),
            None => format!("no requirement environment (no {REQUIREMENTS_LABEL} label)"),
        },
        required: label_text(&required),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn labels(set: Option<&str>) -> BTreeMap<String, String> {
        set.map(|s| (REQUIREMENTS_LABEL.to_string(), s.to_string()))
            .into_iter()
            .collect()
    }

    #[test]
    fn only_the_exact_requirement_set_is_accepted() {
        let required = vec!["b>=1".to_string(), "a==2".into(), "b>=1".into()];
        assert_eq!(requirement_set(&required), ["a==2", "b>=1"]);
        assert!(check_requirements("img", &labels(Some(r#"["a==2","b>=1"]"#)), &required).is_ok());
        assert!(check_requirements("img", &labels(None), &[]).is_ok());
        let missing = check_requirements("img", &labels(None), &required).unwrap_err();
        assert_eq!(
            missing.to_string(),
            "image img carries no requirement environment (no org.apizr.requirements label) \
             but the package requires [\"a==2\",\"b>=1\"]: build a worker image with them \
             (apizr image build --base IMG --package DIR --wheelhouse DIR) and serve with its ID"
        );
        let other = check_requirements("img", &labels(Some(r#"["a==2"]"#)), &required);
        assert!(
            other
                .unwrap_err()
                .to_string()
                .contains("carries the requirement set [\"a==2\"] but the package requires")
        );
    }

    #[test]
    fn every_wheel_is_pinned_by_version_and_digest() {
        let environment = Environment {
            requirements: vec!["w>=1".into()],
            wheels: [
                ("w-1.0-py3-none-any.whl", b"one".as_slice()),
                ("w-1.0-cp311-cp311-linux_x86_64.whl", b"two"),
                ("Dep_X-2.1-1-py3-none-any.whl", b"dep"),
                ("pip-24.0-py3-none-any.whl", b"pip"),
            ]
            .into_iter()
            .map(|(n, b)| (n.to_string(), b.to_vec()))
            .collect(),
        };
        let sha = |b: &[u8]| apizr_ir::Digest::sha256(b).value;
        assert_eq!(
            environment.lock().unwrap(),
            format!(
                "Dep_X==2.1 --hash=sha256:{}\nw==1.0 --hash=sha256:{} --hash=sha256:{}\n",
                sha(b"dep"),
                sha(b"two"),
                sha(b"one")
            )
        );
        assert!(
            !environment
                .wheel_digests()
                .contains_key("pip-24.0-py3-none-any.whl")
        );
        let mut two = environment.clone();
        two.wheels
            .insert("w-2.0-py3-none-any.whl".into(), b"2".to_vec());
        assert!(
            two.lock()
                .unwrap_err()
                .to_string()
                .contains("two versions of w (1.0 and 2.0)")
        );
        let mut bad = environment;
        bad.wheels.insert("notawheel.whl".into(), b"x".to_vec());
        assert!(
            bad.lock()
                .unwrap_err()
                .to_string()
                .contains("notawheel.whl")
        );
    }
}
