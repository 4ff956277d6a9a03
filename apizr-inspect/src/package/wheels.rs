//! Which import names a declared distribution provides, read from its wheel — never guessed.
//!
//! A distribution's name need not be the name its code is imported by (`PyYAML` installs
//! `yaml` and `_yaml`). The exact mapping is what the wheel installs: every file of a wheel
//! goes to `site-packages` under its own path, except the `*.dist-info/` directory (metadata)
//! and `*.data/<scheme>/` (only `purelib`/`platlib` land in `site-packages`). So the import
//! names are the first components of those paths: a directory (`yaml/__init__.py` → `yaml`)
//! or a module file (`six.py` → `six`, `_yaml.cpython-311-x86_64-linux-gnu.so` → `_yaml`).
//! The paths are read from the zip's central directory, which stores names uncompressed, so
//! no file is decompressed; the distribution is the wheel file name's first component (the
//! wheel naming convention, PEP 427), normalised as pip compares names.
//!
//! The wheels are the ones the bundle installs (`generate --wheelhouse DIR`), given to
//! `inspect DIR --readiness v2 --wheelhouse DIR` too, so readiness and the image agree.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::readiness::v2::package::normalise;

/// Largest wheel read (the central directory is at its end; the whole file is read).
const MAX_WHEEL_BYTES: u64 = 256 << 20;

/// A wheel or wheelhouse that cannot be read; the message names the file.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct WheelError {
    pub path: String,
    pub message: String,
}

/// Import name → normalised distribution name, for every `*.whl` directly in `dir`.
pub fn wheelhouse_imports(dir: &Path) -> Result<BTreeMap<String, String>, WheelError> {
    let failed = |path: &Path, message: String| WheelError {
        path: path.display().to_string(),
        message,
    };
    let entries = std::fs::read_dir(dir).map_err(|e| failed(dir, e.to_string()))?;
    let mut wheels: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    wheels.sort();
    let mut out = BTreeMap::new();
    for wheel in wheels {
        let size = std::fs::metadata(&wheel).map_err(|e| failed(&wheel, e.to_string()))?;
        if size.len() > MAX_WHEEL_BYTES {
            return Err(failed(
                &wheel,
                format!("larger than {MAX_WHEEL_BYTES} bytes"),
            ));
        }
        let bytes = std::fs::read(&wheel).map_err(|e| failed(&wheel, e.to_string()))?;
        let name = wheel.file_name().and_then(|n| n.to_str()).unwrap_or("");
        add_wheel(&mut out, name, &bytes).map_err(|m| failed(&wheel, m))?;
    }
    Ok(out)
}

/// [`wheelhouse_imports`] for wheels already read (file name → bytes): the wheelhouse
/// `generate --wheelhouse` puts in the bundle.
pub fn wheel_files_imports<'w>(
    wheels: impl IntoIterator<Item = (&'w str, &'w [u8])>,
) -> Result<BTreeMap<String, String>, WheelError> {
    let mut out = BTreeMap::new();
    for (name, bytes) in wheels {
        add_wheel(&mut out, name, bytes).map_err(|message| WheelError {
            path: name.to_string(),
            message,
        })?;
    }
    Ok(out)
}

/// The import names of wheel `name` (its file name) with `bytes`, mapped to its distribution.
fn add_wheel(out: &mut BTreeMap<String, String>, name: &str, bytes: &[u8]) -> Result<(), String> {
    let distribution = name
        .split('-')
        .next()
        .filter(|d| !d.is_empty() && name.matches('-').count() >= 4)
        .ok_or_else(|| {
            "not a wheel file name (`{distribution}-{version}-{python}-{abi}-{platform}.whl`)"
                .to_string()
        })?;
    for import in wheel_imports(bytes)? {
        out.insert(import, normalise(distribution));
    }
    Ok(())
}

/// The top-level import names a wheel's files install (see the module documentation).
pub fn wheel_imports(zip: &[u8]) -> Result<BTreeSet<String>, String> {
    let mut out = BTreeSet::new();
    for path in central_directory(zip)? {
        let mut parts = path.split('/');
        let Some(first) = parts.next() else { continue };
        let installed = if first.ends_with(".dist-info") {
            continue;
        } else if first.ends_with(".data") {
            match (parts.next(), parts.next()) {
                (Some("purelib" | "platlib"), Some(rest)) if !rest.is_empty() => {
                    let last = parts.next().is_none();
                    (rest, last)
                }
                _ => continue,
            }
        } else {
            (first, parts.next().is_none())
        };
        let (component, is_file) = installed;
        let module = match is_file {
            // A module file: its name up to the first dot (`six.py`, `_yaml.cpython-311-….so`).
            true => match component.split_once('.') {
                Some((stem, ext)) if is_module_suffix(ext) => stem,
                _ => continue,
            },
            false => component,
        };
        if is_identifier(module) {
            out.insert(module.to_string());
        }
    }
    Ok(out)
}

