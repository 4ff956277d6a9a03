//! Prepared, single-use containers for servers: a container's creation, checks and start, and
//! its interpreter's start-up, move off the call's path. Nothing else changes.
//!
//! * **Same controls.** A prepared container comes from the same `run::launch` as a fresh one
//!   (the same create body; the engine's record verified before start), and its in-container
//!   attestation is read before it joins the pool. A container whose record or own view
//!   differs from the request is removed and never handed a request.
//! * **Single use.** A prepared container is taken out of the pool under its lock, answers one
//!   call, and is removed. It is never reused.
//! * **Same statuses.** A pooled call runs the same pre-checks (input, policy, engine, image)
//!   and the same classification (`answer`) as a fresh one. The report says `path: pooled`.
//!   Two things differ. The call's deadline starts with the call (its container already
//!   exists). And a whole, valid response frame is the answer as soon as it arrives: the
//!   container's exit code, any output after the frame, and its removal are checked just after
//!   the answer (`checked_after_answer`; see `answer.rs` for why this grants user code
//!   nothing). What a fresh call would have refused (an exit other than 0, output after the
//!   frame) is counted (`anomalies`) and said on stderr, and so is a removal that fails
//!   (`cleanup_failures`). The owner label keeps such a container until this process is gone;
//!   then a sweep removes it.
//! * **Exhaustion falls back.** With no prepared container ready, the call runs in a fresh
//!   container (`path: fresh`, and `pool_miss` says why).
//! * **Drains on change.** The pool prepares one workload (policy, image, source). A call for
//!   another one drains the pool, which then refills for the new workload.
//! * **Bounded refill** ([`keeper`]): a background thread keeps `size` containers ready. At
//!   most `max_creating` are created at once, and it backs off exponentially while the engine
//!   fails.
//! * **Nothing leaks.** Each container carries this process as its owner and an expiry that
//!   covers its idle time (`container::pooled`). Prepared containers idle longer than
//!   `max_idle` are replaced. Every `reap_every`, the keeper sweeps what dead owners left
//!   (`sweep`, as at start-up). Dropping the pool removes everything it holds.
//!
//! [`prepare`] makes one container ready; [`census`] lists the pools on an engine by owner
//! (`apizr doctor`).

pub mod census;
mod keeper;
mod prepare;
mod workload;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::call::HeldUntilEnd;

use self::keeper::{Removals, Shared, State, Target};
use self::prepare::Prepared;
use self::workload::Key;
pub use self::workload::PoolWorkload;
use super::answer;
use super::run::{self, Workload};
use super::stream::Until;
use super::{Connected, ContainerPath, OciCall, OciOutcome, OciReport, OciRuntime, ms};
use crate::envelope::Envelope;

/// How many containers to keep ready, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolConfig {
    /// Prepared containers kept waiting.
    pub size: usize,
    /// Containers being prepared at once, at most.
    pub max_creating: usize,
    /// A prepared container older than this is removed instead of used.
    pub max_idle: Duration,
    /// How often expired containers are replaced and dead owners' leftovers swept.
    pub reap_every: Duration,
}

impl PoolConfig {
    /// `size` containers ready (at least one), the default timings.
    pub fn with_size(size: usize) -> PoolConfig {
        PoolConfig {
            size: size.max(1),
            max_creating: size.clamp(1, 2),
            ..PoolConfig::default()
        }
    }
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            size: 2,
            max_creating: 2,
            max_idle: Duration::from_secs(120),
            reap_every: Duration::from_secs(30),
        }
    }
}

/// The pool's state and counters (for `/metrics` and reports).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PoolStats {
    /// The configured number of containers kept ready.
    pub size: usize,
    /// Prepared containers waiting for a call.
    pub ready: usize,
    /// Containers being prepared.
    pub creating: usize,
    /// Calls answered by a prepared container.
    pub hits: u64,
    /// Calls that found none ready (answered by a fresh container).
    pub misses: u64,
    /// Containers prepared and added to the pool.
    pub refills: u64,
    /// Prepared containers removed unused (expired, drained, or at shutdown).
    pub discarded: u64,
    /// Containers that could not be prepared (engine errors, failed checks).
    pub refill_failures: u64,
    /// Used or discarded containers whose removal could not be confirmed.
    pub cleanup_failures: u64,
    /// Pooled calls whose container, after its answer, exited other than 0 or wrote more.
    pub anomalies: u64,
    /// Leftovers of dead owners removed by the periodic sweep.
    pub reaped: u64,
    /// Why the last preparation failed.
    pub last_failure: Option<String>,
}

