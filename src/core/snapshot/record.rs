//! The record kept beside each checkpoint (`.owner-<name>`): which sandbox made it, which
//! directory it is, and the state of every file it was captured from. The next capture of the
//! same working directory links the files whose state has not changed instead of copying them,
//! and a restore in place leaves alone the working files that are still the ones captured.
//!
//! A record is trusted only for the checkpoint directory it names (device and inode): a
//! checkpoint that anyone replaces (Mastra's own capture, say) is a new directory, and its stale
//! record is then ignored. It is text, one file per line, and never contains `=` past its
//! header, so older readers of the owner lines read it as they always did.

use super::*;
use std::collections::HashMap;
use std::io::{BufRead, BufWriter, Write};
use std::sync::{Mutex, OnceLock};

const FIRST_LINE: &str = "procvisor checkpoint owner";
const ENTRIES: &str = "entries";

/// How old a file's last change must be, against the filesystem's clock at the start of a
/// capture, for its recorded state to vouch for it later: a file written again within the same
/// tick of a coarse clock (ext4's jiffies, a second on some filesystems, two for FAT's mtimes)
/// keeps its timestamps, and only a change after that margin is certain to show in them.
pub(super) const SETTLED_NS: i64 = 2_000_000_000;

/// The entries of a record: each file's path relative to the root, and its state.
pub(super) type Entries = Vec<(Vec<u8>, Entry)>;

/// A record's entries by path, as a capture or a restore looks each file up in them.
pub(super) type Table = HashMap<Vec<u8>, Entry, PathHash>;

pub(super) use super::path_hash::PathHash;

/// The state of one captured file: the source's identity, size and times when it was read, and
/// the inode of its copy in the checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Entry {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub stored: u64,
}

/// Whether a file's last change, as `st` tells it, lies before `before` (ns, the filesystem's
/// clock): only then can a record vouch for its state (see `SETTLED_NS`).
pub(super) fn settled(st: &libc::stat, before: i64) -> bool {
    ctime_ns(st) < before && mtime_ns(st) < before
}

#[allow(clippy::unnecessary_cast)] // time_t and long differ in width across platforms
pub(super) fn mtime_ns(st: &libc::stat) -> i64 {
    (st.st_mtime as i64).saturating_mul(1_000_000_000).saturating_add(st.st_mtime_nsec as i64)
}

#[allow(clippy::unnecessary_cast)]
pub(super) fn ctime_ns(st: &libc::stat) -> i64 {
    (st.st_ctime as i64).saturating_mul(1_000_000_000).saturating_add(st.st_ctime_nsec as i64)
}

impl Entry {
    #[allow(clippy::unnecessary_cast)] // st_dev and st_ino differ in width across platforms
    pub fn of(st: &libc::stat, stored: u64) -> Entry {
        Entry {
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            size: st.st_size as u64,
            mtime_ns: mtime_ns(st),
            ctime_ns: ctime_ns(st),
            stored,
        }
    }

    /// Whether `st` is the very file this entry was read from, unchanged since: a write, a
    /// truncation, a chmod or a rename all move its ctime, which no program can set back.
    pub fn matches(&self, st: &libc::stat) -> bool {
        let now = Entry::of(st, self.stored);
        st.st_mode & libc::S_IFMT == libc::S_IFREG && now == *self
    }
}

/// The header of a record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Header {
    /// The owner's id, hex-encoded; none for a capture that names no owner.
    pub id: Option<String>,
    /// The checkpoint directory this record describes.
    pub dev: u64,
    pub ino: u64,
    /// When the capture was put in place; none in the owner records of older versions, which
    /// say nothing of the files either.
    pub created_ms: Option<u64>,
    /// The working directory captured (device, inode); none in records of older versions.
    pub root: Option<(u64, u64)>,
    pub files: u64,
    pub bytes: u64,
    pub new_bytes: Option<u64>,
}

/// A path's bytes with everything but `[A-Za-z0-9._/+,@~-]` as `%XX`: no space, newline or `=`.
fn escape(path: &[u8], out: &mut Vec<u8>) {
    for &b in path {
        if b.is_ascii_alphanumeric() || b"._/+,@~-".contains(&b) {
            out.push(b);
        } else {
            let _ = write!(out, "%{b:02x}");
        }
    }
}

