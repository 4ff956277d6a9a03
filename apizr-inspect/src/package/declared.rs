//! The third-party distributions a package declares, for readiness v2: exactly the names of
//! what the bundle installs ([`super::requirements::find`]), so "ready with declared
//! dependencies" never rests on a requirement the image will not have.
//!
//! Names are normalised as pip compares them (PEP 503), so an import of `requests` or of
//! `typing_extensions` matches `Typing-Extensions`. A distribution whose import name differs
//! (`PyYAML` installs `yaml`) does not match, and its imports stay unresolved: never a guess.

use std::collections::BTreeSet;
use std::path::Path;

/// What the package in `dir` declares. A requirements file that cannot be used declares
/// nothing here (its imports stay undeclared); `generate` refuses it with the file and line.
pub fn declared_dependencies(dir: &Path) -> BTreeSet<String> {
    super::requirements::find(dir)
        .map(|found| found.names())
        .unwrap_or_default()
}
