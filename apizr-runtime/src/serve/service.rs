//! [`Service`]: what both transports call — every served name routed to a Python capability
//! (an [`Invoker`]: one source, one execution mode) or to a native endpoint ([`NativeRoute`]).
//!
//! `apizr serve` and generated projects serve one source ([`ServicePlan::from`] a
//! [`ServeSpec`]); a program that registers `#[python]` bindings and `#[endpoint]` functions
//! serves one spec per binding (each with its own source and policy) next to its native
//! endpoints. Either way the REST and MCP transports see one [`Service`], so routes, status
//! mapping, metrics, readiness and documents are the same code for both.
//!
//! Rules:
//! * names are unique across all sources and native endpoints (a clash is a start-up error);
//! * one [`Metrics`] for the whole server (every route's series in one exposition);
//! * the server is ready when every source is ([`Service::not_ready`] names the first that is
//!   not);
//! * the server-wide governed gates (workers, memory) are one budget for the whole server,
//!   shared by every governed source (sized by the first governed spec's gates: the server
//!   flags give every spec the same), and `/metrics` has one series of each (the container
//!   pools' counts summed over the v2 sources).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use apizr_ir::interface::InvocationContract;

use super::error::ServeError;
use super::gate::{GaugeGuard, GovernedBudget};
use super::invoker::Invoker;
use super::metrics::Metrics;
use super::native::{NativeEndpoint, NativeRoute};
use super::reply::{self, Answer, Rejected};
use super::spec::{CancelOnDrop, ExecutionMode, Gates, ServeSpec};
use crate::audit::AuditSink;
use crate::call::{AnyExecutor, MAX_ARGUMENT_BYTES};
use crate::oci::PoolStats;
use crate::pool::SetResults;

/// What one server serves, before anything starts.
#[derive(Debug, Clone, Default)]
pub struct ServicePlan {
    /// Python sources, each with its capabilities and execution mode.
    pub specs: Vec<ServeSpec>,
    /// Native endpoints.
    pub native: Vec<NativeEndpoint>,
    /// Native endpoints' default concurrency and `Retry-After`.
    pub gates: Gates,
    /// Native calls: append one audit record per call to this file (Python sources use their
    /// spec's `audit`).
    pub audit: Option<PathBuf>,
}

impl From<ServeSpec> for ServicePlan {
    fn from(spec: ServeSpec) -> Self {
        ServicePlan {
            gates: spec.gates,
            audit: None,
            native: Vec::new(),
            specs: vec![spec],
        }
    }
}

impl ServicePlan {
    /// Every Python contract, in source order.
    pub fn contracts(&self) -> Vec<InvocationContract> {
        self.specs
            .iter()
            .flat_map(|s| s.capabilities.iter().map(|c| c.contract.clone()))
            .collect()
    }

    /// Every served name (REST route), Python first; a name served twice is an error.
    pub fn names(&self) -> Result<Vec<String>, ServeError> {
        let python = self
            .specs
            .iter()
            .flat_map(|s| s.capabilities.iter().map(|c| c.name.clone()));
        let native = self.native.iter().map(|e| e.name.to_string());
        let mut seen = std::collections::BTreeSet::new();
        let mut names = Vec::new();
        for name in python.chain(native) {
            if !seen.insert(name.clone()) {
                return Err(ServeError::DuplicateName(name));
            }
            names.push(name);
        }
        Ok(names)
    }

    /// The `openapi.json` bytes: a single source's own document when it has one, else the
    /// document of the Python contracts, with the native endpoints' operations added.
    pub fn openapi(&self) -> Vec<u8> {
        if let ([spec], []) = (self.specs.as_slice(), self.native.as_slice())
            && let Some(bytes) = &spec.openapi
        {
            return bytes.clone();
        }
        super::openapi::bytes_with_native(&self.contracts(), &self.native)
    }
}

#[derive(Debug, Clone, Copy)]
enum Route {
    Python(usize),
    Native(usize),
}

