//! What a pool prepares containers of ([`PoolWorkload`]), and when two workloads' containers
//! are interchangeable ([`Key`]): the same image, policy, executable, module path, original
//! bytes and interpreter. Anything else drains the pool.

use apizr_ir::policy_v2::PolicyV2;

use crate::oci::RuntimeImage;
use crate::oci::run::Workload;
use crate::request::Executable;

/// What the pool prepares containers of: a workload with owned parts.
#[derive(Debug, Clone)]
pub struct PoolWorkload {
    policy: PolicyV2,
    image: RuntimeImage,
    executable: Executable,
    executable_path: String,
    original: Option<Vec<u8>>,
    python: String,
}

impl PoolWorkload {
    /// The containers a server needs for its `module` (`executable`; `original`: the bytes the
    /// user passed, such as a notebook, when they differ).
    pub fn new(
        policy: PolicyV2,
        image: RuntimeImage,
        executable: Executable,
        module: &str,
        original: Option<Vec<u8>>,
    ) -> PoolWorkload {
        PoolWorkload {
            policy,
            image,
            python: crate::oci::environment::interpreter(&executable).to_string(),
            executable,
            executable_path: format!("source/{}.py", module.replace('.', "/")),
            original,
        }
    }

    pub(super) fn of(w: &Workload<'_>) -> PoolWorkload {
        let same = std::ptr::eq(w.original, w.executable);
        PoolWorkload {
            policy: w.policy.clone(),
            image: w.image.clone(),
            executable: Executable {
                bytes: w.executable.to_vec(),
                digest: apizr_ir::Digest {
                    algorithm: "sha256",
                    value: w.executable_digest.to_string(),
                },
                // The package travels in the request payload, not in the container's bundle.
                package: None,
                import_time: Default::default(),
            },
            executable_path: w.executable_path.to_string(),
            original: (!same).then(|| w.original.to_vec()),
            python: w.python.to_string(),
        }
    }

    pub(super) fn workload(&self) -> Workload<'_> {
        let executable = self.executable.bytes.as_slice();
        Workload {
            policy: &self.policy,
            image: &self.image,
            executable,
            executable_digest: &self.executable.digest.value,
            executable_path: &self.executable_path,
            original: self.original.as_deref().unwrap_or(executable),
            python: &self.python,
        }
    }
}

/// What makes two workloads' containers interchangeable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Key {
    image: String,
    platform: String,
    policy: Vec<u8>,
    executable: String,
    path: String,
    /// The original bytes' digest, when they are not the executable.
    original: Option<String>,
    python: String,
}

impl Key {
    pub fn of(w: &Workload<'_>) -> Key {
        let same = std::ptr::eq(w.original, w.executable) || w.original == w.executable;
        Key {
            image: w.image.image.clone(),
            platform: w.image.platform.as_str().to_string(),
            policy: w.policy.canonical_bytes().unwrap_or_default(),
            executable: w.executable_digest.to_string(),
            path: w.executable_path.to_string(),
            original: (!same).then(|| apizr_ir::Digest::sha256(w.original).value),
            python: w.python.to_string(),
        }
    }
}
