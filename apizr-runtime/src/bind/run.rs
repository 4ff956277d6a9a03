//! How a `#[python]` binding runs: through the one call API, as `apizr execute` does.
//!
//! * The arguments become the JSON object a caller of `apizr execute` writes, and
//!   [`Call::from_json`] validates it against the embedded contract with the same rules and
//!   the same details; nothing runs on invalid arguments.
//! * The governance picks the executor: no policy file → the default `apizr.execution/v1`
//!   policy `{}` (a fresh supervised process per call), a v1 file → the same backend under it,
//!   a v2 file → a fresh container in the pinned runtime image, `mode = "direct"` → a warm
//!   pool of workers that import the module once ([`AnyExecutor::for_policy`] for the first
//!   three, [`DirectExecutor`] for the last).
//! * The executor of a binding is built once per process (the direct pool is started on the
//!   first call) and kept in a table keyed by the binding's address: bindings are statics.
//! * A governed v1 call re-executes a launcher: the program itself when it called
//!   [`crate::init`] first in `main`, else the `apizr-launch` binary named by
//!   `APIZR_LAUNCHER`. Neither → the call is refused (`backend_unavailable`) instead of running
//!   without the policy's Linux controls.
//! * Any status but `success` is a [`CallError`] carrying that status and the details.
//! * A governed call writes the same audit line as `apizr execute` (written by the backend)
//!   to the file named by `APIZR_AUDIT_FILE`, when set; a file that cannot be opened makes
//!   the call `backend_unavailable` rather than run unaudited.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use apizr_ir::interface::InvocationContract;
use apizr_ir::policy::AnyPolicy;
use serde::de::DeserializeOwned;

use super::CallError;
use super::private::{Governance, PythonBinding};
use crate::audit::{AuditSink, FileAuditSink};
use crate::call::{AnyExecutor, Call, Outcome};
use crate::local::runtime::{LauncherLocation, RuntimeConfig};
use crate::oci::RuntimeImage;
use crate::pool::executor::DirectExecutor;
use crate::pool::{PoolConfig, SetResults};
use crate::request::Executable;
use crate::status::Status;

/// Set by [`crate::init`]: this program can be re-executed as its own launcher.
static INITIALIZED: AtomicBool = AtomicBool::new(false);

/// Workers of a direct binding's pool (each is one Python process).
pub(crate) const DIRECT_WORKERS: usize = 2;

pub(crate) fn mark_initialized() {
    INITIALIZED.store(true, Ordering::SeqCst);
}

/// What a binding needs for every call, built once.
#[derive(Debug)]
pub(crate) struct Prepared {
    contract: InvocationContract,
    executable: Executable,
    executor: AnyExecutor,
}

type Cell = Arc<tokio::sync::OnceCell<Arc<Prepared>>>;

/// The cell of one binding (bindings are statics: their address is their identity).
fn cell(binding: &'static PythonBinding) -> Cell {
    static TABLE: OnceLock<Mutex<HashMap<usize, Cell>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut table = table.lock().unwrap_or_else(|p| p.into_inner());
    let key = std::ptr::from_ref(binding) as usize;
    table.entry(key).or_default().clone()
}

fn unavailable(binding: &PythonBinding, why: impl std::fmt::Display) -> CallError {
    CallError::new(
        Status::BackendUnavailable,
        format!("`{}`: {why}", binding.rust_name),
    )
}

/// The contract and executable, after the embedded bytes were checked against their digests.
pub(crate) fn parts(
    binding: &'static PythonBinding,
) -> Result<(InvocationContract, Executable), CallError> {
    binding.verify()?;
    // The embedded contract has the manifest entries' shape; it is read the way `apizr serve`
    // reads a generated project's manifest.
    let unreadable = |e: &dyn std::fmt::Display| {
        unavailable(binding, format!("embedded contract unreadable: {e}"))
    };
    let value = apizr_ir::json::parse(binding.contract.as_bytes(), apizr_ir::json::Dialect::Strict)
        .map_err(|e| unreadable(&e))?;
    let contract = crate::serve::decode::contract(&value).map_err(|e| unreadable(&e))?;
    Ok((contract, Executable::new(binding.executable().to_vec())))
}

pub(crate) fn launcher(binding: &PythonBinding) -> Result<LauncherLocation, CallError> {
    if INITIALIZED.load(Ordering::SeqCst) {
        return Ok(LauncherLocation::CurrentExe);
    }
    match std::env::var_os("APIZR_LAUNCHER").filter(|p| !p.is_empty()) {
        Some(path) => Ok(LauncherLocation::Binary(PathBuf::from(path))),
        None => Err(unavailable(
            binding,
            "a governed call needs apizr_runtime::init() first in main \
             (or APIZR_LAUNCHER naming an apizr-launch binary)",
        )),
    }
}

