//! Reading and inspecting the Python file at compile time (it is never run).
//!
//! * Paths are relative to the crate's manifest directory (`CARGO_MANIFEST_DIR`, which cargo
//!   sets for the compiler and therefore for the macro). Absolute paths are refused: they would
//!   tie the crate to one machine. Errors name the path as the user wrote it.
//! * The inspection (parse, IR, readiness, planning of every bindable capability) runs on a
//!   thread with the inspector's big stack ([`on_inspect_stack`]): the parser recurses, and a
//!   stack overflow would abort the compiler. A panic becomes an error, never a crash.
//! * Results are cached per process by (content digest, kind, module): a crate with fifty
//!   bindings to one file inspects it once, and a long-lived proc-macro server (rust-analyzer)
//!   re-inspects only when the bytes change.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use apizr_inspect::interface::{PlanError, bindable, contracts_for};
use apizr_inspect::{InspectError, InspectOptions, on_inspect_stack};
use apizr_ir::interface::InvocationContract;
use apizr_ir::{Assessment, Capability, Digest, Inspection, SourceKind};
use syn::LitStr;

use crate::err_spanned;

/// Where relative paths are resolved.
#[derive(Debug, Clone)]
pub struct ManifestDir(Option<PathBuf>);

impl ManifestDir {
    /// `CARGO_MANIFEST_DIR` of the crate being compiled (set by cargo for every compiler run).
    pub fn from_env() -> Self {
        ManifestDir(std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from))
    }

    /// A fixed directory (tests).
    pub fn at(path: impl Into<PathBuf>) -> Self {
        ManifestDir(Some(path.into()))
    }

    /// The file named by `lit` (`what` is the option name, for errors).
    pub fn resolve(&self, lit: &LitStr, what: &str) -> syn::Result<PathBuf> {
        let relative = lit.value();
        if relative.is_empty() {
            return Err(err_spanned!(lit.span() => "`{what}` is empty"));
        }
        if Path::new(&relative).is_absolute() {
            return Err(err_spanned!(lit.span() =>
                "`{what}` must be relative to the crate's manifest directory, not absolute (an absolute path ties the crate to one machine)"));
        }
        let Some(dir) = &self.0 else {
            return Err(err_spanned!(lit.span() =>
                "CARGO_MANIFEST_DIR is not set: build with cargo to resolve `{relative}`"));
        };
        Ok(dir.join(relative))
    }
}

/// One capability of the file, with its contract when it may be bound at all.
#[derive(Debug)]
pub struct Planned {
    pub assessment: Assessment,
    /// The IR entry (absent for a readiness-only record such as a lambda assignment).
    pub capability: Option<Capability>,
    /// Planned for capabilities that are eligible or `conditional`.
    pub contract: Option<Result<InvocationContract, PlanError>>,
}

/// Everything the checks need from one inspected file.
#[derive(Debug)]
pub struct Analysis {
    pub inspection: Inspection,
    /// The bytes a worker executes (the file, or a notebook's exported text).
    pub executable: Vec<u8>,
    pub kind: SourceKind,
    pub capabilities: Vec<Planned>,
}

impl Analysis {
    /// The capability whose Python name is `name`.
    pub fn find(&self, name: &str) -> Option<&Planned> {
        self.capabilities
            .iter()
            .find(|p| p.assessment.source.symbol == name)
    }
}

/// Why a file could not be analysed.
#[derive(Debug)]
pub enum AnalysisError {
    Inspect(InspectError),
    /// The inspector panicked (a bug in apizr, reported as a compile error).
    Panic(String),
    /// The inspection thread could not be started.
    Thread(String),
}

/// (content digest, is a notebook, module).
type Key = (Digest, bool, String);
type Cached = Arc<Result<Analysis, AnalysisError>>;

/// More distinct file versions than this in one process (a long editing session under
/// rust-analyzer) clear the cache instead of growing it.
const CACHE_ENTRIES: usize = 64;

fn cache() -> &'static Mutex<HashMap<Key, Cached>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Cached>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Read a source file (suffix and size checks, no symlinks); errors name `lit` as written.
pub fn read(path: &Path, lit: &LitStr) -> syn::Result<(Vec<u8>, SourceKind)> {
    apizr_inspect::source::read_source(path).map_err(|error| {
        let shown = lit.value();
        let message = match error {
            InspectError::Read { message, .. } => format!("cannot read `{shown}`: {message}"),
            InspectError::UnsupportedSuffix { .. } => {
                format!("`{shown}`: expected a .py file or a .ipynb notebook")
            }
            other => format!("`{shown}`: {other}"),
        };
        err_spanned!(lit.span() => "{message} (paths are relative to the crate's manifest directory)")
    })
}

