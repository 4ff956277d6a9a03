//! The in-worker bootstrap (`bootstrap.py`, stdlib only) and the request it reads.
//!
//! The request travels on stdin as one frame (u64 big-endian length + a `marshal` dict), not
//! as JSON: `marshal` is loaded by every interpreter before any user code, so the bootstrap
//! imports nothing on the common path and `print(1)` costs what `python -I -S -c` costs.
//! The code is never written to disk and never rewritten: `from __future__`, line numbers and
//! tracebacks are those of `python FILE`.

/// The bootstrap source, byte for byte as shipped in the crate.
pub const BOOTSTRAP_SOURCE: &str = include_str!("bootstrap.py");
/// The docker-session part, prepended for session containers only (every run compiles the
/// source it is given: the others do not pay for this part).
pub const BOOTSTRAP_SESSION_SOURCE: &str = include_str!("bootstrap_session.py");

/// The file name the code runs under (tracebacks say `File "<code>", line N`).
pub const CODE_FILENAME: &str = "<code>";

/// What the bootstrap runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BootRequest {
    pub code: String,
    /// Top-level modules the in-worker guard allows (`None`: no guard).
    pub allowed: Option<Vec<String>>,
    /// seccomp programs (raw `sock_filter` bytes) installed before the code runs.
    pub seccomp: Option<Vec<Vec<u8>>>,
    /// Package directories added with `site.addsitedir` (`.pth` files honoured).
    pub site_dirs: Vec<String>,
    /// Environment variables to keep (every other one is removed); `None` keeps all.
    pub env_keep: Option<Vec<String>>,
    /// Run the code in a child and hold the container until stdin closes (see bootstrap.py).
    pub hold: bool,
    /// A persistent session: set up once, then run one code frame after another in the same
    /// `__main__` namespace (see bootstrap.py).
    pub session: bool,
}

impl BootRequest {
    /// The request frame: length + `marshal` bytes.
    pub fn frame(&self) -> Vec<u8> {
        let mut m = Marshal::default();
        m.dict_start();
        m.key("code");
        m.str(&self.code);
        m.key("filename");
        m.str(CODE_FILENAME);
        m.key("allowed");
        match &self.allowed {
            Some(names) => m.str_list(names),
            None => m.none(),
        }
        m.key("seccomp");
        match &self.seccomp {
            Some(programs) => {
                m.list_start(programs.len());
                for p in programs {
                    m.bytes(p);
                }
            }
            None => m.none(),
        }
        m.key("site_dirs");
        m.str_list(&self.site_dirs);
        m.key("env_keep");
        match &self.env_keep {
            Some(names) => m.str_list(names),
            None => m.none(),
        }
        m.key("hold");
        m.bool(self.hold);
        m.key("session");
        m.bool(self.session);
        m.dict_end();
        frame(&m.out)
    }
}

/// One call of a session: the end marker (exactly [`SESSION_MARKER_LEN`] ASCII bytes), then
/// the code, framed.
pub fn session_call(marker: &str, code: &str) -> Vec<u8> {
    let mut body = Vec::with_capacity(marker.len() + code.len());
    body.extend_from_slice(marker.as_bytes());
    body.extend_from_slice(code.as_bytes());
    frame(&body)
}

/// The length of a session call's end marker.
pub const SESSION_MARKER_LEN: usize = 32;

/// `bytes` framed: u64 big-endian length, then the bytes.
pub fn frame(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 8);
    out.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
    out.extend_from_slice(bytes);
    out
}

/// Interpreter arguments that run the bootstrap (`-I -S`: no user site, no `site`; packages
/// are added explicitly).
pub fn python_args() -> Vec<String> {
    vec![
        "-I".into(),
        "-S".into(),
        "-c".into(),
        BOOTSTRAP_SOURCE.to_string(),
    ]
}

/// [`python_args`] for a docker session's container: [`BOOTSTRAP_SESSION_SOURCE`] first.
pub fn session_python_args() -> Vec<String> {
    let mut args = python_args();
    if let Some(source) = args.last_mut() {
        *source = format!("{BOOTSTRAP_SESSION_SOURCE}{BOOTSTRAP_SOURCE}");
    }
    args
}

/// A writer for the few `marshal` types the request uses (format version ≥ 2 readers accept
/// them all; no references are emitted).
#[derive(Default)]
struct Marshal {
    out: Vec<u8>,
}

impl Marshal {
    fn len(&mut self, n: usize) {
        // Every length here is far below 4 GiB (requests are bounded by the caller).
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        self.out.extend_from_slice(&n.to_le_bytes());
    }
    fn none(&mut self) {
        self.out.push(b'N');
    }
    fn bool(&mut self, v: bool) {
        self.out.push(if v { b'T' } else { b'F' });
    }
    fn str(&mut self, s: &str) {
        self.out.push(b'u');
        self.len(s.len());
        self.out.extend_from_slice(s.as_bytes());
    }
    fn key(&mut self, s: &str) {
        self.str(s);
    }
    fn bytes(&mut self, b: &[u8]) {
        self.out.push(b's');
        self.len(b.len());
        self.out.extend_from_slice(b);
    }
    fn list_start(&mut self, n: usize) {
        self.out.push(b'[');
        self.len(n);
    }
    fn str_list(&mut self, items: &[String]) {
        self.list_start(items.len());
        for s in items {
            self.str(s);
        }
    }
    fn dict_start(&mut self) {
        self.out.push(b'{');
    }
    fn dict_end(&mut self) {
        self.out.push(b'0');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_is_a_marshal_dict() {
        let req = BootRequest {
            code: "print('é')".into(),
            allowed: Some(vec!["os".into()]),
            seccomp: Some(vec![vec![1, 2, 3]]),
            site_dirs: vec![],
            env_keep: None,
            hold: true,
            session: false,
        };
        let f = req.frame();
        let len = u64::from_be_bytes(f[..8].try_into().unwrap()) as usize;
        assert_eq!(len, f.len() - 8);
        let body = &f[8..];
        assert_eq!(body[0], b'{');
        assert_eq!(*body.last().unwrap(), b'0');
        // "code" key then the UTF-8 value with its byte length.
        assert_eq!(&body[1..10], b"u\x04\x00\x00\x00code");
        let value = "print('é')";
        assert_eq!(body[10], b'u');
        assert_eq!(
            u32::from_le_bytes(body[11..15].try_into().unwrap()) as usize,
            value.len()
        );
    }
}
