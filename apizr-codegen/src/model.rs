//! The generator's values: what it is asked ([`Request`]), what it knows after inspection and
//! planning ([`Planned`]), what it produces ([`Generated`], a [`FileTree`]) and why it refuses
//! ([`GenerateError`]). Every other module of the crate builds on these and none of them on
//! another's internals.

use std::collections::BTreeMap;

use apizr_inspect::interface::PlanError;
use apizr_ir::interface::InvocationContract;
use apizr_ir::plan::BoundSource;
use apizr_ir::plan_v2::RuntimeImage;
use apizr_ir::policy::PolicyV1;
use apizr_ir::policy_v2::PolicyV2;
use apizr_ir::{Digest, Inspection, SourceKind};

use crate::pyjson::SummaryMode;

/// Sorted relative paths (always `/`-separated) → file bytes.
pub type FileTree = BTreeMap<String, Vec<u8>>;

/// Which server the project is (one definition with the runtime's bundle loader).
pub use apizr_ir::surface::Transport;

/// How the generated `Cargo.toml` finds `apizr-runtime`.
///
/// The dependency line is always the version requirement of this apizr release, so the
/// project means the same thing everywhere; a local checkout is added as a
/// `[patch.crates-io]` entry with an *absolute* path. Why absolute and why a patch: the
/// project then builds wherever it is copied on the machine that has the checkout (a relative
/// path broke one directory deeper), the machine-specific part is one removable section, and
/// once the crate is published, deleting that section builds against crates.io unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeDependency {
    /// The version requirement, patched to the `apizr-runtime` directory at this absolute path.
    Checkout(String),
    /// The version requirement alone (the published crate).
    Version(String),
}

impl RuntimeDependency {
    /// The version requirement matching this apizr release.
    pub fn version() -> Self {
        RuntimeDependency::Version(Self::requirement())
    }

    /// `=<this release>`: generated projects pin the runtime they were generated for.
    pub fn requirement() -> String {
        format!("={}", env!("CARGO_PKG_VERSION"))
    }
}

/// Everything `generate` needs, as values.
#[derive(Debug, Clone)]
pub struct Request {
    pub transport: Transport,
    pub source: Vec<u8>,
    pub kind: SourceKind,
    pub module: String,
    /// The raw `--select` text.
    pub selection: Option<String>,
    /// The raw `--execution-policy` bytes.
    pub policy: Option<Vec<u8>>,
    pub runtime_image: Option<String>,
    pub runtime_platform: Option<String>,
    pub runtime_dependency: RuntimeDependency,
    /// Expose explicitly selected `conditional` capabilities (see [`crate::conditional`]).
    pub allow_conditional: bool,
    /// The readiness policy that decides which capabilities are ready (v1 by default).
    pub readiness: apizr_ir::ReadinessPolicy,
    /// What `k8s/` scales the server with (HPA, or a Knative Service that scales to zero).
    pub autoscaling: crate::deploy::Autoscaling,
    /// A module of a package directory (`DIR --select pkg.mod:func`); `None` for one file.
    pub package: Option<ServedPackage>,
}

/// A module of a package: what its bundle and image add to a single file's.
#[derive(Debug, Clone, Default)]
pub struct ServedPackage {
    /// Path under the `sys.path` root (`pkg/__init__.py`) → bytes: the module's import
    /// closure, its own file included ([`crate::package::load`]).
    pub files: BTreeMap<String, Vec<u8>>,
    /// Third-party requirement specifiers, installed into the image's virtual environment.
    pub requirements: Vec<String>,
    /// `--wheelhouse DIR`: wheel file name → bytes; the image installs from them only
    /// (`pip install --no-index --find-links`).
    pub wheelhouse: BTreeMap<String, Vec<u8>>,
    /// The package directory: readiness v2 resolves types imported from its other modules
    /// ([`apizr_inspect::readiness::imported`]). Never written into the project.
    pub root: Option<std::path::PathBuf>,
    /// Functions of several modules selected (`DIR --select a.x:f,b.y:g`): every selected
    /// module, in the order the selection first names them (the request's `source`, `module`
    /// and `selection` are the first's), and `files` is the union of their closures. Empty for
    /// one module, whose bundle is then exactly what it was before several were possible.
    pub modules: Vec<PackageModule>,
}

