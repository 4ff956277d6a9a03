//! Shared by `conformance.rs` and `stdlib_sample.rs`: fixture discovery, `.gen`
//! materialisation (mirrors `scripts/refresh-goldens`), running the built binary with a
//! timeout, and readable diffs. Lives in a subfolder so Cargo does not build it as a test.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A child that runs longer than this is killed and reported (a hang is a failure too).
const RUN_TIMEOUT: Duration = Duration::from_secs(120);
const INPUT_EXTENSIONS: [&str; 3] = ["py", "ipynb", "gen"];
/// Lines of diff shown per mode before eliding the rest.
const MAX_DIFF_LINES: usize = 60;

pub struct Fixture {
    /// Path relative to the fixtures root, `/`-separated (e.g. `exit/nesting_150.py`).
    pub rel: String,
    pub input: PathBuf,
    pub args: Vec<String>,
}

impl Fixture {
    pub fn golden_path(&self, suffix: &str) -> PathBuf {
        self.input.with_extension(suffix)
    }

    pub fn category(&self) -> &str {
        self.rel.split('/').next().unwrap_or("")
    }

    fn is_generated(&self) -> bool {
        self.input.extension().is_some_and(|e| e == "gen")
    }
}

pub fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/inspect")
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| INPUT_EXTENSIONS.contains(&e))
        {
            out.push(path);
        }
    }
}

/// Every fixture input under the root, sorted by relative path.
pub fn list_fixtures() -> Vec<Fixture> {
    let root = fixtures_root();
    let mut inputs = Vec::new();
    walk(&root, &mut inputs);
    let mut fixtures: Vec<Fixture> = inputs
        .into_iter()
        .map(|input| {
            let rel = input
                .strip_prefix(&root)
                .unwrap()
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let args = std::fs::read_to_string(input.with_extension("args"))
                .map(|line| split_words(&line))
                .unwrap_or_default();
            Fixture { rel, input, args }
        })
        .collect();
    fixtures.sort_by(|a, b| a.rel.cmp(&b.rel));
    fixtures
}

/// POSIX-shell-like word splitting for `.args` (what Python's `shlex.split` does for the
/// simple cases we use: whitespace, single quotes, double quotes, backslash escapes).
pub fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                if !matches!(n, '"' | '\\' | '$' | '`') {
                                    word.push('\\');
                                }
                                word.push(n);
                            }
                        }
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// Run a `.gen` recipe (grammar in `scripts/refresh-goldens`; keep both in sync):
/// `suffix .py`, `text "S"`, `repeat "S" N`, `pad "S" N`; `#` comments; escapes in S are
/// `\n \r \t \\ \" \xHH`. Returns the bytes and the file suffix.
pub fn run_gen(spec: &str) -> Result<(Vec<u8>, String), String> {
    let mut buf = Vec::new();
    let mut suffix = ".py".to_string();
    for raw in spec.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let rest = rest.trim();
        if word == "suffix" {
            suffix = rest.to_string();
            continue;
        }
        let (value, tail) = parse_quoted(rest).ok_or_else(|| format!("bad string: {line}"))?;
        let tail = tail.trim();
        match word {
            "text" if tail.is_empty() => buf.extend_from_slice(&value),
            "repeat" => {
                let n: usize = tail.parse().map_err(|_| format!("bad count: {line}"))?;
                for _ in 0..n {
                    buf.extend_from_slice(&value);
                }
            }
            "pad" => {
                let target: usize = tail.parse().map_err(|_| format!("bad size: {line}"))?;
                if value.is_empty() || target < buf.len() {
                    return Err(format!("cannot pad: {line}"));
                }
                let mut i = 0;
                while buf.len() < target {
                    buf.push(value[i % value.len()]);
                    i += 1;
                }
            }
            _ => return Err(format!("unknown generator directive: {line}")),
        }
    }
    Ok((buf, suffix))
}

fn parse_quoted(s: &str) -> Option<(Vec<u8>, &str)> {
    let body = s.strip_prefix('"')?;
    let mut out = Vec::new();
    let mut iter = body.char_indices();
    while let Some((i, c)) = iter.next() {
        match c {
            '"' => return Some((out, &body[i + 1..])),
            '\\' => match iter.next()?.1 {
                'n' => out.push(b'\n'),
                'r' => out.push(b'\r'),
                't' => out.push(b'\t'),
                '\\' => out.push(b'\\'),
                '"' => out.push(b'"'),
                'x' => {
                    let hi = iter.next()?.1.to_digit(16)?;
                    let lo = iter.next()?.1.to_digit(16)?;
                    out.push((hi * 16 + lo) as u8);
                }
                _ => return None,
            },
            c => {
                let mut tmp = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
            }
        }
    }
    None
}

/// The exact bytes the reference inspected for this fixture.
pub fn input_bytes(fixture: &Fixture) -> Result<Vec<u8>, String> {
    if fixture.is_generated() {
        let spec = std::fs::read_to_string(&fixture.input).map_err(|e| e.to_string())?;
        Ok(run_gen(&spec)?.0)
    } else {
        std::fs::read(&fixture.input).map_err(|e| e.to_string())
    }
}

