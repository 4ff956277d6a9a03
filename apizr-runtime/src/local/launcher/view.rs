//! The call's filesystem view, built by stage 2 in a new mount namespace (like bubblewrap
//! and nsjail do it), before any privilege is dropped.
//!
//! Always: the namespace is made private (`MS_REC | MS_PRIVATE` on `/`, so nothing we mount
//! propagates to the host) and, with a PID namespace, a fresh `/proc` shows only the call's
//! processes (no host process's `environ` or `cmdline`).
//!
//! * `Host` keeps the host tree. Paths the unprivileged worker must reach through an ancestor
//!   it cannot traverse (the interpreter under `/root`, mode 0700) are bound read-only into an
//!   empty tmpfs that covers that ancestor: the worker sees the interpreter, and nothing else
//!   of that directory, which its uid could not read anyway.
//! * `Sandbox` builds a private root on a tmpfs and `pivot_root`s into it. It holds read-only
//!   binds of the system directories (`/usr`, and `/bin`, `/lib*`, `/sbin` as the host has
//!   them: symlinks are recreated, directories bound), the interpreter prefixes, the policy's
//!   `read_roots`, the `read_write` binds (an interpreter run's workspace, read-write), and
//!   the few `/etc` files the C library and Python read ([`ETC`]); a minimal
//!   `/dev` (null, zero, full, random, urandom and the `fd` links); a fresh `/proc`; and a
//!   size-capped tmpfs at `/tmp` owned by the worker (its working directory). Nothing else —
//!   no `/home`, `/root`, `/run`, `/sys`, `/var`, and no host socket. The root itself is then
//!   made read-only.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use nix::sched::{CloneFlags, unshare};
use rustix::fs::StatVfsMountFlags;
use rustix::mount::{
    MountFlags, MountPropagationFlags, UnmountFlags, mount, mount_bind, mount_change,
    mount_remount, unmount,
};

use super::{View, ViewMode};

/// Host system directories of a sandbox root (bound when directories, recreated when
/// symlinks, skipped when absent).
const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// Host files and directories under `/etc` that a sandbox binds read-only when they exist: the
/// dynamic loader's cache, time zone, certificates and name resolution. Not `passwd`,
/// `shadow`, `group` or anything with secrets.
pub const ETC: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/protocols",
    "/etc/services",
];

/// Device nodes of the sandbox's `/dev` (bound from the host).
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom"];

/// Build `view` in a new mount namespace (`fresh_proc`: mount `/proc` for the call's PID
/// namespace).
pub(super) fn build(view: &View, fresh_proc: bool) -> Result<(), String> {
    unshare(CloneFlags::CLONE_NEWNS).map_err(|e| format!("unshare(mount): {e}"))?;
    mount_change(
        "/",
        MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
    )
    .map_err(|e| format!("making / private: {e}"))?;
    match view.mode {
        ViewMode::Host => {
            if fresh_proc {
                mount_proc(Path::new("/proc"))?;
            }
            reach(&view.read_only)
        }
        ViewMode::Sandbox => sandbox(view),
    }
}

pub(super) fn mount_proc(target: &Path) -> Result<(), String> {
    mount(
        "proc",
        target,
        "proc",
        MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
        None,
    )
    .map_err(|e| format!("mounting a fresh /proc on {}: {e}", target.display()))
}

fn tmpfs(target: &Path, options: &str, flags: MountFlags) -> Result<(), String> {
    let data = std::ffi::CString::new(options).map_err(|e| e.to_string())?;
    mount("tmpfs", target, "tmpfs", flags, data.as_c_str())
        .map_err(|e| format!("tmpfs on {}: {e}", target.display()))
}

/// Bind `source` on `target` (which must exist) and make the bind read-only, keeping the
/// flags the kernel locks on it (`nosuid`, `nodev`, `noexec`, atime) so that the remount
/// also works inside a user namespace.
fn bind_read_only(source: &Path, target: &Path) -> Result<(), String> {
    mount_bind(source, target)
        .map_err(|e| format!("binding {} on {}: {e}", source.display(), target.display()))?;
    let kept = rustix::fs::statvfs(target)
        .map(|s| s.f_flag)
        .map_err(|e| format!("statvfs {}: {e}", target.display()))?;
    let mut flags = MountFlags::BIND | MountFlags::RDONLY | MountFlags::NOSUID;
    for (have, want) in [
        (StatVfsMountFlags::NODEV, MountFlags::NODEV),
        (StatVfsMountFlags::NOEXEC, MountFlags::NOEXEC),
        (StatVfsMountFlags::NOATIME, MountFlags::NOATIME),
        (StatVfsMountFlags::NODIRATIME, MountFlags::NODIRATIME),
        (StatVfsMountFlags::RELATIME, MountFlags::RELATIME),
    ] {
        if kept.contains(have) {
            flags |= want;
        }
    }
    mount_remount(target, flags, "")
        .map_err(|e| format!("read-only remount of {}: {e}", target.display()))
}

/// `root` joined with the absolute `path`.
fn inside(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

fn mkdirs(path: &Path) -> Result<(), String> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(path)
        .map_err(|e| format!("mkdir {}: {e}", path.display()))
}

/// Create an empty mount point for `source` (a directory or a file) at `target`.
fn mount_point(source: &Path, target: &Path) -> Result<(), String> {
    let meta = fs::metadata(source).map_err(|e| format!("{}: {e}", source.display()))?;
    if meta.is_dir() {
        mkdirs(target)
    } else {
        if let Some(parent) = target.parent() {
            mkdirs(parent)?;
        }
        fs::File::create(target)
            .map(drop)
            .map_err(|e| format!("creating {}: {e}", target.display()))
    }
}

