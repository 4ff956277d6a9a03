//! A package's third-party requirements — one reader, for the bundle (what the image installs)
//! and for readiness v2 (which third-party imports count as declared): a function is "ready with
//! declared dependencies" only for what the bundle installs.
//!
//! Where they are read: the package directory, then the one above it (a `src/` layout keeps
//! them there). The first directory holding a declaration wins; in it, in this order:
//! `pyproject.toml` when it has `[project] dependencies`, `requirements.txt`, and for an
//! unpacked wheel the unconditional `Requires-Dist` lines of its `*.dist-info/METADATA` (a
//! marker may be false where the bundle installs, so requirements behind one do not count).
//! A `pyproject.toml` without dependencies still marks the project root: nothing is declared.
//!
//! Only requirement specifiers are accepted (`name[extra]>=1,<2; marker`). A line starting with
//! `-` is a pip option (`-r`, `-e`, `--index-url`, `--extra-index-url`, `--trusted-host`):
//! each could change where the image's build fetches code from, so it is refused with the
//! file and line rather than passed on. Control characters are refused too, since the list
//! is written one specifier per line into a generated project's `python/requirements.txt`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::readiness::v2::package::normalise;

/// The specifiers and the file they were read from (`None`: nothing declared).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requirements {
    pub specifiers: Vec<String>,
    pub origin: Option<PathBuf>,
}

impl Requirements {
    /// The distribution names, normalised as pip compares them (PEP 503):
    /// `Typing.Extensions>=4` → `typing_extensions`.
    pub fn names(&self) -> BTreeSet<String> {
        self.specifiers
            .iter()
            .filter_map(|spec| requirement_name(spec))
            .collect()
    }
}

/// A requirements file that cannot be used; the message names the file (and line or entry).
#[derive(Debug, thiserror::Error)]
#[error("{at}: {message}")]
pub struct RequirementsError {
    pub at: String,
    pub message: String,
}

fn error(at: impl Into<String>, message: impl Into<String>) -> RequirementsError {
    RequirementsError {
        at: at.into(),
        message: message.into(),
    }
}

/// Largest requirements file read.
const MAX_BYTES: u64 = 1 << 20;

/// The requirements of the package in `dir` (see the module documentation).
pub fn find(dir: &Path) -> Result<Requirements, RequirementsError> {
    let candidates = std::iter::once(dir).chain(dir.parent().filter(|p| !p.as_os_str().is_empty()));
    for base in candidates {
        let pyproject = base.join("pyproject.toml");
        if pyproject.is_file()
            && let Some(specifiers) = from_pyproject(&pyproject, &read(&pyproject)?)?
        {
            return Ok(Requirements {
                specifiers,
                origin: Some(pyproject),
            });
        }
        let text_file = base.join("requirements.txt");
        if text_file.is_file() {
            return Ok(Requirements {
                specifiers: from_requirements_txt(&text_file, &read(&text_file)?)?,
                origin: Some(text_file),
            });
        }
        if pyproject.is_file() {
            return Ok(Requirements::default());
        }
        if let Some(found) = from_dist_info(base)? {
            return Ok(found);
        }
    }
    Ok(Requirements::default())
}

fn read(path: &Path) -> Result<String, RequirementsError> {
    let at = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| error(&at, e.to_string()))?;
    if meta.len() > MAX_BYTES {
        return Err(error(at, format!("larger than {MAX_BYTES} bytes")));
    }
    std::fs::read_to_string(path).map_err(|e| error(at, e.to_string()))
}

/// `[project] dependencies`, or `None` when the file declares none.
pub fn from_pyproject(path: &Path, text: &str) -> Result<Option<Vec<String>>, RequirementsError> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| {
        error(
            path.display().to_string(),
            format!("not TOML: {}", e.message()),
        )
    })?;
    let Some(dependencies) = doc.get("project").and_then(|p| p.get("dependencies")) else {
        return Ok(None);
    };
    let toml::Value::Array(items) = dependencies else {
        return Err(error(
            format!("{}: [project] dependencies", path.display()),
            "expected an array of requirement strings",
        ));
    };
    let mut out = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let at = format!("{}: [project] dependencies[{index}]", path.display());
        let toml::Value::String(spec) = item else {
            return Err(error(at, "expected a requirement string"));
        };
        out.push(check(&at, spec.trim())?);
    }
    Ok(Some(out))
}

/// One specifier per line; `#` comments and blank lines skipped.
pub fn from_requirements_txt(path: &Path, text: &str) -> Result<Vec<String>, RequirementsError> {
    let mut out = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let content = match line
            .find(" #")
            .or_else(|| line.starts_with('#').then_some(0))
        {
            Some(at) => &line[..at],
            None => line,
        };
        let spec = content.trim();
        if spec.is_empty() {
            continue;
        }
        let at = format!("{}:{}", path.display(), number + 1);
        if spec.ends_with('\\') {
            return Err(error(
                at,
                format!("{spec:?}: line continuations are not supported; one requirement per line"),
            ));
        }
        out.push(check(&at, spec)?);
    }
    Ok(out)
}

/// The unconditional `Requires-Dist` lines of every `*.dist-info/METADATA` in `dir` (sorted by
/// directory name), or `None` when `dir` holds no dist-info.
fn from_dist_info(dir: &Path) -> Result<Option<Requirements>, RequirementsError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(None);
    };
    let mut metadata: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".dist-info"))
        .map(|e| e.path().join("METADATA"))
        .filter(|p| p.is_file())
        .collect();
    if metadata.is_empty() {
        return Ok(None);
    }
    metadata.sort();
    let mut specifiers = Vec::new();
    for path in &metadata {
        specifiers.extend(from_metadata(path, &read(path)?)?);
    }
    Ok(Some(Requirements {
        specifiers,
        origin: metadata.into_iter().next(),
    }))
}