/// The counters, shared with the pool's threads.
#[derive(Debug, Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    refills: AtomicU64,
    discarded: AtomicU64,
    refill_failures: AtomicU64,
    cleanup_failures: AtomicU64,
    anomalies: AtomicU64,
    reaped: AtomicU64,
}

impl Counters {
    fn bump(counter: &AtomicU64, by: u64) {
        counter.fetch_add(by, Ordering::Relaxed);
    }
}

/// Prepared single-use containers in front of an [`OciRuntime`].
pub struct OciPool {
    shared: Arc<Shared>,
    keeper: Option<JoinHandle<()>>,
    remover: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for OciPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OciPool")
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

impl OciPool {
    /// Start the pool's threads. Nothing is prepared before [`OciPool::warm`] or the first
    /// call names a workload.
    pub fn new(runtime: Arc<OciRuntime>, config: PoolConfig) -> OciPool {
        let (removals, remover) = Removals::start();
        let shared = Arc::new(Shared {
            runtime,
            config,
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            counters: Arc::clone(&removals.counters),
            removals,
        });
        let keeper = keeper::start(Arc::clone(&shared));
        OciPool {
            shared,
            keeper,
            remover,
        }
    }

    /// Prepare containers for `workload` now (a server at start-up), draining any others.
    pub fn warm(&self, workload: PoolWorkload) {
        let key = Key::of(&workload.workload());
        self.shared.retarget(key, Arc::new(workload));
    }

    pub fn config(&self) -> &PoolConfig {
        &self.shared.config
    }

    /// The current state and counters.
    pub fn stats(&self) -> PoolStats {
        let state = self.shared.lock();
        let c = &self.shared.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        PoolStats {
            size: self.shared.config.size,
            ready: state.ready.len(),
            creating: state.creating,
            hits: get(&c.hits),
            misses: get(&c.misses),
            refills: get(&c.refills),
            discarded: get(&c.discarded),
            refill_failures: get(&c.refill_failures),
            cleanup_failures: get(&c.cleanup_failures),
            anomalies: get(&c.anomalies),
            reaped: get(&c.reaped),
            last_failure: state.last_failure.clone(),
        }
    }

    /// Names of the prepared containers waiting for a call.
    pub fn prepared_names(&self) -> Vec<String> {
        let state = self.shared.lock();
        state.ready.iter().map(Prepared::name).collect()
    }

    /// Execute one call, in a prepared container when one is ready, else in a fresh one.
    /// Never panics; every failure is a status.
    pub fn execute(&self, call: OciCall<'_>) -> OciOutcome {
        self.execute_holding(call, Box::new(()))
    }

    /// [`ContainerPool::execute`], keeping `held` until the call's container process has
    /// ended (a pooled call is answered before that; a fresh one after).
    pub fn execute_holding(&self, call: OciCall<'_>, held: HeldUntilEnd) -> OciOutcome {
        let start = Instant::now();
        let deadline = start + Duration::from_millis(call.policy.limits.wall_time_ms);
        let mut report = OciReport::default();
        let envelope = self.run(&call, start, deadline, &mut report, held);
        report.timings.total_ms = ms(start);
        OciOutcome { envelope, report }
    }

    fn run(
        &self,
        call: &OciCall<'_>,
        start: Instant,
        deadline: Instant,
        report: &mut OciReport,
        held: HeldUntilEnd,
    ) -> Envelope {
        let runtime = &self.shared.runtime;
        let (connected, programs) = match runtime.precheck(call, start, report) {
            Ok(checked) => checked,
            Err(envelope) => return envelope,
        };
        let payload = match run::encode_payload(call, programs) {
            Ok(payload) => payload,
            Err(envelope) => return envelope,
        };
        let path = call.call.executable_path();
        let workload = Workload::of(call, &path);
        match self.shared.take(&workload) {
            Ok(prepared) => {
                let answered = (connected, prepared, payload);
                self.pooled(answered, &workload, deadline, report, held)
            }
            Err(miss) => {
                report.pool_miss = Some(miss.to_string());
                let temp_root = &runtime.config.temp_root;
                run::fresh(connected, &workload, payload, temp_root, deadline, report)
            }
        }
    }