/// Inspect and plan `bytes` (cached by content digest).
pub fn analyze(bytes: &[u8], kind: SourceKind, module: &str) -> Cached {
    let key = (
        Digest::sha256(bytes),
        kind == SourceKind::Notebook,
        module.to_string(),
    );
    if let Some(hit) = lock().get(&key) {
        return hit.clone();
    }
    let work = || {
        // The panic is caught on the inspection thread, so it never unwinds into the compiler.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            analyze_now(bytes, kind, module)
        }))
    };
    let result = match on_inspect_stack(work) {
        Err(error) => Err(AnalysisError::Thread(error.to_string())),
        Ok(Err(payload)) => Err(AnalysisError::Panic(panic_message(payload.as_ref()))),
        Ok(Ok(result)) => result,
    };
    let result = Arc::new(result);
    let mut cache = lock();
    if cache.len() >= CACHE_ENTRIES {
        cache.clear();
    }
    cache.insert(key, result.clone());
    result
}

fn lock() -> std::sync::MutexGuard<'static, HashMap<Key, Cached>> {
    // A panic while the lock was held cannot leave a half-written entry (inserts are single
    // calls), so a poisoned cache is still consistent.
    cache()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}

fn analyze_now(bytes: &[u8], kind: SourceKind, module: &str) -> Result<Analysis, AnalysisError> {
    let (outcome, parsed) =
        apizr_inspect::inspect_bytes_parsed(bytes, kind, module, InspectOptions::default())
            .map_err(AnalysisError::Inspect)?;
    let inspection = outcome.inspection;
    let assessments = &inspection.readiness.assessments;
    let bindable_ones: Vec<_> = assessments.iter().filter(|a| bindable(a, true)).collect();
    // All at once (the module facts are collected once); if one capability cannot be lowered,
    // plan each alone so that only the binding of that one reports the error.
    let mut contracts = match contracts_for(&parsed, &inspection, &bindable_ones) {
        Ok(all) => all.into_iter().map(Ok).collect::<Vec<_>>(),
        Err(_) => bindable_ones
            .iter()
            .map(|a| contracts_for(&parsed, &inspection, &[*a]).and_then(one))
            .collect(),
    }
    .into_iter();
    let capabilities = assessments
        .iter()
        .map(|assessment| Planned {
            assessment: assessment.clone(),
            capability: capability_of(&inspection, &assessment.capability_id),
            contract: if bindable(assessment, true) {
                contracts.next()
            } else {
                None
            },
        })
        .collect();
    Ok(Analysis {
        inspection,
        executable: outcome.executable,
        kind,
        capabilities,
    })
}

fn one(mut contracts: Vec<InvocationContract>) -> Result<InvocationContract, PlanError> {
    contracts
        .pop()
        .ok_or_else(|| PlanError::Lowering("no contract planned".into()))
}

fn capability_of(inspection: &Inspection, id: &str) -> Option<Capability> {
    inspection
        .capability_ir
        .capabilities
        .iter()
        .find(|c| c.id == id)
        .cloned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn analysis_is_cached_by_content() {
        let source = b"def add(a: int, b: int = 2) -> int:\n    return a + b\n";
        let first = analyze(source, SourceKind::Python, "cache_probe");
        let second = analyze(source, SourceKind::Python, "cache_probe");
        assert!(Arc::ptr_eq(&first, &second));
        let analysis = first.as_ref().as_ref().unwrap();
        let add = analysis.find("add").unwrap();
        let contract = add.contract.as_ref().unwrap().as_ref().unwrap();
        assert_eq!(contract.capability_id, "python:cache_probe:add");
        let edited = analyze(
            b"def add(a: int) -> int:\n    return a\n",
            SourceKind::Python,
            "cache_probe",
        );
        assert!(!Arc::ptr_eq(&first, &edited));
    }

    #[test]
    fn syntax_errors_keep_their_position() {
        let result = analyze(b"x = 1\ndef f(:\n    pass\n", SourceKind::Python, "broken");
        match result.as_ref() {
            Err(AnalysisError::Inspect(error)) => {
                let position = error.position().unwrap();
                assert_eq!((position.line, position.column), (2, 7));
            }
            other => panic!("expected a syntax error, got {other:?}"),
        }
    }
}
