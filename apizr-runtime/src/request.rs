//! What a caller (the planner behind `apizr execute`, a governed server) hands the runtime.
//!
//! The planner has already inspected the source, lowered TypeSpecs and validated the
//! arguments; the runtime does not re-plan. It re-checks what it can check cheaply and
//! independently inside the worker: the executable digest, the binding shape against the code
//! object, the input size, and per-TypeSpec conversion of JSON lists into tuples and sets.

use std::collections::BTreeMap;
use std::sync::Arc;

use apizr_ir::import_time::ImportTime;
use apizr_ir::json::Value;
use apizr_ir::policy::PolicyV1;
use apizr_ir::{Digest, ParameterKind, TypeSpec};

/// Sync or async callable (`InvocationContract.execution`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecutionKind {
    Sync,
    Async,
}

impl ExecutionKind {
    pub fn wire_name(self) -> &'static str {
        match self {
            ExecutionKind::Sync => "sync",
            ExecutionKind::Async => "async",
        }
    }
}

/// The executable Python bytes and the digest they are bound to.
#[derive(Debug, Clone, PartialEq)]
pub struct Executable {
    pub bytes: Vec<u8>,
    /// The bound digest; the worker recomputes sha256 of `bytes` and compares.
    pub digest: Digest,
    /// A module of a package: every local file importing it runs (see [`PackageFiles`]).
    /// `None` for a single file, whose parent packages are empty stand-ins.
    pub package: Option<Arc<PackageFiles>>,
    /// Whether a pre-started worker may import the module before its call (decided once, by
    /// the server that inspected the source: [`ImportTime::of_report`]); `Unknown` unless
    /// set.
    pub import_time: ImportTime,
}

impl Executable {
    /// Bytes bound to their own digest (the normal case).
    pub fn new(bytes: Vec<u8>) -> Self {
        let digest = Digest::sha256(&bytes);
        Executable {
            bytes,
            digest,
            package: None,
            import_time: ImportTime::Unknown,
        }
    }

    /// The same executable with the readiness verdict on its import ([`ImportTime`]).
    #[must_use]
    pub fn with_import_time(mut self, import_time: ImportTime) -> Self {
        self.import_time = import_time;
        self
    }

    /// The same executable as a module of `package`.
    #[must_use]
    pub fn with_package(mut self, package: PackageFiles) -> Self {
        self.package = Some(Arc::new(package));
        self
    }
}

/// The local Python files a module of a package imports (its import closure, parent
/// packages' `__init__.py` included), by path relative to the directory that was on
/// `sys.path` (`pkg/__init__.py`, `pkg/i18n.py`), `/`-separated.
///
/// Why the bytes travel with each call instead of a directory on the worker's `sys.path`: the
/// worker then imports exactly the bytes that were verified (every file's digest goes with
/// it and the worker re-checks it), and every backend (a sandboxed process with its own mount
/// view, a container, the warm pool) sees the same package without a file system path that
/// must be reachable inside it.
///
/// `requirements`: the package's declared third-party requirements. They never travel to the
/// worker (the request bytes are the files only); they decide where a call may run: under an
/// `apizr.execution/v2` policy only in an image that carries that requirement set
/// (`oci::environment`), whose interpreter is then the environment's.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PackageFiles {
    pub files: BTreeMap<String, Vec<u8>>,
    pub requirements: Vec<String>,
}

impl PackageFiles {
    /// The file of module `dotted` in this package (`a/b/__init__.py` or `a/b.py`).
    pub fn file_of(&self, dotted: &str) -> Option<(&str, &[u8])> {
        let base = dotted.replace('.', "/");
        [format!("{base}/__init__.py"), format!("{base}.py")]
            .into_iter()
            .find_map(|path| self.files.get_key_value(&path))
            .map(|(path, bytes)| (path.as_str(), bytes.as_slice()))
    }
}

/// One parameter of the binding shape: `(name, kind, required)` plus its lowered type.
#[derive(Debug, Clone, PartialEq)]
pub struct BindingParameter {
    pub name: String,
    pub kind: ParameterKind,
    pub required: bool,
    pub type_spec: TypeSpec,
}

/// One call of one capability under one policy.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRequest {
    /// `python:<module>:<symbol>`; used for the audit record only.
    pub capability_id: String,
    pub executable: Executable,
    /// Logical dotted module name.
    pub module: String,
    pub function: String,
    pub execution: ExecutionKind,
    /// Binding shape in signature order.
    pub parameters: Vec<BindingParameter>,
    /// The return type, only when it holds a class the worker serialises (readiness v2: an
    /// Enum member by value, a dataclass or NamedTuple as an object); `None` keeps the
    /// request bytes of every v1 call.
    pub returns: Option<TypeSpec>,
    /// Already-validated positional arguments (positional-only parameters, in order; every
    /// positional parameter when `*args` is given, whose array stays in `keyword`).
    pub positional: Vec<Value>,
    /// Already-validated keyword arguments.
    pub keyword: BTreeMap<String, Value>,
    pub policy: PolicyV1,
}

impl CallRequest {
    /// `source/<module path>.py`, the file name code objects and tracebacks carry.
    pub fn executable_path(&self) -> String {
        format!("source/{}.py", self.module.replace('.', "/"))
    }

    /// The arguments as the JSON object the caller supplied (positional values under the
    /// names of the positional parameters they fill). Its canonical size is what
    /// `max_input_bytes` limits.
    pub fn arguments_object(&self) -> Value {
        let mut map = self.keyword.clone();
        let positional_names = self
            .parameters
            .iter()
            .filter(|p| p.kind.is_named_positional())
            .map(|p| p.name.clone());
        for (name, value) in positional_names.zip(self.positional.iter()) {
            map.insert(name, value.clone());
        }
        Value::Object(map)
    }
}
