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

use seccompiler::{SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompRule};

use super::{SeccompError, compile, syscall_number, to_bytes};

const CLONE_THREAD: u64 = 0x0001_0000;
const EPERM: u32 = 1;
const ENOSYS: u32 = 38;

/// The syscalls filter 1 denies unconditionally (those that exist on this architecture).
const DENIED: &[&str] = &["fork", "vfork", "execve", "execveat"];

/// Compile both programs; each is returned as raw `sock_filter` bytes (8 bytes per
/// instruction, native endian), ready for the worker's `sock_fprog`.
pub fn subprocess_deny_programs() -> Result<Vec<Vec<u8>>, SeccompError> {
    let mut deny: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for name in DENIED {
        if let Some(nr) = syscall_number(name) {
            deny.insert(nr, vec![]);
        }
    }
    let clone_nr = syscall_number("clone").ok_or_else(|| SeccompError::new("no clone"))?;
    let not_thread = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Qword,
        SeccompCmpOp::MaskedEq(CLONE_THREAD),
        0,
    )
    .map_err(SeccompError::new)?;
    deny.insert(
        clone_nr,
        vec![SeccompRule::new(vec![not_thread]).map_err(SeccompError::new)?],
    );
    let mut programs = vec![to_bytes(&compile(
        deny,
        SeccompAction::Allow,
        SeccompAction::Errno(EPERM),
    )?)];
    if let Some(clone3) = syscall_number("clone3") {
        let mut rules = BTreeMap::new();
        rules.insert(clone3, vec![]);
        programs.push(to_bytes(&compile(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(ENOSYS),
        )?));
    }
    Ok(programs)
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
