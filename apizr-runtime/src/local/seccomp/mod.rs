//! seccomp-bpf programs, compiled with `seccompiler`.
//!
//! Two layers, installed by different processes because each must still run something after
//! installing its filter:
//! * [`baseline`] — every governed call. The launcher installs it last, right before it execs
//!   the interpreter (the filter allows `execve`). Modelled on Docker's default profile: an
//!   allow-list (everything else fails with `EPERM`), namespace/mount/keyring/BPF/perf/io_uring/
//!   ptrace families left out, `clone` only without namespace flags, `clone3` → `ENOSYS`,
//!   device `mknod` refused, other architectures (and x86-64's x32 ABI) killed. Under network
//!   deny, `socket()` is limited to `AF_INET`/`AF_INET6` (which reach nothing in the empty
//!   network namespace), so no unix, netlink, packet or vsock socket can be created.
//! * [`subprocess`] — `subprocess: deny`. The worker installs it right before it compiles user
//!   code, so the interpreter start-up is not filtered.
//!
//! [`LAUNCHER_SYSCALLS`] names what the launcher itself needs beyond a container runtime's
//! default profile: a profile for a governed container image is that profile plus this list.

mod baseline;
mod subprocess;
mod table;

use std::collections::BTreeMap;

use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, SeccompRule, TargetArch};

pub use baseline::{BaselineOptions, baseline_program_bytes, baseline_programs};
pub use subprocess::subprocess_deny_programs;
pub use table::syscall_number;

/// The system calls the launcher makes that Docker's and containerd's default seccomp profiles
/// refuse without `CAP_SYS_ADMIN`, with the flags it uses. Everything else the launcher calls
/// (`prctl`, `capset`, `setgroups`, `setresuid`, `setresgid`, `landlock_*`, `seccomp`,
/// `pidfd_open`, `ppoll`, `clone` without namespace flags, `execve`, `wait4`) is in those
/// default profiles already.
///
/// * `unshare` — `CLONE_NEWUSER` (non-root hosts), then `CLONE_NEWPID | CLONE_NEWNET |
///   CLONE_NEWIPC | CLONE_NEWUTS`, then `CLONE_NEWNS` in the namespace's first process;
/// * `mount` — `MS_REC | MS_PRIVATE` on `/`, `proc`, `tmpfs`, `MS_BIND` and
///   `MS_REMOUNT | MS_BIND | MS_RDONLY` of read-only binds;
/// * `umount2` — `MNT_DETACH` of the old root;
/// * `pivot_root` — into the private root (`filesystem: sandbox`).
pub const LAUNCHER_SYSCALLS: &[&str] = &["unshare", "mount", "umount2", "pivot_root"];

/// Why a program could not be compiled for this host.
#[derive(Debug, thiserror::Error)]
#[error("seccomp filter unavailable: {0}")]
pub struct SeccompError(String);

impl SeccompError {
    fn new(message: impl std::fmt::Display) -> Self {
        SeccompError(message.to_string())
    }
}

fn target_arch() -> Result<TargetArch, SeccompError> {
    TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| SeccompError::new(format!("architecture: {e}")))
}

/// Compile one filter: `rules` matched → `on_match`, everything else → `otherwise`.
fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    otherwise: SeccompAction,
    on_match: SeccompAction,
) -> Result<BpfProgram, SeccompError> {
    let filter = SeccompFilter::new(rules, otherwise, on_match, target_arch()?)
        .map_err(SeccompError::new)?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| SeccompError::new(e))
}

/// A program as raw `sock_filter` bytes (8 bytes per instruction, native endian), the form
/// the worker's `sock_fprog` takes.
fn to_bytes(program: &BpfProgram) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(program.len() * 8);
    for insn in program {
        bytes.extend_from_slice(&insn.code.to_ne_bytes());
        bytes.push(insn.jt);
        bytes.push(insn.jf);
        bytes.extend_from_slice(&insn.k.to_ne_bytes());
    }
    bytes
}