/// The `Requires-Dist` header lines of core metadata that carry no marker (`; extra ==
/// "socks"`, `; python_version < "3.8"` need not hold where the bundle installs).
pub fn from_metadata(path: &Path, text: &str) -> Result<Vec<String>, RequirementsError> {
    let mut out = Vec::new();
    for (number, line) in text.lines().enumerate().take_while(|(_, l)| !l.is_empty()) {
        let Some(spec) = line.strip_prefix("Requires-Dist:") else {
            continue;
        };
        if spec.contains(';') {
            continue;
        }
        out.push(check(
            &format!("{}:{}", path.display(), number + 1),
            spec.trim(),
        )?);
    }
    Ok(out)
}

fn check(at: &str, spec: &str) -> Result<String, RequirementsError> {
    if spec.starts_with('-') {
        return Err(error(
            at,
            format!(
                "{spec:?}: pip options are not accepted (they can change where the image \
                 fetches code from); expected a requirement such as 'name>=1.0' (offline: \
                 generate --wheelhouse DIR)"
            ),
        ));
    }
    if spec.is_empty() || spec.chars().any(char::is_control) {
        return Err(error(
            at,
            format!("{spec:?}: expected a requirement such as 'name>=1.0' on one line"),
        ));
    }
    Ok(spec.to_string())
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
    fn pyproject_dependencies_are_read_and_options_refused() {
        let path = Path::new("p/pyproject.toml");
        let text = "[project]\nname='x'\ndependencies = ['tinydep>=1.0', ' attrs ']\n";
        assert_eq!(
            from_pyproject(path, text).unwrap(),
            Some(vec!["tinydep>=1.0".to_string(), "attrs".to_string()])
        );
        assert_eq!(from_pyproject(path, "[tool.x]\na=1\n").unwrap(), None);
        let error = from_pyproject(path, "[project]\ndependencies=['--index-url=http://x']\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("p/pyproject.toml: [project] dependencies[0]: \"--index-url"),
            "{error}"
        );
        let error = from_pyproject(path, "[project]\ndependencies='x'\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("expected an array"), "{error}");
        assert!(from_pyproject(path, "[project").is_err());
    }

    #[test]
    fn requirements_txt_lines_comments_and_refusals() {
        let path = Path::new("requirements.txt");
        let text = "# pinned\ntinydep==1.0  # the one\n\nattrs>=22\n";
        assert_eq!(
            from_requirements_txt(path, text).unwrap(),
            ["tinydep==1.0", "attrs>=22"]
        );
        for (text, want) in [
            (
                "ok\n-r other.txt\n",
                "requirements.txt:2: \"-r other.txt\": pip options",
            ),
            ("-e .\n", "requirements.txt:1: \"-e .\""),
            ("a \\\n", "line continuations"),
        ] {
            let error = from_requirements_txt(path, text).unwrap_err().to_string();
            assert!(error.starts_with(want) || error.contains(want), "{error}");
        }
    }

    #[test]
    fn metadata_keeps_unconditional_requirements_and_names_normalise() {
        let meta = "Metadata-Version: 2.1\nName: requests\nRequires-Dist: idna (<4,>=2.5)\n\
                    Requires-Dist: PySocks!=1.5.7,>=1.5.6 ; extra == 'socks'\n\n\
                    Requires-Dist: not-a-header\n";
        let specs = from_metadata(Path::new("METADATA"), meta).unwrap();
        assert_eq!(specs, ["idna (<4,>=2.5)"]);
        let declared = Requirements {
            specifiers: vec![
                "Requests>=2".into(),
                "typing.extensions ; python_version < '3.12'".into(),
                "idna[all]".into(),
            ],
            origin: None,
        };
        assert_eq!(
            declared.names().into_iter().collect::<Vec<_>>(),
            ["idna", "requests", "typing_extensions"]
        );
    }

    #[test]
    fn the_first_directory_with_a_declaration_wins() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path();
        let package = project.join("pkg");
        std::fs::create_dir_all(package.join("dep-1.0.dist-info")).unwrap();
        std::fs::write(package.join("__init__.py"), "").unwrap();
        std::fs::write(
            package.join("dep-1.0.dist-info/METADATA"),
            "Name: dep\nRequires-Dist: six\n",
        )
        .unwrap();
        std::fs::write(project.join("requirements.txt"), "attrs\n").unwrap();
        let found = find(&package).unwrap();
        assert_eq!(
            found.specifiers,
            ["six"],
            "the package's own dist-info first"
        );
        std::fs::write(package.join("requirements.txt"), "click\n").unwrap();
        assert_eq!(find(&package).unwrap().specifiers, ["click"]);
        std::fs::write(package.join("pyproject.toml"), "[tool.x]\n").unwrap();
        assert_eq!(
            find(&package).unwrap().specifiers,
            ["click"],
            "a pyproject without dependencies defers to requirements.txt beside it"
        );
        std::fs::remove_file(package.join("requirements.txt")).unwrap();
        assert!(
            find(&package).unwrap().specifiers.is_empty(),
            "a pyproject without dependencies marks the root: nothing above it counts"
        );
    }
}
