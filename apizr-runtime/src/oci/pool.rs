//! A pool of pre-started, never-reused containers for servers (beyond the reference).
//!
//! Fresh-per-call semantics are kept: every container serves exactly one call and is removed
//! after it, exactly like [`OciRuntime::execute`]. What moves off the call's critical path is
//! the container's creation, start and the interpreter's start-up: a prepared container is
//! created, attached and started ahead of time for one (image, policy, executable) key and its
//! worker waits for its request on stdin. After a call takes one, a background thread prepares
//! the next. Prepared containers older than [`MAX_IDLE`] are discarded (removed) instead of
//! used, so a pooled container never outlives its expiry label (see `sweep`).
//!
//! Difference from the per-call path: the call's wall deadline starts when the request is
//! written, not when the container is created (the container already exists).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use apizr_ir::policy_v2::PolicyV2;

use super::engine::CALL_TIMEOUT;
use super::run::{self, Launched};
use super::{OciCall, OciOutcome, OciReport, OciRuntime, RuntimeImage, ms};
use crate::request::CallRequest;

/// A prepared container older than this is removed instead of used.
pub const MAX_IDLE: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    image: String,
    policy: Vec<u8>,
    executable: String,
    path: String,
    original: String,
}

impl Key {
    fn of(call: &OciCall<'_>) -> Option<Key> {
        let original = call.original.unwrap_or(&call.call.executable.bytes);
        Some(Key {
            image: call.image.image.clone(),
            policy: call.policy.canonical_bytes().ok()?,
            executable: call.call.executable.digest.value.clone(),
            path: call.call.executable_path(),
            original: apizr_ir::Digest::sha256(original).value,
        })
    }
}

struct Prepared {
    launched: Launched,
    ready_at: Instant,
}

type Ready = Arc<Mutex<HashMap<Key, Vec<Prepared>>>>;

/// Pre-started single-use containers in front of an [`OciRuntime`].
pub struct OciPool {
    runtime: Arc<OciRuntime>,
    depth: usize,
    ready: Ready,
}

impl std::fmt::Debug for OciPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OciPool")
            .field("depth", &self.depth)
            .finish_non_exhaustive()
    }
}

impl OciPool {
    /// Keep up to `depth` prepared containers per key (at least one).
    pub fn new(runtime: OciRuntime, depth: usize) -> Self {
        OciPool {
            runtime: Arc::new(runtime),
            depth: depth.max(1),
            ready: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// Execute one call, in a prepared container when one is ready, else in a fresh one; then
    /// prepare the next in the background.
    pub fn execute(&self, call: OciCall<'_>) -> OciOutcome {
        let start = Instant::now();
        let deadline = start + Duration::from_millis(call.policy.limits.wall_time_ms);
        let mut report = OciReport::default();
        let envelope = match self.runtime.precheck(&call, start, &mut report) {
            Err(envelope) => envelope,
            Ok((connected, programs)) => match run::encode_payload(&call, programs) {
                Err(envelope) => envelope,
                Ok(payload) => {
                    let key = Key::of(&call);
                    let prepared = key.as_ref().and_then(|k| self.take(k));
                    let launched = match prepared {
                        Some(p) => {
                            report.container = Some(p.guard.name().to_string());
                            Ok(p)
                        }
                        None => run::launch(
                            connected,
                            &call,
                            &self.runtime.config.temp_root,
                            deadline,
                            &mut report,
                        ),
                    };
                    if let Some(key) = key {
                        self.refill(key, &call);
                    }
                    match launched {
                        Ok(l) => run::finish(connected, l, payload, &call, deadline, &mut report),
                        Err(envelope) => envelope,
                    }
                }
            },
        };
        report.timings.total_ms = ms(start);
        OciOutcome { envelope, report }
    }

    /// Prepare containers for `call`'s key now (e.g. at server start-up), up to the depth.
    pub fn warm(&self, call: OciCall<'_>) {
        if let Some(key) = Key::of(&call) {
            self.refill(key, &call);
        }
    }

    /// Names of the containers prepared and waiting (for reports and tests).
    pub fn prepared_names(&self) -> Vec<String> {
        let ready = self.ready.lock().unwrap_or_else(PoisonError::into_inner);
        ready
            .values()
            .flatten()
            .map(|p| p.launched.guard.name().to_string())
            .collect()
    }

    fn take(&self, key: &Key) -> Option<Launched> {
        let mut ready = self.ready.lock().unwrap_or_else(PoisonError::into_inner);
        let list = ready.get_mut(key)?;
        while let Some(p) = list.pop() {
            if p.ready_at.elapsed() < MAX_IDLE {
                return Some(p.launched);
            }
            // Too old: dropping it removes the container.
        }
        None
    }

    fn refill(&self, key: Key, call: &OciCall<'_>) {
        let have = self
            .ready
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            .map_or(0, Vec::len);
        if have >= self.depth {
            return;
        }
        let runtime = Arc::clone(&self.runtime);
        let ready = Arc::clone(&self.ready);
        let request: CallRequest = call.call.clone();
        let policy: PolicyV2 = call.policy.clone();
        let image: RuntimeImage = call.image.clone();
        let original: Option<Vec<u8>> = call.original.map(<[u8]>::to_vec);
        thread::spawn(move || {
            let Ok(connected) = runtime.connected() else {
                return;
            };
            let call = OciCall {
                call: &request,
                policy: &policy,
                image: &image,
                original: original.as_deref(),
            };
            let mut scratch = OciReport::default();
            let deadline = Instant::now() + CALL_TIMEOUT;
            if let Ok(launched) = run::launch(
                connected,
                &call,
                &runtime.config.temp_root,
                deadline,
                &mut scratch,
            ) {
                let mut ready = ready.lock().unwrap_or_else(PoisonError::into_inner);
                ready.entry(key).or_default().push(Prepared {
                    launched,
                    ready_at: Instant::now(),
                });
            }
        });
    }
}
