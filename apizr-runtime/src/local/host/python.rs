//! Which interpreter `python3` (or `APIZR_PYTHON`) means, resolved without paying for a shim on
//! every call.
//!
//! The worker is always started with the real interpreter (the path `sys.executable` would
//! report), never through a shim: a pyenv shim is a bash script that costs 60–150 ms per
//! start. Resolution, cheapest first:
//! 1. the command is located like `execvp` does (a path with `/` as is, else the first
//!    executable file of that name on `PATH`);
//! 2. if that file is (a symlink to) an ELF binary, it is the interpreter: its located path is
//!    what `sys.executable` reports, so nothing is spawned;
//! 3. otherwise (a `#!` shim) the answer is cached on disk, keyed by the shim's identity and
//!    everything a version manager consults: `PATH`, `HOME`, the `PYENV_*`/`ASDF_*`/`MISE_*`
//!    variables, the nearest `.python-version` and `.tool-versions` above `PYENV_DIR` or the
//!    working directory, and the global `version` file next to the shim directory. A cached
//!    path is used only if it is still an executable ELF file;
//! 4. on a miss the command runs once (`-I -S -c 'sys.stdout.write(sys.executable)'`, with the
//!    caller's environment, so `PYENV_VERSION` is honoured) and the answer is stored.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::cache::{self, Key};

/// How the interpreter was found (shown by `apizr doctor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    /// An ELF binary on `PATH` (or the given path): nothing spawned.
    Binary,
    /// A script shim whose answer was in the cache.
    Cached,
    /// The command was run to ask `sys.executable`.
    Asked,
}

impl Via {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Via::Binary => "ELF binary found on PATH (resolved in-process)",
            Via::Cached => "script shim, answer cached on disk",
            Via::Asked => "script shim, asked for sys.executable",
        }
    }
}

/// Resolve `command`; `refresh` ignores (and rewrites) the cached answer.
pub(crate) fn resolve(command: &Path, refresh: bool) -> Option<(PathBuf, Via)> {
    let Some(located) = locate(command) else {
        return ask(command).map(|p| (p, Via::Asked));
    };
    if is_elf(&located) {
        return Some((located, Via::Binary));
    }
    let key = shim_key(&located);
    if !refresh
        && let Some(bytes) = cache::load("python", &key)
        && let Ok(text) = String::from_utf8(bytes)
    {
        let cached = PathBuf::from(text);
        if cached.is_absolute() && is_executable(&cached) && is_elf(&cached) {
            return Some((cached, Via::Cached));
        }
    }
    let resolved = ask(&located)?;
    if is_elf(&resolved) {
        cache::store("python", &key, resolved.as_os_str().as_encoded_bytes());
    }
    Some((resolved, Via::Asked))
}

/// The file `execvp` would run for `command`, as an absolute path.
fn locate(command: &Path) -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    if command.as_os_str().as_encoded_bytes().contains(&b'/') {
        let path = cwd.join(command);
        return is_executable(&path).then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| {
            if dir.as_os_str().is_empty() {
                cwd.join(command)
            } else {
                cwd.join(dir).join(command)
            }
        })
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn is_elf(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && magic == *b"\x7fELF"
}

/// The installation prefixes of `executable` (`sys.prefix`, `sys.base_prefix`,
/// `sys.exec_prefix`, `sys.base_exec_prefix`, de-duplicated): what a private mount tree must
/// show for the interpreter to start. Asked once and cached on disk, keyed by the
/// executable's identity and the `pyvenv.cfg` files that could redirect it.
pub(crate) fn prefixes(executable: &Path, refresh: bool) -> Option<Vec<PathBuf>> {
    let mut key = Key::new("prefixes");
    key.push("executable", executable.as_os_str().as_encoded_bytes());
    key.push_file_identity("executable-file", executable);
    for dir in executable.ancestors().skip(1).take(2) {
        key.push_file("pyvenv.cfg", &dir.join("pyvenv.cfg"));
    }
    let parse = |bytes: &[u8]| -> Option<Vec<PathBuf>> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut out: Vec<PathBuf> = Vec::new();
        for line in text.split('\0').filter(|l| !l.is_empty()) {
            let path = PathBuf::from(line);
            if !path.is_absolute() {
                return None;
            }
            if !out.contains(&path) {
                out.push(path);
            }
        }
        (!out.is_empty()).then_some(out)
    };
    if !refresh
        && let Some(bytes) = cache::load("prefixes", &key)
        && let Some(found) = parse(&bytes)
    {
        return Some(found);
    }
    let out = Command::new(executable)
        .args([
            "-I",
            "-S",
            "-c",
            "import sys; sys.stdout.write('\\0'.join([sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]))",
        ])
        .env_clear()
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let found = parse(&out.stdout)?;
    cache::store("prefixes", &key, &out.stdout);
    Some(found)
}

