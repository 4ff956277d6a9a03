//! After the answer: a worker whose response frame was final is still exiting (the launcher
//! tears its namespaces down). Its [`Tail`] waits for the exit off the critical path, kills
//! the group if it does not come within [`TAIL_GRACE`], and says what was abnormal
//! ([`Ending::anomaly`]) — which never changes the answer already given.

use std::process::ExitStatus;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use nix::unistd::Pid;

use crate::local::output::Event;
use crate::local::supervisor::{describe_exit, kill_group};

/// How long a worker may take to exit after its answer before its group is killed (the
/// worker `_exit`s right after writing the frame; this is the launcher's teardown).
pub const TAIL_GRACE: Duration = Duration::from_secs(1);

/// A worker whose answer is final but whose process may still be exiting (see
/// [`supervise_to_frame`]). [`Tail::finish`] must be called: it is what reaps the process.
#[derive(Debug)]
pub struct Tail {
    pub(crate) rx: mpsc::Receiver<Event>,
    pub(crate) pgid: Option<Pid>,
    pub(crate) writer: thread::JoinHandle<()>,
    pub(crate) frame_len: usize,
    /// The exit, when it was seen before the frame was.
    pub(crate) exited: Option<Option<ExitStatus>>,
}

/// What happened after an answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ending {
    pub exit: Option<ExitStatus>,
    /// The process had not exited within the grace and was killed.
    pub killed: bool,
    /// Bytes followed the frame on the response descriptor.
    pub wrote_after: bool,
}

impl Ending {
    /// What was abnormal after the answer (`None`: a clean exit 0).
    pub fn anomaly(&self) -> Option<String> {
        if self.killed {
            return Some(format!(
                "did not exit within {} ms of its answer: killed",
                TAIL_GRACE.as_millis()
            ));
        }
        if self.wrote_after {
            return Some("wrote after its response frame".into());
        }
        match self.exit {
            Some(status) if status.success() => None,
            Some(status) => Some(format!(
                "ended `{}` after its answer",
                describe_exit(status)
            )),
            None => Some("could not be reaped after its answer".into()),
        }
    }
}

impl Tail {
    /// Wait up to `grace` for the process to exit (then kill its group), reap it, and kill
    /// whatever of its group is left.
    pub fn finish(self, grace: Duration) -> Ending {
        let Tail {
            rx,
            pgid,
            writer,
            frame_len,
            exited,
        } = self;
        let mut ending = Ending {
            exit: exited.flatten(),
            ..Ending::default()
        };
        let mut exited = exited.is_some();
        let mut stdout_seen = false;
        let mut until = Instant::now() + grace;
        while !exited {
            let left = until.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(Event::Exited(status)) => {
                    ending.exit = status;
                    exited = true;
                }
                Ok(Event::Stdout(bytes, overflow)) => {
                    stdout_seen = true;
                    ending.wrote_after |= overflow || bytes.len() > frame_len;
                }
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) if !ending.killed => {
                    kill_group(pgid);
                    ending.killed = true;
                    until = Instant::now() + Duration::from_secs(5);
                }
                Err(_) => break,
            }
        }
        kill_group(pgid);
        // The end of stdout comes with the exit: note bytes written after the frame.
        let until = Instant::now() + Duration::from_millis(100);
        while !stdout_seen {
            let left = until.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(Event::Stdout(bytes, overflow)) => {
                    stdout_seen = true;
                    ending.wrote_after |= overflow || bytes.len() > frame_len;
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        let _ = writer.join();
        ending
    }
}
