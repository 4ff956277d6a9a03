//! The pool's background work: keep `size` containers ready, replace expired ones, sweep dead
//! owners' leftovers, and remove used or unused containers. None of it runs on a call's path.
//!
//! One keeper thread decides. It starts one preparer thread per container and never has more
//! than `max_creating` at once. After a failed preparation, the next waits
//! `250 ms × 2^(failures-1)`, up to 30 s: an engine that fails is not hammered. One remover
//! thread removes, in order, what calls used and what the pool discarded. A slow or failing
//! removal therefore never delays a refill, and a refill never delays a removal.
//!
//! Wake-ups: a call that takes a container, a preparer that finishes, and shutdown set `dirty`
//! under the lock and notify. Otherwise the keeper sleeps until the next expiry, retry or
//! sweep is due.

use std::collections::VecDeque;
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::{self, JoinHandle};

use crate::call::HeldUntilEnd;
use std::time::{Duration, Instant};

use super::prepare::{self, Prepared};
use super::{Counters, Key, PoolConfig, PoolWorkload};
use crate::oci::OciRuntime;
use crate::oci::answer::Leftover;
use crate::oci::sweep;

/// First retry delay after a failed preparation; doubled per failure.
const BACKOFF_START: Duration = Duration::from_millis(250);
const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// How long shutdown waits for containers being prepared (then they remove themselves).
const SHUTDOWN_WAIT: Duration = Duration::from_secs(60);

/// Everything the pool's threads share.
pub(super) struct Shared {
    pub runtime: Arc<OciRuntime>,
    pub config: PoolConfig,
    pub state: Mutex<State>,
    pub wake: Condvar,
    pub counters: Arc<Counters>,
    pub removals: Removals,
}

/// The workload being prepared; `generation` changes with it.
#[derive(Clone)]
pub(super) struct Target {
    pub key: Key,
    pub workload: Arc<PoolWorkload>,
    pub generation: u64,
}

#[derive(Default)]
pub(super) struct State {
    pub target: Option<Target>,
    pub generation: u64,
    /// Oldest first.
    pub ready: VecDeque<Prepared>,
    pub creating: usize,
    /// Consecutive failed preparations, and when the next may start.
    pub failures: u32,
    pub retry_at: Option<Instant>,
    pub last_failure: Option<String>,
    pub shutdown: bool,
    /// Something changed since the keeper last looked.
    pub dirty: bool,
}

/// A container to remove, and what its call holds until the container's process has ended
/// (a server's worker slot and memory claim: see [`HeldUntilEnd`]).
type Removal = (Leftover, HeldUntilEnd);

/// The remover thread's queue.
pub(super) struct Removals {
    queue: Mutex<Option<Sender<Removal>>>,
    pub counters: Arc<Counters>,
}

impl Removals {
    /// The queue and its thread.
    pub fn start() -> (Removals, Option<JoinHandle<()>>) {
        let (tx, rx) = mpsc::channel::<Removal>();
        let counters = Arc::new(Counters::default());
        let mine = Arc::clone(&counters);
        let thread = thread::Builder::new()
            .name("apizr-oci-pool-remover".into())
            .spawn(move || {
                for (mut leftover, held) in rx {
                    let name = leftover.name().to_string();
                    let odd = leftover.check_after();
                    // The container's process has ended (or is being removed): its slot and
                    // memory claim are free.
                    drop(held);
                    if let Some(odd) = odd {
                        Counters::bump(&mine.anomalies, 1);
                        eprintln!(
                            "apizr: pool: container {name} answered, then showed what a fresh \
                             call would have refused its answer for: {odd}"
                        );
                    }
                    if let Err(e) = leftover.remove_quietly() {
                        Counters::bump(&mine.cleanup_failures, 1);
                        eprintln!(
                            "apizr: pool: could not remove container {name}: {e} (it keeps this \
                             server as its owner; a sweep removes it once the server is gone)"
                        );
                    }
                }
            })
            .ok();
        let queue = Mutex::new(thread.is_some().then_some(tx));
        (Removals { queue, counters }, thread)
    }

    /// Queue `leftover` for removal; removed here and now if the queue is closed.
    pub fn dispose(&self, leftover: Leftover) {
        self.dispose_holding(leftover, Box::new(()));
    }

    /// [`Removals::dispose`], keeping `held` until the container's process has ended.
    pub fn dispose_holding(&self, leftover: Leftover, held: HeldUntilEnd) {
        let queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        let rejected = match queue.as_ref() {
            Some(tx) => tx.send((leftover, held)).err().map(|e| e.0),
            None => Some((leftover, held)),
        };
        drop(queue);
        if let Some((leftover, _held)) = rejected {
            let name = leftover.name().to_string();
            if let Err(e) = leftover.remove_quietly() {
                Counters::bump(&self.counters.cleanup_failures, 1);
                eprintln!("apizr: pool: could not remove container {name}: {e}");
            }
        }
    }

