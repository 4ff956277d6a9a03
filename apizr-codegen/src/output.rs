//! Output-directory safety and the only write of `generate`.
//!
//! Rules: no `..` component anywhere in the given path (even `../same/dir`); no component may
//! be a symbolic link; the directory may exist only if it is empty. The tree is written into a
//! fresh sibling temp directory (files created exclusively (`O_EXCL`, so never through a symlink), 0644; directories 0755) and then
//! renamed into place, so a failure part-way leaves no half-written project behind and a
//! concurrent writer cannot interleave with us.

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Component, Path, PathBuf};

use crate::model::{FileTree, GenerateError};

const NOT_EMPTY: &str = "Output directory must be empty; no files were overwritten";

fn io(error: impl std::fmt::Display) -> GenerateError {
    GenerateError::Io(error.to_string())
}

/// Refuse `..`, symlinked components, a non-directory or a non-empty directory.
pub fn check_path(path: &Path) -> Result<(), GenerateError> {
    if path.as_os_str().is_empty() {
        return Err(GenerateError::Input("Output path is empty".into()));
    }
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(GenerateError::Input(
            "Output path cannot contain parent traversal".into(),
        ));
    }
    let mut prefix = PathBuf::new();
    for component in path.components() {
        prefix.push(component);
        if matches!(component, Component::RootDir | Component::CurDir) {
            continue;
        }
        match fs::symlink_metadata(&prefix) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(GenerateError::Input(format!(
                    "Output path component is a symbolic link: {}",
                    prefix.display()
                )));
            }
            Ok(meta) if !meta.is_dir() => {
                return Err(GenerateError::Input(format!(
                    "Output path component is not a directory: {}",
                    prefix.display()
                )));
            }
            Ok(_) => {}
            // Everything below a missing component is missing too.
            Err(_) => return Ok(()),
        }
    }
    let mut entries = fs::read_dir(path).map_err(io)?;
    if entries.next().is_some() {
        return Err(GenerateError::Input(NOT_EMPTY.into()));
    }
    Ok(())
}

/// The absolute, `.`-free form of `path` (relative paths are taken from the current
/// directory). None when the current directory is unknown.
pub fn absolute_target(path: &Path) -> Option<PathBuf> {
    let base = if path.is_absolute() {
        PathBuf::new()
    } else {
        std::env::current_dir().ok()?
    };
    let mut out = base;
    for component in path.components() {
        if component != Component::CurDir {
            out.push(component);
        }
    }
    Some(out)
}

fn create_dir(path: &Path) -> Result<(), GenerateError> {
    fs::DirBuilder::new()
        .mode(0o755)
        .create(path)
        .map_err(|e| io(format!("{}: {e}", path.display())))
}

/// Write `tree` to `target` (checked again, then temp dir + rename).
pub fn write_tree(target: &Path, tree: &FileTree) -> Result<(), GenerateError> {
    check_path(target)?;
    let absolute = absolute_target(target).ok_or_else(|| io("current directory is unknown"))?;
    let parent = absolute
        .parent()
        .ok_or_else(|| GenerateError::Input("Output path has no parent directory".into()))?;
    let name = absolute
        .file_name()
        .ok_or_else(|| GenerateError::Input("Output path has no final component".into()))?;
    fs::DirBuilder::new()
        .mode(0o755)
        .recursive(true)
        .create(parent)
        .map_err(|e| io(format!("{}: {e}", parent.display())))?;
    let temp = parent.join(format!(
        ".{}.apizr-generate-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    create_dir(&temp)?;
    let written = write_all(&temp, tree).and_then(|()| {
        // Renaming onto an existing directory succeeds only if it is (still) empty.
        fs::rename(&temp, &absolute).map_err(|e| {
            if e.kind() == std::io::ErrorKind::DirectoryNotEmpty {
                GenerateError::Input(NOT_EMPTY.into())
            } else {
                io(format!("{}: {e}", absolute.display()))
            }
        })
    });
    if written.is_err() {
        let _ = fs::remove_dir_all(&temp);
    }
    written
}

fn write_all(root: &Path, tree: &FileTree) -> Result<(), GenerateError> {
    for (path, bytes) in tree {
        let relative = Path::new(path);
        if relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
        {
            return Err(io(format!("refusing to write unsafe path {path}")));
        }
        let full = root.join(relative);
        if let Some(dir) = full.parent()
            && !dir.exists()
        {
            fs::DirBuilder::new()
                .mode(0o755)
                .recursive(true)
                .create(dir)
                .map_err(|e| io(format!("{}: {e}", dir.display())))?;
        }
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(&full)
            .map_err(|e| io(format!("{}: {e}", full.display())))?;
        file.write_all(bytes)
            .map_err(|e| io(format!("{}: {e}", full.display())))?;
    }
    Ok(())
}
