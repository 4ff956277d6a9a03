//! A docker-tier session: one container kept for the whole session, created, checked and
//! started exactly as a one-shot run's (the same body, the same controls compared in the
//! engine's record, the same labels), with the bootstrap in session mode.
//!
//! Rules:
//! * The code runs in a worker process PID 1 forked before it read anything from the host;
//!   PID 1 (not dumpable) alone sees each exchange's end marker and writes it after the call,
//!   so no call can end its own or another call early, or forge a status line the host reads.
//! * Each call's artifacts are the files it created or changed: PID 1 compares the workspace
//!   listing before and after the call and the host fetches the engine's archive only when
//!   it differs; files already reported (or copied in) with the same sha256 are not reported
//!   again. Files a failing call changed are recorded, not reported.
//! * `copy_in` sends each file through the attach stream to PID 1, which writes it one path
//!   component at a time with `O_NOFOLLOW` (a planted link fails the copy); `copy_out` reads
//!   the engine's archive of the workspace, where a link is a link entry, never followed.
//! * A call that times out, or whose worker dies, ends the session: the container is removed.
//!   So does closing it; a killed host closes the attach stream and PID 1 ends the container.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest as _, Sha256};

use super::super::artifacts::Caps;
use super::super::bootstrap::frame;
use super::super::capture;
use super::super::enforcement::EnforcementReport;
use super::super::local::Job;
use super::super::outcome::Produced;
use super::super::packages::PackageReport;
use super::super::policy::CapabilityPolicy;
use super::super::tar;
use super::super::tier::Tier;
use super::body::WORKSPACE_BYTES;
use super::exchange::{self, Streams};
use super::{Bundle, DockerTier, Purpose, Started, unix_now};
use crate::oci::bundle::random_hex;
use crate::oci::http;

/// How long one `copy_in` step may take.
const COPY_TIMEOUT: Duration = Duration::from_secs(60);

/// A live docker session's container.
pub(crate) struct DockerSession {
    started: Option<Started>,
    /// Bound at `/bundle`; kept as long as the container.
    _bundle: Bundle,
    /// The host directory of the calls' artifacts (removed with the session).
    artifacts_root: PathBuf,
    /// Files of the workspace already reported or copied in: name → (size, mtime, sha256).
    seen: BTreeMap<String, (u64, u64, String)>,
    /// The container's OOM kill count after the previous call.
    oom_kills: i32,
}

/// An opened session and what every call reports.
pub(crate) struct Opened {
    pub session: DockerSession,
    pub enforcement: EnforcementReport,
    pub packages: Option<PackageReport>,
    pub timeout: Duration,
}

impl DockerTier {
    /// Start a session container for `job` (its code is ignored); `artifacts_root` receives
    /// the calls' artifacts; `lifetime` bounds the container's expiry label (the sweep keeps
    /// a live owner's container anyway). A refusal is the result that says why.
    pub(crate) fn open_session(
        &self,
        tier: Tier,
        job: &Job<'_>,
        artifacts_root: &Path,
        lifetime: Duration,
    ) -> Result<Opened, Result<Box<super::super::result::ExecutionResult>, String>> {
        let prepared = self.prepare(tier, job).map_err(Ok)?;
        let mut request = prepared.request;
        request.session = true;
        let mut started = self
            .start(
                tier,
                job.policy,
                prepared.engine,
                prepared.image,
                prepared.bundle.path(),
                Purpose::Session(lifetime),
            )
            .map_err(Err)?;
        http::set_deadline(&started.attached.writer, Instant::now() + COPY_TIMEOUT)
            .map_err(|e| Err(e.to_string()))?;
        started
            .attached
            .writer
            .write_all(&request.frame())
            .map_err(|e| Err(format!("sending the session's set-up: {e}")))?;
        Ok(Opened {
            session: DockerSession {
                started: Some(started),
                _bundle: prepared.bundle,
                artifacts_root: artifacts_root.to_path_buf(),
                seen: BTreeMap::new(),
                oom_kills: 0,
            },
            enforcement: prepared.ctx.enforcement,
            packages: prepared.ctx.packages,
            timeout: prepared.timeout,
        })
    }
}

impl DockerSession {
    /// The container's name while it runs.
    pub fn container(&self) -> Option<&str> {
        self.started.as_ref().map(Started::name)
    }

    /// One exchange with PID 1: `kind`, a fresh marker, `payload`; read until the marker.
    fn send(
        &mut self,
        kind: u8,
        payload: &[u8],
        deadline: Instant,
        keep: (u64, u64),
    ) -> Result<Streams, String> {
        let started = self
            .started
            .as_mut()
            .ok_or("the session's container is gone")?;
        let nonce = random_hex().map_err(|e| e.to_string())?;
        let marker = exchange::marker(&nonce);
        let mut body = Vec::with_capacity(3 + marker.len() + payload.len());
        body.push(kind);
        body.extend_from_slice(&u16::try_from(marker.len()).unwrap_or(0).to_be_bytes());
        body.extend_from_slice(&marker);
        body.extend_from_slice(payload);
        Ok(started.attached.run(&frame(&body), &nonce, deadline, keep))
    }