/// The executor of a governed binding (nothing starts here).
fn governed(binding: &'static PythonBinding) -> Result<Option<AnyExecutor>, CallError> {
    let (policy, image, config) = match binding.governance {
        Governance::Direct => return Ok(None),
        Governance::V1 { policy } => {
            let config = RuntimeConfig {
                launcher: launcher(binding)?,
                ..RuntimeConfig::default()
            };
            (policy, None, config)
        }
        Governance::V2 {
            policy,
            image,
            platform,
        } => {
            let image = RuntimeImage::parse(image, platform)
                .map_err(|e| unavailable(binding, format!("runtime image: {e}")))?;
            (policy, Some(image), RuntimeConfig::default())
        }
    };
    let policy = AnyPolicy::from_slice(policy.as_bytes())
        .map_err(|e| unavailable(binding, format!("embedded policy: {e}")))?;
    AnyExecutor::for_policy_audited(policy, config, image, audit_sink(binding)?)
        .map(Some)
        .map_err(|e| unavailable(binding, e))
}

/// `APIZR_AUDIT_FILE` (as for `apizr execute`): governed calls append their audit line there.
fn audit_sink(binding: &PythonBinding) -> Result<Option<Arc<dyn AuditSink>>, CallError> {
    let Some(path) = std::env::var_os("APIZR_AUDIT_FILE").filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let path = PathBuf::from(path);
    let sink = FileAuditSink::open(&path).map_err(|e| {
        unavailable(
            binding,
            format!("cannot open audit file {}: {e}", path.display()),
        )
    })?;
    Ok(Some(Arc::new(sink)))
}

fn pool_config(
    binding: &PythonBinding,
    contract: &InvocationContract,
    executable: &Executable,
) -> PoolConfig {
    PoolConfig {
        python: RuntimeConfig::default().python,
        workers: DIRECT_WORKERS,
        timeout: None,
        executable: executable.clone(),
        module: binding.module.to_string(),
        path: format!("source/{}.py", binding.module.replace('.', "/")),
        capabilities: vec![contract.clone()],
        sets: SetResults::ToList,
    }
}

/// Prepare from synchronous code (the direct pool gets a runtime of its own).
fn prepare_blocking(binding: &'static PythonBinding) -> Result<Arc<Prepared>, CallError> {
    let cell = cell(binding);
    if let Some(ready) = cell.get() {
        return Ok(ready.clone());
    }
    let (contract, executable) = parts(binding)?;
    let executor = match governed(binding)? {
        Some(executor) => executor,
        None => {
            let config = pool_config(binding, &contract, &executable);
            let direct =
                DirectExecutor::start_blocking(config).map_err(|e| unavailable(binding, e))?;
            AnyExecutor::Direct(Arc::new(direct))
        }
    };
    let prepared = Arc::new(Prepared {
        contract,
        executable,
        executor,
    });
    // A concurrent first call may have won: keep the one in the cell (ours is dropped).
    let _ = cell.set(prepared.clone());
    Ok(cell.get().cloned().unwrap_or(prepared))
}

/// Prepare from async code (the direct pool starts on the caller's tokio runtime, once).
async fn prepare_async(binding: &'static PythonBinding) -> Result<Arc<Prepared>, CallError> {
    let cell = cell(binding);
    cell.get_or_try_init(|| async {
        let (contract, executable) = parts(binding)?;
        let executor = match governed(binding)? {
            Some(executor) => executor,
            None => {
                let config = pool_config(binding, &contract, &executable);
                let direct = DirectExecutor::start(config)
                    .await
                    .map_err(|e| unavailable(binding, e))?;
                AnyExecutor::Direct(Arc::new(direct))
            }
        };
        Ok(Arc::new(Prepared {
            contract,
            executable,
            executor,
        }))
    })
    .await
    .cloned()
}

/// The [`Call`] of these arguments (validated as `apizr execute` validates its JSON).
fn call_of(
    binding: &PythonBinding,
    prepared: &Prepared,
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> Result<Call, CallError> {
    let json = serde_json::to_vec(arguments)
        .map_err(|e| CallError::new(Status::InvalidInput, e.to_string()))?;
    Call::from_json(
        &prepared.contract,
        prepared.executable.clone(),
        binding.module,
        &json,
    )
    .map_err(|e| CallError::new(Status::InvalidInput, e.to_string()))
}

/// The value of a successful outcome as `T`, or the outcome's status as a [`CallError`].
fn finish<T: DeserializeOwned>(binding: &PythonBinding, outcome: Outcome) -> Result<T, CallError> {
    if outcome.status != Status::Success {
        return Err(CallError::from_outcome(&outcome));
    }
    let decoded = match &outcome.value_json {
        Some(text) => serde_json::from_slice(text),
        None => serde_json::to_value(&outcome.value).and_then(serde_json::from_value),
    };
    decoded.map_err(|e| {
        CallError::new(
            Status::ResultInvalid,
            format!(
                "the value of `{}` does not decode as the declared Rust type: {e}",
                binding.rust_name
            ),
        )
    })
}

/// Run one call on this thread.
pub(crate) fn run_blocking<T: DeserializeOwned>(
    binding: &'static PythonBinding,
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> Result<T, CallError> {
    let prepared = prepare_blocking(binding)?;
    let call = call_of(binding, &prepared, arguments)?;
    finish(binding, prepared.executor.execute(&call))
}

/// Run one call from async code (blocking backends on tokio's blocking pool).
pub(crate) async fn run_async<T: DeserializeOwned>(
    binding: &'static PythonBinding,
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> Result<T, CallError> {
    let prepared = prepare_async(binding).await?;
    let call = call_of(binding, &prepared, arguments)?;
    finish(binding, prepared.executor.run(call).await)
}
