//! The third-party distributions a project declares: `[project] dependencies` of
//! `pyproject.toml` (PEP 621), the requirement lines of `requirements.txt`, and for an unpacked
//! wheel the unconditional `Requires-Dist` lines of its `*.dist-info/METADATA`.
//!
//! Only the distribution name of each requirement is kept (`requests>=2; python_version>"3"`
//! → `requests`), normalised as pip compares names (PEP 503), so an import of `requests` or of
//! `typing_extensions` matches `Typing-Extensions`. A distribution whose import name differs
//! (`PyYAML` installs `yaml`) does not match, and its imports stay unresolved: never a guess.

use std::collections::BTreeSet;
use std::path::Path;

use crate::readiness::v2::package::normalise;

/// What `dir` (and, when `dir` is itself a package, its parent: the project root above it)
/// declares. Unreadable or malformed files declare nothing.
pub fn declared_dependencies(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut dirs = vec![dir.to_path_buf()];
    if dir.join("__init__.py").is_file()
        && let Some(parent) = dir.parent()
    {
        dirs.push(parent.to_path_buf());
    }
    for dir in dirs {
        if let Ok(text) = std::fs::read_to_string(dir.join("pyproject.toml")) {
            out.extend(pyproject(&text));
        }
        if let Ok(text) = std::fs::read_to_string(dir.join("requirements.txt")) {
            out.extend(requirements(&text));
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name.to_string_lossy().ends_with(".dist-info")
                && let Ok(text) = std::fs::read_to_string(entry.path().join("METADATA"))
            {
                out.extend(metadata(&text));
            }
        }
    }
    out
}

/// The `Requires-Dist` lines of core metadata, except those only an extra or another Python
/// version needs (`; extra == "socks"`, `; python_version < "3.8"`): a marker may be false
/// where the bundle installs, so only unconditional requirements count.
pub fn metadata(text: &str) -> Vec<String> {
    text.lines()
        .take_while(|line| !line.is_empty())
        .filter_map(|line| line.strip_prefix("Requires-Dist:"))
        .filter(|requirement| !requirement.contains(';'))
        .filter_map(requirement_name)
        .collect()
}

/// `[project] dependencies` of a `pyproject.toml`.
pub fn pyproject(text: &str) -> Vec<String> {
    let Ok(table) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    table
        .get("project")
        .and_then(|p| p.get("dependencies"))
        .and_then(|d| d.as_array())
        .map(|deps| {
            deps.iter()
                .filter_map(|d| d.as_str())
                .filter_map(requirement_name)
                .collect()
        })
        .unwrap_or_default()
}

/// The requirement lines of a `requirements.txt` (comments, options and URLs skipped).
pub fn requirements(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| line.split(" #").next().unwrap_or(line).trim())
        .filter(|line| !line.is_empty() && !line.starts_with('#') && !line.starts_with('-'))
        .filter_map(requirement_name)
        .collect()
}

/// The normalised distribution name a PEP 508 requirement starts with.
fn requirement_name(requirement: &str) -> Option<String> {
    let name: String = requirement
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    (!name.is_empty() && !name.contains('/')).then(|| normalise(&name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_and_normalised() {
        let toml = "[project]\nname = \"x\"\ndependencies = [\"Requests>=2\", \
                    \"typing.extensions ; python_version < '3.12'\", \"idna[all]\"]\n";
        assert_eq!(pyproject(toml), ["requests", "typing_extensions", "idna"]);
        assert!(
            pyproject("[project\n").is_empty(),
            "malformed declares nothing"
        );
        let req = "# pinned\nclick==8.1 # cli\n-r other.txt\n\nMarkupSafe>=2\n";
        assert_eq!(requirements(req), ["click", "markupsafe"]);
        let meta = "Metadata-Version: 2.1\nName: requests\nRequires-Dist: idna (<4,>=2.5)\n\
                    Requires-Dist: PySocks!=1.5.7,>=1.5.6 ; extra == 'socks'\n\n\
                    Requires-Dist: not-a-header\n";
        assert_eq!(metadata(meta), ["idna"]);
    }
}
