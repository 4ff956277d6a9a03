//! The baseline filter every governed call runs under (see the module docs for the layering).
//!
//! Allow-list, modelled on Docker's default profile and tightened: what an ordinary Python
//! program calls is allowed; what needs privileges a worker never has, or opens kernel attack
//! surface no pure function needs, fails with `EPERM`:
//! * namespaces and mounts: `unshare`, `setns`, `mount`, `umount2`, `pivot_root`, `chroot`,
//!   the new mount API, and `clone` with any `CLONE_NEW*` flag (`clone3` → `ENOSYS`, its flags
//!   are out of BPF's reach; glibc falls back to `clone`);
//! * other processes: `ptrace`, `process_vm_readv`/`writev`, `kcmp`, `pidfd_getfd`;
//! * kernel surfaces: `bpf`, `perf_event_open`, `userfaultfd`, `io_uring_*`, `keyctl`,
//!   `add_key`, `request_key`, `open_by_handle_at`, `name_to_handle_at`, `fanotify_*`,
//!   `syslog`, module and kexec calls, `reboot`, swap, `acct`, `iopl`/`ioperm`/`modify_ldt`;
//! * host identity and time: `sethostname`, `setdomainname`, `settimeofday`, `clock_settime`,
//!   `adjtimex`;
//! * device nodes: `mknod`/`mknodat` only for regular files, FIFOs and sockets;
//! * `personality` only with the values Docker allows; `socket` never for `AF_VSOCK` (a path
//!   to the hypervisor that no network namespace covers), and under network deny only for
//!   `AF_INET`/`AF_INET6`;
//! * any call of another architecture is killed (seccompiler's architecture check), and on
//!   x86-64 so is any x32-ABI call.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompRule,
    sock_filter,
};

use super::{SeccompError, compile, syscall_number, to_bytes};

const EPERM: u32 = 1;
const ENOSYS: u32 = 38;

