//! Snapshot diffs, symlink refusal and caps on a real directory.

use std::fs;
use std::os::unix::fs::symlink;

use super::*;

fn root(tag: &str) -> PathBuf {
    private_dir(&std::env::temp_dir(), &format!("apizr-interp-art-{tag}")).unwrap()
}

const CAPS: Caps = Caps {
    max_count: 100,
    max_bytes: 1 << 20,
};

#[test]
fn only_new_or_changed_files_are_reported() {
    let dir = root("diff");
    fs::write(dir.join("old.txt"), "old").unwrap();
    fs::write(dir.join("kept.csv"), "a,b\n").unwrap();
    let before = Snapshot::take(&dir);
    fs::create_dir(dir.join("sub")).unwrap();
    fs::write(dir.join("sub/new.json"), "{\"x\": 1}").unwrap();
    fs::write(dir.join("old.txt"), "changed!").unwrap();
    let after = Snapshot::take(&dir);
    let names = before.changed(&after);
    assert_eq!(names, ["old.txt", "sub/new.json"]);
    let (artifacts, truncated) = describe(&dir, &names, &after, CAPS);
    assert!(!truncated);
    assert_eq!(artifacts[1].content_type, Some("application/json"));
    assert_eq!(artifacts[1].size_bytes, 8);
    assert_eq!(artifacts[1].path, dir.join("sub/new.json"));
    assert_eq!(
        artifacts[0].sha256,
        "9d463bde2a7e62f4cec6f00fd5e1b2511e92b5999abe43bdfba68f355f560099"
    );
    // A second run that touches nothing reports nothing (stale files are not re-reported).
    let again = Snapshot::take(&dir);
    assert!(after.changed(&again).is_empty());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn symlinks_are_never_followed_or_reported() {
    let dir = root("links");
    let outside = root("outside");
    fs::write(outside.join("secret"), "host secret").unwrap();
    let before = Snapshot::take(&dir);
    symlink(outside.join("secret"), dir.join("leak.txt")).unwrap();
    symlink(&outside, dir.join("linked_dir")).unwrap();
    fs::write(dir.join("real.txt"), "mine").unwrap();
    let after = Snapshot::take(&dir);
    assert_eq!(before.changed(&after), ["real.txt"]);
    // Opening through a link is refused even when asked by name.
    assert!(open_beneath(&dir, "leak.txt", None).is_none());
    assert!(open_beneath(&dir, "linked_dir/secret", None).is_none());
    assert!(open_beneath(&dir, "../x", None).is_none());
    // A file swapped for another after the walk is not the one the walk saw.
    fs::remove_file(dir.join("real.txt")).unwrap();
    fs::write(dir.join("real.txt"), "swapped").unwrap();
    let (artifacts, _) = describe(&dir, &["real.txt"], &after, CAPS);
    assert!(artifacts.is_empty());
    fs::remove_dir_all(&dir).unwrap();
    fs::remove_dir_all(&outside).unwrap();
}

#[test]
fn caps_bound_count_and_bytes() {
    let dir = root("caps");
    let before = Snapshot::take(&dir);
    for i in 0..5 {
        fs::write(dir.join(format!("f{i}.txt")), vec![b'x'; 100]).unwrap();
    }
    let after = Snapshot::take(&dir);
    let names = before.changed(&after);
    let (a, t) = describe(
        &dir,
        &names,
        &after,
        Caps {
            max_count: 3,
            max_bytes: 1 << 20,
        },
    );
    assert_eq!((a.len(), t), (3, true));
    let (a, t) = describe(
        &dir,
        &names,
        &after,
        Caps {
            max_count: 10,
            max_bytes: 250,
        },
    );
    assert_eq!((a.len(), t), (2, true));
    let mode = fs::metadata(&dir).unwrap().permissions();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(mode.mode() & 0o777, 0o700);
    fs::remove_dir_all(&dir).unwrap();
}