    fn pooled(
        &self,
        (connected, prepared, payload): (&Connected, Prepared, Vec<u8>),
        workload: &Workload<'_>,
        deadline: Instant,
        report: &mut OciReport,
        held: HeldUntilEnd,
    ) -> Envelope {
        report.path = ContainerPath::Pooled;
        report.container = Some(prepared.name());
        report.verified = prepared.verified.clone();
        let max_output = workload.policy.limits.max_output_bytes;
        let (envelope, leftover) = answer::answer(
            connected,
            prepared.launched,
            payload,
            max_output,
            deadline,
            Until::Frame,
            report,
        );
        self.shared.removals.dispose_holding(leftover, held);
        // Refill once the call is answered, so that it does not compete with the call.
        self.shared.poke();
        envelope
    }
}

impl Drop for OciPool {
    /// Stop the threads, then remove every container the pool holds (waiting for those being
    /// prepared, up to a bound).
    fn drop(&mut self) {
        {
            let mut state = self.shared.lock();
            state.shutdown = true;
            state.dirty = true;
        }
        self.shared.wake.notify_all();
        if let Some(keeper) = self.keeper.take() {
            let _ = keeper.join();
        }
        self.shared.drain_for_shutdown();
        self.shared.removals.close();
        if let Some(remover) = self.remover.take() {
            let _ = remover.join();
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wake the keeper (something changed: a container was taken or one is ready).
    fn poke(&self) {
        self.lock().dirty = true;
        self.wake.notify_all();
    }

    /// Make `workload` the one prepared, removing containers of any other.
    fn retarget(&self, key: Key, workload: Arc<PoolWorkload>) {
        let drained = {
            let mut state = self.lock();
            if state.target.as_ref().is_some_and(|t| t.key == key) {
                return;
            }
            state.generation += 1;
            state.target = Some(Target {
                key,
                workload,
                generation: state.generation,
            });
            state.failures = 0;
            state.retry_at = None;
            state.dirty = true;
            std::mem::take(&mut state.ready)
        };
        self.wake.notify_all();
        self.discard(drained);
    }

    /// A prepared container for `workload`, or why there is none.
    fn take(&self, workload: &Workload<'_>) -> Result<Prepared, &'static str> {
        let key = Key::of(workload);
        let mut state = self.lock();
        if state.target.as_ref().is_none_or(|t| t.key != key) {
            let warmed = state.target.is_some();
            drop(state);
            Counters::bump(&self.counters.misses, 1);
            self.retarget(key, Arc::new(PoolWorkload::of(workload)));
            return Err(if warmed {
                "the pool held another policy, image or source (drained; refilling)"
            } else {
                "the pool had not prepared this workload yet (filling)"
            });
        }
        let max_idle = self.config.max_idle;
        let mut expired = Vec::new();
        let mut taken = None;
        while let Some(prepared) = state.ready.pop_front() {
            if prepared.ready_at.elapsed() < max_idle {
                taken = Some(prepared);
                break;
            }
            expired.push(prepared);
        }
        // The last one is gone: refill now rather than after this call.
        let urgent = state.ready.is_empty() || !expired.is_empty();
        if urgent {
            state.dirty = true;
        }
        drop(state);
        if urgent {
            self.wake.notify_all();
        }
        self.discard(expired);
        match taken {
            Some(prepared) => {
                Counters::bump(&self.counters.hits, 1);
                Ok(prepared)
            }
            None => {
                Counters::bump(&self.counters.misses, 1);
                Err("no prepared container was ready")
            }
        }
    }

    /// Remove prepared containers that will not be used.
    fn discard(&self, unused: impl IntoIterator<Item = Prepared>) {
        for prepared in unused {
            Counters::bump(&self.counters.discarded, 1);
            self.removals.dispose(prepared.launched.into_leftover());
        }
    }
}
