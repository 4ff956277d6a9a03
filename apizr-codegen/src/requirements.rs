//! A package's third-party requirements: `[project] dependencies` of its `pyproject.toml`, or
//! its `requirements.txt`, in the package directory or the one above it (a `src/` layout keeps
//! them there). The first directory holding either wins; in it, `pyproject.toml` wins when it
//! declares `[project] dependencies`.
//!
//! Only requirement specifiers are accepted (`name[extra]>=1,<2; marker`). A line starting with
//! `-` is a pip option (`-r`, `-e`, `--index-url`, `--extra-index-url`, `--trusted-host`):
//! each could change where the image's build fetches code from, so it is refused with the
//! file and line rather than passed on. Control characters are refused too, since the list
//! is written one specifier per line into the project's `python/requirements.txt`.

use std::path::{Path, PathBuf};

use crate::model::{GenerateError, input};

/// The specifiers and the file they were read from (`None`: no requirements file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requirements {
    pub specifiers: Vec<String>,
    pub origin: Option<PathBuf>,
}

/// Largest requirements file read.
const MAX_BYTES: u64 = 1 << 20;

/// The requirements of the package in `dir` (see the module documentation).
pub fn find(dir: &Path) -> Result<Requirements, GenerateError> {
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
            // A pyproject.toml without dependencies still marks the project root.
            return Ok(Requirements::default());
        }
    }
    Ok(Requirements::default())
}

fn read(path: &Path) -> Result<String, GenerateError> {
    let meta = std::fs::metadata(path).map_err(|e| input(format!("{}: {e}", path.display())))?;
    if meta.len() > MAX_BYTES {
        return Err(input(format!(
            "{}: larger than {MAX_BYTES} bytes",
            path.display()
        )));
    }
    std::fs::read_to_string(path).map_err(|e| input(format!("{}: {e}", path.display())))
}

/// `[project] dependencies`, or `None` when the file declares none.
pub fn from_pyproject(path: &Path, text: &str) -> Result<Option<Vec<String>>, GenerateError> {
    let doc: toml::Table = toml::from_str(text)
        .map_err(|e| input(format!("{}: not TOML: {}", path.display(), e.message())))?;
    let Some(dependencies) = doc.get("project").and_then(|p| p.get("dependencies")) else {
        return Ok(None);
    };
    let toml::Value::Array(items) = dependencies else {
        return Err(input(format!(
            "{}: [project] dependencies: expected an array of requirement strings",
            path.display()
        )));
    };
    let mut out = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let toml::Value::String(spec) = item else {
            return Err(input(format!(
                "{}: [project] dependencies[{index}]: expected a requirement string",
                path.display()
            )));
        };
        let at = format!("{}: [project] dependencies[{index}]", path.display());
        out.push(check(&at, spec.trim())?);
    }
    Ok(Some(out))
}

/// One specifier per line; `#` comments and blank lines skipped.
pub fn from_requirements_txt(path: &Path, text: &str) -> Result<Vec<String>, GenerateError> {
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
            return Err(input(format!(
                "{at}: {spec:?}: line continuations are not supported; one requirement per line"
            )));
        }
        out.push(check(&at, spec)?);
    }
    Ok(out)
}

fn check(at: &str, spec: &str) -> Result<String, GenerateError> {
    if spec.starts_with('-') {
        return Err(input(format!(
            "{at}: {spec:?}: pip options are not accepted (they can change where the image \
             fetches code from); expected a requirement such as 'name>=1.0' (offline: \
             generate --wheelhouse DIR)"
        )));
    }
    if spec.is_empty() || spec.chars().any(char::is_control) {
        return Err(input(format!(
            "{at}: {spec:?}: expected a requirement such as 'name>=1.0' on one line"
        )));
    }
    Ok(spec.to_string())
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
}
