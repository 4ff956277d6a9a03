//! Compile-fail and compile-pass cases of `#[python]` / `#[endpoint]` (trybuild).
//!
//! trybuild compiles each case in its own project, `<target>/tests/trybuild/apizr-macros/`,
//! whose manifest directory is therefore where `file = "…"` and `policy = "…"` resolve. The
//! fixtures are copied there first, so cases name them exactly as a user crate would
//! (`file = "py/calc.py"`). Stderr files are blessed with `TRYBUILD=overwrite` and, like
//! every compiler message, belong to the one toolchain CI uses.

use std::path::{Path, PathBuf};

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[test]
fn ui() -> std::io::Result<()> {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let target = tmp
        .parent()
        .ok_or_else(|| std::io::Error::other("no target dir"))?;
    let project = target.join("tests/trybuild/apizr-macros");
    copy_tree(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures")),
        &project,
    )?;
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
    Ok(())
}
