//! Reading the engine's archives (`GET /containers/{id}/archive`): regular files only, never
//! links or devices, names confined to the destination, and caps on count and bytes. Files
//! are hashed and sniffed while they are written, so nothing is read twice.
//!
//! The format subset is what engines emit (Go's `archive/tar`): ustar headers, PAX extended
//! headers (`path`, `mtime`, `size`) and GNU long names.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use super::artifacts::Caps;
use super::sniff;

/// One regular file of an archive, as written under the destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    /// Its path relative to the archive's root directory.
    pub name: String,
    pub path: PathBuf,
    pub size: u64,
    pub mtime: u64,
    pub sha256: String,
    pub head: Vec<u8>,
}

/// What the archive held beyond what was extracted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extraction {
    pub files: Vec<Extracted>,
    /// Files left out because of the caps.
    pub truncated: bool,
}

/// Extract the regular files of `archive` whose names start with `root/` into `dest`,
/// when `wanted(name, size, mtime)` says so, within `caps`.
pub fn extract(
    mut archive: impl Read,
    root: &str,
    dest: &Path,
    caps: Caps,
    mut wanted: impl FnMut(&str, u64, u64) -> bool,
) -> Result<Extraction, String> {
    let mut out = Extraction::default();
    let mut total = 0u64;
    let mut long_name: Option<String> = None;
    let mut pax: Vec<(String, String)> = Vec::new();
    let mut header = [0u8; 512];
    loop {
        if !read_block(&mut archive, &mut header)? || header.iter().all(|b| *b == 0) {
            break;
        }
        let mut size = octal(&header[124..136]).ok_or("bad size in a tar header")?;
        let mut mtime = octal(&header[136..148]).unwrap_or(0);
        let kind = header[156];
        let mut name = match long_name.take() {
            Some(n) => n,
            None => ustar_name(&header),
        };
        for (k, v) in pax.drain(..) {
            match k.as_str() {
                "path" => name = v,
                "size" => size = v.parse().map_err(|_| "bad PAX size")?,
                "mtime" => {
                    mtime = v
                        .split('.')
                        .next()
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(mtime)
                }
                _ => {}
            }
        }
        match kind {
            b'x' => {
                pax = parse_pax(&read_data(&mut archive, size, 1 << 20)?);
                continue;
            }
            b'L' => {
                let raw = read_data(&mut archive, size, 64 * 1024)?;
                long_name = Some(
                    String::from_utf8_lossy(raw.split(|b| *b == 0).next().unwrap_or_default())
                        .into_owned(),
                );
                continue;
            }
            b'0' | 0 => {}
            _ => {
                skip(&mut archive, size)?;
                continue;
            }
        }
        let relative = confined(&name, root);
        let take = match &relative {
            Some(rel) => wanted(rel, size, mtime),
            None => false,
        };
        let Some(rel) = relative.filter(|_| take) else {
            skip(&mut archive, size)?;
            continue;
        };
        if out.files.len() >= caps.max_count as usize || total.saturating_add(size) > caps.max_bytes
        {
            out.truncated = true;
            skip(&mut archive, size)?;
            continue;
        }
        let path = dest.join(&rel);
        if let Some(parent) = path.parent() {
            DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(|e| e.to_string())?;
        }
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc_nofollow())
            .open(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let (sha256, head) = copy_hashed(&mut archive, file, size)?;
        pad(&mut archive, size)?;
        total += size;
        out.files.push(Extracted {
            name: rel,
            path,
            size,
            mtime,
            sha256,
            head,
        });
    }
    Ok(out)
}

fn libc_nofollow() -> i32 {
    rustix::fs::OFlags::NOFOLLOW.bits() as i32
}

/// `name` relative to `root/`, when it is a plain relative path beneath it.
fn confined(name: &str, root: &str) -> Option<String> {
    let rest = name.strip_prefix(root)?.strip_prefix('/')?;
    let rest = rest.trim_end_matches('/');
    let ok = !rest.is_empty()
        && !rest.contains('\0')
        && rest
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..");
    ok.then(|| rest.to_string())
}

fn ustar_name(h: &[u8; 512]) -> String {
    let field = |a: usize, b: usize| {
        let raw = &h[a..b];
        let end = raw.iter().position(|c| *c == 0).unwrap_or(raw.len());
        String::from_utf8_lossy(&raw[..end]).into_owned()
    };
    let name = field(0, 100);
    let prefix = if &h[257..262] == b"ustar" {
        field(345, 500)
    } else {
        String::new()
    };
    if prefix.is_empty() {
        name
    } else {
        format!("{prefix}/{name}")
    }
}

fn octal(field: &[u8]) -> Option<u64> {
    let text: String = field
        .iter()
        .take_while(|b| **b != 0)
        .map(|b| *b as char)
        .collect();
    let text = text.trim();
    if text.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(text, 8).ok()
}

