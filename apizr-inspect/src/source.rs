//! Source admission: which files we read, how we open them, and the logical module name.
//!
//! The reference resolves the given path (following symlinks, rejecting loops), then opens every
//! component of the *resolved* path without following links, and requires a regular file of at
//! most 16 MiB. We do the same with `openat(O_NOFOLLOW)` per component (through `rustix`, so no
//! unsafe code), which also closes the window in which a component could be swapped for a link
//! after resolution. A FIFO or device named `x.py` is opened non-blocking and refused after
//! `fstat`, so admission never hangs. At most `limit + 1` bytes are read, so a huge (or growing)
//! file costs no more than the limit.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use apizr_ir::SourceKind;
use rustix::fs::{Mode, OFlags};
use unicode_normalization::UnicodeNormalization;

use crate::error::InspectError;

/// 16 MiB, for `.py` and `.ipynb` alike.
pub const MAX_SOURCE_BYTES: u64 = 16 * 1024 * 1024;

/// Python's hard keywords (`keyword.kwlist` of CPython 3.11); soft keywords are fine.
const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// The source kind selected by the exact suffix of the given path (`Path.suffix` semantics:
/// `.py` is a hidden file without suffix, `x.PY` is not Python).
pub fn source_kind(path: &Path) -> Result<SourceKind, InspectError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("py") => Ok(SourceKind::Python),
        Some("ipynb") => Ok(SourceKind::Notebook),
        _ => Err(InspectError::UnsupportedSuffix {
            path: path.to_path_buf(),
        }),
    }
}

/// Read a source file: suffix check, no-follow open, regular file, size limit.
pub fn read_source(path: &Path) -> Result<(Vec<u8>, SourceKind), InspectError> {
    let kind = source_kind(path)?;
    let resolved = resolve(path)?;
    let file = open_no_follow(path, &resolved)?;
    let bytes = read_bounded(path, file, MAX_SOURCE_BYTES)?;
    Ok((bytes, kind))
}