/// One selected module of a bundle that serves several ([`ServedPackage::modules`]).
#[derive(Debug, Clone)]
pub struct PackageModule {
    pub module: String,
    /// The module's own bytes (its executable).
    pub source: Vec<u8>,
    /// Its functions, as the planner's `--select` text (`f,g`).
    pub selection: String,
    /// Its import closure (keys of [`ServedPackage::files`]), which its workers load as the
    /// package; `None`: it stands alone and is served as its single file.
    pub closure: Option<Vec<String>>,
}

/// The rendered project and the stdout summary line.
#[derive(Debug, Clone)]
pub struct Generated {
    pub tree: FileTree,
    pub summary: String,
    pub(crate) transport: Transport,
    pub(crate) mode: SummaryMode,
}

impl Generated {
    /// Add a file produced outside the pure generator (the resolved `Cargo.lock`); the
    /// summary's file list follows.
    pub fn insert_file(&mut self, path: &str, bytes: Vec<u8>) {
        self.tree.insert(path.to_string(), bytes);
        self.summary = crate::pyjson::summary(self.transport, self.mode, self.tree.keys());
    }
}

/// Why nothing was generated. `Display` is the stderr message (the reference's where known).
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// Unusable input (source, policy, selection, output path): exit 2.
    #[error("{0}")]
    Input(String),
    /// A selected capability is not eligible: exit 1.
    #[error("{0}")]
    Refused(String),
    /// Writing the project failed: exit 2.
    #[error("{0}")]
    Io(String),
}

impl GenerateError {
    pub fn exit_code(&self) -> u8 {
        match self {
            GenerateError::Refused(_) => 1,
            GenerateError::Input(_) | GenerateError::Io(_) => 2,
        }
    }
}

impl From<PlanError> for GenerateError {
    fn from(error: PlanError) -> Self {
        if error.is_refusal() {
            GenerateError::Refused(error.to_string())
        } else {
            GenerateError::Input(error.to_string())
        }
    }
}

pub(crate) fn input(error: impl std::fmt::Display) -> GenerateError {
    GenerateError::Input(error.to_string())
}

/// What the rest of the generator needs to know about one inspected, planned source.
pub struct Planned {
    pub transport: Transport,
    pub inspection: Inspection,
    pub bound: BoundSource,
    pub contracts: Vec<InvocationContract>,
    pub executable: Vec<u8>,
    pub notebook: Option<Vec<u8>>,
    /// The worker's v1 policy when governed (for v2: the policy derived from the v2 one).
    pub policy: Option<PolicyV1>,
    /// Governed v2: the OCI policy and runtime image.
    pub oci: Option<OciSettings>,
    /// `--allow-conditional`: capability id → its readiness record, for the manifest.
    pub conditional: Option<apizr_ir::Value>,
    /// A module of a package: its files, requirements and wheelhouse.
    pub package: Option<ServedPackage>,
    /// Several modules of a package: each one's binding, in selection order (the first is
    /// `inspection`, `bound` and `executable` again; `contracts` holds all of theirs). Empty
    /// for one source.
    pub modules: Vec<PlannedModule>,
}

/// One module of a bundle that serves several: what binds its capabilities to its file.
pub struct PlannedModule {
    pub inspection: Inspection,
    pub bound: BoundSource,
    pub executable: Vec<u8>,
    /// The capability ids of its contracts, in contract order.
    pub capability_ids: Vec<String>,
    /// Its import closure (paths under `source/`); `None`: it stands alone.
    pub closure: Option<Vec<String>>,
}

impl Planned {
    /// The inspection that planned `contract` (its module's).
    pub fn inspection_of(&self, contract: &InvocationContract) -> &Inspection {
        self.modules
            .iter()
            .find(|m| m.capability_ids.contains(&contract.capability_id))
            .map_or(&self.inspection, |m| &m.inspection)
    }
}

/// A v2 (`apizr.execution/v2`) bundle's policy and image.
#[derive(Debug, Clone)]
pub struct OciSettings {
    pub policy: PolicyV2,
    pub image: RuntimeImage,
}

/// One governed plan: capability id, artifact path and plan digest.
pub struct PlanEntry {
    pub capability_id: String,
    pub path: String,
    pub digest: Digest,
}
