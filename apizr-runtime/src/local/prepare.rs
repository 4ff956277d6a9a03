//! Pre-import: a pre-started worker imports its module before its call (PROTOCOL.md,
//! "Pre-import").
//!
//! The worker is already inside every control when its module's top level runs: identity,
//! namespaces, Landlock and the baseline seccomp filter are applied by the launcher before
//! the interpreter is exec'd (`launcher/init.rs`), its cgroups hold it from the spawn, and the
//! subprocess seccomp programs travel in the prepare frame and are installed by the worker
//! before the import, exactly as the request installs them on the cold path.
//!
//! The supervisor writes the prepare frame after the boot frame and reads the worker's
//! readiness frame ([`PREPARED_PAYLOAD`]) from its response channel, within a bound. Anything
//! else (an exit, other bytes, the bound passed) fails the pre-import: the pool discards the
//! worker, and calls import the module with their request, as on the cold path.

use std::io::{Read, Write};
use std::process::{ChildStdin, ChildStdout};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use nix::unistd::Pid;
use serde::Serialize;

use crate::local::supervisor::kill_group;
use crate::protocol::{PREPARED_PAYLOAD, encode_frame};

/// Why a pre-import did not complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PrepareFailure {
    /// The worker exited, wrote something else, or its pipes were gone.
    Failed,
    /// The import did not finish within its bound (the worker's group is killed).
    TimedOut,
}

/// Write `payload` framed to the worker's stdin and wait at most `timeout` for its readiness
/// frame on stdout. The pipes are handed back either way; on failure the process group has
/// been killed when it may still run.
pub(crate) fn prepare(
    stdin: &mut Option<ChildStdin>,
    stdout: &mut Option<ChildStdout>,
    pgid: Option<Pid>,
    payload: &[u8],
    timeout: Duration,
) -> Result<(), PrepareFailure> {
    let (Some(mut pipe), Some(mut out)) = (stdin.take(), stdout.take()) else {
        return Err(PrepareFailure::Failed);
    };
    let frame = encode_frame(payload);
    // The frame may be larger than the pipe's buffer: written on a thread, so a worker that
    // stops reading cannot hold the pool's keeper past the bound.
    let writer = thread::spawn(move || {
        let ok = frame
            .chunks(64 * 1024)
            .all(|chunk| pipe.write_all(chunk).is_ok());
        (pipe, ok)
    });
    let (tx, rx) = mpsc::channel();
    let reader = thread::spawn(move || {
        let want = encode_frame(PREPARED_PAYLOAD);
        let mut got = vec![0u8; want.len()];
        let ok = out.read_exact(&mut got).is_ok() && got == want;
        let _ = tx.send(ok);
        out
    });
    let verdict = match rx.recv_timeout(timeout) {
        Ok(true) => Ok(()),
        Ok(false) | Err(mpsc::RecvTimeoutError::Disconnected) => Err(PrepareFailure::Failed),
        Err(mpsc::RecvTimeoutError::Timeout) => Err(PrepareFailure::TimedOut),
    };
    if verdict.is_err() {
        // Ends the worker, so both threads see their pipe close and return. They are not
        // awaited: a descendant outside the group could hold a pipe open, and the keeper
        // must not wait for it. The worker is discarded without its pipes.
        kill_group(pgid);
        return verdict;
    }
    // The worker read the whole frame before it answered, and the reader is done.
    if let (Ok((pipe, true)), Ok(out)) = (writer.join(), reader.join()) {
        *stdin = Some(pipe);
        *stdout = Some(out);
        return Ok(());
    }
    kill_group(pgid);
    Err(PrepareFailure::Failed)
}