/// Allowed with any arguments (names absent on this architecture are skipped).
const ALLOWED: &[&str] = &[
    "accept",
    "accept4",
    "access",
    "alarm",
    "arch_prctl",
    "bind",
    "brk",
    "capget",
    "capset",
    "chdir",
    "chmod",
    "chown",
    "clock_getres",
    "clock_gettime",
    "clock_nanosleep",
    "close",
    "close_range",
    "connect",
    "copy_file_range",
    "creat",
    "dup",
    "dup2",
    "dup3",
    "epoll_create",
    "epoll_create1",
    "epoll_ctl",
    "epoll_pwait",
    "epoll_pwait2",
    "epoll_wait",
    "eventfd",
    "eventfd2",
    "execve",
    "execveat",
    "exit",
    "exit_group",
    "faccessat",
    "faccessat2",
    "fadvise64",
    "fallocate",
    "fchdir",
    "fchmod",
    "fchmodat",
    "fchown",
    "fchownat",
    "fcntl",
    "fdatasync",
    "fgetxattr",
    "flistxattr",
    "flock",
    "fork",
    "fremovexattr",
    "fsetxattr",
    "fstat",
    "fstatfs",
    "fsync",
    "ftruncate",
    "futex",
    "futex_waitv",
    "futimesat",
    "getcpu",
    "getcwd",
    "getdents",
    "getdents64",
    "getegid",
    "geteuid",
    "getgid",
    "getgroups",
    "getitimer",
    "getpeername",
    "getpgid",
    "getpgrp",
    "getpid",
    "getppid",
    "getpriority",
    "getrandom",
    "getresgid",
    "getresuid",
    "getrlimit",
    "get_robust_list",
    "getrusage",
    "getsid",
    "getsockname",
    "getsockopt",
    "gettid",
    "gettimeofday",
    "getuid",
    "getxattr",
    "inotify_add_watch",
    "inotify_init",
    "inotify_init1",
    "inotify_rm_watch",
    "io_cancel",
    "io_destroy",
    "io_getevents",
    "io_setup",
    "io_submit",
    "ioctl",
    "ioprio_get",
    "ioprio_set",
    "kill",
    "landlock_add_rule",
    "landlock_create_ruleset",
    "landlock_restrict_self",
    "lchown",
    "lgetxattr",
    "link",
    "linkat",
    "listen",
    "listxattr",
    "llistxattr",
    "lremovexattr",
    "lseek",
    "lsetxattr",
    "lstat",
    "madvise",
    "membarrier",
    "memfd_create",
    "mincore",
    "mkdir",
    "mkdirat",
    "mlock",
    "mlock2",
    "mlockall",
    "mmap",
    "mprotect",
    "mq_getsetattr",
    "mq_notify",
    "mq_open",
    "mq_timedreceive",
    "mq_timedsend",
    "mq_unlink",
    "mremap",
    "msgctl",
    "msgget",
    "msgrcv",
    "msgsnd",
    "msync",
    "munlock",
    "munlockall",
    "munmap",
    "nanosleep",
    "newfstatat",
    "open",
    "openat",
    "openat2",
    "pause",
    "pidfd_open",
    "pidfd_send_signal",
    "pipe",
    "pipe2",
    "pkey_alloc",
    "pkey_free",
    "pkey_mprotect",
    "poll",
    "ppoll",
    "prctl",
    "pread64",
    "preadv",
    "preadv2",
    "prlimit64",
    "pselect6",
    "pwrite64",
    "pwritev",
    "pwritev2",
    "read",
    "readahead",
    "readlink",
    "readlinkat",
    "readv",
    "recvfrom",
    "recvmmsg",
    "recvmsg",
    "remap_file_pages",
    "removexattr",
    "rename",
    "renameat",
    "renameat2",
    "restart_syscall",
    "rmdir",
    "rseq",
    "rt_sigaction",
    "rt_sigpending",
    "rt_sigprocmask",
    "rt_sigqueueinfo",
    "rt_sigreturn",
    "rt_sigsuspend",
    "rt_sigtimedwait",
    "rt_tgsigqueueinfo",
    "sched_get_priority_max",
    "sched_get_priority_min",
    "sched_getaffinity",
    "sched_getattr",
    "sched_getparam",
    "sched_getscheduler",
    "sched_rr_get_interval",
    "sched_setaffinity",
    "sched_setattr",
    "sched_setparam",
    "sched_setscheduler",
    "sched_yield",
    "seccomp",
    "select",
    "semctl",
    "semget",
    "semop",
    "semtimedop",
    "sendfile",
    "sendmmsg",
    "sendmsg",
    "sendto",
    "set_robust_list",
    "set_tid_address",
    "setfsgid",
    "setfsuid",
    "setgid",
    "setgroups",
    "setitimer",
    "setpgid",
    "setpriority",
    "setregid",
    "setresgid",
    "setresuid",
    "setreuid",
    "setrlimit",
    "setsid",
    "setsockopt",
    "setuid",
    "setxattr",
    "shmat",
    "shmctl",
    "shmdt",
    "shmget",
    "shutdown",
    "sigaltstack",
    "signalfd",
    "signalfd4",
    "socketpair",
    "splice",
    "stat",
    "statfs",
    "statx",
    "symlink",
    "symlinkat",
    "sync",
    "sync_file_range",
    "syncfs",
    "sysinfo",
    "tee",
    "tgkill",
    "time",
    "timer_create",
    "timer_delete",
    "timer_getoverrun",
    "timer_gettime",
    "timer_settime",
    "timerfd_create",
    "timerfd_gettime",
    "timerfd_settime",
    "times",
    "tkill",
    "truncate",
    "umask",
    "uname",
    "unlink",
    "unlinkat",
    "utime",
    "utimensat",
    "utimes",
    "vfork",
    "vmsplice",
    "wait4",
    "waitid",
    "write",
    "writev",
];

/// Every `CLONE_NEW*` flag `clone` accepts (Docker's mask): `clone` is allowed without them.
const CLONE_NEW_MASK: u64 = 0x7E02_0000;
const S_IFMT: u64 = 0o170_000;
/// File types `mknod` may create: regular (also `0`), FIFO, socket — never a device.
const MKNOD_TYPES: [u64; 4] = [0, 0o100_000, 0o010_000, 0o140_000];
/// `personality` values Docker allows: `PER_LINUX`, `PER_LINUX32`, `UNAME26`,
/// `PER_LINUX32|UNAME26`, and the query `0xffffffff`.
const PERSONALITIES: [u64; 5] = [0, 8, 0x20000, 0x20008, 0xffff_ffff];
const AF_INET: u64 = 2;
const AF_INET6: u64 = 10;
const AF_VSOCK: u64 = 40;

/// What varies between calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BaselineOptions {
    /// `network: deny`: only `AF_INET`/`AF_INET6` sockets (the namespace has no interfaces).
    pub network_deny: bool,
}

