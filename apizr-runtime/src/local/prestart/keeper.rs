//! The keeper thread: starts workers until every key has `size` ready, discards the expired
//! and the doomed, forgets keys nobody called for a while. One worker is started at a time,
//! so the pool never competes with calls for more than one core's worth of start-up.

use std::time::{Duration, Instant};

use super::{ColdReason, Idle, Key, Shared, State, bump};
use crate::local::prepare::PrepareFailure;
use crate::local::process::{BOOT_TIMEOUT, WorkerProcess};

/// A key nobody called for this long keeps no workers (its next call goes cold and
/// registers it again).
const KEY_IDLE: Duration = Duration::from_secs(300);
/// After a failed start, the key's next attempt waits this long (no busy loop on a host
/// that cannot start workers).
const RETRY_AFTER: Duration = Duration::from_secs(1);

pub(super) fn run(shared: &Shared) {
    loop {
        let mut state = shared.lock();
        if state.stop {
            return;
        }
        let expired = expire(shared, &mut state);
        let mut doomed = std::mem::take(&mut state.doomed);
        doomed.extend(expired);
        let job = next_job(shared, &mut state);
        if doomed.is_empty() && job.is_none() {
            let tick = shared.config.max_idle.min(Duration::from_secs(5));
            let _ = shared.changed.wait_timeout(state, tick);
            continue;
        }
        drop(state);
        discard(shared, doomed);
        if let Some((key, epoch)) = job {
            start_one(shared, key, epoch);
        }
    }
}

/// Remove every idle worker (the pool is being dropped).
pub(super) fn drain(shared: &Shared) {
    let mut state = shared.lock();
    let mut doomed = std::mem::take(&mut state.doomed);
    for slot in state.slots.values_mut() {
        doomed.extend(slot.ready.drain(..).map(|idle| idle.process));
    }
    drop(state);
    let n = doomed.len() as u64;
    bump(&shared.counters.discarded, n);
    discard(shared, doomed);
}

/// Idle workers past the bound, and every worker of a key nobody calls any more.
fn expire(shared: &Shared, state: &mut State) -> Vec<WorkerProcess> {
    let max_idle = shared.config.max_idle;
    let epoch = state.epoch;
    let mut out = Vec::new();
    for slot in state.slots.values_mut() {
        let forgotten = slot.last_call.elapsed() > KEY_IDLE;
        let (keep, stale): (Vec<Idle>, Vec<Idle>) = slot.ready.drain(..).partition(|idle| {
            !forgotten && idle.epoch == epoch && idle.since.elapsed() <= max_idle
        });
        slot.ready = keep.into();
        out.extend(stale.into_iter().map(|idle| idle.process));
    }
    state
        .slots
        .retain(|_, slot| slot.last_call.elapsed() <= KEY_IDLE || slot.starting > 0);
    bump(&shared.counters.discarded, out.len() as u64);
    out
}

/// The key that needs a worker most (fewest ready), marked as starting one.
fn next_job(shared: &Shared, state: &mut State) -> Option<(Key, u64)> {
    let now = Instant::now();
    let size = shared.config.size;
    let epoch = state.epoch;
    let (key, slot) = state
        .slots
        .iter_mut()
        .filter(|(_, s)| s.ready.len() + s.starting < size)
        .filter(|(_, s)| s.retry_at.is_none_or(|t| now >= t))
        .min_by_key(|(_, s)| s.ready.len() + s.starting)?;
    slot.starting += 1;
    Some((key.clone(), epoch))
}

/// How starting one worker ended.
enum Started {
    /// Ready; whether it imported the module ahead.
    Ready(Box<WorkerProcess>, bool),
    /// The worker could not be started.
    Failed(String),
    /// It started but its import ahead failed (discarded): pre-import stops for the key.
    ImportFailed(ColdReason),
}

fn start_one(shared: &Shared, key: Key, epoch: u64) {
    let inputs = {
        let state = shared.lock();
        state.slots.get(&key).map(|s| {
            let payload = s.preimport.as_ref().ok().cloned();
            (
                s.policy.clone(),
                s.plan.clone(),
                s.host.clone(),
                s.program.clone(),
                payload,
            )
        })
    };
    let started = inputs.map(|(policy, plan, host, program, payload)| {
        let mut process = match shared.factory.start(&policy, &plan, &host, &program) {
            Ok(process) => process,
            Err(e) => return Started::Failed(e.to_string()),
        };
        // Ready means the interpreter has read the whole worker.
        if !process.started.wait_booted(BOOT_TIMEOUT) {
            let failed = process.discard();
            return Started::Failed(format!("the worker did not start; clean-up: {failed:?}"));
        }
        let Some(payload) = payload else {
            return Started::Ready(Box::new(process), false);
        };
        // The import ahead gets the policy's wall time, as the call's own import would.
        let bound = Duration::from_millis(policy.limits.wall_time_ms);
        match process.started.prepare(&payload, bound) {
            Ok(()) => Started::Ready(Box::new(process), true),
            Err(failure) => {
                discard(shared, vec![process]);
                Started::ImportFailed(match failure {
                    PrepareFailure::Failed => ColdReason::ImportFailed,
                    PrepareFailure::TimedOut => ColdReason::ImportTimedOut,
                })
            }
        }
    });
    let mut state = shared.lock();
    let stale = state.epoch != epoch || state.stop;
    let Some(slot) = state.slots.get_mut(&key) else {
        drop(state);
        if let Some(Started::Ready(process, _)) = started {
            discard(shared, vec![*process]);
        }
        return;
    };
    slot.starting = slot.starting.saturating_sub(1);
    match started {
        Some(Started::Ready(process, preimported)) if !stale => {
            slot.ready.push_back(Idle {
                process: *process,
                since: Instant::now(),
                epoch,
                preimported,
            });
            slot.retry_at = None;
            bump(&shared.counters.refills, 1);
            shared.changed.notify_all();
        }
        Some(Started::Ready(process, _)) => state.doomed.push(*process),
        Some(Started::ImportFailed(why)) => {
            // The same bytes would fail the same way (or take as long) again: the module's
            // calls import with their request from now on, and say why.
            if slot.preimport.is_ok() {
                slot.preimport = Err(why);
            }
            bump(&shared.counters.import_failures, 1);
            eprintln!(
                "apizr: a pre-started v1 worker could not import its module ahead of its call \
                 ({why:?}); that module's calls import it with their request"
            );
        }
        Some(Started::Failed(why)) => {
            slot.retry_at = Some(Instant::now() + RETRY_AFTER);
            bump(&shared.counters.refill_failures, 1);
            eprintln!("apizr: could not pre-start a v1 worker: {why}");
        }
        None => {}
    }
}

fn discard(shared: &Shared, doomed: Vec<WorkerProcess>) {
    for process in doomed {
        let failed = process.discard();
        if !failed.is_empty() {
            bump(&shared.counters.cleanup_failures, 1);
            for failure in failed {
                eprintln!("apizr: removing a pre-started worker: {failure}");
            }
        }
    }
}
