//! Starting a session's process: exactly as a one-shot run starts (local tiers: the same plan,
//! refusals, packages, launcher, identity, cgroups, seccomp, guard; docker tiers: the same
//! container body, checks and labels), with the bootstrap in session mode.

use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use super::SessionError;
use crate::interpreter::bootstrap::BootRequest;
use crate::interpreter::docker::session::DockerSession;
use crate::interpreter::enforcement::EnforcementReport;
use crate::interpreter::environment::Environment;
use crate::interpreter::local::Job;
use crate::interpreter::local::persistent::Persistent;
use crate::interpreter::packages::PackageReport;

/// A session's interpreter: a local process, or a container.
pub(super) enum Worker {
    Local(Box<Persistent>),
    Docker(Box<DockerSession>),
}

impl Worker {
    /// End it and release everything; what could not be cleaned up.
    pub fn close(self) -> Vec<String> {
        match self {
            Worker::Local(p) => p.close(),
            Worker::Docker(mut d) => d.close(),
        }
    }
}

/// A started session process and what the session reports with every call.
pub(super) struct Started {
    pub process: Worker,
    pub enforcement: EnforcementReport,
    pub packages: Option<PackageReport>,
    pub timeout: Duration,
}

/// Start a session process of `environment` in `workspace`, exactly as a one-shot run starts
/// (the same plan, refusals, packages, launcher, identity, cgroups, seccomp, guard).
/// `workspace` is the code's workspace (local tiers) or the host directory of the calls'
/// artifacts (docker tiers; the code's workspace is in the container).
pub(super) fn start(
    environment: &Environment,
    workspace: &Path,
    lifetime: Duration,
) -> Result<Started, SessionError> {
    let tier = environment.tier();
    let parts = environment.parts();
    let job = Job {
        prestart: false,
        code: "",
        allowed: environment.allowed_imports(),
        policy: environment.policy(),
        packages: parts.packages,
        working_directory: None,
        store: parts.store,
        started: Instant::now(),
    };
    if tier.is_docker() {
        let opened = parts
            .docker
            .open_session(tier, &job, workspace, lifetime)
            .map_err(|e| match e {
                Ok(refused) => SessionError::Refused(refused),
                Err(message) => SessionError::Start(message),
            })?;
        return Ok(Started {
            process: Worker::Docker(Box::new(opened.session)),
            enforcement: opened.enforcement,
            packages: opened.packages,
            timeout: opened.timeout,
        });
    }
    let setup = parts
        .local
        .setup(tier, &job)
        .map_err(SessionError::Refused)?;
    let request = BootRequest {
        allowed: job.allowed.map(<[String]>::to_vec),
        seccomp: setup.seccomp.clone(),
        site_dirs: setup.site_dirs.clone(),
        session: true,
        ..BootRequest::default()
    };
    let process = parts
        .local
        .launch(
            tier,
            job.policy,
            &setup.plan,
            &setup.v1,
            &setup.host,
            workspace,
        )
        .and_then(|process| Persistent::start(process, &request.frame()))
        .map_err(SessionError::Start)?;
    // A session keeps its own long-lived process, started for it (never from the pool).
    let mut enforcement = setup.ctx.enforcement;
    enforcement.process = Some(crate::local::prestart::ProcessSource::Cold);
    Ok(Started {
        process: Worker::Local(Box::new(process)),
        enforcement,
        packages: setup.ctx.packages,
        timeout: setup.timeout,
    })
}

/// Remove everything inside `dir` (links are removed, never followed).
pub(super) fn empty_dir(dir: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}
