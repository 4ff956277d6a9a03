# Privileged operations a worker tries. Each entry is "ok" (it worked) or the errno.
# `run(target, True)` runs only the entries that are harmless on the host (the test runs this file
# directly as root to show that each attack would succeed without the sandbox).
import ctypes
import fcntl
import os
import struct

libc = ctypes.CDLL(None, use_errno=True)


def _syscall(nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return "ok" if r >= 0 else ctypes.get_errno()


def _try(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return e.errno


def _bpf_map():
    # BPF_MAP_CREATE of a one-entry hash map (type 1, key 4 bytes, value 4 bytes).
    attr = ctypes.create_string_buffer(struct.pack("IIII", 1, 4, 4, 1) + bytes(112))
    return _syscall(321, 0, ctypes.addressof(attr), 128)


def _io_uring():
    params = ctypes.create_string_buffer(120)
    return _syscall(425, 1, ctypes.addressof(params))


def _perf():
    # A software task-clock counter of this thread.
    attr = ctypes.create_string_buffer(struct.pack("IIQ", 1, 128, 1) + bytes(112))
    return _syscall(298, ctypes.addressof(attr), 0, -1, -1, 0)


def _immutable(path):
    with open(path, "w") as fh:
        fh.write("x")
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, 0x40086602, struct.pack("l", 0x10))  # FS_IOC_SETFLAGS, FS_IMMUTABLE_FL
        fcntl.ioctl(fd, 0x40086602, struct.pack("l", 0))
        return "ok"
    except OSError as e:
        return e.errno
    finally:
        os.close(fd)


def run(target, control):
    out = {
        "chown_host_file": _try(lambda: os.chown(target, 12345, 12345)),
        "chmod_host_file": _try(lambda: os.chmod(target, 0o777)),
        "mknod_char_device": _try(lambda: os.mknod("kmsg", 0o020600, os.makedev(1, 11))),
        "chattr_immutable": _immutable("flagged"),
        "bpf": _bpf_map(),
        "io_uring_setup": _io_uring(),
        "perf_event_open": _perf(),
        "open_by_handle_at": _syscall(304, -100, 0, 0),
        "userns": _syscall(272, 0x10000000),  # unshare(CLONE_NEWUSER)
    }
    if not control:
        out["sethostname"] = "ok" if libc.sethostname(b"pwned", 5) == 0 else ctypes.get_errno()
        out["mount_tmpfs"] = _syscall(165, 0, 0, 0, 0, 0)
        out["ptrace_traceme"] = _syscall(101, 0, 0, 0, 0)
        out["keyctl"] = _syscall(250, 0, -3, 0)
        out["userfaultfd"] = _syscall(323, 0)
        out["process_vm_readv"] = _syscall(310, 1, 0, 0, 0, 0, 0)
    for name in ("kmsg", "flagged"):
        try:
            os.unlink(name)
        except OSError:
            pass
    return out


def f(target):
    return run(target, False)