/// The baseline programs, in installation order.
pub fn baseline_programs(options: BaselineOptions) -> Result<Vec<BpfProgram>, SeccompError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for name in ALLOWED {
        if let Some(nr) = syscall_number(name) {
            rules.insert(nr, vec![]);
        }
    }
    let arg = |index: u8, len: SeccompCmpArgLen, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(index, len, op, value).map_err(SeccompError::new)
    };
    let rule = |conditions| SeccompRule::new(conditions).map_err(SeccompError::new);
    let nr = |name: &str| syscall_number(name).ok_or_else(|| SeccompError::new(name));
    use SeccompCmpArgLen::{Dword, Qword};
    rules.insert(
        nr("clone")?,
        vec![rule(vec![arg(
            0,
            Qword,
            SeccompCmpOp::MaskedEq(CLONE_NEW_MASK),
            0,
        )?])?],
    );
    let mut mknod_rules = |name: &str, index: u8| -> Result<(), SeccompError> {
        let Some(number) = syscall_number(name) else {
            return Ok(());
        };
        let mut alternatives = Vec::new();
        for kind in MKNOD_TYPES {
            alternatives.push(rule(vec![arg(
                index,
                Dword,
                SeccompCmpOp::MaskedEq(S_IFMT),
                kind,
            )?])?);
        }
        rules.insert(number, alternatives);
        Ok(())
    };
    mknod_rules("mknod", 1)?;
    mknod_rules("mknodat", 2)?;
    let mut personality = Vec::new();
    for value in PERSONALITIES {
        personality.push(rule(vec![arg(0, Dword, SeccompCmpOp::Eq, value)?])?);
    }
    rules.insert(nr("personality")?, personality);
    let socket = if options.network_deny {
        vec![
            rule(vec![arg(0, Dword, SeccompCmpOp::Eq, AF_INET)?])?,
            rule(vec![arg(0, Dword, SeccompCmpOp::Eq, AF_INET6)?])?,
        ]
    } else {
        vec![rule(vec![arg(0, Dword, SeccompCmpOp::Ne, AF_VSOCK)?])?]
    };
    rules.insert(nr("socket")?, socket);
    let mut programs = vec![compile(
        rules,
        SeccompAction::Errno(EPERM),
        SeccompAction::Allow,
    )?];
    let mut clone3 = BTreeMap::new();
    clone3.insert(nr("clone3")?, vec![]);
    programs.push(compile(
        clone3,
        SeccompAction::Allow,
        SeccompAction::Errno(ENOSYS),
    )?);
    if let Some(x32) = kill_x32() {
        programs.push(x32);
    }
    Ok(programs)
}

/// The baseline as raw bytes (for tests and for callers that ship programs elsewhere).
pub fn baseline_program_bytes(options: BaselineOptions) -> Result<Vec<Vec<u8>>, SeccompError> {
    Ok(baseline_programs(options)?.iter().map(to_bytes).collect())
}

/// x86-64 only: kill any call made through the x32 ABI (same audit architecture, numbers
/// with bit 30 set), which an allow-list of x86-64 numbers would otherwise only answer with
/// `EPERM`.
fn kill_x32() -> Option<BpfProgram> {
    if std::env::consts::ARCH != "x86_64" {
        return None;
    }
    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    const RET_KILL_PROCESS: u32 = 0x8000_0000;
    const RET_ALLOW: u32 = 0x7fff_0000;
    let insn = |code: u16, jt: u8, jf: u8, k: u32| sock_filter { code, jt, jf, k };
    // BPF_LD|BPF_W|BPF_ABS = 0x20, BPF_JMP|BPF_JEQ|BPF_K = 0x15, BPF_JMP|BPF_JGE|BPF_K = 0x35,
    // BPF_RET|BPF_K = 0x06. seccomp_data: nr at offset 0, arch at offset 4.
    Some(vec![
        insn(0x20, 0, 0, 4),
        insn(0x15, 0, 3, AUDIT_ARCH_X86_64),
        insn(0x20, 0, 0, 0),
        insn(0x35, 0, 1, X32_SYSCALL_BIT),
        insn(0x06, 0, 0, RET_KILL_PROCESS),
        insn(0x06, 0, 0, RET_ALLOW),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_compiles_for_both_network_modes() {
        for network_deny in [false, true] {
            let programs = baseline_programs(BaselineOptions { network_deny }).unwrap();
            assert!(programs.len() >= 2);
            for p in &programs {
                assert!(!p.is_empty() && p.len() < 4096, "BPF_MAXINSNS");
            }
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn every_allowed_name_has_a_number_on_x86_64() {
        for name in ALLOWED {
            assert!(syscall_number(name).is_some(), "{name}");
        }
    }

    #[test]
    fn dangerous_calls_are_not_on_the_allow_list() {
        for name in [
            "ptrace",
            "bpf",
            "perf_event_open",
            "userfaultfd",
            "io_uring_setup",
            "keyctl",
            "mount",
            "umount2",
            "pivot_root",
            "unshare",
            "setns",
            "sethostname",
            "open_by_handle_at",
            "init_module",
            "kexec_load",
            "process_vm_readv",
            "chroot",
        ] {
            assert!(!ALLOWED.contains(&name), "{name}");
            assert!(syscall_number(name).is_some(), "{name} has no number here");
        }
    }
}
