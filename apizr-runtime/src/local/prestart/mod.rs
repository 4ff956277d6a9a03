//! Pre-started single-use workers for v1 calls in servers.
//!
//! For each (policy digest, executable digest) a server keeps up to `size` workers already
//! started through the cold path ([`Factory::start`]: launcher, namespaces, per-call uid,
//! cgroups, Landlock, seccomp, the interpreter with the worker loaded, waiting on stdin). A
//! call takes one and sends it its request; the worker serves that one call and exits, and
//! the keeper thread ([`keeper`]) starts a replacement. Every call still gets a brand-new
//! process — its own address-space layout, hash seed, uid, `/tmp` and cgroups — so the
//! guarantees are the cold path's, from one implementation of every control; the call only
//! skips the launcher's and the interpreter's start-up.
//!
//! Why not a forked template: every fork of one interpreter shares its address-space layout
//! and `str` hash seed, the per-call controls would need a second implementation in Python
//! (Rust cannot fork a warm CPython with `unsafe_code` denied), and the measured fork ceiling
//! on a 2-core host is a few hundred calls per second anyway.
//!
//! What the pool never does: give a worker to a second call, keep a worker idle longer than
//! `max_idle` (it is discarded and replaced), or serve a worker that exited early or was
//! started before the host's facts were invalidated — such a call goes cold and its report
//! says why ([`ColdReason`]). The call's deadline counts from the hand-over of its request.
//! A killed server leaks nothing: each idle worker's launcher holds the server's pidfd as its
//! lifeline and removes the worker, its directory and cgroups when the server dies; the
//! start-up sweep removes what a crashed launcher could not (owner checked dead first).
//!
//! Pre-import: when readiness shows the module's import changes nothing a call could observe
//! ([`ImportTime::Harmless`](apizr_ir::import_time::ImportTime)), the keeper also has each
//! new worker import the module before it counts as ready ([`crate::local::prepare`]: the
//! worker is inside every control by then). The key holds the module, so a worker only ever
//! serves the module it imported. An import that fails or passes the policy's wall time
//! discards the worker and stops pre-import for the key (its calls then import with their
//! request, in pre-started workers, as on the cold path: the status and report are the ones
//! the cold path gives, and the report's `cold_reason` says why the import was not ahead).

mod keeper;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use apizr_ir::Digest;
use apizr_ir::policy::PolicyV1;
use serde::Serialize;

use crate::local::enforcement::EnforcementPlan;
use crate::local::host::HostCapabilities;
use crate::local::process::{Factory, WorkerProcess};
use crate::local::program::Program;
use crate::request::CallRequest;

/// Pre-started workers a server keeps per key (policy and source: one served module, whose
/// capabilities share them) unless told otherwise.
pub const DEFAULT_SIZE: usize = 2;
/// A pre-started worker idle longer than this is discarded and replaced (so no process waits
/// for hours with state the host may have changed under it, e.g. a rotated interpreter).
pub const MAX_IDLE: Duration = Duration::from_secs(45);
/// When a pre-started worker imports its module ahead of the call (`apizr doctor`).
pub const PREIMPORT_RULE: &str = "the module is imported ahead (pre-import) when its readiness \
    shows no import-time effects (no READY-004 or READY-015 under the readiness it is served \
    with); an import ahead that fails or passes the policy's wall time stops pre-import for \
    that module (metrics: apizr_v1_pool_preimported_total, apizr_v1_pool_import_failures_total)";
/// The environment variable that sizes the pool when no flag does (`0`: off).
pub const SIZE_ENV: &str = "APIZR_V1_PRESTART";

/// How the pool is sized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrestartConfig {
    /// Workers kept ready per key (0: off).
    pub size: usize,
    pub max_idle: Duration,
    /// A call that finds no ready worker waits this long for one before going cold
    /// (`None`: never waits; tests use it to serve every call through the pool).
    pub wait: Option<Duration>,
}

impl PrestartConfig {
    pub fn with_size(size: usize) -> PrestartConfig {
        PrestartConfig {
            size,
            max_idle: MAX_IDLE,
            wait: None,
        }
    }
}

/// How a call's worker process was obtained (in the call report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcessSource {
    /// Started for this call.
    Cold,
    /// Started ahead of the call by the pool, through the same path.
    Prestarted,
}

/// Why a call went cold although the runtime has a pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ColdReason {
    /// No worker was ready (the first call of a key, or more calls than workers).
    Empty,
    /// The ready worker had been idle longer than the bound (discarded).
    Expired,
    /// The ready worker had exited before its request (discarded, counted as an anomaly).
    Exited,
    /// The worker was started before the host's facts were invalidated (discarded).
    ProbeChanged,
    /// The policy has no digest, so calls cannot be matched to workers.
    NoKey,
    /// Pre-import refused: readiness found import-time effects (READY-004 or READY-015).
    ImportEffects,
    /// Pre-import refused: no readiness for this source.
    ImportUnknown,
    /// Pre-import stopped for the module: an import ahead of a call failed.
    ImportFailed,
    /// Pre-import stopped for the module: an import ahead of a call passed the wall time.
    ImportTimedOut,
}