fn read_error(path: &Path, message: impl Into<String>) -> InspectError {
    InspectError::Read {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

fn io_message(error: &std::io::Error) -> String {
    if error.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
        return "symbolic link loop".into();
    }
    match error.kind() {
        ErrorKind::NotFound => "no such file or directory".into(),
        ErrorKind::PermissionDenied => "permission denied".into(),
        ErrorKind::NotADirectory => "a path component is not a directory".into(),
        ErrorKind::IsADirectory => "is a directory, not a regular file".into(),
        _ => error.to_string(),
    }
}

/// `Path.resolve()`: an absolute path with every symlink followed. Loops are an error; a
/// missing target (including a dangling link) is reported as such.
fn resolve(path: &Path) -> Result<PathBuf, InspectError> {
    // `Path` normalisation drops a trailing slash (`x.py/` names the file `x.py`).
    let normal: PathBuf = path.components().collect();
    match std::fs::canonicalize(&normal) {
        Ok(resolved) => Ok(resolved),
        Err(error) if error.kind() == ErrorKind::NotFound => {
            let dangling = std::fs::symlink_metadata(&normal)
                .map(|m| m.file_type().is_symlink())
                .unwrap_or(false);
            if dangling {
                Err(read_error(
                    path,
                    "dangling symbolic link (its target does not exist)",
                ))
            } else {
                Err(read_error(path, "no such file or directory"))
            }
        }
        Err(error) => Err(read_error(path, io_message(&error))),
    }
}

/// Open an absolute, resolved path component by component, never following a symlink.
fn open_no_follow(shown: &Path, resolved: &Path) -> Result<File, InspectError> {
    let errno = |e: rustix::io::Errno| {
        let error = std::io::Error::from(e);
        if e == rustix::io::Errno::LOOP {
            read_error(shown, "a path component was replaced by a symbolic link")
        } else {
            read_error(shown, io_message(&error))
        }
    };
    let dir_flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut dir: OwnedFd = rustix::fs::open("/", dir_flags, Mode::empty()).map_err(errno)?;
    let mut names: Vec<&std::ffi::OsStr> = Vec::new();
    for component in resolved.components() {
        match component {
            Component::RootDir => {}
            Component::Normal(name) => names.push(name),
            // `canonicalize` never yields these; refuse rather than guess.
            Component::Prefix(_) | Component::CurDir | Component::ParentDir => {
                return Err(read_error(shown, "could not resolve the path"));
            }
        }
    }
    let Some((last, parents)) = names.split_last() else {
        return Err(read_error(shown, "is a directory, not a regular file"));
    };
    for name in parents {
        dir = rustix::fs::openat(&dir, *name, dir_flags, Mode::empty()).map_err(errno)?;
    }
    let file_flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(&dir, *last, file_flags, Mode::empty()).map_err(errno)?;
    let stat = rustix::fs::fstat(&fd).map_err(errno)?;
    let file_type = rustix::fs::FileType::from_raw_mode(stat.st_mode);
    match file_type {
        rustix::fs::FileType::RegularFile => Ok(File::from(fd)),
        rustix::fs::FileType::Directory => {
            Err(read_error(shown, "is a directory, not a regular file"))
        }
        _ => Err(read_error(
            shown,
            "is not a regular file (device, FIFO or socket)",
        )),
    }
}

/// Read at most `limit + 1` bytes; more than `limit` is [`InspectError::TooLarge`].
fn read_bounded(shown: &Path, file: File, limit: u64) -> Result<Vec<u8>, InspectError> {
    let declared = file.metadata().map(|m| m.len()).unwrap_or(0);
    if declared > limit {
        return Err(InspectError::TooLarge {
            size: declared,
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(declared).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| read_error(shown, io_message(&e)))?;
    if bytes.len() as u64 > limit {
        return Err(InspectError::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// The file stem of the given path (not of its symlink target), validated as a module name.
///
/// Like the reference, a package's `__init__.py` is `__init__` here (the name is part of every
/// digest); [`crate::inspect_path`] adds a note with the name Python imports it under.
pub fn default_module_name(path: &Path) -> Result<String, InspectError> {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    validate_module_name(stem)
}

/// The name of the directory holding `path`, when it is a valid module name (`..` and
/// symbolic links resolved when the directory exists).
pub fn package_name(path: &Path) -> Option<String> {
    let absolute = std::path::absolute(path).ok()?;
    let parent = absolute.parent()?;
    let resolved = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
    let directory = resolved.file_name()?.to_str()?;
    validate_module_name(directory).ok()
}

/// NFKC-normalise and check a dotted module name: every part a Python identifier (PEP 3131)
/// and not a hard keyword. Returns the normalised name.
pub fn validate_module_name(name: &str) -> Result<String, InspectError> {
    let normal: String = name.nfkc().collect();
    if normal.split('.').all(is_module_part) {
        Ok(normal)
    } else {
        Err(InspectError::ModuleName { name: name.into() })
    }
}

fn is_module_part(part: &str) -> bool {
    let mut chars = part.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first == '_' || unicode_ident::is_xid_start(first))
        && chars.all(unicode_ident::is_xid_continue)
        && !KEYWORDS.contains(&part)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_is_named_after_its_directory() {
        let name = |p: &str| package_name(Path::new(p));
        assert_eq!(name("/x/pkg/__init__.py").as_deref(), Some("pkg"));
        assert_eq!(name("/x/my-pkg/__init__.py"), None);
        assert_eq!(name("/x/class/__init__.py"), None);
    }

    #[test]
    fn module_names_match_the_oracle() {
        // Vectors observed with the reference CLI (`--module-name`).
        let ok = [
            ("_", "_"),
            ("a1", "a1"),
            ("é", "é"),
            ("℘", "℘"),
            ("__debug__", "__debug__"),
            ("a.b.c", "a.b.c"),
            ("ﬁle", "file"),
            ("x²", "x2"),
            ("print", "print"),
            ("soft.type", "soft.type"),
            ("match", "match"),
            ("ｍａｔｃｈ.x", "match.x"),
            ("Ｕnicode", "Unicode"),
        ];
        for (input, expected) in ok {
            assert_eq!(validate_module_name(input).unwrap(), expected, "{input}");
        }
        let bad = [
            "", "1a", "a-b", "a.b.", ".a", "a b", "x.True", "x.None", "²x", "async", "await",
            "a。b", "if", "a..b", "my-file",
        ];
        for input in bad {
            assert!(validate_module_name(input).is_err(), "{input}");
        }
    }

    #[test]
    fn suffix_is_exact() {
        for ok in ["a.py", "x.tar.py", "..py", "n.ipynb", "dir/x.py/"] {
            assert!(source_kind(Path::new(ok)).is_ok(), "{ok}");
        }
        for bad in [
            "", ".py", "x.PY", "x.pyw", "x.txt", "x", "x.py.txt", "x.ipynb~",
        ] {
            assert!(source_kind(Path::new(bad)).is_err(), "{bad}");
        }
    }
}
