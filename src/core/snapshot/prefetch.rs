//! Reading directories ahead of a walk. On a cold cache a walk that links or compares files
//! (an incremental capture, a restore in place) waits on the disk for each directory it opens,
//! one after another, and does little else; a few threads reading the same trees ahead, several
//! directories at a time, turn those waits into parallel reads whose results the walk then finds
//! in memory. What they list is kept for the walk (`Listings`), which then reads each directory
//! once instead of twice: listing a directory costs CPU even from memory (a hash of every name
//! on ext4), and a restore in place or an incremental capture lists little else.
//!
//! A listing is handed to the walk only while the directory is as it was when it was listed
//! (same identity, mtime and ctime), so the walk sees what it would have read itself, as of a
//! moment earlier; a directory changed since is read again. A change within the same tick of a
//! coarse clock may leave the times as they were: the walk then sees the directory as it was
//! just before that change, which is what it sees of any change made after it read a directory.
//! Either way nothing follows a stale name: an entry that is gone is found missing where it is
//! opened, as one removed while a copy runs always was.

use super::*;
use std::collections::{HashMap, HashSet};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Condvar, Mutex};

/// How many directories may wait to be read, each holding a descriptor: beyond this a subtree
/// is left for the walk to read itself.
const WAITING: usize = 256;

/// How many bytes of names the readers may hold for the walk; past it, the walk reads the rest
/// itself. A tree of a million files lists about 30 MB of names.
const LISTED_BYTES: usize = 32 << 20;

/// A directory's identity and the times any change to its entries moves.
type Stamp = ((u64, u64), i64, i64);

fn stamp(st: &libc::stat) -> Stamp {
    (tree::id_of(st), record::mtime_ns(st), record::ctime_ns(st))
}

fn weight(entries: &[(CString, u8)]) -> usize {
    entries.iter().map(|(n, _)| n.as_bytes().len() + 40).sum()
}

/// A directory's entries as `sys::entries` reads them.
type Entries = Vec<(CString, u8)>;

/// Directories the readers listed, by identity, until the walk takes them.
#[derive(Default)]
struct Listed {
    by_dir: HashMap<(u64, u64), (Stamp, Entries)>,
    /// Directories the walk has read: a listing made after is of no use to it.
    taken: HashSet<(u64, u64)>,
    bytes: usize,
}

/// What the readers listed ahead of the walk (see the module's comment).
#[derive(Default)]
pub(super) struct Listings {
    listed: Mutex<Listed>,
}

impl Listings {
    /// The entries of the directory `dir`, whose `fstat` the walk just made: the readers'
    /// listing if they made one and the directory has not changed since, else read now.
    pub(super) fn entries(&self, dir: &OwnedFd, st: &libc::stat) -> Result<Entries, i32> {
        let now = stamp(st);
        let found = {
            let mut l = self.listed.lock().unwrap_or_else(|e| e.into_inner());
            l.taken.insert(now.0);
            let found = l.by_dir.remove(&now.0);
            if let Some((_, entries)) = &found {
                l.bytes -= weight(entries);
            }
            found
        };
        match found {
            Some((then, entries)) if then == now => Ok(entries),
            _ => sys::entries(dir),
        }
    }

    fn keep(&self, then: Stamp, entries: Entries) {
        let w = weight(&entries);
        let mut l = self.listed.lock().unwrap_or_else(|e| e.into_inner());
        if l.bytes + w <= LISTED_BYTES && !l.taken.contains(&then.0) {
            l.bytes += w;
            l.by_dir.insert(then.0, (then, entries));
        }
    }
}

/// A directory to read, and whether the walk will list it (see `Root`).
type Pending = (OwnedFd, bool);

/// A tree to read ahead of a walk, and whether the walk lists its directories (a capture's
/// working tree) or only opens them and their files (its previous capture): only the listings
/// of the first are kept for it.
pub(super) type Root = (OwnedFd, bool);

struct Ahead {
    /// Directories to read, the next on top: the walk goes depth first in the order the
    /// directories list their entries, and so, roughly, do the readers.
    stack: Mutex<Vec<Pending>>,
    more: Condvar,
    busy: AtomicUsize,
    done: AtomicBool,
    listings: Listings,
}