/// The pool's counters and gauges (`/metrics`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrestartStats {
    pub size: usize,
    pub keys: usize,
    pub ready: usize,
    pub starting: usize,
    pub hits: u64,
    pub misses: u64,
    pub refills: u64,
    pub discarded: u64,
    pub refill_failures: u64,
    pub cleanup_failures: u64,
    pub anomalies: u64,
    /// Hits served by a worker that had imported the module ahead.
    pub preimported: u64,
    /// Imports ahead that failed or timed out (each stops pre-import for its module).
    pub import_failures: u64,
}

impl PrestartStats {
    /// Two pools' counters as one (a server with several sources).
    pub fn merged(&self, other: &PrestartStats) -> PrestartStats {
        PrestartStats {
            size: self.size.max(other.size),
            keys: self.keys + other.keys,
            ready: self.ready + other.ready,
            starting: self.starting + other.starting,
            hits: self.hits + other.hits,
            misses: self.misses + other.misses,
            refills: self.refills + other.refills,
            discarded: self.discarded + other.discarded,
            refill_failures: self.refill_failures + other.refill_failures,
            cleanup_failures: self.cleanup_failures + other.cleanup_failures,
            anomalies: self.anomalies + other.anomalies,
            preimported: self.preimported + other.preimported,
            import_failures: self.import_failures + other.import_failures,
        }
    }
}

/// A pool key: (policy digest, digest of what runs — the served executable under its module
/// name for the v1 worker, whose pre-import binds it to that module; the bootstrap and its
/// settings for the code interpreter).
pub(crate) type Key = (Digest, Digest);

struct Idle {
    process: WorkerProcess,
    since: Instant,
    epoch: u64,
    preimported: bool,
}

/// A worker taken for a call.
#[derive(Debug)]
pub(crate) struct Taken {
    pub process: WorkerProcess,
    /// Whether it imported the module ahead, or why not.
    pub preimport: Result<(), ColdReason>,
}

/// One key's workers and what starting another needs.
struct Slot {
    policy: PolicyV1,
    /// What the key's processes run (the v1 worker, or the interpreter's bootstrap).
    program: Program,
    plan: EnforcementPlan,
    host: HostCapabilities,
    ready: VecDeque<Idle>,
    starting: usize,
    last_call: Instant,
    /// After a failed start, no retry before this.
    retry_at: Option<Instant>,
    /// The prepare frame's payload new workers import the module with, or why they do not.
    preimport: Result<Arc<[u8]>, ColdReason>,
}

#[derive(Default)]
struct State {
    slots: HashMap<Key, Slot>,
    /// Bumped when the host's facts are invalidated: older workers are not served.
    epoch: u64,
    stop: bool,
    /// Workers to kill and clean up (off the calling thread).
    doomed: Vec<WorkerProcess>,
}

#[derive(Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    refills: AtomicU64,
    discarded: AtomicU64,
    refill_failures: AtomicU64,
    cleanup_failures: AtomicU64,
    anomalies: AtomicU64,
    preimported: AtomicU64,
    import_failures: AtomicU64,
}

