//! Reading directories ahead of a walk. On a cold cache a walk that links or compares files
//! (an incremental capture, a restore in place) waits on the disk for each directory it opens,
//! one after another, and does little else; a few threads reading the same trees ahead, several
//! directories at a time, turn those waits into parallel reads whose results the walk then finds
//! in memory. They only read, so what they find does not matter to what the walk does.

use super::*;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Condvar, Mutex};

/// How many directories may wait to be read, each holding a descriptor: beyond this a subtree
/// is left for the walk to read itself.
const WAITING: usize = 256;

struct Ahead {
    /// Directories to read, the next on top: the walk goes depth first in the order the
    /// directories list their entries, and so, roughly, do the readers.
    stack: Mutex<Vec<OwnedFd>>,
    more: Condvar,
    busy: AtomicUsize,
    done: AtomicBool,
}

impl Ahead {
    fn next(&self) -> Option<OwnedFd> {
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

    fn read(&self, dir: OwnedFd) {
        let names: Vec<CString> = match sys::entries(&dir) {
            Ok(entries) => {
                entries.into_iter().filter(|(_, t)| *t == libc::DT_DIR).map(|(n, _)| n).take(WAITING).collect()
            }
            Err(_) => Vec::new(),
        };
        // Last first, so that the first is on top of the stack.
        let subdirs: Vec<OwnedFd> = names.iter().rev().filter_map(|n| sys::open_dir(dir.as_raw_fd(), n).ok()).collect();
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
/// `walk` returns, once they have stopped.
pub(super) fn ahead<R>(roots: Vec<OwnedFd>, threads: usize, walk: impl FnOnce() -> R) -> R {
    let ahead = Ahead {
        stack: Mutex::new(roots),
        more: Condvar::new(),
        busy: AtomicUsize::new(0),
        done: AtomicBool::new(false),
    };
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(dir) = ahead.next() {
                    ahead.read(dir);
                }
            });
        }
        let r = walk();
        ahead.done.store(true, Ordering::Relaxed);
        let _guard = ahead.stack.lock().unwrap_or_else(|e| e.into_inner());
        ahead.more.notify_all();
        r
    })
}
