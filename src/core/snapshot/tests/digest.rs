//! A digest of a tree: every path with its type, mode, mtime, link target, content and, for a
//! regular file, where its data lies (Linux: `SEEK_DATA`/`SEEK_HOLE`), so a file whose holes
//! were filled differs from one that kept them.
use super::*;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::Read;

/// The data ranges of a file, by its own description of its holes.
#[cfg(target_os = "linux")]
fn data_ranges(p: &Path) -> Vec<(i64, i64)> {
    let f = std::fs::File::open(p).unwrap();
    let size = f.metadata().unwrap().len() as i64;
    let fd = f.as_raw_fd();
    let mut out = Vec::new();
    let mut pos = 0i64;
    while pos < size {
        let data = unsafe { libc::lseek(fd, pos, libc::SEEK_DATA) };
        if data < 0 {
            break;
        }
        let hole = unsafe { libc::lseek(fd, data, libc::SEEK_HOLE) };
        out.push((data, hole));
        pos = hole;
    }
    out
}

#[cfg(not(target_os = "linux"))]
fn data_ranges(_: &Path) -> Vec<(i64, i64)> {
    Vec::new()
}

fn content_hash(p: &Path) -> u64 {
    let mut h = DefaultHasher::new();
    let mut f = std::fs::File::open(p).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            return h.finish();
        }
        buf[..n].hash(&mut h);
    }
}

/// One line per entry under `root` (the root itself first, as "."), sorted by path.
pub(super) fn entries(root: &Path) -> Vec<String> {
    fn line(p: &Path, rel: &str) -> String {
        let m = std::fs::symlink_metadata(p).unwrap();
        let t = m.file_type();
        let what = if t.is_symlink() {
            format!("link -> {}", std::fs::read_link(p).unwrap().display())
        } else if t.is_dir() {
            format!("dir mode {:o}", m.mode() & 0o7777)
        } else if t.is_file() {
            format!(
                "file mode {:o} size {} data {:?} content {:016x}",
                m.mode() & 0o7777,
                m.len(),
                data_ranges(p),
                content_hash(p)
            )
        } else {
            format!("other {:o}", m.mode())
        };
        format!("{rel}: {what} mtime {}.{:09}", m.mtime(), m.mtime_nsec())
    }
    fn go(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let mut names: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        names.sort();
        for p in names {
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            out.push(line(&p, &rel));
            if std::fs::symlink_metadata(&p).unwrap().is_dir() {
                go(root, &p, out);
            }
        }
    }
    let mut out = vec![line(root, ".")];
    go(root, root, &mut out);
    out
}

/// The digest of a tree: a hash of `entries`.
pub(super) fn digest(root: &Path) -> u64 {
    let mut h = DefaultHasher::new();
    entries(root).hash(&mut h);
    h.finish()
}

/// Asserts two trees have the same digest, showing the first entries that differ.
pub(super) fn assert_same_tree(a: &Path, b: &Path) {
    if digest(a) == digest(b) {
        return;
    }
    let (ea, eb) = (entries(a), entries(b));
    let only_a: Vec<_> = ea.iter().filter(|l| !eb.contains(l)).take(5).collect();
    let only_b: Vec<_> = eb.iter().filter(|l| !ea.contains(l)).take(5).collect();
    panic!(
        "{} and {} differ:\n  only in the first: {only_a:#?}\n  only in the second: {only_b:#?}",
        a.display(),
        b.display()
    );
}

/// Lets the files just written age past the margin a record needs (`record::SETTLED_NS`), as a
/// working tree does between an agent's edits and its next capture.
pub(super) fn settle() {
    std::thread::sleep(std::time::Duration::from_nanos(record::SETTLED_NS as u64 + 200_000_000));
}

pub(super) fn ino(p: &Path) -> u64 {
    std::fs::symlink_metadata(p).unwrap().ino()
}
