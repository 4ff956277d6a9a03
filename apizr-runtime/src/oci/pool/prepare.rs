//! One prepared container: launched exactly as a fresh one (create, the engine's record
//! verified, attach, start), then its attestation line read, so that a container whose own
//! view differs from the request never joins the pool.
//!
//! After the attestation, the worker is blocked reading its request on stdin: the interpreter
//! has started and the worker's own code is compiled before any call arrives. The worker writes
//! nothing to stdout before its request. A container that does is removed, because something
//! other than our worker is answering.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::oci::attest;
use crate::oci::run::{self, Launched, Life, Workload};
use crate::oci::{Connected, OciReport, Verified};

/// The most a preparation may take (create, checks, start, the interpreter's start-up).
const PREPARE_TIMEOUT: Duration = Duration::from_secs(30);

/// A started, checked container whose worker waits for its one request.
pub(crate) struct Prepared {
    pub launched: Launched,
    /// The engine's record, checked before start.
    pub verified: Option<Verified>,
    pub ready_at: Instant,
}

impl Prepared {
    pub fn name(&self) -> String {
        self.launched.guard.name().to_string()
    }
}

/// Launch a container for `workload` and read its attestation. `Err` says why it was not
/// usable; whatever was created has been removed by then.
pub(super) fn prepare(
    connected: &Connected,
    workload: &Workload<'_>,
    max_idle: Duration,
    temp_root: &Path,
) -> Result<Prepared, String> {
    let deadline = Instant::now() + PREPARE_TIMEOUT;
    let mut report = OciReport::default();
    let life = Life::Pooled { max_idle };
    let mut launched = run::launch(connected, workload, life, temp_root, deadline, &mut report)
        .map_err(|envelope| {
            let status = envelope.status.wire_name();
            match report.detail.take() {
                Some(detail) => format!("{status}: {detail}"),
                None => status.to_string(),
            }
        })?;
    let early = launched.attached.read_first_line(deadline);
    if !early.stdout.is_empty() {
        return Err("the container wrote to stdout before its request".into());
    }
    match attest::take(&mut early.stderr) {
        Some(attestation) if attestation.ok() => {
            launched.attestation = Some(attestation);
            Ok(Prepared {
                launched,
                verified: report.verified,
                ready_at: Instant::now(),
            })
        }
        Some(attestation) => Err(format!(
            "backend_unavailable: the container's own view refused {} (sandbox {}, kernel {})",
            attestation.failed.join(", "),
            attestation.sandbox,
            attestation.kernel
        )),
        None if early.timed_out => Err("no attestation before the deadline".into()),
        None => Err("backend_unavailable: no attestation line before the worker".into()),
    }
}