    /// Run `code` until its end or `deadline`. `Err`: the exchange failed (the session must
    /// end); `Ok((produced, Some(why)))`: the call ended the session.
    pub fn call(
        &mut self,
        code: &str,
        deadline: Instant,
        policy: Option<&CapabilityPolicy>,
    ) -> Result<(Produced, Option<String>), String> {
        let keep = policy.map_or((capture::keep_for(None), capture::keep_for(None)), |p| {
            (
                capture::keep_for(p.stdout_max_bytes),
                capture::keep_for(p.stderr_max_bytes),
            )
        });
        let call_started = unix_now();
        let streams = self.send(b'c', code.as_bytes(), deadline, keep)?;
        let mut produced = Produced {
            stdout: streams.stdout,
            stderr: streams.stderr,
            timed_out: streams.timed_out,
            exit_signal: streams.signal,
            ..Produced::default()
        };
        if streams.timed_out {
            let why = "a call timed out and its container was killed".to_string();
            return Ok((produced, Some(why)));
        }
        if let Some(error) = streams.error {
            return Err(error);
        }
        produced.oom_killed = streams.oom_kills > self.oom_kills;
        self.oom_kills = streams.oom_kills;
        produced.exit_code = streams.status;
        if streams.ended {
            let why = format!(
                "the interpreter exited during a call (exit code {})",
                streams
                    .status
                    .map_or_else(|| "unknown".into(), |c| c.to_string())
            );
            return Ok((produced, Some(why)));
        }
        if streams.files {
            let started = self
                .started
                .as_ref()
                .ok_or("the session's container is gone")?;
            let (found, truncated, dir) = started.copy_out_new(
                &self.artifacts_root,
                None,
                policy,
                Caps::for_policy(policy),
                &mut self.seen,
                call_started.saturating_sub(1),
            )?;
            if streams.status == Some(0) {
                produced.artifacts = found;
                produced.artifacts_truncated = truncated;
                produced.working_directory = dir;
            } else if let Some(dir) = dir {
                // A failing call's files are recorded (never reported later), not reported.
                let _ = std::fs::remove_dir_all(dir);
            }
        }
        Ok((produced, None))
    }

    /// Create the directory (`data` `None`) or write the regular file `rel` beneath the
    /// workspace through PID 1 (no link followed on the way).
    pub fn put(&mut self, rel: &str, data: Option<&[u8]>) -> Result<(), String> {
        let bytes = data.unwrap_or_default();
        if bytes.len() as u64 > WORKSPACE_BYTES {
            return Err(format!(
                "larger than the workspace ({WORKSPACE_BYTES} bytes)"
            ));
        }
        let name = rel.as_bytes();
        let mut payload = Vec::with_capacity(2 + name.len() + bytes.len());
        payload.extend_from_slice(
            &u16::try_from(name.len())
                .map_err(|_| "the path is too long")?
                .to_be_bytes(),
        );
        payload.extend_from_slice(name);
        payload.extend_from_slice(bytes);
        let kind = if data.is_some() { b'f' } else { b'd' };
        let streams = self.send(kind, &payload, Instant::now() + COPY_TIMEOUT, (4096, 4096))?;
        if streams.timed_out {
            return Err("the copy timed out".into());
        }
        if let Some(error) = streams.error {
            return Err(error);
        }
        if streams.status != Some(0) {
            let text = String::from_utf8_lossy(&streams.stderr.head).into_owned();
            let reason = text
                .lines()
                .find_map(|l| l.strip_prefix("apizr-copy: "))
                .unwrap_or("the container refused the copy");
            return Err(reason.to_string());
        }
        if let Some(bytes) = data {
            // Copied in, so not an artifact of a later call (unless a call changes it).
            let sha = super::super::artifacts::hex(&Sha256::digest(bytes));
            self.seen
                .insert(rel.to_string(), (bytes.len() as u64, 0, sha));
        }
        Ok(())
    }

    /// Copy the workspace's regular file `source` out of the engine's archive (a link is a
    /// link entry there, never followed) to `destination`, which must not exist.
    pub fn copy_out(&self, source: &str, destination: &Path) -> Result<u64, String> {
        let started = self
            .started
            .as_ref()
            .ok_or("the session's container is gone")?;
        let reader = started.archive()?;
        let scratch = super::super::artifacts::private_dir(&self.artifacts_root, "copy-out")
            .map_err(|e| e.to_string())?;
        let scratch = super::Removed(scratch);
        let caps = Caps {
            max_count: 1,
            max_bytes: WORKSPACE_BYTES,
        };
        let extraction = tar::extract(reader, "workspace", &scratch.0, caps, |name, _, _| {
            name == source
        })?;
        let Some(file) = extraction.files.first() else {
            return Err(
                "not a regular file beneath the workspace (links are never followed)".into(),
            );
        };
        let mut from = std::fs::File::open(&file.path).map_err(|e| e.to_string())?;
        let mut to = std::fs::File::options()
            .write(true)
            .create_new(true)
            .open(destination)
            .map_err(|e| format!("{}: {e}", destination.display()))?;
        std::io::copy(&mut from, &mut to).map_err(|e| e.to_string())
    }

    /// Remove the container now; what could not be confirmed removed.
    pub fn close(&mut self) -> Vec<String> {
        let Some(started) = self.started.take() else {
            return Vec::new();
        };
        let Started { mut guard, .. } = started;
        match guard.remove() {
            Ok(()) => Vec::new(),
            Err(e) => vec![format!("container {}: {e}", guard.name())],
        }
    }
}

impl Drop for DockerSession {
    fn drop(&mut self) {
        let _ = self.close();
    }
}
