//! `apizr image build`: a worker image from a local base image (`--base`) or a root filesystem
//! tarball (`--rootfs`), entirely offline (no registry, no Dockerfile, no BuildKit).
//!
//! Steps, all through the Engine API: resolve the base (an image the engine already has, or
//! `POST /images/create?fromSrc=-` with the tarball: an import, not a pull) → check its
//! platform → create a stopped helper container with the worker configuration (non-root user
//! 65532:65532, labels, entrypoint) → find the interpreter and copy in `/opt/apizr/worker.py`
//! (and a `/usr/local/bin/python` link when the base only has `/usr/bin/python3`) with
//! `PUT /archive` → `POST /commit` (optionally tagged) → remove the helper → smoke-test the new
//! image (network none, read-only, non-root) by importing what the worker needs. The helper,
//! archive and commit steps are [`super::layer`]'s, shared with project images.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value as Json, json};

use super::bundle::random_hex;
use super::container::{CONTAINER_USER, ContainerGuard, PYTHON};
use super::engine::{CALL_TIMEOUT, Engine, EngineError, json_ok};
use super::http::{Body, encode_query};
use super::image::{
    PROVIDER, Platform, RuntimeImage, SUBPROCESS_DENY_LABEL, WORKER_DIGEST_LABEL, WORKER_LABEL,
};
use super::layer::{commit, create_helper, put_archive, run_step};
use crate::worker::WORKER_SOURCE;

/// Where the worker lives inside built images.
pub const IMAGE_WORKER_PATH: &str = "/opt/apizr/worker.py";
/// The base image a worker image was built from (makes `--tag` builds idempotent).
pub const BASE_LABEL: &str = "org.apizr.base.id";
const PYTHON_CANDIDATES: [&str; 3] = [
    "/usr/local/bin/python",
    "/usr/local/bin/python3",
    "/usr/bin/python3",
];
/// Modules the worker imports (C parts of json, ctypes for seccomp, asyncio for async calls).
const SMOKE: &str =
    "import _json, binascii, ctypes, asyncio, _signal, sys; assert sys.version_info >= (3, 11)";
const IMPORT_TIMEOUT: Duration = Duration::from_secs(600);

/// What to build from.
#[derive(Debug, Clone)]
pub enum BuildSource<'a> {
    /// A local image (name, tag or ID); never pulled.
    Base(&'a str),
    /// A root filesystem tarball to import.
    Rootfs(&'a Path),
}

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("engine unreachable: {0}")]
    Http(#[from] super::http::HttpError),
    #[error(
        "base image {0} is not present on the engine (apizr never pulls; load or import it first)"
    )]
    BaseAbsent(String),
    #[error("unsupported base platform {0} (linux/amd64 or linux/arm64)")]
    Platform(String),
    #[error("no python3 in the base image (looked for {0})")]
    NoPython(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("import failed: {0}")]
    Import(String),
    #[error("{what} exited with status {code}: {output}")]
    Step {
        what: String,
        code: i64,
        output: String,
    },
    #[error(
        "the built image failed its smoke test (exit {0}): the worker needs python >= 3.11 with _json, ctypes and asyncio"
    )]
    Smoke(i64),
    /// A requirement environment that cannot be built as asked (`super::environment`).
    #[error("{0}")]
    Environment(String),
}

/// Build a worker image; `progress` receives one human-readable line per step.
pub fn build_image(
    engine: &Engine,
    source: BuildSource<'_>,
    tag: Option<&str>,
    progress: &mut dyn FnMut(&str),
) -> Result<RuntimeImage, BuildError> {
    let base = match source {
        BuildSource::Base(name) => name.to_string(),
        BuildSource::Rootfs(path) => {
            progress(&format!("importing root filesystem {}", path.display()));
            import_rootfs(engine, path)?
        }
    };
    let doc = engine
        .image_inspect(&base)?
        .ok_or_else(|| BuildError::BaseAbsent(base.clone()))?;
    let text = |k: &str| doc.get(k).and_then(Json::as_str).unwrap_or_default();
    let base_id = text("Id").to_string();
    let platform = Platform::from_image(text("Os"), text("Architecture"))
        .ok_or_else(|| BuildError::Platform(format!("{}/{}", text("Os"), text("Architecture"))))?;
    progress(&format!("base {base} = {base_id} ({platform})"));
    if let Some(existing) = tag
        .map(|t| up_to_date(engine, t, &base_id))
        .transpose()?
        .flatten()
    {
        progress(&format!(
            "{} is up to date ({existing})",
            tag.unwrap_or_default()
        ));
        return Ok(RuntimeImage {
            image: existing,
            platform,
            provider: PROVIDER,
        });
    }

    let config = image_config(&base_id);
    let mut helper = create_helper(engine, &base_id, &config)?;
    let python = find_python(engine, helper.name())?;
    progress(&format!("interpreter {python}; adding {IMAGE_WORKER_PATH}"));
    let mut tar = TarWriter::default();
    tar.dir("opt/apizr", 0o755);
    tar.file(&IMAGE_WORKER_PATH[1..], WORKER_SOURCE.as_bytes(), 0o444);
    if python != PYTHON {
        tar.symlink(&PYTHON[1..], &python);
    }
    put_archive(engine, helper.name(), &tar.finish())?;
    let id = commit(engine, helper.name(), &config, tag)?;
    let _ = helper.remove();
    accepted(engine, id, platform, PYTHON, progress)
}

