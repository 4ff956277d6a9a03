//! Admission in front of every call: a per-capability gate (at most `concurrency` running, at
//! most `queue` waiting, then 429) and, in the governed modes, one server-wide gate on worker
//! processes (or containers) and on the sum of their memory limits.
//!
//! The server-wide budget ([`GovernedBudget`]) is one per server, shared by every source it
//! serves (a program with several governed bindings, each its own [`Admission`]): the caps
//! bound the host, so two bindings must not each get a budget of the full size. Each source
//! claims its own policy's memory limit per call from the shared budget.
//!
//! Why guards: a caller can vanish at any await (an HTTP client hangs up, an MCP request is
//! cancelled) and its future is then dropped mid-wait. Every count here (a queue slot, a
//! running permit, reserved memory, the gauges of `/metrics`) is held by a value whose `Drop`
//! gives it back, so an abandoned request can never leak a slot.
//!
//! Order: capability permit, then worker slot, then memory, each acquired the same way by
//! every caller (no lock-order cycle). A call that has to wait for any of them holds one slot
//! of its capability's queue until it holds them all. Memory is counted in KiB because tokio's
//! semaphores take `u32` permits per acquisition.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, SemaphorePermit};

use super::metrics::Metrics;
use super::spec::Gates;

/// Why a call was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The capability's queue is full (429 with `Retry-After`).
    Busy { retry_after: Duration },
    /// The call's memory limit alone exceeds the server-wide memory budget (503).
    OverCapacity,
    /// No such capability.
    Unknown,
}

/// The server-wide governed limits as configured for one policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GovernedClaim {
    /// The policy's memory limit per worker; None when the policy sets none (the worker then
    /// counts against the worker cap only, and the server says so at start).
    pub memory_bytes: Option<u64>,
}

struct CapabilityGate {
    running: Semaphore,
    waiting: AtomicUsize,
}

/// The server-wide governed caps: worker slots and memory (KiB), shared by every source.
pub(crate) struct GovernedBudget {
    // Shared (`Arc`) so a call's permits can outlive the request that took them: a process
    // answered on its frame keeps its slot until it has ended (`HeldUntilEnd`).
    workers: Arc<Semaphore>,
    memory_kib: Arc<Semaphore>,
    budget_kib: u64,
    /// The largest per-call claim of the server's sources: idle pre-started workers never
    /// take the room one such call needs ([`Admission::reserve_idle`]).
    largest_claim_kib: AtomicU64,
}

impl GovernedBudget {
    pub(crate) fn new(gates: &Gates) -> Arc<GovernedBudget> {
        let budget_kib = kib(gates.memory_bytes).min(Semaphore::MAX_PERMITS as u64);
        Arc::new(GovernedBudget {
            workers: Arc::new(Semaphore::new(
                gates.workers.clamp(1, Semaphore::MAX_PERMITS),
            )),
            memory_kib: Arc::new(Semaphore::new(usize::try_from(budget_kib).unwrap_or(0))),
            budget_kib,
            largest_claim_kib: AtomicU64::new(0),
        })
    }

    /// A source of this server claims `bytes` of memory per call (known before any source
    /// reserves memory for idle workers).
    pub(crate) fn expect_claim(&self, bytes: u64) {
        self.largest_claim_kib
            .fetch_max(kib(bytes), Ordering::Relaxed);
    }
}

struct ServerGate {
    budget: Arc<GovernedBudget>,
    /// This source's per-call claim, in KiB (0: no memory limit in the policy).
    claim_kib: u32,
    claim_bytes: u64,
    over_capacity: bool,
}

/// All gates of one server.
pub(crate) struct Admission {
    capabilities: BTreeMap<String, CapabilityGate>,
    server: Option<ServerGate>,
    queue: usize,
    retry_after: Duration,
    metrics: Arc<Metrics>,
}

/// Holds everything a running call was admitted with; dropping it releases all of it.
pub(crate) struct Permit<'a> {
    _capability: SemaphorePermit<'a>,
    _server: Option<ServerPermit>,
}

