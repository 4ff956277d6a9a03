//! The seccomp profile a governed (v1) project's container runs under: Docker's default
//! profile, as Docker applies it to a container without added capabilities, plus exactly the
//! calls apizr's launcher makes to isolate each call.
//!
//! Why: Docker's and Kubernetes' default profiles refuse `unshare`, `mount`, `umount2` and
//! `pivot_root` (and `clone` with namespace flags) to a container without `CAP_SYS_ADMIN`, so
//! the launcher cannot create the call's user, PID, network, IPC, UTS and mount namespaces,
//! and a governed server can enforce nothing that needs them (it then says so: `/readyz` 503).
//! Granting `CAP_SYS_ADMIN` or `seccomp=unconfined` would open far more than that. Each call
//! then runs under apizr's own baseline filter, which refuses these calls again.
//!
//! The profile is flat (no `includes`/`excludes`, which only Docker evaluates): the same file
//! works for `docker run --security-opt seccomp=…` and as a Kubernetes `Localhost` profile
//! (containerd and CRI-O read the OCI form). Rules that Docker grants only with a capability
//! (`CAP_SYS_ADMIN`, `CAP_SYS_PTRACE`, `CAP_SYS_CHROOT`, …) are left out: the container runs
//! with all capabilities dropped. Docker's kernel-version rule for `ptrace` and
//! `process_vm_*` (4.8+) is taken as met (Landlock, which apizr needs, is 5.13+).

use serde_json::{Value, json};

/// Docker's unconditional allow list (moby `profiles/seccomp`, the first rule of its default
/// profile). Names a kernel or an architecture lacks are skipped by Docker and runc.
const DOCKER_ALLOWED: &[&str] = &[
    "accept",
    "accept4",
    "access",
    "adjtimex",
    "alarm",
    "bind",
    "brk",
    "cachestat",
    "capget",
    "capset",
    "chdir",
    "chmod",
    "chown",
    "chown32",
    "clock_adjtime",
    "clock_adjtime64",
    "clock_getres",
    "clock_getres_time64",
    "clock_gettime",
    "clock_gettime64",
    "clock_nanosleep",
    "clock_nanosleep_time64",
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
    "epoll_ctl_old",
    "epoll_pwait",
    "epoll_pwait2",
    "epoll_wait",
    "epoll_wait_old",
    "eventfd",
    "eventfd2",
    "execve",
    "execveat",
    "exit",
    "exit_group",
    "faccessat",
    "faccessat2",
    "fadvise64",
    "fadvise64_64",
    "fallocate",
    "fanotify_mark",
    "fchdir",
    "fchmod",
    "fchmodat",
    "fchmodat2",
    "fchown",
    "fchown32",
    "fchownat",
    "fcntl",
    "fcntl64",
    "fdatasync",
    "fgetxattr",
    "flistxattr",
    "flock",
    "fork",
    "fremovexattr",
    "fsetxattr",
    "fstat",
    "fstat64",
    "fstatat64",
    "fstatfs",
    "fstatfs64",
    "fsync",
    "ftruncate",
    "ftruncate64",
    "futex",
    "futex_requeue",
    "futex_time64",
    "futex_wait",
    "futex_waitv",
    "futex_wake",
    "futimesat",
    "getcpu",
    "getcwd",
    "getdents",
    "getdents64",
    "getegid",
    "getegid32",
    "geteuid",
    "geteuid32",
    "getgid",
    "getgid32",
    "getgroups",
    "getgroups32",
    "getitimer",
    "getpeername",
    "getpgid",
    "getpgrp",
    "getpid",
    "getppid",
    "getpriority",
    "getrandom",
    "getresgid",
    "getresgid32",
    "getresuid",
    "getresuid32",
    "getrlimit",
    "get_robust_list",
    "getrusage",
    "getsid",
    "getsockname",
    "getsockopt",
    "get_thread_area",
    "gettid",
    "gettimeofday",
    "getuid",
    "getuid32",
    "getxattr",
    "getxattrat",
    "inotify_add_watch",
    "inotify_init",
    "inotify_init1",
    "inotify_rm_watch",
    "io_cancel",
    "ioctl",
    "io_destroy",
    "io_getevents",
    "io_pgetevents",
    "io_pgetevents_time64",
    "ioprio_get",
    "ioprio_set",
    "io_setup",
    "io_submit",
    "ipc",
    "kill",
    "landlock_add_rule",
    "landlock_create_ruleset",
    "landlock_restrict_self",
    "lchown",
    "lchown32",
    "lgetxattr",
    "link",
    "linkat",
    "listen",
    "listmount",
    "listxattr",
    "listxattrat",
    "llistxattr",
    "_llseek",
    "lremovexattr",
    "lseek",
    "lsetxattr",
    "lstat",
    "lstat64",
    "madvise",
    "map_shadow_stack",
    "membarrier",
    "memfd_create",
    "memfd_secret",
    "mincore",
    "mkdir",
    "mkdirat",
    "mknod",
    "mknodat",
    "mlock",
    "mlock2",
    "mlockall",
    "mmap",
    "mmap2",
    "mprotect",
    "mq_getsetattr",
    "mq_notify",
    "mq_open",
    "mq_timedreceive",
    "mq_timedreceive_time64",
    "mq_timedsend",
    "mq_timedsend_time64",
    "mq_unlink",
    "mremap",
    "mseal",
    "msgctl",
    "msgget",
    "msgrcv",
    "msgsnd",
    "msync",
    "munlock",
    "munlockall",
    "munmap",
    "name_to_handle_at",
    "nanosleep",
    "newfstatat",
    "_newselect",
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
    "ppoll_time64",
    "prctl",
    "pread64",
    "preadv",
    "preadv2",
    "prlimit64",
    "process_mrelease",
    "pselect6",
    "pselect6_time64",
    "pwrite64",
    "pwritev",
    "pwritev2",
    "read",
    "readahead",
    "readlink",
    "readlinkat",
    "readv",
    "recv",
    "recvfrom",
    "recvmmsg",
    "recvmmsg_time64",
    "recvmsg",
    "remap_file_pages",
    "removexattr",
    "removexattrat",
    "rename",
    "renameat",
    "renameat2",
    "restart_syscall",
    "riscv_hwprobe",
    "rmdir",
    "rseq",
    "rt_sigaction",
    "rt_sigpending",
    "rt_sigprocmask",
    "rt_sigqueueinfo",
    "rt_sigreturn",
    "rt_sigsuspend",
    "rt_sigtimedwait",
    "rt_sigtimedwait_time64",
    "rt_tgsigqueueinfo",
    "sched_getaffinity",
    "sched_getattr",
    "sched_getparam",
    "sched_get_priority_max",
    "sched_get_priority_min",
    "sched_getscheduler",
    "sched_rr_get_interval",
    "sched_rr_get_interval_time64",
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
    "semtimedop_time64",
    "send",
    "sendfile",
    "sendfile64",
    "sendmmsg",
    "sendmsg",
    "sendto",
    "setfsgid",
    "setfsgid32",
    "setfsuid",
    "setfsuid32",
    "setgid",
    "setgid32",
    "setgroups",
    "setgroups32",
    "setitimer",
    "setpgid",
    "setpriority",
    "setregid",
    "setregid32",
    "setresgid",
    "setresgid32",
    "setresuid",
    "setresuid32",
    "setreuid",
    "setreuid32",
    "setrlimit",
    "set_robust_list",
    "setsid",
    "setsockopt",
    "set_thread_area",
    "set_tid_address",
    "setuid",
    "setuid32",
    "setxattr",
    "setxattrat",
    "shmat",
    "shmctl",
    "shmdt",
    "shmget",
    "shutdown",
    "sigaltstack",
    "signalfd",
    "signalfd4",
    "sigprocmask",
    "sigreturn",
    "socketcall",
    "socketpair",
    "splice",
    "stat",
    "stat64",
    "statfs",
    "statfs64",
    "statmount",
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
    "timer_gettime64",
    "timer_settime",
    "timer_settime64",
    "timerfd_create",
    "timerfd_gettime",
    "timerfd_gettime64",
    "timerfd_settime",
    "timerfd_settime64",
    "times",
    "tkill",
    "truncate",
    "truncate64",
    "ugetrlimit",
    "umask",
    "uname",
    "unlink",
    "unlinkat",
    "uretprobe",
    "utime",
    "utimensat",
    "utimensat_time64",
    "utimes",
    "vfork",
    "vmsplice",
    "wait4",
    "waitid",
    "waitpid",
    "write",
    "writev",
];