fn unescape(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'%' {
            let hex = std::str::from_utf8(text.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    Some(out)
}

/// Writes the record of checkpoint `name` (a temporary file renamed into place, so a reader
/// finds the old record or the new one, whole).
pub(super) fn write(checkpoints: &Path, name: &str, h: &Header, entries: &Entries) -> std::io::Result<()> {
    let tmp = checkpoints.join(format!(".tmp-owner-{name}-{}", random_hex()));
    let written = (|| {
        let mut w = BufWriter::with_capacity(1 << 16, std::fs::File::create(&tmp)?);
        writeln!(w, "{FIRST_LINE}")?;
        if let Some(id) = &h.id {
            writeln!(w, "id={id}")?;
        }
        writeln!(w, "dev={}\nino={}", h.dev, h.ino)?;
        if let Some(ms) = h.created_ms {
            writeln!(w, "created={ms}")?;
        }
        if let Some((dev, ino)) = h.root {
            writeln!(w, "root={dev}:{ino}")?;
        }
        writeln!(w, "files={}\nbytes={}", h.files, h.bytes)?;
        if let Some(n) = h.new_bytes {
            writeln!(w, "new={n}")?;
        }
        writeln!(w, "{ENTRIES}")?;
        let mut line = Vec::with_capacity(256);
        for (path, e) in entries {
            line.clear();
            escape(path, &mut line);
            writeln!(line, " {} {} {} {} {} {}", e.dev, e.ino, e.size, e.mtime_ns, e.ctime_ns, e.stored)?;
            w.write_all(&line)?;
        }
        w.flush()
    })();
    written.and_then(|()| std::fs::rename(&tmp, owner_file(checkpoints, name))).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

fn parse_header(lines: &mut impl Iterator<Item = std::io::Result<String>>) -> Option<Header> {
    if lines.next()?.ok()? != FIRST_LINE {
        return None;
    }
    let mut h = Header::default();
    let (mut dev, mut ino) = (None, None);
    for line in lines {
        let line = line.ok()?;
        if line == ENTRIES {
            break;
        }
        let Some((k, v)) = line.split_once('=') else { continue };
        match k {
            "id" => h.id = Some(v.to_string()),
            "dev" => dev = v.parse().ok(),
            "ino" => ino = v.parse().ok(),
            "created" => h.created_ms = v.parse().ok(),
            "root" => h.root = v.split_once(':').and_then(|(d, i)| Some((d.parse().ok()?, i.parse().ok()?))),
            "files" => h.files = v.parse().unwrap_or(0),
            "bytes" => h.bytes = v.parse().unwrap_or(0),
            "new" => h.new_bytes = v.parse().ok(),
            _ => {}
        }
    }
    h.dev = dev?;
    h.ino = ino?;
    Some(h)
}

/// The header of the record at `path`, reading no further.
pub(super) fn read_header(path: &Path) -> Option<Header> {
    let file = std::fs::File::open(path).ok()?;
    parse_header(&mut std::io::BufReader::with_capacity(4096, file).lines())
}

/// The entries of the record at `path` by relative path, if it describes the directory `dir`
/// (device, inode); a record of some other directory vouches for nothing. Read whole and parsed
/// in place: a capture and a restore read it before their walk (16,000 entries in about a
/// millisecond, a third of what line by line took). A record that does not parse vouches for
/// nothing either, whatever its header claims (its `files` only sizes the table, within what
/// its bytes can hold).
pub(super) fn read_entries(path: &Path, dir: (u64, u64)) -> Option<Table> {
    let data = std::fs::read(path).ok()?;
    let body_at = find_line(&data, ENTRIES.as_bytes())?;
    let mut header = data[..body_at].split(|b| *b == b'\n').map(|l| Ok(String::from_utf8_lossy(l).into_owned()));
    let h = parse_header(&mut header)?;
    if (h.dev, h.ino) != dir {
        return None;
    }
    let body = &data[body_at + ENTRIES.len() + 1..];
    // The shortest entry line: a one-byte path and six one-digit numbers.
    let mut out = Table::with_capacity_and_hasher((h.files as usize).min(body.len() / 14), PathHash::default());
    for text in body.split(|b| *b == b'\n') {
        if text.is_empty() {
            continue;
        }
        let mut fields = text.split(|b| *b == b' ');
        let raw = fields.next()?;
        let path = if raw.contains(&b'%') { unescape(raw)? } else { raw.to_vec() };
        let (dev, ino, size) = (number(fields.next()?)?, number(fields.next()?)?, number(fields.next()?)?);
        let (mtime_ns, ctime_ns) = (signed(fields.next()?)?, signed(fields.next()?)?);
        let stored = number(fields.next()?)?;
        if fields.next().is_some() {
            return None;
        }
        out.insert(path, Entry { dev, ino, size, mtime_ns, ctime_ns, stored });
    }
    Some(out)
}

/// Where the line `line` starts in `data` (at its start or after a newline), followed by a newline.
fn find_line(data: &[u8], line: &[u8]) -> Option<usize> {
    let mut at = 0;
    while at < data.len() {
        let end = data[at..].iter().position(|b| *b == b'\n').map_or(data.len(), |n| at + n);
        if &data[at..end] == line && end < data.len() {
            return Some(at);
        }
        at = end + 1;
    }
    None
}

/// A decimal u64 written by `write` (digits only, no sign), or none.
fn number(text: &[u8]) -> Option<u64> {
    if text.is_empty() || text.len() > 20 {
        return None;
    }
    text.iter().try_fold(0u64, |n, b| {
        if b.is_ascii_digit() {
            n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

/// A decimal i64, with a leading `-` where negative (a time before the epoch), or none.
fn signed(text: &[u8]) -> Option<i64> {
    match text.strip_prefix(b"-") {
        Some(digits) => number(digits).and_then(|n| 0i64.checked_sub_unsigned(n)),
        None => number(text).and_then(|n| i64::try_from(n).ok()),
    }
}

/// The checkpoint's record as a restore in place uses it: its entries, and whether files found
/// to hold the checkpoint's bytes may be added to it (only for the working directory it
/// describes: the record is of its files).
#[derive(Default)]
pub(super) struct Known {
    pub(super) entries: Option<Table>,
    pub(super) learns: bool,
}

impl Known {
    fn read(path: &Path, id: (u64, u64), root: Option<(u64, u64)>) -> Known {
        let entries = read_entries(path, id);
        let learns = entries.is_some() && read_header(path).is_some_and(|h| h.root == root);
        Known { entries, learns }
    }
}

/// The record, read on a thread of its own while a restore in place starts its walk. Cold,
/// reading and parsing the record of 16,000 files took about 6 ms, a tenth of a restore in place
/// that changes 1% of them, and nothing but a file present in both trees waits for it.
pub(super) struct Background {
    known: OnceLock<Known>,
    reader: Mutex<Option<std::thread::JoinHandle<Known>>>,
}

impl Background {
    pub(super) fn read(path: PathBuf, id: (u64, u64), root: Option<(u64, u64)>) -> Background {
        let on_thread = path.clone();
        let reader = std::thread::Builder::new()
            .name("procvisor-record".into())
            .spawn(move || Known::read(&on_thread, id, root))
            .ok();
        let known = OnceLock::new();
        if reader.is_none() {
            // No thread to read it on: read here, the restore is only slower.
            let _ = known.set(Known::read(&path, id, root));
        }
        Background { known, reader: Mutex::new(reader) }
    }

    /// The record, waited for; a reader that failed leaves none (every file is then compared).
    pub(super) fn get(&self) -> &Known {
        self.known.get_or_init(|| {
            let handle = self.reader.lock().unwrap_or_else(|e| e.into_inner()).take();
            handle.and_then(|h| h.join().ok()).unwrap_or_default()
        })
    }
}

#[cfg(test)]
mod record_tests {
    use super::*;

    fn written(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("procvisor-record-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(".owner-x");
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_record_is_read_back_as_written() {
        let dir = std::env::temp_dir().join(format!("procvisor-record-rt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let h = Header { dev: 7, ino: 9, files: 2, ..Header::default() };
        let e = |n: i64| Entry { dev: 1, ino: 2, size: 3, mtime_ns: n, ctime_ns: n + 1, stored: 4 };
        let entries: Entries =
            vec![(b"a b/%c=d".to_vec(), e(-5_000_000_000)), (b"plain/name.js".to_vec(), e(i64::MAX - 1))];
        write(&dir, "x", &h, &entries).unwrap();
        let back = read_entries(&owner_file(&dir, "x"), (7, 9)).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[b"a b/%c=d".as_slice()], e(-5_000_000_000));
        assert_eq!(back[b"plain/name.js".as_slice()], e(i64::MAX - 1));
        assert!(read_entries(&owner_file(&dir, "x"), (7, 10)).is_none(), "a record of another directory");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_record_that_claims_more_than_it_holds_or_does_not_parse_vouches_for_nothing_and_reserves_nothing() {
        let head = "procvisor checkpoint owner\ndev=1\nino=2\nfiles=1000000000000000\nentries\n";
        // Reserving for the claimed count would ask for petabytes, which aborts the process.
        let p = written("claims", &format!("{head}a 1 2 3 4 5 6\n"));
        assert_eq!(read_entries(&p, (1, 2)).unwrap().len(), 1);
        for bad in [
            "a 1 2 3 4 5\n",
            "a 1 2 3 4 5 6 7\n",
            "a 1 2 x 4 5 6\n",
            "a 1 2 99999999999999999999 4 5 6\n",
            "a%zz 1 2 3 4 5 6\n",
        ] {
            let p = written("bad", &format!("{head}{bad}"));
            assert!(read_entries(&p, (1, 2)).is_none(), "{bad:?}");
        }
        assert!(read_entries(&written("noentries", "procvisor checkpoint owner\ndev=1\nino=2\n"), (1, 2)).is_none());
        for name in ["claims", "bad", "noentries"] {
            let _ = std::fs::remove_dir_all(written(name, "").parent().unwrap());
        }
    }
}
