//! The distribution metadata a package directory holds at its root (`*.dist-info/METADATA`,
//! as an unpacked wheel has it), which bundles carry next to the package's files and the
//! worker serves to `importlib.metadata` (`_PackageFinder.find_distributions`, `worker.py`).
//!
//! One reader for both sides: [`metadata_files`] is what `generate`/`serve DIR` carry, and
//! [`version_found`] is what readiness v2 asks before it proves `importlib.metadata.version(n)`
//! (humanize's `__version__ = importlib.metadata.version(__name__)`). CPython 3.11 finds a
//! distribution by the name part of the directory (`low.rpartition(".")[0].partition("-")[0]`,
//! normalised by `Prepared.normalize`) and reads `METADATA` with `read_text`: no match raises
//! `PackageNotFoundError`, a file that is not UTF-8 `UnicodeDecodeError`; the email parser
//! accepts any text (the version is `None` without a `Version` header). A worker has no
//! directory on `sys.path` for the package: only the carried files exist there, so a
//! `*.dist-info` without a `METADATA` file (which CPython would read as empty) is not found.

use std::path::Path;

/// CPython's `importlib.metadata.Prepared.normalize`: PEP 503 (runs of `-`, `_`, `.` become
/// one `-`, lower case), then dashes as underscores.
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_run = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !in_run {
                out.push('_');
            }
            in_run = true;
        } else {
            out.extend(c.to_lowercase());
            in_run = false;
        }
    }
    out
}

/// The distribution name a metadata directory stands for, as `Lookup` computes it from an
/// entry of a `sys.path` directory; `None` for entries that are no metadata directory.
fn distribution_of(entry: &str) -> Option<String> {
    let low = entry.to_lowercase();
    if !(low.ends_with(".dist-info") || low.ends_with(".egg-info")) {
        return None;
    }
    let stem = low.rsplit_once('.').map_or(low.as_str(), |(stem, _)| stem);
    let name = stem.split_once('-').map_or(stem, |(name, _)| name);
    Some(normalize(name))
}

/// `<dir>.dist-info/METADATA` → bytes, for every `*.dist-info` directory directly in `root`
/// holding a regular `METADATA` file (symbolic links are not followed), sorted by path. These
/// are the files a bundle of the package carries.
pub fn metadata_files(root: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if !name.ends_with(".dist-info") || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path().join("METADATA");
        let regular = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file());
        if let (true, Ok(bytes)) = (regular, std::fs::read(&path)) {
            out.push((format!("{name}/METADATA"), bytes));
        }
    }
    out.sort();
    out
}

/// Whether `importlib.metadata.version(name)` finds a version in a worker serving this
/// directory's carried metadata: `name` nonempty, and every metadata entry of `root` whose
/// distribution is `name` (at least one) is a carried `*.dist-info` ([`metadata_files`]) whose
/// `METADATA` is UTF-8 (the worker decodes it; the email parser accepts any text).
pub fn version_found(root: &Path, name: &str) -> bool {
    let wanted = normalize(name);
    if name.is_empty() {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return false;
    };
    let carried = metadata_files(root);
    let mut found = false;
    for entry in entries.flatten() {
        let Ok(entry) = entry.file_name().into_string() else {
            continue;
        };
        if distribution_of(&entry).as_deref() != Some(wanted.as_str()) {
            continue;
        }
        let key = format!("{entry}/METADATA");
        let readable = carried
            .iter()
            .any(|(path, bytes)| *path == key && std::str::from_utf8(bytes).is_ok());
        if !readable {
            return false;
        }
        found = true;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_normalise_as_cpython_does() {
        assert_eq!(normalize("Foo.Bar--baz_Q"), "foo_bar_baz_q");
        assert_eq!(
            distribution_of("Humanize-4.9.0.dist-info").unwrap(),
            "humanize"
        );
        assert_eq!(
            distribution_of("zope.interface-6.egg-info").unwrap(),
            "zope_interface"
        );
        assert_eq!(distribution_of("humanize"), None);
    }

    #[test]
    fn a_version_is_found_only_with_every_match_readable() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert!(!version_found(root, "pkg"));
        std::fs::create_dir(root.join("pkg-1.0.dist-info")).unwrap();
        assert!(!version_found(root, "pkg"), "no METADATA");
        std::fs::write(root.join("pkg-1.0.dist-info/METADATA"), "Name: pkg\n").unwrap();
        assert!(version_found(root, "PKG"));
        assert!(!version_found(root, ""));
        std::fs::write(root.join("pkg-1.0.dist-info/METADATA"), b"Name: \xff\n").unwrap();
        assert!(!version_found(root, "pkg"), "not UTF-8");
        std::fs::write(root.join("pkg-1.0.dist-info/METADATA"), "Name: pkg\n").unwrap();
        std::fs::create_dir(root.join("Pkg-2.0.egg-info")).unwrap();
        assert!(!version_found(root, "pkg"), "an egg-info is never carried");
        assert_eq!(
            metadata_files(root),
            [(
                "pkg-1.0.dist-info/METADATA".to_string(),
                b"Name: pkg\n".to_vec()
            )]
        );
    }
}