/// The committed image `id` as a runtime image once it passed [`smoke_test`] with `python`;
/// an image that fails it is removed (nothing half-built is left tagged).
pub(super) fn accepted(
    engine: &Engine,
    id: String,
    platform: Platform,
    python: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<RuntimeImage, BuildError> {
    progress(&format!("committed {id}; smoke test"));
    if let Err(e) = smoke_test(engine, &id, python) {
        let path = format!("/images/{}?force=1", encode_query(&id));
        let _ = engine.call("DELETE", &path, Body::None, Instant::now() + CALL_TIMEOUT);
        return Err(e);
    }
    progress("smoke test passed");
    Ok(RuntimeImage {
        image: id,
        platform,
        provider: PROVIDER,
    })
}

/// The configuration every worker image carries.
fn image_config(base_id: &str) -> Json {
    let digest = apizr_ir::Digest::sha256(WORKER_SOURCE.as_bytes()).prefixed();
    let labels: BTreeMap<&str, String> = [
        (WORKER_LABEL.0, WORKER_LABEL.1.to_string()),
        (SUBPROCESS_DENY_LABEL.0, SUBPROCESS_DENY_LABEL.1.to_string()),
        (WORKER_DIGEST_LABEL, digest),
        (BASE_LABEL, base_id.to_string()),
    ]
    .into_iter()
    .collect();
    json!({
        "User": CONTAINER_USER,
        "Labels": labels,
        "Entrypoint": null,
        "Cmd": [PYTHON, "-I", "-S", IMAGE_WORKER_PATH],
        "WorkingDir": "/",
        "Volumes": null,
    })
}

/// The ID of `tag` when it was built by us from `base_id` with the current worker.
fn up_to_date(engine: &Engine, tag: &str, base_id: &str) -> Result<Option<String>, BuildError> {
    let Some(doc) = engine.image_inspect(tag)? else {
        return Ok(None);
    };
    let labels = &doc["Config"]["Labels"];
    let digest = apizr_ir::Digest::sha256(WORKER_SOURCE.as_bytes()).prefixed();
    let current = labels[WORKER_DIGEST_LABEL].as_str() == Some(digest.as_str())
        && labels[BASE_LABEL].as_str() == Some(base_id)
        && labels[WORKER_LABEL.0].as_str() == Some(WORKER_LABEL.1)
        && doc["Config"]["Cmd"] == image_config(base_id)["Cmd"];
    Ok(current
        .then(|| doc["Id"].as_str().map(str::to_string))
        .flatten())
}

fn find_python(engine: &Engine, container: &str) -> Result<String, BuildError> {
    for candidate in PYTHON_CANDIDATES {
        let path = format!(
            "/containers/{}/archive?path={}",
            encode_query(container),
            encode_query(candidate)
        );
        let resp = engine.call("HEAD", &path, Body::None, Instant::now() + CALL_TIMEOUT)?;
        if resp.is_success() {
            return Ok(candidate.to_string());
        }
    }
    Err(BuildError::NoPython(PYTHON_CANDIDATES.join(", ")))
}

/// `POST /images/create?fromSrc=-` with the tarball; returns the imported image ID.
fn import_rootfs(engine: &Engine, path: &Path) -> Result<String, BuildError> {
    let len = std::fs::metadata(path)?.len();
    let resp = engine.call(
        "POST",
        "/images/create?fromSrc=-",
        Body::File(path, len, "application/x-tar"),
        Instant::now() + IMPORT_TIMEOUT,
    )?;
    if !resp.is_success() {
        return Err(BuildError::Import(format!(
            "{} {}",
            resp.status,
            resp.message()
        )));
    }
    // A stream of JSON messages; the last `status` is the new image ID.
    let mut id = None;
    for doc in serde_json::Deserializer::from_slice(&resp.body).into_iter::<Json>() {
        let doc = doc.map_err(|e| BuildError::Import(e.to_string()))?;
        if let Some(error) = doc.get("error").and_then(Json::as_str) {
            return Err(BuildError::Import(error.to_string()));
        }
        if let Some(status) = doc.get("status").and_then(Json::as_str)
            && status.starts_with("sha256:")
        {
            id = Some(status.to_string());
        }
    }
    id.ok_or_else(|| BuildError::Import("no image ID in the engine's answer".into()))
}

/// Run the worker's imports in `image` with `python` under the call controls (no network,
/// read-only, non-root, no capabilities).
pub(super) fn smoke_test(engine: &Engine, image: &str, python: &str) -> Result<(), BuildError> {
    let name = format!("apizr-build-{}", random_hex()?);
    let mut guard = ContainerGuard::new(engine.clone(), name.clone());
    let body = json!({
        "Image": image,
        "User": CONTAINER_USER,
        "Entrypoint": [python],
        "Cmd": ["-I", "-S", "-c", SMOKE],
        "NetworkDisabled": true,
        "HostConfig": {"NetworkMode": "none", "ReadonlyRootfs": true, "CapDrop": ["ALL"],
                        "LogConfig": {"Type": "none"}}
    });
    let deadline = Instant::now() + CALL_TIMEOUT;
    let path = format!("/containers/create?name={}", encode_query(&name));
    json_ok(
        engine.call("POST", &path, Body::Json(&body), deadline)?,
        "create",
    )?;
    let ran = run_step(engine, &name, "the smoke test", deadline);
    let _ = guard.remove();
    match ran {
        Ok(()) => Ok(()),
        Err(BuildError::Step { code, .. }) => Err(BuildError::Smoke(code)),
        Err(e) => Err(e),
    }
}

/// A minimal ustar writer (regular files, directories, symlinks; root-owned, mtime 0).
#[derive(Debug, Default)]
pub struct TarWriter {
    out: Vec<u8>,
}

impl TarWriter {
    pub fn dir(&mut self, path: &str, mode: u32) {
        self.entry(&format!("{path}/"), b'5', mode, &[], "");
    }

    pub fn file(&mut self, path: &str, bytes: &[u8], mode: u32) {
        self.entry(path, b'0', mode, bytes, "");
    }

    pub fn symlink(&mut self, path: &str, target: &str) {
        self.entry(path, b'2', 0o777, &[], target);
    }

    /// The archive with its two terminating zero blocks.
    pub fn finish(mut self) -> Vec<u8> {
        self.out.extend_from_slice(&[0u8; 1024]);
        self.out
    }

    fn entry(&mut self, path: &str, kind: u8, mode: u32, bytes: &[u8], link: &str) {
        let mut h = [0u8; 512];
        put(&mut h, 0, 100, path.as_bytes());
        put(&mut h, 100, 8, format!("{mode:07o}\0").as_bytes());
        put(&mut h, 108, 8, b"0000000\0");
        put(&mut h, 116, 8, b"0000000\0");
        put(
            &mut h,
            124,
            12,
            format!("{:011o}\0", bytes.len()).as_bytes(),
        );
        put(&mut h, 136, 12, b"00000000000\0");
        put(&mut h, 148, 8, b"        ");
        h[156] = kind;
        put(&mut h, 157, 100, link.as_bytes());
        put(&mut h, 257, 8, b"ustar\x0000");
        let sum: u32 = h.iter().map(|b| u32::from(*b)).sum();
        put(&mut h, 148, 8, format!("{sum:06o}\0 ").as_bytes());
        self.out.extend_from_slice(&h);
        self.out.extend_from_slice(bytes);
        let pad = (512 - bytes.len() % 512) % 512;
        self.out.extend(std::iter::repeat_n(0u8, pad));
    }
}

fn put(block: &mut [u8; 512], at: usize, width: usize, bytes: &[u8]) {
    let n = bytes.len().min(width);
    if let (Some(dst), Some(src)) = (block.get_mut(at..at + n), bytes.get(..n)) {
        dst.copy_from_slice(src);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn tar_headers_are_well_formed() {
        let mut tar = TarWriter::default();
        tar.dir("opt/apizr", 0o755);
        tar.file("opt/apizr/worker.py", b"print(1)\n", 0o444);
        tar.symlink("usr/local/bin/python", "/usr/bin/python3");
        let bytes = tar.finish();
        assert_eq!(bytes.len(), 512 * 3 + 512 + 1024);
        let header = &bytes[512..1024];
        assert_eq!(&header[..19], b"opt/apizr/worker.py");
        assert_eq!(&header[257..263], b"ustar\0");
        let stored = std::str::from_utf8(&header[148..154]).unwrap();
        let mut copy = header.to_vec();
        copy[148..156].copy_from_slice(b"        ");
        let sum: u32 = copy.iter().map(|b| u32::from(*b)).sum();
        assert_eq!(u32::from_str_radix(stored, 8).unwrap(), sum);
        assert_eq!(&bytes[1024..1033], b"print(1)\n");
    }
}