/// Docker's architecture-specific allowances (x86: `arch_prctl`, `modify_ldt`; Arm).
const DOCKER_ARCH_ALLOWED: &[&str] = &[
    "arch_prctl",
    "modify_ldt",
    "arm_fadvise64_64",
    "arm_sync_file_range",
    "sync_file_range2",
    "breakpoint",
    "cacheflush",
    "set_tls",
];

/// Docker allows these from kernel 4.8 on (the seccomp bypass through ptrace was fixed).
const DOCKER_PTRACE: &[&str] = &["process_vm_readv", "process_vm_writev", "ptrace"];

/// `personality` values Docker allows: `PER_LINUX`, `PER_LINUX32`, `UNAME26`,
/// `PER_LINUX32|UNAME26`, and the query `0xffffffff`.
const DOCKER_PERSONALITIES: &[u64] = &[0x0, 0x8, 0x2_0000, 0x2_0008, 0xffff_ffff];

/// `clone` is allowed only without any `CLONE_NEW*` flag (and without `CLONE_NEWCGROUP`…):
/// Docker's mask `0x7E020000`.
const CLONE_NAMESPACE_FLAGS: u64 = 0x7E02_0000;

/// `AF_ALG` (38) and `AF_VSOCK` (40) are the socket families Docker's profile refuses.
const AF_ALG: u64 = 38;
const AF_VSOCK: u64 = 40;

