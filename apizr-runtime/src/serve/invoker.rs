//! [`Invoker`]: runs the calls of one [`ServeSpec`] — admission, decoding and validation with
//! the reference's detail strings, the per-capability gate (concurrency limit plus a bounded
//! queue), then the warm pool (direct) or a fresh governed worker per call (v1 policy).
//!
//! Why separate from `core`: `core` holds the plain data types both transports share; this is
//! the one stateful piece, and the only one that talks to processes.

use std::sync::Arc;
use std::time::Instant;

use apizr_ir::Value;
use apizr_ir::admission::{parse_permissive, preflight};
use apizr_ir::interface::{ContractExecution, InvocationContract};
use apizr_ir::policy::PolicyV1;

use super::core::{
    ADMISSION_DETAIL, CallResult, CancelOnDrop, ExecutionMode, GOVERNED_INVALID_DETAIL,
    MAX_BODY_BYTES, ServeError, ServeSource, ServeSpec,
};
use super::gate::{Admission, GaugeGuard, GovernedClaim, Refused};
use super::metrics::Metrics;
use super::oci::OciBackend;
use crate::local::runtime::{LocalRuntime, RuntimeConfig};
use crate::pool::{Pool, PoolConfig, SetResults, call_frame};
use crate::request::{BindingParameter, CallRequest, ExecutionKind};
use crate::status::Status;
use crate::validate::validate_arguments;

enum Backend {
    Direct(Arc<Pool>),
    Governed {
        runtime: Arc<LocalRuntime>,
        policy: Box<PolicyV1>,
    },
    Oci(Arc<OciBackend>),
}

/// Runs calls for one [`ServeSpec`].
pub struct Invoker {
    spec: Arc<ServeSpec>,
    backend: Backend,
    admission: Admission,
    pub metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Invoker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Invoker")
            .field("capabilities", &self.spec.capabilities.len())
            .finish()
    }
}

impl Invoker {
    /// Start the backend (direct: spawn and load every worker; governed: probe the host).
    /// `sets`: how direct mode returns set results (REST: arrays; MCP: rejected).
    pub async fn start(spec: ServeSpec, sets: SetResults) -> Result<Invoker, ServeError> {
        let backend = match &spec.mode {
            ExecutionMode::Direct { workers, timeout } => {
                let pool = Pool::start(PoolConfig {
                    python: spec.python.clone(),
                    workers: *workers,
                    timeout: *timeout,
                    executable: spec.source.executable.clone(),
                    module: spec.source.module.clone(),
                    path: spec.source.executable_path.clone(),
                    capabilities: spec
                        .capabilities
                        .iter()
                        .map(|c| c.contract.clone())
                        .collect(),
                    sets,
                })
                .await?;
                Backend::Direct(pool)
            }
            ExecutionMode::Governed(policy) => {
                let runtime = Arc::new(LocalRuntime::new(RuntimeConfig {
                    python: spec.python.clone(),
                    launcher: spec.launcher.clone(),
                    temp_root: std::env::temp_dir(),
                    ids: None,
                }));
                let probe = runtime.clone();
                tokio::task::spawn_blocking(move || {
                    let _ = probe.host_capabilities();
                    // Leftovers of dead supervisors go before the first call arrives.
                    for failure in probe.sweep() {
                        eprintln!("apizr serve: clean-up: {failure}");
                    }
                })
                .await
                .map_err(|e| ServeError::Usage(e.to_string()))?;
                Backend::Governed {
                    runtime,
                    policy: Box::new(policy.clone()),
                }
            }
            ExecutionMode::Oci { policy, image } => {
                let backend = OciBackend::new((**policy).clone(), image.clone());
                let backend =
                    tokio::task::spawn_blocking(move || backend.probe().map(|()| backend))
                        .await
                        .map_err(|e| ServeError::Usage(e.to_string()))??;
                Backend::Oci(Arc::new(backend))
            }
        };
        let claim = match &backend {
            Backend::Direct(_) => None,
            Backend::Governed { policy, .. } => Some(GovernedClaim {
                memory_bytes: policy.resources.as_ref().and_then(|r| r.memory_bytes),
            }),
            Backend::Oci(oci) => Some(GovernedClaim {
                memory_bytes: Some(oci.memory_bytes()),
            }),
        };
        let names: Vec<String> = spec.capabilities.iter().map(|c| c.name.clone()).collect();
        let mut metrics = Metrics::new(names.clone());
        if let Some(claim) = claim {
            announce_governed_limits(&spec.gates, claim);
            metrics = metrics.with_governed_limits(spec.gates.workers, spec.gates.memory_bytes);
        }
        let metrics = Arc::new(metrics);
        let admission = Admission::new(
            names.iter().map(String::as_str),
            &spec.gates,
            claim,
            metrics.clone(),
        );
        Ok(Invoker {
            spec: Arc::new(spec),
            backend,
            admission,
            metrics,
        })
    }

