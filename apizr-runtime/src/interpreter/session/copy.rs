//! Moving files between the host and a session's workspace.
//!
//! Rules (the workspace is written by the sandboxed code, the host side by the caller):
//! * In the workspace every path is resolved beneath it with no link on the way (`openat2`
//!   `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`), so a link the code planted cannot redirect a
//!   copy to a host file.
//! * `copy_in` of a directory copies regular files and directories only; a link or a special
//!   file anywhere in the host tree refuses the whole copy before anything is written (copying
//!   what a link points to could carry host files the caller never meant to share).
//! * `copy_out` never overwrites: the host destination must not exist.
//! * Docker sessions ([`copy_in_through`]): the same host-side walk and refusals; each
//!   directory and file is handed to the container's PID 1, which applies the same rule
//!   inside (`O_NOFOLLOW` one component at a time).

use std::fs::{self, File};
use std::io;
use std::os::fd::AsFd;
use std::path::{Component, Path};

use rustix::fs::{Mode, OFlags, ResolveFlags, mkdirat, openat2};

/// Bytes and files copied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Copied {
    pub bytes: u64,
    pub files: u64,
}

/// A relative path of plain names (no `..`, no root).
pub(super) fn check_relative(path: &str) -> Result<(), String> {
    let p = Path::new(path);
    if path.is_empty() || !p.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err("expected a relative path of plain names beneath the workspace".into());
    }
    Ok(())
}

const BENEATH: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// What one entry of a host tree is.
enum Entry {
    Dir(String),
    File(String),
}

/// The host tree under `source` (relative names, parents first), or the first entry that is
/// neither a regular file nor a directory.
fn walk(source: &Path) -> Result<Vec<Entry>, (String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![String::new()];
    while let Some(rel) = stack.pop() {
        let dir = if rel.is_empty() {
            source.to_path_buf()
        } else {
            source.join(&rel)
        };
        let mut names: Vec<_> = fs::read_dir(&dir)
            .map_err(|e| (dir.display().to_string(), e.to_string()))?
            .filter_map(Result::ok)
            .collect();
        names.sort_by_key(fs::DirEntry::file_name);
        for entry in names {
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let kind = entry
                .file_type()
                .map_err(|e| (entry.path().display().to_string(), e.to_string()))?;
            if kind.is_dir() {
                out.push(Entry::Dir(rel.clone()));
                stack.push(rel);
            } else if kind.is_file() {
                out.push(Entry::File(rel));
            } else {
                let what = if kind.is_symlink() {
                    "a symbolic link (never followed or copied)"
                } else {
                    "not a regular file or directory"
                };
                return Err((entry.path().display().to_string(), what.into()));
            }
        }
    }
    Ok(out)
}

/// Copy the host file or directory `source` to `destination` beneath `workspace`, owned by
/// `uid` when given. Errors name the path and the reason.
pub(super) fn copy_in(
    workspace: &Path,
    source: &Path,
    destination: &str,
    uid: Option<u32>,
) -> Result<Copied, (String, String)> {
    let at_dest = |reason: String| (destination.to_string(), reason);
    check_relative(destination).map_err(at_dest)?;
    let meta =
        fs::symlink_metadata(source).map_err(|e| (source.display().to_string(), e.to_string()))?;
    let root = File::open(workspace).map_err(|e| at_dest(e.to_string()))?;
    if meta.is_file() {
        let bytes = copy_file(&root, source, destination, uid).map_err(at_dest)?;
        return Ok(Copied { bytes, files: 1 });
    }
    if !meta.is_dir() {
        return Err((
            source.display().to_string(),
            "not a regular file or directory (links are never followed)".into(),
        ));
    }
    let entries = walk(source)?;
    let mut copied = Copied::default();
    make_dir(&root, destination, uid).map_err(at_dest)?;
    for entry in entries {
        match entry {
            Entry::Dir(rel) => {
                make_dir(&root, &format!("{destination}/{rel}"), uid)
                    .map_err(|r| (format!("{destination}/{rel}"), r))?;
            }
            Entry::File(rel) => {
                let to = format!("{destination}/{rel}");
                copied.bytes +=
                    copy_file(&root, &source.join(&rel), &to, uid).map_err(|r| (to.clone(), r))?;
                copied.files += 1;
            }
        }
    }
    Ok(copied)
}

/// Writes one directory (`None`) or file beneath a workspace the host cannot open itself.
type Put<'a> = dyn FnMut(&str, Option<&[u8]>) -> Result<(), String> + 'a;