fn parse_pax(data: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(data);
    let mut out = Vec::new();
    let mut rest: &str = &text;
    while let Some((len, _)) = rest.split_once(' ') {
        let Ok(n) = len.parse::<usize>() else { break };
        let Some(record) = rest.get(..n) else { break };
        if let Some((k, v)) = record
            .get(len.len() + 1..)
            .and_then(|r| r.strip_suffix('\n'))
            .and_then(|r| r.split_once('='))
        {
            out.push((k.to_string(), v.to_string()));
        }
        rest = rest.get(n..).unwrap_or_default();
    }
    out
}

fn read_block(r: &mut impl Read, block: &mut [u8; 512]) -> Result<bool, String> {
    let mut filled = 0;
    while filled < 512 {
        match r.read(&mut block[filled..]) {
            Ok(0) if filled == 0 => return Ok(false),
            Ok(0) => return Err("archive ended inside a header".into()),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(true)
}

fn read_data(r: &mut impl Read, size: u64, max: u64) -> Result<Vec<u8>, String> {
    if size > max {
        return Err("tar metadata entry too large".into());
    }
    let mut data = vec![0u8; usize::try_from(size).map_err(|e| e.to_string())?];
    r.read_exact(&mut data).map_err(|e| e.to_string())?;
    pad(r, size)?;
    Ok(data)
}

fn skip(r: &mut impl Read, size: u64) -> Result<(), String> {
    let padded = size.div_ceil(512) * 512;
    let copied =
        std::io::copy(&mut r.take(padded), &mut std::io::sink()).map_err(|e| e.to_string())?;
    if copied != padded {
        return Err("archive ended inside an entry".into());
    }
    Ok(())
}

fn pad(r: &mut impl Read, size: u64) -> Result<(), String> {
    let rest = (512 - size % 512) % 512;
    let copied =
        std::io::copy(&mut r.take(rest), &mut std::io::sink()).map_err(|e| e.to_string())?;
    if copied != rest {
        return Err("archive ended inside padding".into());
    }
    Ok(())
}

fn copy_hashed(r: &mut impl Read, mut file: File, size: u64) -> Result<(String, Vec<u8>), String> {
    let mut hasher = Sha256::new();
    let mut head = Vec::new();
    let mut left = size;
    let mut chunk = vec![0u8; 64 * 1024];
    while left > 0 {
        let want = usize::try_from(left.min(chunk.len() as u64)).unwrap_or(chunk.len());
        let buf = chunk.get_mut(..want).unwrap_or_default();
        r.read_exact(buf).map_err(|e| e.to_string())?;
        if head.len() < sniff::HEAD_BYTES {
            let room = (sniff::HEAD_BYTES - head.len()).min(buf.len());
            head.extend_from_slice(buf.get(..room).unwrap_or_default());
        }
        hasher.update(&*buf);
        file.write_all(buf).map_err(|e| e.to_string())?;
        left -= want as u64;
    }
    let hex = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok((hex, head))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oci::build::TarWriter;

    #[test]
    fn regular_files_beneath_the_root_only() {
        let mut tar = TarWriter::default();
        tar.dir("workspace", 0o755);
        tar.file("workspace/a.csv", b"x,y\n", 0o644);
        tar.file("workspace/sub/b.txt", b"hello", 0o644);
        tar.symlink("workspace/link", "/etc/passwd");
        tar.file("workspace/../escape", b"no", 0o644);
        tar.file("other/c.txt", b"no", 0o644);
        let bytes = tar.finish();
        let dest = super::super::artifacts::private_dir(&std::env::temp_dir(), "apizr-interp-tar")
            .unwrap();
        let caps = Caps {
            max_count: 10,
            max_bytes: 1 << 20,
        };
        let got = extract(&bytes[..], "workspace", &dest, caps, |_, _, _| true).unwrap();
        let names: Vec<&str> = got.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a.csv", "sub/b.txt"]);
        assert_eq!(std::fs::read(dest.join("sub/b.txt")).unwrap(), b"hello");
        assert!(!dest.join("link").exists());
        let capped =
            super::super::artifacts::private_dir(&std::env::temp_dir(), "apizr-interp-tar")
                .unwrap();
        let got = extract(
            &bytes[..],
            "workspace",
            &capped,
            Caps {
                max_count: 1,
                max_bytes: 1 << 20,
            },
            |_, _, _| true,
        )
        .unwrap();
        assert_eq!((got.files.len(), got.truncated), (1, true));
        std::fs::remove_dir_all(&dest).unwrap();
        std::fs::remove_dir_all(&capped).unwrap();
        assert_eq!(confined("workspace/./x", "workspace"), None);
        assert_eq!(
            parse_pax(b"27 path=workspace/long.txt\n"),
            [("path".to_string(), "workspace/long.txt".to_string())]
        );
    }
}