/// The path to hand to the binary: the committed file itself, or a generated file named
/// `<stem><suffix>` in `scratch` (the module name derives from the stem, as for the oracle).
pub fn materialise(fixture: &Fixture, scratch: &Path) -> Result<PathBuf, String> {
    if !fixture.is_generated() {
        return Ok(fixture.input.clone());
    }
    let spec = std::fs::read_to_string(&fixture.input).map_err(|e| e.to_string())?;
    let (bytes, suffix) = run_gen(&spec)?;
    let stem = fixture.input.file_stem().unwrap().to_string_lossy();
    std::fs::create_dir_all(scratch).map_err(|e| e.to_string())?;
    let target = scratch.join(format!("{stem}{suffix}"));
    std::fs::write(&target, bytes).map_err(|e| e.to_string())?;
    Ok(target)
}

pub struct RunOutput {
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    signal: Option<i32>,
    timed_out: bool,
}

impl RunOutput {
    pub fn signal_note(&self) -> String {
        if self.timed_out {
            format!("killed after {}s timeout", RUN_TIMEOUT.as_secs())
        } else {
            match self.signal {
                Some(sig) => format!("killed by signal {sig}"),
                None => "unknown termination".to_string(),
            }
        }
    }
}

/// Run the built `apizr` binary with a timeout, capturing both streams.
pub fn run_apizr(args: &[String]) -> Result<RunOutput, String> {
    run_apizr_in(args, None)
}

/// [`run_apizr`] with an optional working directory.
pub fn run_apizr_in(args: &[String], cwd: Option<&Path>) -> Result<RunOutput, String> {
    use std::os::unix::process::ExitStatusExt;
    let mut command = Command::new(env!("CARGO_BIN_EXE_apizr"));
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    let mut child = command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start apizr: {e}"))?;
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out_pipe.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err_pipe.read_to_end(&mut buf);
        buf
    });
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if start.elapsed() > RUN_TIMEOUT {
            let _ = child.kill();
            timed_out = true;
            break child.wait().map_err(|e| e.to_string())?;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    Ok(RunOutput {
        code: if timed_out { None } else { status.code() },
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
        signal: status.signal(),
        timed_out,
    })
}

fn pretty(bytes: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    serde_json::to_string_pretty(&value).ok().map(|s| s + "\n")
}

fn window(bytes: &[u8], at: usize) -> String {
    let start = at.saturating_sub(60);
    let end = (at + 60).min(bytes.len());
    format!("{:?}", String::from_utf8_lossy(&bytes[start..end]))
}

/// A readable account of how `actual` differs from `expected`: a unified diff over
/// pretty-printed JSON when both sides parse (the goldens are one long line), else over
/// the raw text; plus the first differing byte when the difference is formatting only.
pub fn explain_difference(mode: &str, expected: &[u8], actual: &[u8]) -> String {
    let mut text = String::new();
    if actual.is_empty() {
        text.push_str(&format!(
            "  [{mode}] our stdout is empty ({} bytes expected)\n",
            expected.len()
        ));
        return text;
    }
    let (old, new) = match (pretty(expected), pretty(actual)) {
        (Some(old), Some(new)) => (old, new),
        _ => (
            String::from_utf8_lossy(expected).into_owned(),
            String::from_utf8_lossy(actual).into_owned(),
        ),
    };
    if old == new {
        let at = expected
            .iter()
            .zip(actual)
            .position(|(a, b)| a != b)
            .unwrap_or(expected.len().min(actual.len()));
        text.push_str(&format!(
            "  [{mode}] same JSON value, different bytes (key order, escapes, float or \
             number formatting, trailing newline?) at byte {at}:\n    golden: {}\n    ours:   {}\n",
            window(expected, at),
            window(actual, at)
        ));
        return text;
    }
    let diff = similar::TextDiff::from_lines(&old, &new);
    let rendered = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("golden {mode}"), &format!("ours {mode}"))
        .to_string();
    let lines: Vec<&str> = rendered.lines().collect();
    for line in lines.iter().take(MAX_DIFF_LINES) {
        text.push_str("    ");
        text.push_str(line);
        text.push('\n');
    }
    if lines.len() > MAX_DIFF_LINES {
        text.push_str(&format!(
            "    ... {} more diff lines\n",
            lines.len() - MAX_DIFF_LINES
        ));
    }
    text
}

/// `category  passed/total` lines, for the summary.
pub fn category_table(results: &[(&str, bool)]) -> String {
    let mut cats: Vec<(String, usize, usize)> = Vec::new();
    for (rel, ok) in results {
        let cat = rel.split('/').next().unwrap_or("").to_string();
        match cats.iter_mut().find(|c| c.0 == cat) {
            Some(entry) => {
                entry.1 += usize::from(*ok);
                entry.2 += 1;
            }
            None => cats.push((cat, usize::from(*ok), 1)),
        }
    }
    cats.sort();
    cats.iter()
        .map(|(cat, ok, total)| format!("  {cat:<12} {ok:>4}/{total}\n"))
        .collect()
}
