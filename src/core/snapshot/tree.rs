//! Walking down and back up a tree through directory descriptors only, however deep it is: the
//! descriptor chain, the setting of directory metadata after a copy, and removal.

use super::sys;
use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;

/// How many levels of a walk keep their descriptors open. Above that a level's descriptor is
/// closed and reopened on the way back up, so a tree thousands of levels deep costs no more
/// descriptors than one this deep.
pub(super) const KEEP: usize = 64;

/// A directory's identity, to tell whether a reopened directory is still the one that was left.
#[allow(clippy::unnecessary_cast)] // st_dev is 32 bits on macOS
pub(super) fn id_of(st: &libc::stat) -> (u64, u64) {
    (st.st_dev as u64, st.st_ino as u64)
}

/// One level of a `Chain`: its descriptor while open, and its identity.
type Level = (Option<Arc<OwnedFd>>, (u64, u64));

/// The open directories from a walk's root down to where it is, at most `KEEP` of them open.
pub(super) struct Chain {
    levels: Vec<Level>,
}

impl Chain {
    pub fn new(root: Arc<OwnedFd>, st: &libc::stat) -> Self {
        Chain { levels: vec![(Some(root), id_of(st))] }
    }

    pub fn depth(&self) -> usize {
        self.levels.len() - 1
    }

    /// The directory the walk is in.
    pub fn top(&self) -> &Arc<OwnedFd> {
        // `push` closes only levels far above the top, and `pop` reopens the new top.
        self.levels.last().and_then(|l| l.0.as_ref()).expect("the top of a chain is open")
    }

    pub fn push(&mut self, fd: Arc<OwnedFd>, st: &libc::stat) {
        self.levels.push((Some(fd), id_of(st)));
        // The root is the caller's and is never closed.
        if let Some(i) = self.levels.len().checked_sub(KEEP + 1).filter(|i| *i > 0) {
            self.levels[i].0 = None;
        }
    }

    /// Leaves the top directory and returns it. A parent that was closed is reopened as `..` of
    /// the directory left, and must be the same directory as before: one moved away meanwhile
    /// fails the walk (ESTALE) rather than take it somewhere else.
    pub fn pop(&mut self) -> Result<Arc<OwnedFd>, i32> {
        let left = self.levels.pop().and_then(|l| l.0).expect("a chain is popped below its root only");
        if let Some((fd @ None, id)) = self.levels.last_mut() {
            let up = sys::open_dir(left.as_raw_fd(), c"..")?;
            if id_of(&sys::fstat(up.as_raw_fd())?) != *id {
                return Err(libc::ESTALE);
            }
            *fd = Some(Arc::new(up));
        }
        Ok(left)
    }
}

/// A directory a copy made, in the order it made them (each after its parent), with the
/// source's mode and times to give it once everything in it is written.
pub(super) struct DirMeta {
    /// 1 for an entry of the root.
    pub depth: usize,
    pub name: CString,
    /// The copy's identity, so that a directory put in its place is not taken for it.
    pub id: (u64, u64),
    pub stat: libc::stat,
}

/// Gives every directory in `dirs` its mode and times, deepest first, then the root, through
/// descriptors opened from the root down (`O_NOFOLLOW`, and checked to be the directory the copy
/// made). A path is never resolved, so no depth is too deep, and a directory replaced by a link
/// or by another directory meanwhile fails the copy instead of changing what is there now.
/// On failure, says which system call failed and the names from the root to where.
pub(super) fn set_dirs_meta(
    root: Arc<OwnedFd>,
    root_stat: &libc::stat,
    dirs: &[DirMeta],
) -> Result<(), (i32, &'static str, Vec<CString>)> {
    let mut chain = Chain::new(root.clone(), &sys::fstat(root.as_raw_fd()).map_err(|e| (e, "fstat", vec![]))?);
    let mut open: Vec<usize> = Vec::new();
    let names = |open: &[usize]| open.iter().map(|i| dirs[*i].name.clone()).collect::<Vec<_>>();
    let close = |chain: &mut Chain, open: &mut Vec<usize>| {
        let fd = chain.pop().map_err(|e| (e, "open", names(open)))?;
        let i = *open.last().expect("one open index a level");
        set_meta(&fd, &dirs[i].stat).map_err(|(e, call)| (e, call, names(open)))?;
        open.pop();
        Ok(())
    };
    for (i, d) in dirs.iter().enumerate() {
        while chain.depth() >= d.depth {
            close(&mut chain, &mut open)?;
        }
        open.push(i);
        let fd = sys::open_dir(chain.top().as_raw_fd(), &d.name).map_err(|e| (e, "open", names(&open)))?;
        let st = sys::fstat(fd.as_raw_fd()).map_err(|e| (e, "fstat", names(&open)))?;
        if id_of(&st) != d.id {
            return Err((libc::ESTALE, "open", names(&open)));
        }
        chain.push(Arc::new(fd), &st);
    }
    while chain.depth() > 0 {
        close(&mut chain, &mut open)?;
    }
    set_meta(&root, root_stat).map_err(|(e, call)| (e, call, vec![]))
}

