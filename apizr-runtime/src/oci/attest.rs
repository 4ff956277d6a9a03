//! Checked inside the container, before the worker reads its request: the identity and
//! privilege controls as the kernel applies them, and (when gVisor is asked for) that the
//! kernel is gVisor's.
//!
//! `verify` compares the engine's record of the container; this compares what the process
//! actually got. A few lines of Python run first in the interpreter (before the environment is
//! cleared and long before the request, so no user code exists yet): they read
//! `/proc/self/status` (uid/gid, the five capability sets, `NoNewPrivs`, `Seccomp`) and, under
//! gVisor or when it is asked for, the kernel log (`klogctl(SYSLOG_ACTION_READ_ALL)`, what
//! `dmesg` reads), whose first line under gVisor is `Starting gVisor...`. A runtime that only
//! carries a gVisor name (plain runc registered as `runsc-…`), or an engine that ignores the
//! runtime field, shows the host kernel's log (or refuses the read) instead.
//!
//! The check writes one line to stderr, `apizr-attest sandbox=… kernel=… failed=…`, and on any
//! failure exits (code [`ATTEST_EXIT`]) without reading the request: the call is refused and
//! the user's code never runs. The supervisor takes that first line off stderr; a call whose
//! stderr does not start with it is refused too (something else ran in front of the worker).
//!
//! Why gVisor is detected without being asked: its `/proc/self/status` has no `NoNewPrivs`
//! line and seccomp is the Sentry's business (the engine's profile is not installed inside), so
//! those two checks read `prctl(PR_GET_NO_NEW_PRIVS)` and the kernel identity instead. `ctypes`
//! is imported only on that path (it costs about 12 ms).

use serde::Serialize;

/// Exit code of a failed attestation (the worker never started).
pub const ATTEST_EXIT: i64 = 97;
const PREFIX: &[u8] = b"apizr-attest ";

/// The Python run before everything else. `uid` is the numeric uid and gid expected.
pub fn prelude(uid: u32, gvisor: bool) -> String {
    let want = if gvisor { "True" } else { "False" };
    format!(
        r#"def _apizr_attest(want_gvisor, want_id):
    import os
    f = {{}}
    with open('/proc/self/status') as s:
        for line in s:
            k, _, v = line.partition(':')
            f[k] = v.strip()
    gvisor = False
    if want_gvisor or 'NoNewPrivs' not in f:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        buf = ctypes.create_string_buffer(4096)
        n = libc.klogctl(3, buf, 4096)
        gvisor = n > 0 and b'Starting gVisor' in buf.raw[:n]
        nnp = libc.prctl(39, 0, 0, 0, 0) == 1
    else:
        nnp = f.get('NoNewPrivs') == '1'
    failed = []
    if want_gvisor and not gvisor:
        failed.append('runtime')
    ids = f.get('Uid', '').split()[:4] + f.get('Gid', '').split()[:4]
    if ids != [want_id] * 8:
        failed.append('user')
    caps = [f.get(k, '') for k in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb')]
    if any(c.strip('0') for c in caps) or not all(caps[:4]):
        failed.append('capabilities')
    if not nnp:
        failed.append('no_new_privileges')
    if not gvisor and f.get('Seccomp') != '2':
        failed.append('seccomp')
    kernel = os.uname().release.replace(' ', '_')
    line = 'apizr-attest sandbox=%s kernel=%s failed=%s\n' % (
        'gvisor' if gvisor else 'native', kernel, ','.join(failed) or '-')
    os.write(2, line.encode())
    if failed:
        os._exit({ATTEST_EXIT})
_apizr_attest({want}, '{uid}')
del _apizr_attest
"#
    )
}

/// What the container reported about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Attestation {
    /// `gvisor` or `native` (the host kernel).
    pub sandbox: String,
    /// The kernel release the container sees.
    pub kernel: String,
    /// Controls that did not hold; empty when the worker went on.
    pub failed: Vec<String>,
}

impl Attestation {
    pub fn ok(&self) -> bool {
        self.failed.is_empty()
    }
}

/// Take the attestation line off the front of `stderr`; `None` if it does not start with one.
pub fn take(stderr: &mut Vec<u8>) -> Option<Attestation> {
    if !stderr.starts_with(PREFIX) {
        return None;
    }
    let end = stderr.iter().position(|&b| b == b'\n')?;
    let line = String::from_utf8_lossy(stderr.get(PREFIX.len()..end)?).into_owned();
    stderr.drain(..=end);
    let field = |name: &str| {
        line.split(' ')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .map(str::to_string)
    };
    let failed = field("failed")?;
    Some(Attestation {
        sandbox: field("sandbox")?,
        kernel: field("kernel")?,
        failed: failed
            .split(',')
            .filter(|f| !f.is_empty() && *f != "-")
            .map(str::to_string)
            .collect(),
    })
}

/// Runtime names that mean gVisor: its binary is `runsc` (`runsc`, `runsc-kvm`,
/// `io.containerd.runsc.v1`, …).
pub fn is_gvisor_runtime(name: &str) -> bool {
    name.contains("runsc") || name.contains("gvisor")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_first_line_is_taken_and_the_rest_kept() {
        let mut err = b"apizr-attest sandbox=gvisor kernel=4.4.0 failed=-\nnoise\n".to_vec();
        let a = take(&mut err).unwrap();
        assert_eq!((a.sandbox.as_str(), a.kernel.as_str()), ("gvisor", "4.4.0"));
        assert!(a.ok());
        assert_eq!(err, b"noise\n");
        let mut err = b"apizr-attest sandbox=native kernel=6.1 failed=runtime,seccomp\n".to_vec();
        assert_eq!(take(&mut err).unwrap().failed, ["runtime", "seccomp"]);
        // Not first, or not a whole line: not an attestation.
        let mut err = b"noise\napizr-attest sandbox=gvisor kernel=4.4.0 failed=-\n".to_vec();
        assert!(take(&mut err).is_none());
        let mut err = b"apizr-attest sandbox=gvisor".to_vec();
        assert!(take(&mut err).is_none());
    }

    #[test]
    fn gvisor_names() {
        assert!(is_gvisor_runtime("runsc"));
        assert!(is_gvisor_runtime("runsc-decoy"));
        assert!(is_gvisor_runtime("io.containerd.runsc.v1"));
        assert!(!is_gvisor_runtime("runc"));
        assert!(!is_gvisor_runtime("crun"));
    }

    /// The prelude is valid Python (CPython is a test requirement, as for the worker).
    #[test]
    fn the_prelude_compiles() {
        let out = std::process::Command::new("python3")
            .args([
                "-I",
                "-S",
                "-c",
                "import sys; compile(sys.argv[1], 'p', 'exec')",
            ])
            .arg(prelude(65532, true))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