impl<'a> Permit<'a> {
    /// The capability's permit (released when the call is answered) and the server-wide one
    /// (held until the call's process has ended: it bounds the host, not the request).
    pub(crate) fn split(self) -> (SemaphorePermit<'a>, Option<ServerPermit>) {
        (self._capability, self._server)
    }
}

/// A worker slot and the policy's memory claim in the server-wide budget.
pub(crate) struct ServerPermit {
    _worker: OwnedSemaphorePermit,
    _memory: Option<OwnedSemaphorePermit>,
    memory_bytes: i64,
    metrics: Arc<Metrics>,
}

impl Drop for ServerPermit {
    fn drop(&mut self) {
        self.metrics
            .governed_workers
            .fetch_sub(1, Ordering::Relaxed);
        self.metrics
            .governed_memory
            .fetch_sub(self.memory_bytes, Ordering::Relaxed);
    }
}

/// One slot of a capability's queue (and of the `apizr_queued` gauge).
struct QueueSlot<'a> {
    waiting: &'a AtomicUsize,
    gauge: &'a AtomicI64,
}

impl Drop for QueueSlot<'_> {
    fn drop(&mut self) {
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        self.gauge.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Increments a gauge for as long as it lives (`apizr_in_flight`).
pub(crate) struct GaugeGuard<'a>(&'a AtomicI64);

impl<'a> GaugeGuard<'a> {
    pub(crate) fn enter(gauge: &'a AtomicI64) -> Self {
        gauge.fetch_add(1, Ordering::Relaxed);
        GaugeGuard(gauge)
    }
}

impl Drop for GaugeGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn kib(bytes: u64) -> u64 {
    bytes.div_ceil(1024)
}