impl Ahead {
    fn next(&self) -> Option<Pending> {
        let mut stack = self.stack.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if self.done.load(Ordering::Relaxed) {
                return None;
            }
            if let Some(fd) = stack.pop() {
                self.busy.fetch_add(1, Ordering::Relaxed);
                return Some(fd);
            }
            // Nothing waits and nobody will add more: every directory was read.
            if self.busy.load(Ordering::Relaxed) == 0 {
                return None;
            }
            stack = self.more.wait(stack).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn read(&self, (dir, listed): Pending) {
        // Stamped before it is read: a change while it is read then shows in the walk's stamp.
        let then = sys::fstat(dir.as_raw_fd()).map(|st| stamp(&st));
        let entries = sys::entries(&dir).unwrap_or_default();
        // Last first, so that the first is on top of the stack.
        let subdirs: Vec<Pending> = entries
            .iter()
            .filter(|(_, t)| *t == libc::DT_DIR)
            .take(WAITING)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .filter_map(|(n, _)| sys::open_dir(dir.as_raw_fd(), n).ok().map(|fd| (fd, listed)))
            .collect();
        if let (Ok(then), true) = (then, listed) {
            self.listings.keep(then, entries);
        }
        let mut stack = self.stack.lock().unwrap_or_else(|e| e.into_inner());
        let room = WAITING.saturating_sub(stack.len());
        let skip = subdirs.len().saturating_sub(room);
        // The first entries (last in `subdirs`) are the walk's next: those are kept.
        stack.extend(subdirs.into_iter().skip(skip));
        self.busy.fetch_sub(1, Ordering::Relaxed);
        self.more.notify_all();
    }
}

/// The directory `fd` opened anew, for a reader of its own: a duplicate would share its offset,
/// and two threads listing one open directory each get part of it.
pub(super) fn reopen(fd: std::os::fd::RawFd) -> Result<OwnedFd, i32> {
    sys::open_dir(fd, c".")
}

/// Runs `walk` while `threads` threads read the trees at `roots` ahead of it; returns what
/// `walk` returns, once they have stopped. The walk reads directories through the `Listings`
/// it is given.
pub(super) fn ahead<R>(roots: Vec<Root>, threads: usize, walk: impl FnOnce(&Listings) -> R) -> R {
    let ahead = Ahead {
        stack: Mutex::new(roots),
        more: Condvar::new(),
        busy: AtomicUsize::new(0),
        done: AtomicBool::new(false),
        listings: Listings::default(),
    };
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(dir) = ahead.next() {
                    ahead.read(dir);
                }
            });
        }
        let r = walk(&ahead.listings);
        ahead.done.store(true, Ordering::Relaxed);
        let _guard = ahead.stack.lock().unwrap_or_else(|e| e.into_inner());
        ahead.more.notify_all();
        r
    })
}

#[cfg(test)]
mod listing_tests {
    use super::*;

    fn open(path: &Path) -> OwnedFd {
        sys::openat(libc::AT_FDCWD, &CString::new(path.as_os_str().as_bytes()).unwrap(), libc::O_RDONLY, 0).unwrap()
    }

    #[test]
    fn the_walk_takes_a_listing_made_ahead_only_while_the_directory_is_unchanged() {
        let dir = std::env::temp_dir().join(format!("procvisor-listings-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("real"), b"").unwrap();
        let fd = open(&dir);
        let names = |v: Vec<(CString, u8)>| v.into_iter().map(|(n, _)| n.into_string().unwrap()).collect::<Vec<_>>();
        // A listing kept for the directory as it is now is what the walk gets: a name that is
        // not on disk shows that it was not read again.
        let listings = Listings::default();
        let st = sys::fstat(fd.as_raw_fd()).unwrap();
        listings.keep(stamp(&st), vec![(c"kept".to_owned(), libc::DT_REG)]);
        assert_eq!(names(listings.entries(&fd, &st).unwrap()), ["kept"]);
        // Taken once: the next look reads the directory.
        assert_eq!(names(listings.entries(&fd, &st).unwrap()), ["real"]);
        // Taken already: a listing made after is not kept.
        listings.keep(stamp(&st), vec![(c"late".to_owned(), libc::DT_REG)]);
        assert_eq!(names(listings.entries(&fd, &st).unwrap()), ["real"]);
        // Changed since it was listed (its times moved): read again.
        let listings = Listings::default();
        listings.keep(stamp(&st), vec![(c"stale".to_owned(), libc::DT_REG)]);
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        std::fs::File::open(&dir).unwrap().set_modified(old).unwrap();
        let now = sys::fstat(fd.as_raw_fd()).unwrap();
        assert_eq!(names(listings.entries(&fd, &now).unwrap()), ["real"]);
        assert_eq!(listings.listed.lock().unwrap().bytes, 0, "what was taken no longer counts");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
