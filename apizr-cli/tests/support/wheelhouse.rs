//! A wheelhouse for the package fixture `tests/fixtures/generate/governed` (its one
//! requirement, `apizr-fixture-errtext`): a pure-Python wheel built here (a zip with a
//! `.dist-info`: METADATA, WHEEL, RECORD), and pip's own wheel from the host interpreter's
//! `ensurepip` (the offline base image has neither pip nor ensurepip). Same bytes every time
//! (fixed zip timestamps), so images built from it are cached by content.

use std::path::Path;
use std::process::Command;

/// Write the wheelhouse into `dir` (created, emptied first).
pub fn write_wheelhouse(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let script = r#"
import base64, hashlib, pathlib, shutil, sys, zipfile
import ensurepip
out = pathlib.Path(sys.argv[1])
files = {
    "errtext/__init__.py": b"def blocked(errno):\n    return f'blocked: errno {errno}'\n",
    "apizr_fixture_errtext-1.0.dist-info/METADATA":
        b"Metadata-Version: 2.1\nName: apizr-fixture-errtext\nVersion: 1.0\n",
    "apizr_fixture_errtext-1.0.dist-info/WHEEL":
        b"Wheel-Version: 1.0\nGenerator: apizr-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = ""
for name, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record += f"{name},sha256={digest},{len(data)}\n"
record += "apizr_fixture_errtext-1.0.dist-info/RECORD,,\n"
files["apizr_fixture_errtext-1.0.dist-info/RECORD"] = record.encode()
with zipfile.ZipFile(out / "apizr_fixture_errtext-1.0-py3-none-any.whl", "w") as wheel:
    for name, data in files.items():
        wheel.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
bundled = pathlib.Path(ensurepip.__file__).parent / "_bundled"
pip = sorted(bundled.glob("pip-*.whl"))
if not pip:
    sys.exit(f"no pip wheel in {bundled}")
shutil.copy(pip[-1], out / pip[-1].name)
"#;
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "building the wheelhouse: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