    pub fn spec(&self) -> &ServeSpec {
        &self.spec
    }

    /// Governed v1 or v2: invalid input answers with the generic detail.
    pub fn is_governed(&self) -> bool {
        matches!(self.backend, Backend::Governed { .. } | Backend::Oci(_))
    }

    /// Workers killed by the pool (direct mode).
    pub fn kills(&self) -> u64 {
        match &self.backend {
            Backend::Direct(pool) => pool.kills(),
            Backend::Governed { .. } | Backend::Oci(_) => 0,
        }
    }

    /// One call: admission → decode → validation → gate → execution.
    pub async fn call(&self, name: &str, arguments: &[u8], cancel: CancelOnDrop) -> CallResult {
        self.run(name, arguments, cancel, true).await.0
    }

    /// As [`Invoker::call`], but in direct mode a success carries the worker's own JSON bytes
    /// of the value (dict insertion order kept, as the reference's direct REST answers) and
    /// the value itself is not decoded (`Success(Null)`). Governed successes carry the value
    /// and no bytes.
    pub async fn call_json(
        &self,
        name: &str,
        arguments: &[u8],
        cancel: CancelOnDrop,
    ) -> (CallResult, Option<Vec<u8>>) {
        self.run(name, arguments, cancel, false).await
    }

    async fn run(
        &self,
        name: &str,
        arguments: &[u8],
        cancel: CancelOnDrop,
        decode: bool,
    ) -> (CallResult, Option<Vec<u8>>) {
        let started = Instant::now();
        let in_flight = GaugeGuard::enter(&self.metrics.in_flight);
        let result = tokio::select! {
            r = self.call_inner(name, arguments, decode) => r,
            () = cancel.cancelled() => (CallResult::Failed(None), None),
        };
        drop(in_flight);
        self.metrics
            .observe(name, result.0.label(), started.elapsed());
        result
    }