struct Shared {
    factory: Arc<Factory>,
    config: PrestartConfig,
    state: Mutex<State>,
    /// Signalled when a worker is taken or added, and on stop.
    changed: Condvar,
    counters: Counters,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn bump(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

/// The pool: shared state plus the keeper thread that refills and expires it.
pub(crate) struct Pool {
    shared: Arc<Shared>,
    keeper: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

impl Pool {
    /// Start the keeper; keys are registered by their first call (which goes cold).
    pub fn start(factory: Arc<Factory>, config: PrestartConfig) -> std::io::Result<Pool> {
        let shared = Arc::new(Shared {
            factory,
            config,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            counters: Counters::default(),
        });
        let keeper = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("apizr-v1-prestart".into())
                .spawn(move || keeper::run(&shared))?
        };
        Ok(Pool {
            shared,
            keeper: Some(keeper),
        })
    }

    /// A ready worker for `call`, or why there is none (the call then goes cold). The key is
    /// registered either way, so the keeper starts workers for it; `preimport` gives a new
    /// key's prepare payload, or why its workers do not import the module ahead.
    pub fn take(
        &self,
        call: &CallRequest,
        plan: &EnforcementPlan,
        host: &HostCapabilities,
        preimport: impl FnOnce() -> Result<Vec<u8>, ColdReason>,
    ) -> Result<Taken, ColdReason> {
        let Ok(policy_digest) = call.policy.digest() else {
            return Err(ColdReason::NoKey);
        };
        // A pre-imported worker holds its module: the module name is part of what runs.
        let runs = Digest::sha256(
            format!("{}\0{}", call.executable.digest.prefixed(), call.module).as_bytes(),
        );
        let key = (policy_digest, runs);
        self.take_inner(key, &call.policy, &Program::Worker, plan, host, preimport)
    }

    /// A ready process of `program` for `key`, or why there is none; the same rules as
    /// [`Pool::take`] (the code interpreter's `local` runs use it with their own key; its
    /// processes never import anything ahead).
    #[cfg_attr(not(feature = "interpreter"), allow(dead_code))]
    pub fn take_program(
        &self,
        key: Key,
        policy: &PolicyV1,
        program: &Program,
        plan: &EnforcementPlan,
        host: &HostCapabilities,
    ) -> Result<WorkerProcess, ColdReason> {
        let never = || Err(ColdReason::ImportUnknown);
        self.take_inner(key, policy, program, plan, host, never)
            .map(|taken| taken.process)
    }

    fn take_inner(
        &self,
        key: Key,
        policy: &PolicyV1,
        program: &Program,
        plan: &EnforcementPlan,
        host: &HostCapabilities,
        preimport: impl FnOnce() -> Result<Vec<u8>, ColdReason>,
    ) -> Result<Taken, ColdReason> {
        let shared = &self.shared;
        let mut preimport = Some(preimport);
        let now = Instant::now();
        let wait_until = shared.config.wait.map(|w| now + w);
        let mut state = shared.lock();
        let epoch = state.epoch;
        let mut reason = ColdReason::Empty;
        loop {
            let slot = state.slots.entry(key.clone()).or_insert_with(|| Slot {
                policy: policy.clone(),
                program: program.clone(),
                plan: plan.clone(),
                host: host.clone(),
                ready: VecDeque::new(),
                starting: 0,
                last_call: now,
                retry_at: None,
                preimport: match preimport.take() {
                    Some(payload) => payload().map(Arc::from),
                    None => Err(ColdReason::ImportUnknown),
                },
            });
            slot.last_call = now;
            let refused = slot.preimport.as_ref().err().copied();
            let mut doomed = Vec::new();
            let mut found = None;
            while let Some(mut idle) = slot.ready.pop_front() {
                let why = if idle.epoch != epoch {
                    Some(ColdReason::ProbeChanged)
                } else if idle.since.elapsed() > shared.config.max_idle {
                    Some(ColdReason::Expired)
                } else if idle.process.started.exited() {
                    bump(&shared.counters.anomalies, 1);
                    Some(ColdReason::Exited)
                } else {
                    None
                };
                match why {
                    None => {
                        found = Some(Taken {
                            process: idle.process,
                            preimport: match (idle.preimported, refused) {
                                (true, _) => Ok(()),
                                (false, why) => Err(why.unwrap_or(ColdReason::ImportUnknown)),
                            },
                        });
                        break;
                    }
                    Some(why) => {
                        reason = why;
                        doomed.push(idle.process);
                    }
                }
            }
            let n = doomed.len() as u64;
            state.doomed.extend(doomed);
            bump(&shared.counters.discarded, n);
            shared.changed.notify_all();
            if let Some(taken) = found {
                bump(&shared.counters.hits, 1);
                if taken.preimport.is_ok() {
                    bump(&shared.counters.preimported, 1);
                }
                return Ok(taken);
            }
            let left = wait_until.and_then(|t| t.checked_duration_since(Instant::now()));
            match left {
                Some(left) if !state.stop => {
                    state = shared
                        .changed
                        .wait_timeout(state, left)
                        .map(|(s, _)| s)
                        .unwrap_or_else(|p| p.into_inner().0);
                }
                _ => {
                    bump(&shared.counters.misses, 1);
                    return Err(reason);
                }
            }
        }
    }

    /// The host's facts were invalidated (a launcher failed a set-up the probe promised):
    /// no worker started before is served.
    pub fn invalidate(&self) {
        let mut state = self.shared.lock();
        state.epoch = state.epoch.wrapping_add(1);
        self.shared.changed.notify_all();
    }

    pub fn stats(&self) -> PrestartStats {
        let shared = &self.shared;
        let state = shared.lock();
        let c = &shared.counters;
        PrestartStats {
            size: shared.config.size,
            keys: state.slots.len(),
            ready: state.slots.values().map(|s| s.ready.len()).sum(),
            starting: state.slots.values().map(|s| s.starting).sum(),
            hits: c.hits.load(Ordering::Relaxed),
            misses: c.misses.load(Ordering::Relaxed),
            refills: c.refills.load(Ordering::Relaxed),
            discarded: c.discarded.load(Ordering::Relaxed),
            refill_failures: c.refill_failures.load(Ordering::Relaxed),
            cleanup_failures: c.cleanup_failures.load(Ordering::Relaxed),
            anomalies: c.anomalies.load(Ordering::Relaxed),
            preimported: c.preimported.load(Ordering::Relaxed),
            import_failures: c.import_failures.load(Ordering::Relaxed),
        }
    }
}

impl Drop for Pool {
    /// Stop the keeper and remove every idle worker (a server that exits without dropping
    /// the pool is covered by each launcher's lifeline).
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.changed.notify_all();
        if let Some(keeper) = self.keeper.take() {
            let _ = keeper.join();
        }
        keeper::drain(&self.shared);
    }
}