/// The running server behind the transports.
pub struct Service {
    invokers: Vec<Invoker>,
    native: Vec<NativeRoute>,
    routes: BTreeMap<String, Route>,
    pub metrics: Arc<Metrics>,
    audit: Option<Arc<dyn AuditSink>>,
    retry_after: Duration,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("invokers", &self.invokers)
            .field("routes", &self.routes.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Service {
    /// Start every source's backend (see [`Invoker::start`]) and the native routes.
    pub async fn start(plan: ServicePlan, sets: SetResults) -> Result<Service, ServeError> {
        let names = plan.names()?;
        let mut metrics = Metrics::new(names);
        let governed = plan
            .specs
            .iter()
            .find(|s| matches!(s.mode, ExecutionMode::Governed { .. }));
        if let Some(spec) = governed {
            metrics = metrics.with_governed_limits(spec.gates.workers, spec.gates.memory_bytes);
        }
        let budget = GovernedBudget::new(&governed.map_or_else(Gates::default, |s| s.gates));
        // Every source's claim is known before any of them reserves memory for idle workers.
        for spec in &plan.specs {
            if let ExecutionMode::Governed { policy, .. } = &spec.mode {
                budget.expect_claim(policy.memory_bytes().unwrap_or(0));
            }
        }
        let metrics = Arc::new(metrics);
        let mut routes = BTreeMap::new();
        let mut invokers = Vec::with_capacity(plan.specs.len());
        for (i, spec) in plan.specs.into_iter().enumerate() {
            for capability in &spec.capabilities {
                routes.insert(capability.name.clone(), Route::Python(i));
            }
            invokers
                .push(Invoker::start_shared(spec, sets, metrics.clone(), budget.clone()).await?);
        }
        let native: Vec<NativeRoute> = plan
            .native
            .into_iter()
            .map(|e| NativeRoute::new(e, &plan.gates))
            .collect();
        for (i, route) in native.iter().enumerate() {
            routes.insert(route.endpoint.name.to_string(), Route::Native(i));
        }
        let audit = match (&plan.audit, native.is_empty()) {
            (Some(path), false) => Some(super::invoker::open_audit(path)?),
            _ => None,
        };
        Ok(Service {
            invokers,
            native,
            routes,
            metrics,
            audit,
            retry_after: plan.gates.retry_after,
        })
    }

    /// Why this server is not ready although it started (`None`: ready).
    pub fn not_ready(&self) -> Option<String> {
        self.invokers.iter().find_map(Invoker::not_ready)
    }

    /// Whether `name` is served (a REST route, before the body is read).
    pub fn serves(&self, name: &str) -> bool {
        self.routes.contains_key(name)
    }

    /// The most argument bytes `name` accepts (REST answers 413 past it).
    pub fn max_input_bytes(&self, name: &str) -> usize {
        match self.routes.get(name) {
            Some(Route::Native(i)) => self.native[*i].max_input_bytes,
            _ => MAX_ARGUMENT_BYTES,
        }
    }

    /// `Retry-After` of busy answers.
    pub fn retry_after(&self) -> Duration {
        self.retry_after
    }

    /// The Python sources' invokers.
    pub fn invokers(&self) -> &[Invoker] {
        &self.invokers
    }

    /// The Prometheus text of `/metrics`.
    pub fn metrics_text(&self) -> String {
        let kills = self.invokers.iter().map(Invoker::kills).sum();
        let mut text = self.metrics.render(kills);
        let pools: Vec<PoolStats> = self
            .invokers
            .iter()
            .filter_map(|invoker| match invoker.executor() {
                AnyExecutor::Oci(oci) => oci.pool().map(|pool| pool.stats()),
                _ => None,
            })
            .collect();
        if let Some(total) = super::metrics::sum_pools(&pools) {
            super::metrics::render_oci_pool(&mut text, &total);
        }
        // One set of series for every source's pre-started workers.
        let v1 = self
            .invokers
            .iter()
            .filter_map(Invoker::prestart_stats)
            .reduce(|a, b| a.merged(&b));
        if let Some(stats) = v1 {
            super::metrics::render_v1_pool(&mut text, &stats);
        }
        let after = self
            .invokers
            .iter()
            .filter_map(Invoker::after_answer_stats)
            .reduce(|a, b| a.merged(&b));
        if let Some(stats) = after {
            super::metrics::render_v1_after_answer(&mut text, &stats);
        }
        text
    }

    /// One call (see [`Invoker::call`]).
    pub async fn call(&self, name: &str, arguments: &[u8], cancel: CancelOnDrop) -> Answer {
        self.dispatch(name, arguments, cancel, false).await
    }

    /// One call, direct-mode successes as the worker's JSON bytes (see [`Invoker::call_json`]).
    pub async fn call_json(&self, name: &str, arguments: &[u8], cancel: CancelOnDrop) -> Answer {
        self.dispatch(name, arguments, cancel, true).await
    }

    async fn dispatch(
        &self,
        name: &str,
        arguments: &[u8],
        cancel: CancelOnDrop,
        json: bool,
    ) -> Answer {
        match self.routes.get(name) {
            None => Err(Rejected::UnknownCapability),
            Some(Route::Python(i)) if json => {
                self.invokers[*i].call_json(name, arguments, cancel).await
            }
            Some(Route::Python(i)) => self.invokers[*i].call(name, arguments, cancel).await,
            Some(Route::Native(i)) => self.native_call(&self.native[*i], arguments, cancel).await,
        }
    }

    async fn native_call(
        &self,
        route: &NativeRoute,
        arguments: &[u8],
        cancel: CancelOnDrop,
    ) -> Answer {
        let started = Instant::now();
        let in_flight = GaugeGuard::enter(&self.metrics.in_flight);
        let answer = tokio::select! {
            answer = route.call(arguments) => answer,
            () = cancel.cancelled() => Err(Rejected::Cancelled),
        };
        drop(in_flight);
        let elapsed = started.elapsed();
        self.metrics
            .observe(route.endpoint.name, reply::label(&answer), elapsed);
        if let Some(sink) = &self.audit
            && let Err(e) = sink.record(&route.audit_record(&answer, elapsed))
        {
            eprintln!(
                "apizr: audit record of {} not written: {e}",
                route.endpoint.name
            );
        }
        answer
    }
}