/// Gives a directory the mode and mtime of `st`, writing nothing where it has them already (a
/// restore in place leaves an unchanged directory untouched).
fn set_meta(fd: &OwnedFd, st: &libc::stat) -> Result<(), (i32, &'static str)> {
    let now = sys::fstat(fd.as_raw_fd()).map_err(|e| (e, "fstat"))?;
    let same = |a: &libc::stat| {
        (a.st_mode & 0o7777, a.st_mtime, a.st_mtime_nsec) == (st.st_mode & 0o7777, st.st_mtime, st.st_mtime_nsec)
    };
    if same(&now) {
        return Ok(());
    }
    sys::fchmod(fd.as_raw_fd(), st.st_mode).map_err(|e| (e, "fchmod"))?;
    sys::futimens(fd.as_raw_fd(), st).map_err(|e| (e, "futimens"))
}

/// Unlinks `name` in `dir` unless it is a directory; true when it was.
fn unlink_unless_dir(dir: RawFd, name: &CStr) -> Result<bool, i32> {
    match sys::unlinkat(dir, name, 0) {
        Ok(()) | Err(libc::ENOENT) => Ok(false),
        Err(libc::EISDIR) | Err(libc::EPERM) => Ok(true),
        Err(e) => Err(e),
    }
}

/// Opens a directory to empty it, with the write and search permission that takes: a checkpoint
/// keeps read-only modes, which its owner may lift. The name is never followed, so a link put in
/// its place changes nothing where it points, and a directory of another filesystem than `dev`
/// (a mount point) is refused (EXDEV): what is mounted there is not part of the tree.
fn open_to_empty(dir: RawFd, name: &CStr, dev: u64) -> Result<(OwnedFd, libc::stat), i32> {
    #[allow(clippy::unnecessary_cast)] // st_dev is 32 bits on macOS
    let on = |st: &libc::stat| if st.st_dev as u64 == dev { Ok(()) } else { Err(libc::EXDEV) };
    let fd = match sys::open_dir(dir, name) {
        Err(libc::EACCES) => {
            on(&sys::lstatat(dir, name)?)?;
            // Not ours to change, the open below says so.
            let _ = sys::chmod_dir_nofollow(dir, name, 0o700);
            sys::open_dir(dir, name)?
        }
        other => other?,
    };
    let st = sys::fstat(fd.as_raw_fd())?;
    on(&st)?;
    if st.st_mode & 0o700 != 0o700 {
        // Likewise: an unlink that still cannot be done reports why.
        let _ = sys::fchmod(fd.as_raw_fd(), 0o700);
    }
    Ok((fd, st))
}

/// Removes one entry of `dir`, a directory with everything in it, depth first through
/// descriptors (see `Chain`), so a tree of any depth goes. It stays on the filesystem of `dir`:
/// a directory mounted from another fails the removal (EXDEV) and keeps what is in it.
pub(super) fn remove_entry(dir: RawFd, name: &CStr) -> Result<(), i32> {
    if !unlink_unless_dir(dir, name)? {
        return Ok(());
    }
    #[allow(clippy::unnecessary_cast)]
    let dev = sys::fstat(dir)?.st_dev as u64;
    let (top, st) = open_to_empty(dir, name, dev)?;
    let top = Arc::new(top);
    let mut chain = Chain::new(top.clone(), &st);
    // Each level: its name in its parent and the entries still to remove.
    let mut levels = vec![(name.to_owned(), sys::entries(&top)?)];
    drop(top);
    while let Some((_, left)) = levels.last_mut() {
        if let Some((child, _)) = left.pop() {
            let here = chain.top().as_raw_fd();
            if unlink_unless_dir(here, &child)? {
                let (sub, st) = open_to_empty(here, &child, dev)?;
                let entries = sys::entries(&sub)?;
                chain.push(Arc::new(sub), &st);
                levels.push((child, entries));
            }
            continue;
        }
        let (done, _) = levels.pop().expect("a level was there");
        let parent = if levels.is_empty() {
            dir
        } else {
            chain.pop()?;
            chain.top().as_raw_fd()
        };
        match sys::unlinkat(parent, &done, libc::AT_REMOVEDIR) {
            Ok(()) | Err(libc::ENOENT) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