/// [`copy_in`] for a workspace reached through `put(relative name, Some(bytes) | None for a
/// directory)`: the host side is walked and refused exactly as in [`copy_in`].
pub(super) fn copy_in_through(
    source: &Path,
    destination: &str,
    mut put: impl FnMut(&str, Option<&[u8]>) -> Result<(), String>,
) -> Result<Copied, (String, String)> {
    fn at(name: &str) -> impl FnOnce(String) -> (String, String) + '_ {
        move |reason| (name.to_string(), reason)
    }
    check_relative(destination).map_err(at(destination))?;
    let meta =
        fs::symlink_metadata(source).map_err(|e| (source.display().to_string(), e.to_string()))?;
    let send_file = |put: &mut Put<'_>, from: &Path, to: &str| -> Result<u64, (String, String)> {
        let bytes = read_regular(from).map_err(|r| (from.display().to_string(), r))?;
        put(to, Some(&bytes)).map_err(at(to))?;
        Ok(bytes.len() as u64)
    };
    if meta.is_file() {
        let bytes = send_file(&mut put, source, destination)?;
        return Ok(Copied { bytes, files: 1 });
    }
    if !meta.is_dir() {
        return Err((
            source.display().to_string(),
            "not a regular file or directory (links are never followed)".into(),
        ));
    }
    let entries = walk(source)?;
    let mut dirs = vec![destination.to_string()];
    let mut files = Vec::new();
    for entry in entries {
        match entry {
            Entry::Dir(rel) => dirs.push(format!("{destination}/{rel}")),
            Entry::File(rel) => files.push(rel),
        }
    }
    let mut copied = Copied::default();
    for dir in &dirs {
        put(dir, None).map_err(at(dir))?;
    }
    for rel in files {
        let to = format!("{destination}/{rel}");
        copied.bytes += send_file(&mut put, &source.join(&rel), &to)?;
        copied.files += 1;
    }
    Ok(copied)
}

/// The bytes of the host regular file `from` (never through a link).
fn read_regular(from: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = File::options()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(from)
        .map_err(|e| e.to_string())?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err("not a regular file".into());
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// Create the directory `name` beneath `root` (an existing directory is fine; a link is not).
fn make_dir(root: &File, name: &str, uid: Option<u32>) -> Result<(), String> {
    let path = Path::new(name);
    let (parent, leaf) = match (path.parent(), path.file_name()) {
        (Some(p), Some(l)) => (p, l),
        _ => return Err("expected a relative path of plain names".into()),
    };
    let parent_fd = if parent.as_os_str().is_empty() {
        root.try_clone().map_err(|e| e.to_string())?
    } else {
        File::from(
            openat2(
                root,
                parent,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
                BENEATH,
            )
            .map_err(|e| format!("not a directory beneath the workspace without links: {e}"))?,
        )
    };
    match mkdirat(&parent_fd, leaf, Mode::from_raw_mode(0o700)) {
        Ok(()) => {}
        Err(rustix::io::Errno::EXIST) => {}
        Err(e) => return Err(format!("mkdir: {e}")),
    }
    let dir = File::from(
        openat2(
            root,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
            BENEATH,
        )
        .map_err(|e| format!("not a directory beneath the workspace without links: {e}"))?,
    );
    chown(&dir, uid)
}

/// Copy the host regular file `from` to `name` beneath `root` (replacing a regular file).
fn copy_file(root: &File, from: &Path, name: &str, uid: Option<u32>) -> Result<u64, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut source = File::options()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(from)
        .map_err(|e| format!("{}: {e}", from.display()))?;
    if !source.metadata().is_ok_and(|m| m.is_file()) {
        return Err(format!("{}: not a regular file", from.display()));
    }
    let fd = openat2(
        root,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
        BENEATH,
    )
    .map_err(|e| format!("not writable beneath the workspace without links: {e}"))?;
    let mut to = File::from(fd);
    if !to.metadata().is_ok_and(|m| m.is_file()) {
        return Err("not a regular file".into());
    }
    let copied = io::copy(&mut source, &mut to).map_err(|e| e.to_string())?;
    chown(&to, uid)?;
    Ok(copied)
}

/// The code runs as the session's uid: what is copied in is its own, like what it writes.
fn chown(file: &impl AsFd, uid: Option<u32>) -> Result<(), String> {
    let Some(uid) = uid else { return Ok(()) };
    nix::unistd::fchown(
        file,
        Some(nix::unistd::Uid::from_raw(uid)),
        Some(nix::unistd::Gid::from_raw(uid)),
    )
    .map_err(|e| format!("chown: {e}"))
}

/// Copy the workspace's regular file `source` (relative; no link anywhere on the way) to the
/// host path `destination`, which must not exist. Returns the bytes copied.
pub(super) fn copy_out(
    workspace: &Path,
    source: &str,
    destination: &Path,
) -> Result<u64, (String, String)> {
    let at_source = |reason: String| (source.to_string(), reason);
    check_relative(source).map_err(at_source)?;
    let mut from = crate::interpreter::artifacts::open_beneath(workspace, source, None)
        .ok_or_else(|| {
            at_source("not a regular file beneath the workspace (links are never followed)".into())
        })?;
    let mut to = File::options()
        .write(true)
        .create_new(true)
        .open(destination)
        .map_err(|e| (destination.display().to_string(), e.to_string()))?;
    io::copy(&mut from, &mut to).map_err(|e| at_source(e.to_string()))
}