impl Admission {
    /// Gates for `names`; `governed` adds the server-wide gate for that policy's claim, on
    /// `budget` (shared with the server's other sources) or, without one, a budget of its own.
    pub(crate) fn new<'n>(
        names: impl IntoIterator<Item = &'n str>,
        gates: &Gates,
        governed: Option<GovernedClaim>,
        budget: Option<Arc<GovernedBudget>>,
        metrics: Arc<Metrics>,
    ) -> Admission {
        let capabilities = names
            .into_iter()
            .map(|name| {
                let gate = CapabilityGate {
                    running: Semaphore::new(gates.concurrency.max(1)),
                    waiting: AtomicUsize::new(0),
                };
                (name.to_string(), gate)
            })
            .collect();
        let server = governed.map(|claim| {
            let budget = budget.unwrap_or_else(|| GovernedBudget::new(gates));
            let claim_bytes = claim.memory_bytes.unwrap_or(0);
            budget.expect_claim(claim_bytes);
            let over_capacity = kib(claim_bytes) > budget.budget_kib;
            ServerGate {
                budget,
                claim_kib: u32::try_from(kib(claim_bytes)).unwrap_or(u32::MAX),
                claim_bytes,
                over_capacity,
            }
        });
        Admission {
            capabilities,
            server,
            queue: gates.queue,
            retry_after: gates.retry_after,
            metrics,
        }
    }

    /// Count `workers` idle pre-started v1 workers in the memory budget for as long as the
    /// server runs: each waits in its own memory cgroup with its policy's limit, so it holds
    /// that claim as a running call does. As many as fit are reserved while the budget keeps
    /// room for one call of the largest claim of the server's sources; returns how many (the
    /// pool is sized to that). Without a memory limit nothing is claimed, and without a
    /// server gate (direct mode) there is nothing to count.
    pub(crate) fn reserve_idle(&self, workers: usize) -> usize {
        let Some(server) = &self.server else {
            return workers;
        };
        let claim = u64::from(server.claim_kib);
        if claim == 0 {
            return workers;
        }
        let keep = server
            .budget
            .largest_claim_kib
            .load(Ordering::Relaxed)
            .max(claim);
        let available = server.budget.memory_kib.available_permits() as u64;
        let fit = usize::try_from(available.saturating_sub(keep) / claim).unwrap_or(usize::MAX);
        let n = workers.min(fit);
        let Ok(permits) = u32::try_from(claim * n as u64) else {
            return 0;
        };
        if n == 0 {
            return 0;
        }
        match server.budget.memory_kib.try_acquire_many(permits) {
            Ok(reserved) => {
                // Held for the server's lifetime, as the pool is.
                reserved.forget();
                n
            }
            Err(_) => 0,
        }
    }

    /// Admit one call to `name`: at once when everything is free, else after waiting in the
    /// capability's queue; refused when that queue is full or the call can never fit.
    pub(crate) async fn enter(&self, name: &str) -> Result<Permit<'_>, Refused> {
        let gate = self.capabilities.get(name).ok_or(Refused::Unknown)?;
        if self.server.as_ref().is_some_and(|s| s.over_capacity) {
            return Err(Refused::OverCapacity);
        }
        // Fast path: nothing to wait for.
        if let Ok(capability) = gate.running.try_acquire() {
            match self.try_server() {
                Some(server) => {
                    return Ok(Permit {
                        _capability: capability,
                        _server: server,
                    });
                }
                None => {
                    let _slot = self.queue_slot(gate)?;
                    let server = self.server_permit().await?;
                    return Ok(Permit {
                        _capability: capability,
                        _server: server,
                    });
                }
            }
        }
        let _slot = self.queue_slot(gate)?;
        let capability = gate.running.acquire().await.map_err(|_| self.busy())?;
        let server = self.server_permit().await?;
        Ok(Permit {
            _capability: capability,
            _server: server,
        })
    }

    fn busy(&self) -> Refused {
        Refused::Busy {
            retry_after: self.retry_after,
        }
    }

    fn queue_slot<'a>(&'a self, gate: &'a CapabilityGate) -> Result<QueueSlot<'a>, Refused> {
        if gate.waiting.fetch_add(1, Ordering::AcqRel) >= self.queue {
            gate.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(self.busy());
        }
        self.metrics.queued.fetch_add(1, Ordering::Relaxed);
        Ok(QueueSlot {
            waiting: &gate.waiting,
            gauge: &self.metrics.queued,
        })
    }

    /// The server-wide permit without waiting: `Some(None)` when there is no server gate,
    /// `None` when it is full.
    fn try_server(&self) -> Option<Option<ServerPermit>> {
        let Some(server) = &self.server else {
            return Some(None);
        };
        let worker = server.budget.workers.clone().try_acquire_owned().ok()?;
        let memory = match server.claim_kib {
            0 => None,
            n => Some(
                server
                    .budget
                    .memory_kib
                    .clone()
                    .try_acquire_many_owned(n)
                    .ok()?,
            ),
        };
        Some(Some(self.server_permit_from(server, worker, memory)))
    }

    async fn server_permit(&self) -> Result<Option<ServerPermit>, Refused> {
        let Some(server) = &self.server else {
            return Ok(None);
        };
        let worker = server
            .budget
            .workers
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| self.busy())?;
        let memory = match server.claim_kib {
            0 => None,
            n => Some(
                server
                    .budget
                    .memory_kib
                    .clone()
                    .acquire_many_owned(n)
                    .await
                    .map_err(|_| self.busy())?,
            ),
        };
        Ok(Some(self.server_permit_from(server, worker, memory)))
    }

    fn server_permit_from(
        &self,
        server: &ServerGate,
        worker: OwnedSemaphorePermit,
        memory: Option<OwnedSemaphorePermit>,
    ) -> ServerPermit {
        let memory_bytes = i64::try_from(server.claim_bytes).unwrap_or(i64::MAX);
        self.metrics
            .governed_workers
            .fetch_add(1, Ordering::Relaxed);
        self.metrics
            .governed_memory
            .fetch_add(memory_bytes, Ordering::Relaxed);
        ServerPermit {
            _worker: worker,
            _memory: memory,
            memory_bytes,
            metrics: self.metrics.clone(),
        }
    }
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
