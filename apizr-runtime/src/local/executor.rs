//! [`LocalExecutor`]: the local-process backend behind the call API — a [`LocalRuntime`] and
//! the v1 policy it enforces on every call.

use std::path::PathBuf;
use std::sync::Arc;

use apizr_ir::policy::PolicyV1;

use crate::audit::AuditSink;
use crate::call::{BackendKind, Call, Executor, ExecutorError, HeldUntilEnd, Outcome, Report};
use crate::local::enforcement::{Unenforceable, unenforceable};
use crate::local::runtime::{LocalRuntime, RuntimeConfig};
use crate::status::Status;

/// A fresh supervised process per call under one v1 policy.
#[derive(Debug)]
pub struct LocalExecutor {
    runtime: LocalRuntime,
    policy: PolicyV1,
    /// The configured interpreter command (for the start-up error).
    python: PathBuf,
}

impl LocalExecutor {
    pub fn new(policy: PolicyV1, config: RuntimeConfig) -> Self {
        LocalExecutor {
            python: config.python.clone(),
            runtime: LocalRuntime::new(config),
            policy,
        }
    }

    /// Record every call (one audit line each).
    #[must_use]
    pub fn with_audit(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.runtime = self.runtime.with_audit(sink);
        self
    }

    pub fn policy(&self) -> &PolicyV1 {
        &self.policy
    }

    pub fn runtime(&self) -> &LocalRuntime {
        &self.runtime
    }

    /// The controls of this policy the host cannot enforce, each with why (empty: calls can
    /// run). Every call is refused while this is not empty, so a server is not ready.
    pub fn unenforceable(&self) -> Vec<Unenforceable> {
        unenforceable(&self.policy, self.runtime.host_capabilities())
    }
}

impl Executor for LocalExecutor {
    fn kind(&self) -> BackendKind {
        BackendKind::LocalProcess
    }

    /// Sweep what dead supervisors left, and probe the host once (namespaces, Landlock,
    /// seccomp, cgroups, the interpreter). Which
    /// controls this policy gets is decided per call; a missing interpreter is an error here.
    fn check(&self) -> Result<(), ExecutorError> {
        // Leftovers of dead supervisors go before the first call arrives.
        for failure in self.runtime.sweep() {
            eprintln!("apizr: clean-up of a dead supervisor's leftovers failed: {failure}");
        }
        if let Some(effect) = self.policy.effects.require_known.first() {
            return Err(ExecutorError::UnknownEffect(effect.clone()));
        }
        match &self.runtime.host_capabilities().python {
            Some(_) => Ok(()),
            None => Err(ExecutorError::NoPython(self.python.display().to_string())),
        }
    }

    fn execute(&self, call: &Call) -> Outcome {
        self.execute_holding(call, Box::new(()))
    }

    fn execute_holding(&self, call: &Call, held: HeldUntilEnd) -> Outcome {
        if !self.policy.effects.require_known.is_empty() {
            // Effects are never inferred: a required known effect cannot be proven.
            return Outcome::status(Status::PolicyRefused).with_backend(self.kind());
        }
        let outcome = self
            .runtime
            .execute_holding(&call.request_under(&self.policy), held);
        Outcome::from_envelope(
            BackendKind::LocalProcess,
            outcome.envelope,
            Report::Local(Box::new(outcome.report)),
        )
    }
}