    /// No more removals are queued; the remover finishes what it has and ends.
    pub fn close(&self) {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

/// Start the keeper thread.
pub(super) fn start(shared: Arc<Shared>) -> Option<JoinHandle<()>> {
    thread::Builder::new()
        .name("apizr-oci-pool".into())
        .spawn(move || keep(&shared))
        .ok()
}

fn keep(shared: &Arc<Shared>) {
    let config = shared.config;
    let mut next_sweep = Instant::now() + config.reap_every;
    loop {
        let mut state = shared.lock();
        if state.shutdown {
            return;
        }
        state.dirty = false;
        let now = Instant::now();
        let (fresh, expired): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut state.ready)
            .into_iter()
            .partition(|p: &Prepared| now.duration_since(p.ready_at) < config.max_idle);
        state.ready = fresh;
        let mut starts = 0;
        let target = state.target.clone();
        if target.is_some() && state.retry_at.is_none_or(|t| now >= t) {
            let missing = config
                .size
                .saturating_sub(state.ready.len() + state.creating);
            let room = config.max_creating.saturating_sub(state.creating);
            starts = missing.min(room);
            state.creating += starts;
        }
        drop(state);
        shared.discard(expired);
        if let Some(target) = target {
            for _ in 0..starts {
                spawn_preparer(shared, target.clone());
            }
        }
        if now >= next_sweep {
            reap(shared);
            next_sweep = Instant::now() + config.reap_every;
        }
        let state = shared.lock();
        if state.shutdown {
            return;
        }
        if state.dirty {
            continue;
        }
        let oldest = state.ready.front().map(|p| p.ready_at + config.max_idle);
        let until = [Some(next_sweep), state.retry_at, oldest]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(next_sweep);
        let timeout = until.saturating_duration_since(Instant::now());
        if !timeout.is_zero() {
            drop(shared.wake.wait_timeout(state, timeout));
        }
    }
}

/// Sweep what dead owners left (containers and bundles of killed servers and calls), as the
/// start-up sweep does; this pool's own containers have a live owner and are kept.
fn reap(shared: &Shared) {
    let Ok(connected) = shared.runtime.connected() else {
        return;
    };
    let report = sweep::sweep(&connected.pair.0, &shared.runtime.config.temp_root);
    let removed = report.removed.len() + report.bundles_removed.len();
    Counters::bump(&shared.counters.reaped, removed as u64);
    for failed in &report.failed {
        eprintln!(
            "apizr: pool sweep could not remove {}: {}",
            failed.item, failed.reason
        );
    }
}

fn spawn_preparer(shared: &Arc<Shared>, target: Target) {
    let mine = Arc::clone(shared);
    let spawned = thread::Builder::new()
        .name("apizr-oci-pool-prepare".into())
        .spawn(move || prepare_one(&mine, &target));
    if spawned.is_err() {
        let mut state = shared.lock();
        state.creating = state.creating.saturating_sub(1);
    }
}

fn prepare_one(shared: &Shared, target: &Target) {
    let result = match shared.runtime.connected() {
        Ok(connected) => prepare::prepare(
            connected,
            &target.workload.workload(),
            shared.config.max_idle,
            &shared.runtime.config.temp_root,
        ),
        Err(e) => Err(format!("engine: {e}")),
    };
    let mut state = shared.lock();
    state.dirty = true;
    let current = !state.shutdown
        && state
            .target
            .as_ref()
            .is_some_and(|t| t.generation == target.generation);
    let unused = match result {
        Ok(prepared) if current => {
            state.ready.push_back(prepared);
            state.failures = 0;
            state.retry_at = None;
            Counters::bump(&shared.counters.refills, 1);
            None
        }
        Ok(prepared) => Some(prepared),
        Err(why) => {
            state.failures = state.failures.saturating_add(1);
            let delay = backoff(state.failures);
            state.retry_at = Some(Instant::now() + delay);
            eprintln!(
                "apizr: pool: could not prepare a container: {why} (next attempt in {} ms)",
                delay.as_millis()
            );
            state.last_failure = Some(why);
            Counters::bump(&shared.counters.refill_failures, 1);
            None
        }
    };
    // A container prepared for nothing stays counted as being created until it is handed to
    // the removals: shutdown waits for `creating` to reach 0 and then closes the removals and
    // lets the process exit, so a preparer that still held one would remove it on a thread
    // the exit cuts short (a container left behind).
    if unused.is_none() {
        state.creating = state.creating.saturating_sub(1);
    }
    drop(state);
    shared.wake.notify_all();
    if unused.is_some() {
        shared.discard(unused);
        let mut state = shared.lock();
        state.creating = state.creating.saturating_sub(1);
        drop(state);
        shared.wake.notify_all();
    }
}

/// The delay before the next preparation after `failures` consecutive failures.
fn backoff(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    BACKOFF_START
        .saturating_mul(1u32 << doublings)
        .min(BACKOFF_MAX)
}

impl Shared {
    /// At shutdown (keeper stopped): remove what is ready, and wait (bounded) for the
    /// containers being prepared, which then remove themselves.
    pub fn drain_for_shutdown(&self) {
        let ready = std::mem::take(&mut self.lock().ready);
        self.discard(ready);
        let until = Instant::now() + SHUTDOWN_WAIT;
        let mut state = self.lock();
        while state.creating > 0 {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            state = self
                .wake
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        assert_eq!(backoff(1), Duration::from_millis(250));
        assert_eq!(backoff(2), Duration::from_millis(500));
        assert_eq!(backoff(5), Duration::from_secs(4));
        assert_eq!(backoff(9), BACKOFF_MAX);
        assert_eq!(backoff(u32::MAX), BACKOFF_MAX);
    }
}