    async fn call_inner(
        &self,
        name: &str,
        arguments: &[u8],
        decode: bool,
    ) -> (CallResult, Option<Vec<u8>>) {
        let Some(capability) = self.spec.capability(name) else {
            return (CallResult::Unknown, None);
        };
        let governed = self.is_governed();
        let invalid = |detail: String| {
            CallResult::InvalidInput(if governed {
                GOVERNED_INVALID_DETAIL.to_string()
            } else {
                detail
            })
        };
        if preflight(arguments, MAX_BODY_BYTES as u64).is_err() {
            return (CallResult::InvalidInput(ADMISSION_DETAIL.into()), None);
        }
        let payload = match parse_permissive(arguments) {
            Ok(v) => v,
            Err(e) => return (invalid(e.python_message(arguments)), None),
        };
        let call = match validate_arguments(&capability.contract.parameters, &payload) {
            Ok(c) => c,
            Err(e) => return (invalid(e.to_string()), None),
        };
        let permit = match self.admission.enter(name).await {
            Ok(p) => p,
            Err(Refused::Busy { retry_after }) => return (CallResult::Busy { retry_after }, None),
            Err(Refused::OverCapacity) => return (CallResult::OverCapacity, None),
            Err(Refused::Unknown) => return (CallResult::Unknown, None),
        };
        let result = match &self.backend {
            Backend::Direct(pool) => {
                let frame = match call_frame(&capability.name, call.positional.len(), arguments) {
                    Ok(f) => f,
                    Err(_) => return (invalid("Expected a finite JSON value".into()), None),
                };
                let answer = pool.call(&frame).await;
                drop(permit);
                if answer.status != Status::Success {
                    return (map_status(answer.status, Value::Null, governed), None);
                }
                if !decode {
                    return (CallResult::Success(Value::Null), Some(answer.raw));
                }
                return match parse_permissive(&answer.raw) {
                    Ok(value) => (CallResult::Success(value), None),
                    Err(_) => (CallResult::Failed(Some(Status::WorkerFailed)), None),
                };
            }
            Backend::Governed { runtime, policy } => {
                let request = call_request(&self.spec.source, &capability.contract, call, policy);
                let runtime = runtime.clone();
                match tokio::task::spawn_blocking(move || runtime.execute(&request)).await {
                    Ok(outcome) => {
                        map_status(outcome.envelope.status, outcome.envelope.value, governed)
                    }
                    Err(_) => CallResult::Failed(None),
                }
            }
            Backend::Oci(backend) => {
                let request = call_request(
                    &self.spec.source,
                    &capability.contract,
                    call,
                    &backend.worker_policy(),
                );
                let backend = Arc::clone(backend);
                match tokio::task::spawn_blocking(move || backend.execute(&request)).await {
                    Ok(result) => result,
                    Err(_) => CallResult::Failed(None),
                }
            }
        };
        drop(permit);
        (result, None)
    }
}

/// Say at start what the server-wide governed gate enforces (and what it cannot).
fn announce_governed_limits(gates: &super::core::Gates, claim: GovernedClaim) {
    let mib = |b: u64| b >> 20;
    match claim.memory_bytes {
        Some(bytes) if bytes > gates.memory_bytes => eprintln!(
            "apizr: a governed call's memory limit ({} MiB) exceeds the server's governed memory \
             budget ({} MiB): every call will be answered 503",
            mib(bytes),
            mib(gates.memory_bytes)
        ),
        Some(_) => {}
        None => eprintln!(
            "apizr: the policy sets no memory limit, so the governed memory budget ({} MiB) \
             cannot count its workers; only the worker cap ({}) applies",
            mib(gates.memory_bytes),
            gates.workers
        ),
    }
}

fn map_status(status: Status, value: Value, governed: bool) -> CallResult {
    match status {
        Status::Success => CallResult::Success(value),
        Status::InvalidInput => CallResult::InvalidInput(if governed {
            GOVERNED_INVALID_DETAIL.into()
        } else {
            "Value does not match the declared input type".into()
        }),
        Status::Timeout => CallResult::Timeout,
        other => CallResult::Failed(Some(other)),
    }
}

fn call_request(
    source: &ServeSource,
    contract: &InvocationContract,
    call: crate::validate::ValidatedCall,
    policy: &PolicyV1,
) -> CallRequest {
    CallRequest {
        capability_id: contract.capability_id.clone(),
        executable: source.executable.clone(),
        module: source.module.clone(),
        function: contract.name.clone(),
        execution: match contract.execution {
            ContractExecution::Sync => ExecutionKind::Sync,
            ContractExecution::Async => ExecutionKind::Async,
        },
        parameters: contract
            .parameters
            .iter()
            .map(|p| BindingParameter {
                name: p.name.clone(),
                kind: p.kind,
                required: p.required,
                type_spec: p.type_spec.clone(),
            })
            .collect(),
        positional: call.positional,
        keyword: call.keyword,
        policy: policy.clone(),
    }
}