fn is_module_suffix(ext: &str) -> bool {
    ext == "py" || ext == "pyc" || ext.ends_with("so") || ext == "pyd"
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// The file names of a zip archive's central directory (no ZIP64: wheels of that size are
/// refused by the size bound first).
fn central_directory(zip: &[u8]) -> Result<Vec<String>, String> {
    const END: u32 = 0x0605_4b50;
    const ENTRY: u32 = 0x0201_4b50;
    let u16_at = |at: usize| -> Option<usize> {
        zip.get(at..at + 2)
            .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]])))
    };
    let u32_at = |at: usize| -> Option<u32> {
        zip.get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let bad = || "not a zip archive (no central directory)".to_string();
    // The end record is the last 22 bytes plus a comment of at most 65535 bytes.
    let lowest = zip.len().saturating_sub(22 + 65535);
    let end = (lowest..zip.len().saturating_sub(21))
        .rev()
        .find(|&at| u32_at(at) == Some(END))
        .ok_or_else(bad)?;
    let count = u16_at(end + 10).ok_or_else(bad)?;
    let offset = u32_at(end + 16).ok_or_else(bad)?;
    let mut at = usize::try_from(offset).map_err(|_| bad())?;
    let mut names = Vec::with_capacity(count);
    for _ in 0..count {
        if u32_at(at) != Some(ENTRY) {
            return Err(bad());
        }
        let name_len = u16_at(at + 28).ok_or_else(bad)?;
        let extra_len = u16_at(at + 30).ok_or_else(bad)?;
        let comment_len = u16_at(at + 32).ok_or_else(bad)?;
        let name = zip.get(at + 46..at + 46 + name_len).ok_or_else(bad)?;
        names.push(String::from_utf8_lossy(name).into_owned());
        at += 46 + name_len + extra_len + comment_len;
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A stored (uncompressed) zip with these names, written by hand: local headers, central
    /// directory, end record.
    fn zip(names: &[&str]) -> Vec<u8> {
        let (mut out, mut central) = (Vec::new(), Vec::new());
        for name in names {
            let offset = u32::try_from(out.len()).unwrap_or(u32::MAX);
            let len = u16::try_from(name.len()).unwrap_or(u16::MAX);
            out.extend(0x0403_4b50u32.to_le_bytes());
            out.extend([0u8; 22]);
            out.extend(len.to_le_bytes());
            out.extend(0u16.to_le_bytes());
            out.extend(name.as_bytes());
            central.extend(0x0201_4b50u32.to_le_bytes());
            central.extend([0u8; 24]);
            central.extend(len.to_le_bytes());
            central.extend([0u8; 12]);
            central.extend(offset.to_le_bytes());
            central.extend(name.as_bytes());
        }
        let at = u32::try_from(out.len()).unwrap_or(u32::MAX);
        let count = u16::try_from(names.len()).unwrap_or(u16::MAX);
        let size = u32::try_from(central.len()).unwrap_or(u32::MAX);
        out.extend(central);
        out.extend(0x0605_4b50u32.to_le_bytes());
        out.extend([0u8; 4]);
        out.extend(count.to_le_bytes());
        out.extend(count.to_le_bytes());
        out.extend(size.to_le_bytes());
        out.extend(at.to_le_bytes());
        out.extend(0u16.to_le_bytes());
        out
    }

    #[test]
    fn import_names_are_the_installed_top_level_names() {
        let wheel = zip(&[
            "six.py",
            "pkg/",
            "pkg/a.py",
            "_ext.cpython-311-x86_64-linux-gnu.so",
            "six-1.0.dist-info/RECORD",
            "six-1.0.data/platlib/native/__init__.py",
            "six-1.0.data/headers/x.h",
            "README.txt",
            "not-a-name/x.py",
        ]);
        let names: Vec<String> = wheel_imports(&wheel).into_iter().flatten().collect();
        assert_eq!(names, ["_ext", "native", "pkg", "six"]);
    }

    proptest! {
        /// Wheel bytes are input: any bytes, or a real archive cut or altered anywhere, give
        /// names or an error, never a panic.
        #[test]
        fn any_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512),
                                 cut in 0usize..400, flip in 0usize..400) {
            let _ = wheel_imports(&bytes);
            let mut real = zip(&["a/__init__.py", "b.py", "c-1.dist-info/RECORD"]);
            real.truncate(cut.max(1).min(real.len()));
            let _ = wheel_imports(&real);
            let mut altered = zip(&["a/__init__.py", "b.py"]);
            if let Some(byte) = altered.get_mut(flip % 200) {
                *byte ^= 0xff;
            }
            let _ = wheel_imports(&altered);
        }
    }
}
