//! [`OciExecutor`]: the container backend behind the call API — an [`OciRuntime`], the v2
//! policy, the runtime image, an optional audit sink, and (servers) an optional [`OciPool`]
//! of prepared containers in front of the runtime.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use apizr_ir::policy_v2::PolicyV2;

use super::environment::check_requirements;
use super::image::check_image;
use super::{OciCall, OciConfig, OciPool, OciRuntime, PoolConfig, PoolWorkload, RuntimeImage};
use crate::audit::{AUDIT_SCHEMA, AuditRecord, AuditSink};
use crate::call::{BackendKind, Call, Executor, ExecutorError, HeldUntilEnd, Outcome, Report};
use crate::request::Executable;
use crate::status::Status;

/// A fresh container per call under one v2 policy, in one image.
#[derive(Debug)]
pub struct OciExecutor {
    runtime: Arc<OciRuntime>,
    policy: PolicyV2,
    image: RuntimeImage,
    audit: Option<Arc<dyn AuditSink>>,
    pool: OnceLock<OciPool>,
}

impl OciExecutor {
    pub fn new(policy: PolicyV2, image: RuntimeImage, config: OciConfig) -> Self {
        OciExecutor {
            runtime: Arc::new(OciRuntime::new(config)),
            policy,
            image,
            audit: None,
            pool: OnceLock::new(),
        }
    }

    /// Serve calls from a pool of prepared containers (servers), and start preparing them for
    /// `module` (`executable`) now. Once per executor: `false` if a pool was already started.
    pub fn start_pool(&self, config: PoolConfig, executable: Executable, module: &str) -> bool {
        let mut started = false;
        let pool = self.pool.get_or_init(|| {
            started = true;
            OciPool::new(Arc::clone(&self.runtime), config)
        });
        if started {
            pool.warm(PoolWorkload::new(
                self.policy.clone(),
                self.image.clone(),
                executable,
                module,
                None,
            ));
        }
        started
    }

    /// The pool in front of this executor, if one was started.
    pub fn pool(&self) -> Option<&OciPool> {
        self.pool.get()
    }

    /// Record every call (one audit line each, like the local backend's).
    #[must_use]
    pub fn with_audit(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.audit = Some(sink);
        self
    }

    pub fn policy(&self) -> &PolicyV2 {
        &self.policy
    }

    pub fn image(&self) -> &RuntimeImage {
        &self.image
    }

    /// A module of a package that declares requirements runs only in an image carrying
    /// exactly that requirement set (`environment::check_requirements`, read from the image's
    /// labels through the engine): a server checks this before it reports ready.
    pub fn check_requirements(&self, executable: &Executable) -> Result<(), ExecutorError> {
        let Some(package) = executable.package.as_deref() else {
            return Ok(());
        };
        if package.requirements.is_empty() {
            return Ok(());
        }
        let (engine, _) =
            self.runtime
                .engine()
                .map_err(|reason| ExecutorError::EngineUnavailable {
                    reason: reason.to_string(),
                })?;
        let facts = match check_image(engine, &self.image, self.policy.subprocess_deny()) {
            Ok(Ok(facts)) => facts,
            Ok(Err(e)) => return Err(ExecutorError::Image(e)),
            Err(e) => {
                return Err(ExecutorError::EngineUnavailable {
                    reason: e.to_string(),
                });
            }
        };
        check_requirements(&facts.id, &facts.labels, &package.requirements)
            .map_err(ExecutorError::Image)
    }

    /// The per-call engine work (engine facts, the start-up sweep's report).
    pub fn runtime(&self) -> &OciRuntime {
        &self.runtime
    }

    fn write_audit(&self, call: &Call, outcome: &Outcome, started: Instant) {
        let Some(sink) = &self.audit else {
            return;
        };
        let record = AuditRecord {
            schema_version: AUDIT_SCHEMA,
            capability_id: call.capability_id().to_string(),
            executable_digest: call.executable().digest.prefixed(),
            policy_digest: self
                .policy
                .digest()
                .map(|d| d.prefixed())
                .unwrap_or_default(),
            status: outcome.status.wire_name(),
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            limits_hit: outcome.limits_hit().to_vec(),
            refused: Vec::new(),
            controls: Vec::new(),
            // This backend does not yet keep the worker's claim apart from what it observed.
            status_source: "not_separated",
            worker_status: None,
            exit: match &outcome.report {
                Report::Oci(report) => report.exit.map(|code| format!("exit {code}")),
                _ => None,
            },
            process: None,
        };
        let _ = sink.record(&record);
    }
}

impl Executor for OciExecutor {
    fn kind(&self) -> BackendKind {
        BackendKind::OciContainer
    }

    /// Connect to the engine, require its controls, and check the image (identity, platform,
    /// labels), so that a server never reports ready with a backend that cannot run.
    fn check(&self) -> Result<(), ExecutorError> {
        if let Some(refusal) = self.policy.refusal() {
            return Err(ExecutorError::Refused(refusal));
        }
        if let Some(effect) = self.policy.effects.require_known.first() {
            return Err(ExecutorError::UnknownEffect(effect.clone()));
        }
        let (engine, caps) =
            self.runtime
                .engine()
                .map_err(|reason| ExecutorError::EngineUnavailable {
                    reason: reason.to_string(),
                })?;
        if !caps.usable() {
            return Err(ExecutorError::EngineLacks {
                missing: caps.missing.clone(),
            });
        }
        match check_image(engine, &self.image, self.policy.subprocess_deny()) {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(ExecutorError::Image(e)),
            Err(e) => Err(ExecutorError::EngineUnavailable {
                reason: e.to_string(),
            }),
        }
    }

    fn execute(&self, call: &Call) -> Outcome {
        self.execute_holding(call, Box::new(()))
    }

    /// A pooled call is answered before its container's process has ended: `held` is kept
    /// until then (see [`HeldUntilEnd`]).
    fn execute_holding(&self, call: &Call, held: HeldUntilEnd) -> Outcome {
        let started = Instant::now();
        let outcome = if self.policy.effects.require_known.is_empty() {
            let request = call.request_under(&self.policy.worker_policy());
            let oci_call = OciCall {
                call: &request,
                policy: &self.policy,
                image: &self.image,
                original: call.original(),
            };
            let ran = match self.pool.get() {
                Some(pool) => pool.execute_holding(oci_call, held),
                None => self.runtime.execute(oci_call),
            };
            Outcome::from_envelope(self.kind(), ran.envelope, Report::Oci(Box::new(ran.report)))
        } else {
            // Effects are never inferred: a required known effect cannot be proven.
            Outcome::status(Status::PolicyRefused).with_backend(self.kind())
        };
        self.write_audit(call, &outcome, started);
        outcome
    }
}
