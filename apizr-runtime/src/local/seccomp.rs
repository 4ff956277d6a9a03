//! The subprocess-deny seccomp filters, compiled with `seccompiler` in the parent.
//!
//! Why the worker installs them (not the launcher): the launcher must still fork and exec the
//! interpreter, and the interpreter's own start-up should not run under the filter. The worker
//! installs the programs with `prctl(PR_SET_NO_NEW_PRIVS)` + `prctl(PR_SET_SECCOMP,
//! SECCOMP_MODE_FILTER)` through ctypes right before it compiles user code; after that the
//! process and everything it could start is filtered.
//!
//! Two programs, because each seccompiler filter has one match action:
//! 1. `fork`, `vfork`, `execve`, `execveat`, and `clone` without `CLONE_THREAD` → `EPERM`
//!    (threads keep working; `subprocess.run`, `os.fork`, `os.system` fail with `OSError`).
//! 2. `clone3` → `ENOSYS`: its flags live in user memory that BPF cannot read, and glibc falls
//!    back to `clone` (checked by program 1) when `clone3` is missing.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

const CLONE_THREAD: u64 = 0x0001_0000;
const EPERM: u32 = 1;
const ENOSYS: u32 = 38;

/// Why the filters could not be compiled for this host.
#[derive(Debug, thiserror::Error)]
#[error("seccomp filter unavailable: {0}")]
pub struct SeccompError(String);

/// The syscalls filter 1 denies unconditionally, looked up per architecture.
const DENIED: &[&str] = &["fork", "vfork", "execve", "execveat"];

/// Compile both programs; each is returned as raw `sock_filter` bytes (8 bytes per
/// instruction, native endian), ready for the worker's `sock_fprog`.
pub fn subprocess_deny_programs() -> Result<Vec<Vec<u8>>, SeccompError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| SeccompError(format!("architecture: {e}")))?;
    let mut deny: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for name in DENIED {
        if let Some(nr) = syscall_number(name) {
            deny.insert(nr, vec![]);
        }
    }
    let clone_nr = syscall_number("clone").ok_or_else(|| SeccompError("no clone".into()))?;
    let not_thread = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Qword,
        SeccompCmpOp::MaskedEq(CLONE_THREAD),
        0,
    )
    .map_err(|e| SeccompError(e.to_string()))?;
    deny.insert(
        clone_nr,
        vec![SeccompRule::new(vec![not_thread]).map_err(|e| SeccompError(e.to_string()))?],
    );
    let mut programs = vec![compile(deny, SeccompAction::Errno(EPERM), arch)?];
    if let Some(clone3) = syscall_number("clone3") {
        let mut rules = BTreeMap::new();
        rules.insert(clone3, vec![]);
        programs.push(compile(rules, SeccompAction::Errno(ENOSYS), arch)?);
    }
    Ok(programs)
}

fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    action: SeccompAction,
    arch: TargetArch,
) -> Result<Vec<u8>, SeccompError> {
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, action, arch)
        .map_err(|e| SeccompError(e.to_string()))?;
    let program: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| SeccompError(e.to_string()))?;
    let mut bytes = Vec::with_capacity(program.len() * 8);
    for insn in &program {
        bytes.extend_from_slice(&insn.code.to_ne_bytes());
        bytes.push(insn.jt);
        bytes.push(insn.jf);
        bytes.extend_from_slice(&insn.k.to_ne_bytes());
    }
    Ok(bytes)
}

/// Syscall numbers for the architectures this runtime supports.
fn syscall_number(name: &str) -> Option<i64> {
    let table: &[(&str, i64)] = match std::env::consts::ARCH {
        "x86_64" => &[
            ("clone", 56),
            ("fork", 57),
            ("vfork", 58),
            ("execve", 59),
            ("execveat", 322),
            ("clone3", 435),
        ],
        // aarch64 has no fork/vfork syscalls (glibc uses clone).
        "aarch64" => &[
            ("clone", 220),
            ("execve", 221),
            ("execveat", 281),
            ("clone3", 435),
        ],
        _ => &[],
    };
    table.iter().find(|(n, _)| *n == name).map(|(_, nr)| *nr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_compile_to_whole_instructions() {
        let programs = subprocess_deny_programs().unwrap();
        assert_eq!(programs.len(), 2);
        for p in &programs {
            assert!(!p.is_empty());
            assert_eq!(p.len() % 8, 0);
            assert!(p.len() / 8 < 4096, "BPF_MAXINSNS");
        }
    }
}
