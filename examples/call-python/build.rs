//! The container (v2) binding pins a worker image by its ID, which is known only on a machine
//! that built one (`scripts/ci-docker-setup` writes it to `target/apizr-ci/worker-image.json`,
//! or `APIZR_WORKER_IMAGE_JSON` names the file). This script writes the binding with that ID
//! into `OUT_DIR/container.rs`; without an image it writes `CONTAINER = None` and the example
//! says it skipped the container call.

use std::path::PathBuf;

fn main() {
    println!("cargo::rerun-if-env-changed=APIZR_WORKER_IMAGE_JSON");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let json = std::env::var_os("APIZR_WORKER_IMAGE_JSON")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../../target/apizr-ci/worker-image.json"));
    println!("cargo::rerun-if-changed={}", json.display());
    let image = std::fs::read(&json)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .and_then(|v| {
            let image = v.get("image")?.as_str()?.to_string();
            let platform = v.get("platform")?.as_str()?.to_string();
            // Only an image ID and a platform name go into the source (never other text).
            let id_ok = image
                .strip_prefix("sha256:")
                .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
            let platform_ok = ["linux/amd64", "linux/arm64"].contains(&platform.as_str());
            (id_ok && platform_ok).then_some((image, platform))
        });
    let code = match image {
        Some((image, platform)) => format!(
            "/// `total`, in a container of the worker image {image}.\n\
             #[apizr_runtime::python(file = \"py/pricing.py\", function = \"total\", \
             policy = \"policies/container.json\", runtime_image = \"{image}\", \
             runtime_platform = \"{platform}\")]\n\
             fn total_in_container(prices: Vec<f64>, tax: Option<f64>) -> Result<f64, CallError>;\n\
             const CONTAINER: Option<Total> = Some(total_in_container);\n"
        ),
        None => "const CONTAINER: Option<Total> = None;\n".to_string(),
    };
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("container.rs");
    if let Err(error) = std::fs::write(&out, code) {
        println!("cargo::error=cannot write {}: {error}", out.display());
    }
}