/// Host mode: cover each blocking ancestor with an empty tmpfs and bind the paths back.
fn reach(paths: &[PathBuf]) -> Result<(), String> {
    let mut by_blocker: BTreeMap<PathBuf, Vec<(PathBuf, fs::File)>> = BTreeMap::new();
    for path in paths {
        let Some(blocker) = blocking_ancestor(path) else {
            continue;
        };
        // Keep a handle: once the blocker is covered, the path is only reachable through it.
        let handle = fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        by_blocker
            .entry(blocker)
            .or_default()
            .push((path.clone(), handle));
    }
    for (blocker, paths) in by_blocker {
        tmpfs(
            &blocker,
            "size=64k,mode=0755",
            MountFlags::NOSUID | MountFlags::NODEV,
        )?;
        for (path, handle) in paths {
            mkdirs(&path)?;
            let via = PathBuf::from(format!("/proc/self/fd/{}", fd_number(&handle)));
            bind_read_only(&via, &path)?;
        }
    }
    Ok(())
}

fn fd_number(file: &fs::File) -> i32 {
    use std::os::fd::AsRawFd;
    file.as_raw_fd()
}

/// The highest ancestor of `path` (not `/`, not `path`) that others cannot traverse.
fn blocking_ancestor(path: &Path) -> Option<PathBuf> {
    let mut current = PathBuf::from("/");
    let components: Vec<Component> = path.components().collect();
    for component in components.iter().take(components.len().saturating_sub(1)) {
        if let Component::Normal(name) = component {
            current.push(name);
            let mode = fs::metadata(&current).ok()?.permissions().mode();
            if mode & 0o001 == 0 {
                return Some(current);
            }
        }
    }
    None
}

fn sandbox(view: &View) -> Result<(), String> {
    let root = view.root.as_path();
    tmpfs(
        root,
        "size=1m,mode=0755",
        MountFlags::NOSUID | MountFlags::NODEV,
    )?;
    let mut bound: Vec<PathBuf> = Vec::new();
    for sys in SYSTEM {
        let path = Path::new(sys);
        match fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(path).map_err(|e| format!("{sys}: {e}"))?;
                std::os::unix::fs::symlink(&target, inside(root, path))
                    .map_err(|e| format!("symlink {sys}: {e}"))?;
            }
            Ok(meta) if meta.is_dir() => {
                let target = inside(root, path);
                mkdirs(&target)?;
                bind_read_only(path, &target)?;
                bound.push(path.to_path_buf());
            }
            _ => {}
        }
    }
    for etc in ETC {
        let path = Path::new(etc);
        if fs::metadata(path).is_ok() {
            let target = inside(root, path);
            mount_point(path, &target)?;
            bind_read_only(path, &target)?;
        }
    }
    // The `/tmp` tmpfs first: binds of paths under the host's /tmp must land on it, not under it.
    let tmp = inside(root, Path::new("/tmp"));
    mkdirs(&tmp)?;
    let (uid, gid) = view.tmp_owner;
    tmpfs(
        &tmp,
        &format!("size={},mode=0700,uid={uid},gid={gid}", view.tmp_bytes),
        MountFlags::NOSUID | MountFlags::NODEV,
    )?;
    for path in &view.read_only {
        if bound.iter().any(|b| path.starts_with(b)) {
            continue;
        }
        let target = inside(root, path);
        mount_point(path, &target)?;
        bind_read_only(path, &target)?;
        bound.push(path.clone());
    }
    for path in &view.read_write {
        let target = inside(root, path);
        mount_point(path, &target)?;
        mount_bind(path, &target)
            .map_err(|e| format!("binding {} on {}: {e}", path.display(), target.display()))?;
        mount_remount(
            &target,
            MountFlags::BIND | MountFlags::NOSUID | MountFlags::NODEV,
            "",
        )
        .map_err(|e| format!("remount of {}: {e}", target.display()))?;
    }
    dev(&inside(root, Path::new("/dev")))?;
    let proc = inside(root, Path::new("/proc"));
    mkdirs(&proc)?;
    mount_proc(&proc)?;
    // pivot_root(".", ".") stacks the old root on top of the new one; detaching it leaves
    // only the new tree (no directory for the old root is needed).
    std::env::set_current_dir(root).map_err(|e| format!("chdir {}: {e}", root.display()))?;
    rustix::process::pivot_root(".", ".").map_err(|e| format!("pivot_root: {e}"))?;
    unmount(".", UnmountFlags::DETACH).map_err(|e| format!("detaching the old root: {e}"))?;
    std::env::set_current_dir("/").map_err(|e| format!("chdir /: {e}"))?;
    mount_remount(
        "/",
        MountFlags::BIND | MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV,
        "",
    )
    .map_err(|e| format!("read-only root: {e}"))
}

/// A minimal `/dev`: a small tmpfs with bound device nodes and the `fd` links, read-only.
fn dev(dev: &Path) -> Result<(), String> {
    mkdirs(dev)?;
    tmpfs(
        dev,
        "size=64k,mode=0755",
        MountFlags::NOSUID | MountFlags::NOEXEC,
    )?;
    for name in DEVICES {
        let source = Path::new("/dev").join(name);
        let target = dev.join(name);
        fs::File::create(&target).map_err(|e| format!("creating {}: {e}", target.display()))?;
        mount_bind(&source, &target).map_err(|e| format!("binding {}: {e}", source.display()))?;
    }
    for (link, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(target, dev.join(link))
            .map_err(|e| format!("symlink /dev/{link}: {e}"))?;
    }
    mount_remount(
        dev,
        MountFlags::BIND | MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NOEXEC,
        "",
    )
    .map_err(|e| format!("read-only /dev: {e}"))
}
