//! What a call still owns after its answer: the exiting process ([`Tail`]), its cgroups,
//! working directory and identity. [`AfterAnswer::run`] awaits the exit, then removes them in
//! the same order as a call answered at its end (process gone → cgroups → directory →
//! identity released), so nothing leaks and no uid is reused while a process of the call
//! lives.
//!
//! A server runs it on a thread of its own ([`Tails`]), so the caller is answered as soon as
//! the frame is read; `apizr execute` and other one-shot users run it inline. Either way it
//! is awaited and checked: an anomaly (see [`Ending::anomaly`]) is counted, logged and
//! recorded in the call's audit `exit`, never turned into a different answer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::audit::{AuditRecord, AuditSink};
use crate::call::HeldUntilEnd;
use crate::local::answer::{log_after_answer, take};

use crate::local::cgroup::CallCgroups;
use crate::local::identity::CallId;
use crate::local::supervisor::{Ending, TAIL_GRACE, Tail, describe_exit};
use crate::local::workdir::WorkDir;

/// The rest of a call answered on its frame.
#[derive(Debug)]
pub(crate) struct AfterAnswer {
    pub tail: Tail,
    pub cgroups: Option<CallCgroups>,
    pub workdir: WorkDir,
    pub call_id: Option<CallId>,
}

/// What [`AfterAnswer::run`] observed.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Reaped {
    /// `exit N` / `signal N`, as observed.
    pub exit: Option<String>,
    pub anomaly: Option<String>,
    /// Clean-up that failed (never reported as removed).
    pub cleanup: Vec<String>,
}

impl AfterAnswer {
    pub fn run(self) -> Reaped {
        let AfterAnswer {
            tail,
            cgroups,
            workdir,
            call_id,
        } = self;
        let ending: Ending = tail.finish(TAIL_GRACE);
        let mut cleanup = Vec::new();
        if let Some(groups) = cgroups
            && let Err(failed) = groups.destroy()
        {
            cleanup.extend(failed);
        }
        if let Err(e) = workdir.remove() {
            cleanup.push(format!("working directory: {e}"));
        }
        drop(call_id);
        Reaped {
            exit: ending.exit.map(describe_exit),
            anomaly: ending.anomaly(),
            cleanup,
        }
    }
}

/// The end of one call answered on its frame, with what records it.
pub(crate) struct End {
    pub after: AfterAnswer,
    pub tails: Arc<Tails>,
    /// The call's audit record, written once the exit is known.
    pub record: Option<(Arc<dyn AuditSink>, AuditRecord)>,
    pub capability: String,
    /// Released once the process has ended and been cleaned up (a server's admission slot).
    pub held: HeldUntilEnd,
}

impl End {
    /// Await the end on a thread of its own (`background`; `None` is returned) or here (what
    /// was observed is returned). Either way it is counted, logged when abnormal, and audited.
    pub fn run(self, background: bool) -> Option<Reaped> {
        let tails = self.tails.clone();
        let job = Arc::new(Mutex::new(Some(self)));
        if background {
            tails.begin();
            let (ending, job) = (tails.clone(), job.clone());
            let spawned = std::thread::Builder::new()
                .name("apizr-v1-after".into())
                .spawn(move || {
                    if let Some(end) = take(&job) {
                        end.now();
                    }
                    ending.end();
                });
            if spawned.is_ok() {
                return None;
            }
            // No thread: the end is awaited here instead.
            tails.end();
        }
        take(&job).map(End::now)
    }

    fn now(self) -> Reaped {
        let End {
            after,
            tails,
            record,
            capability,
            held,
        } = self;
        let reaped = after.run();
        // The process is gone and cleaned up: its admission slot and memory claim are free.
        drop(held);
        tails.record(&reaped);
        log_after_answer(&reaped, &capability);
        if let Some((sink, mut record)) = record {
            record.exit.clone_from(&reaped.exit);
            let _ = sink.record(&record);
        }
        reaped
    }
}

/// Counters of calls answered on their frame (`/metrics`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AfterAnswerStats {
    /// Calls answered on their response frame, before their process had exited.
    pub answered_on_frame: u64,
    /// Of those, the ones whose process then did something abnormal (see
    /// [`Ending::anomaly`]): killed after the grace, ended non-zero, wrote after its frame.
    pub anomalies: u64,
    /// Clean-ups after an answer that failed.
    pub cleanup_failures: u64,
    /// Calls whose process is still being awaited.
    pub pending: u64,
}

impl AfterAnswerStats {
    /// Two runtimes' counters as one (a server with several sources).
    pub fn merged(&self, other: &AfterAnswerStats) -> AfterAnswerStats {
        AfterAnswerStats {
            answered_on_frame: self.answered_on_frame + other.answered_on_frame,
            anomalies: self.anomalies + other.anomalies,
            cleanup_failures: self.cleanup_failures + other.cleanup_failures,
            pending: self.pending + other.pending,
        }
    }
}

/// The background ends of one runtime's calls: how many are running, and their counters.
#[derive(Debug, Default)]
pub(crate) struct Tails {
    pending: Mutex<u64>,
    done: Condvar,
    answered_on_frame: AtomicU64,
    anomalies: AtomicU64,
    cleanup_failures: AtomicU64,
}

impl Tails {
    /// Count one call answered on its frame and what its end showed.
    pub fn record(&self, reaped: &Reaped) {
        self.answered_on_frame.fetch_add(1, Ordering::Relaxed);
        if reaped.anomaly.is_some() {
            self.anomalies.fetch_add(1, Ordering::Relaxed);
        }
        if !reaped.cleanup.is_empty() {
            self.cleanup_failures.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, u64> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Mark one end as running; [`Tails::end`] must follow.
    pub fn begin(&self) {
        *self.lock() += 1;
    }

    pub fn end(&self) {
        let mut pending = self.lock();
        *pending = pending.saturating_sub(1);
        self.done.notify_all();
    }

    /// Wait until no end is running, at most `timeout`; true when none is.
    pub fn settle(&self, timeout: Duration) -> bool {
        let until = Instant::now() + timeout;
        let mut pending = self.lock();
        while *pending > 0 {
            let Some(left) = until.checked_duration_since(Instant::now()) else {
                return false;
            };
            pending = self
                .done
                .wait_timeout(pending, left)
                .map(|(p, _)| p)
                .unwrap_or_else(|p| p.into_inner().0);
        }
        true
    }

    pub fn stats(&self) -> AfterAnswerStats {
        AfterAnswerStats {
            answered_on_frame: self.answered_on_frame.load(Ordering::Relaxed),
            anomalies: self.anomalies.load(Ordering::Relaxed),
            cleanup_failures: self.cleanup_failures.load(Ordering::Relaxed),
            pending: *self.lock(),
        }
    }
}