/// The worker compiled by `executable` (a `marshal` blob), cached on disk keyed by the
/// interpreter's identity and the worker source. `None` when the interpreter cannot make one
/// (the worker then runs from source).
pub(crate) fn compiled_worker(executable: &Path, refresh: bool) -> Option<Vec<u8>> {
    use std::io::Write;
    let source = crate::worker::WORKER_SOURCE;
    let mut key = Key::new("worker");
    key.push("executable", executable.as_os_str().as_encoded_bytes());
    key.push_file_identity("executable-file", executable);
    key.push(
        "source",
        apizr_ir::Digest::sha256(source.as_bytes()).prefixed(),
    );
    if !refresh && let Some(bytes) = cache::load("worker", &key) {
        return Some(bytes);
    }
    let mut child = Command::new(executable)
        .args(["-I", "-S", "-c", crate::worker::COMPILE_SOURCE])
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let writer = std::thread::spawn(move || stdin.write_all(source.as_bytes()));
    let out = child.wait_with_output().ok()?;
    let written = writer.join().ok()?.is_ok();
    if !out.status.success() || !written || out.stdout.is_empty() {
        return None;
    }
    cache::store("worker", &key, &out.stdout);
    Some(out.stdout)
}

/// Run the command once and read `sys.executable`.
fn ask(command: &Path) -> Option<PathBuf> {
    let out = Command::new(command)
        .args([
            "-I",
            "-S",
            "-c",
            "import sys; sys.stdout.write(sys.executable)",
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?);
    (out.status.success() && path.is_absolute()).then_some(path)
}

/// Everything a version-manager shim consults, as a cache key.
fn shim_key(shim: &Path) -> Key {
    let mut key = Key::new("python");
    key.push("shim", shim.as_os_str().as_encoded_bytes());
    key.push_file_identity("shim-file", shim);
    let mut vars: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| {
            let k = k.as_encoded_bytes();
            k == b"PATH"
                || k == b"HOME"
                || [&b"PYENV"[..], b"ASDF_", b"MISE_"]
                    .iter()
                    .any(|p| k.starts_with(p))
        })
        .collect();
    vars.sort();
    for (k, v) in &vars {
        key.push(
            &format!("env:{}", k.to_string_lossy()),
            v.as_encoded_bytes(),
        );
    }
    let start = std::env::var_os("PYENV_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok());
    for name in [".python-version", ".tool-versions"] {
        let found = start
            .as_deref()
            .and_then(|s| s.ancestors().map(|d| d.join(name)).find(|p| p.is_file()));
        match found {
            Some(file) => {
                key.push(name, file.as_os_str().as_encoded_bytes());
                key.push_file(&format!("{name}:content"), &file);
            }
            None => key.push(name, "-"),
        }
    }
    if let Some(root) = shim.parent().and_then(Path::parent) {
        key.push_file("global-version", &root.join("version"));
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_to_an_elf_interpreter_that_reports_itself() {
        let python = resolve(Path::new("python3"), false);
        let Some((path, _)) = python else {
            return; // no python3 on this host
        };
        assert!(path.is_absolute());
        assert!(is_elf(&path), "{}", path.display());
        assert_eq!(ask(&path).as_deref(), Some(path.as_path()));
    }

    #[test]
    fn the_key_changes_with_the_shim_inputs() {
        let shim = Path::new("/bin/sh");
        let a = shim_key(shim);
        let mut b = shim_key(shim);
        b.push("extra", "1");
        assert_ne!(format!("{a:?}"), format!("{b:?}"));
        assert_eq!(format!("{a:?}"), format!("{:?}", shim_key(shim)));
    }
}
