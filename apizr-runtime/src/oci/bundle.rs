//! The per-call source bundle mounted read-only at `/bundle`.
//!
//! `apizr-oci-<owner>.<32 hex>/` (0755) holds `original` (the bytes the user passed: `.py` or
//! `.ipynb`) and `source/<module path>.py` (the executable), directories 0555 and files 0444.
//! The worker does not read these files (the executable travels in the request and is
//! digest-checked), but user code sees the same layout as under the reference, and the
//! read-only mount is what makes "write to the bundle" fail. Removed on drop; the owner part
//! of the name (`BOOT.PIDNS.PID.START`, see [`crate::owner`]) lets a later sweep remove the
//! bundles of killed processes and only those.

use std::fs::{self, DirBuilder, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use crate::owner::Owner;

/// 32 lowercase hex characters from the kernel's CSPRNG (container and bundle names).
pub fn random_hex() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A bundle directory, removed on drop.
#[derive(Debug)]
pub struct Bundle {
    path: PathBuf,
}

impl Bundle {
    /// Write `original` and `executable_path` (`source/…`) under a fresh directory in `root`.
    pub fn create(
        root: &Path,
        original: &[u8],
        executable_path: &str,
        executable: &[u8],
    ) -> io::Result<Bundle> {
        let relative = Path::new(executable_path);
        let safe = relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
        if !safe || !executable_path.starts_with("source/") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "executable path must be source/…",
            ));
        }
        let path = root.join(dir_name()?);
        let text = path.to_string_lossy();
        if text.contains(',') || text.contains('\n') {
            // A mount specification cannot carry these safely (the reference refuses them too).
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "bundle path contains ',' or a newline",
            ));
        }
        DirBuilder::new().mode(0o755).create(&path)?;
        let bundle = Bundle { path };
        write_file(&bundle.path.join("original"), original)?;
        let target = bundle.path.join(relative);
        if let Some(parent) = target.parent() {
            DirBuilder::new()
                .recursive(true)
                .mode(0o755)
                .create(parent)?;
        }
        write_file(&target, executable)?;
        // Directories below the root become 0555 once filled.
        let mut dir = target.parent().map(Path::to_path_buf);
        while let Some(d) = dir {
            if d == bundle.path {
                break;
            }
            fs::set_permissions(&d, fs::Permissions::from_mode(0o555))?;
            dir = d.parent().map(Path::to_path_buf);
        }
        Ok(bundle)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Prefix of every bundle directory name.
pub const DIR_PREFIX: &str = "apizr-oci-";

/// `apizr-oci-<owner>.<hex>`, or `apizr-oci-<hex>` when this process cannot name itself.
fn dir_name() -> io::Result<String> {
    let hex = random_hex()?;
    Ok(match Owner::current() {
        Some(owner) => format!("{DIR_PREFIX}{}.{hex}", owner.encode().replace('/', ".")),
        None => format!("{DIR_PREFIX}{hex}"),
    })
}

/// The owner recorded in a bundle directory name.
pub fn dir_owner(name: &str) -> Option<Owner> {
    let (owner, _hex) = name.strip_prefix(DIR_PREFIX)?.rsplit_once('.')?;
    Owner::decode(&owner.replace('.', "/"))
}

/// Remove a bundle directory (its subdirectories are read-only).
pub fn remove_dir(path: &Path) -> io::Result<()> {
    make_writable(path);
    fs::remove_dir_all(path)
}

fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o444)
        .open(path)?;
    file.write_all(bytes)
}

fn make_writable(dir: &Path) {
    let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o755));
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                make_writable(&entry.path());
            }
        }
    }
}

impl Drop for Bundle {
    fn drop(&mut self) {
        let _ = remove_dir(&self.path);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn layout_modes_and_removal() {
        let root = std::env::temp_dir();
        let bundle = Bundle::create(&root, b"orig", "source/pkg/mod.py", b"x = 1\n").unwrap();
        let path = bundle.path().to_path_buf();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&path), 0o755);
        assert_eq!(mode(&path.join("original")), 0o444);
        assert_eq!(mode(&path.join("source")), 0o555);
        assert_eq!(mode(&path.join("source/pkg")), 0o555);
        assert_eq!(mode(&path.join("source/pkg/mod.py")), 0o444);
        assert_eq!(
            fs::read(path.join("source/pkg/mod.py")).unwrap(),
            b"x = 1\n"
        );
        let name = path.file_name().unwrap().to_str().unwrap();
        assert_eq!(dir_owner(name).as_ref(), Owner::current());
        drop(bundle);
        assert!(!path.exists());
        assert!(Bundle::create(&root, b"", "../x.py", b"").is_err());
        assert_eq!(random_hex().unwrap().len(), 32);
    }
}