/// What apizr's launcher needs beyond Docker's default, and why (see
/// `apizr-runtime/src/local/launcher/`: `run` unshares the namespaces, `init` builds the
/// view). Nothing else: `clone3` keeps Docker's `ENOSYS` (glibc falls back to `clone`), and
/// `clone` keeps its no-namespace-flags rule because the launcher unshares instead.
pub const LAUNCHER_SYSCALLS: &[(&str, &str)] = &[
    (
        "unshare",
        "the call's user, PID, network, IPC, UTS and mount namespaces",
    ),
    (
        "mount",
        "a fresh /proc, the private root's read-only binds and size-capped tmpfs",
    ),
    ("pivot_root", "into the call's private root"),
    ("umount2", "detaching the old root after pivot_root"),
];

const ENOSYS: u64 = 38;
const EPERM: u64 = 1;

/// File name of the profile in a generated project.
pub const PROFILE_FILE: &str = "seccomp.json";

/// The profile as a JSON value.
pub fn profile() -> Value {
    let allow = |names: Vec<&str>, comment: &str| json!({"names": names, "action": "SCMP_ACT_ALLOW", "comment": comment});
    let arg = |index: u64, op: &str, value: u64| json!({"index": index, "op": op, "value": value});
    let mut syscalls = vec![
        allow(DOCKER_ALLOWED.to_vec(), "Docker's default allow list"),
        allow(
            DOCKER_ARCH_ALLOWED.to_vec(),
            "Docker's default: architecture-specific calls",
        ),
        allow(DOCKER_PTRACE.to_vec(), "Docker's default on kernels 4.8+"),
    ];
    for (op, value) in [
        ("SCMP_CMP_LT", AF_ALG),
        ("SCMP_CMP_EQ", AF_ALG + 1),
        ("SCMP_CMP_GT", AF_VSOCK),
    ] {
        syscalls.push(json!({
            "names": ["socket"],
            "action": "SCMP_ACT_ALLOW",
            "args": [arg(0, op, value)],
            "comment": "Docker's default: every socket family but AF_ALG and AF_VSOCK",
        }));
    }
    for value in DOCKER_PERSONALITIES {
        syscalls.push(json!({
            "names": ["personality"],
            "action": "SCMP_ACT_ALLOW",
            "args": [arg(0, "SCMP_CMP_EQ", *value)],
            "comment": "Docker's default personalities",
        }));
    }
    syscalls.push(json!({
        "names": ["clone"],
        "action": "SCMP_ACT_ALLOW",
        "args": [{"index": 0, "op": "SCMP_CMP_MASKED_EQ", "value": CLONE_NAMESPACE_FLAGS, "valueTwo": 0}],
        "comment": "Docker's default without CAP_SYS_ADMIN: clone without namespace flags",
    }));
    syscalls.push(json!({
        "names": ["clone3"],
        "action": "SCMP_ACT_ERRNO",
        "errnoRet": ENOSYS,
        "comment": "Docker's default without CAP_SYS_ADMIN: ENOSYS, so glibc falls back to clone",
    }));
    for (name, why) in LAUNCHER_SYSCALLS {
        syscalls.push(allow(vec![name], &format!("apizr launcher: {why}")));
    }
    json!({
        "defaultAction": "SCMP_ACT_ERRNO",
        "defaultErrnoRet": EPERM,
        "architectures": [
            "SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32",
            "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"
        ],
        "syscalls": syscalls,
    })
}

/// The profile file's bytes (pretty JSON, one trailing newline).
pub fn profile_bytes() -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(&profile()).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed_unconditionally(profile: &Value) -> Vec<String> {
        profile["syscalls"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["action"] == "SCMP_ACT_ALLOW" && r.get("args").is_none())
            .flat_map(|r| r["names"].as_array().cloned().unwrap_or_default())
            .filter_map(|n| n.as_str().map(str::to_string))
            .collect()
    }

    #[test]
    fn the_launcher_calls_are_added_and_nothing_privileged_is() {
        let allowed = allowed_unconditionally(&profile());
        for (name, _) in LAUNCHER_SYSCALLS {
            assert!(allowed.iter().any(|a| a == name), "{name}");
        }
        // What Docker grants only with capabilities stays out (the container has none), and
        // so do the namespace calls the launcher does not make.
        for name in [
            "bpf",
            "setns",
            "clone3",
            "perf_event_open",
            "keyctl",
            "add_key",
            "init_module",
            "kexec_load",
            "open_by_handle_at",
            "chroot",
            "sethostname",
            "fsopen",
            "move_mount",
            "open_tree",
            "syslog",
            "userfaultfd",
            "clone",
            "socket",
            "personality",
        ] {
            assert!(!allowed.iter().any(|a| a == name), "{name} is allowed");
        }
    }

    #[test]
    fn the_profile_is_deterministic_json() {
        let text = profile_bytes();
        assert_eq!(text, profile_bytes());
        let parsed: Value = serde_json::from_slice(&text).unwrap();
        assert_eq!(parsed["defaultAction"], "SCMP_ACT_ERRNO");
        assert!(parsed.get("archMap").is_none(), "flat form only");
    }
}
