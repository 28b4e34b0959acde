//! One entry of a restore in place: a working file or link made the checkpoint's, replaced whole
//! (copied beside its old self under a temporary name, then renamed over it) unless it already
//! is, and the working directories' modes lifted where they refuse a change.

use super::compare;
use super::copy::{kind_of_mode, Job, Kind, Shared};
use super::record::{self, Entry};
use super::*;
use std::ffi::CStr;
use std::os::fd::RawFd;

/// The working files a restore found to hold their checkpoint file's bytes, for the record
/// (see `rollback::learn`). Only those: a file the restore copies is a new inode whose times are those of
/// the checkpoint's file, not a state a record could vouch for, and noting it would only make
/// every restore that copies rewrite the record.
pub(super) struct Learning {
    pub(super) found: std::sync::Mutex<record::Entries>,
    /// The time (ns) before which a file's last change must lie (see `record::SETTLED_NS`).
    pub(super) before: i64,
}

impl Learning {
    fn note(&self, rel: &Path, st: &libc::stat, stored: u64) {
        if record::settled(st, self.before) {
            let key = rel.as_os_str().as_bytes().to_vec();
            self.found.lock().unwrap_or_else(|e| e.into_inner()).push((key, Entry::of(st, stored)));
        }
    }
}

/// One regular file of the checkpoint, and whether the working directory has an entry of that
/// name.
pub(super) struct FileJob {
    pub(super) job: Job,
    pub(super) present: bool,
}

/// A name for a file copied beside the one it replaces; no checkpoint entry is expected to
/// have it, and one that had would be replaced in turn.
fn temporary() -> CString {
    CString::new(format!(".procvisor-restore-{}", random_hex())).expect("no NUL in a hex name")
}

/// Runs `op`, a change to the working directory `dir`; where its mode refuses this process
/// (a checkpoint keeps read-only modes), gives the owner write access and runs it again. Only a
/// directory that has something to change is touched, and it gets the checkpoint's own mode
/// back at the end.
pub(super) fn in_writable<T>(dir: RawFd, mut op: impl FnMut() -> Result<T, i32>) -> Result<T, i32> {
    match op() {
        Err(libc::EACCES) => {
            make_writable(dir)?;
            op()
        }
        other => other,
    }
}

fn make_writable(dir: RawFd) -> Result<(), i32> {
    let st = sys::fstat(dir)?;
    if st.st_mode & 0o700 != 0o700 {
        sys::fchmod(dir, (st.st_mode | 0o700) & 0o7777)?;
    }
    Ok(())
}

/// Removes the entry `name` of the working directory `dir`, whatever it is.
pub(super) fn remove(dir: RawFd, name: &CStr) -> Result<(), i32> {
    in_writable(dir, || tree::remove_entry(dir, name))
}

/// Makes the link `name` of the working directory the checkpoint's: left alone where it points
/// where the checkpoint's does and has its mtime, else replaced whole.
pub(super) fn restore_link(
    shared: &Shared,
    cdir: RawFd,
    wdir: RawFd,
    name: &CStr,
    rel: &Path,
    present: bool,
) -> Result<(), Fail> {
    if present {
        let same = (|| -> Result<bool, i32> {
            let (ours, theirs) = (sys::lstatat(wdir, name)?, sys::lstatat(cdir, name)?);
            if kind_of_mode(ours.st_mode) != Kind::Link
                || (ours.st_mtime, ours.st_mtime_nsec) != (theirs.st_mtime, theirs.st_mtime_nsec)
            {
                return Ok(false);
            }
            Ok(sys::readlinkat(wdir, name)? == sys::readlinkat(cdir, name)?)
        })();
        match same {
            Ok(true) => {
                shared.symlinks.fetch_add(1, Ordering::Relaxed);
                return Ok(());
            }
            Ok(false) | Err(libc::ENOENT) => {}
            Err(e) => return Err(Fail::new(e, "lstat", shared.dst(rel))),
        }
    }
    replace(shared, wdir, name, rel, |tmp| shared.copy_link_as(cdir, wdir, name, tmp, rel))
}

/// Puts a new entry in place of `name` in `wdir`: `make` writes it under a temporary name, which
/// is then renamed over the old entry (a directory is removed first: a rename cannot replace it).
fn replace(
    shared: &Shared,
    wdir: RawFd,
    name: &CStr,
    rel: &Path,
    mut make: impl FnMut(&CStr) -> Result<(), Fail>,
) -> Result<(), Fail> {
    let tmp = temporary();
    let mut made = make(&tmp);
    if let Err(f) = &made {
        let _ = sys::unlinkat(wdir, &tmp, 0);
        // A directory whose mode refuses a new entry: once more where it allows one.
        if f.errno == libc::EACCES && make_writable(wdir).is_ok() {
            made = make(&tmp);
        }
    }
    if let Err(f) = made {
        let _ = sys::unlinkat(wdir, &tmp, 0);
        return Err(f);
    }
    let renamed = match sys::renameat(wdir, &tmp, wdir, name) {
        Err(libc::EISDIR | libc::ENOTEMPTY | libc::EEXIST) => {
            remove(wdir, name).and_then(|()| sys::renameat(wdir, &tmp, wdir, name))
        }
        // Made nothing: the checkpoint's entry is no longer a file or link (see `copy_file_as`).
        Err(libc::ENOENT) => return Ok(()),
        other => other,
    };
    renamed.map_err(|e| {
        let _ = sys::unlinkat(wdir, &tmp, 0);
        Fail::new(e, "rename", shared.dst(rel))
    })
}

/// Makes the file of `f.job` in the working directory the checkpoint's: left alone where it is
/// already (the record vouches for it, or it agrees with the checkpoint's file on size, mode and
/// mtime and holds the same bytes, as a file an earlier restore copied back does), else copied
/// whole.
pub(super) fn restore_file(
    shared: &Shared,
    known: &record::Background,
    learning: &Learning,
    f: &FileJob,
    buf: &mut Vec<u8>,
) -> Result<(), Fail> {
    let job = &f.job;
    let (cdir, wdir) = (job.src_dir.as_raw_fd(), job.dst_dir.as_raw_fd());
    let ours = match f.present.then(|| sys::lstatat(wdir, &job.name)) {
        Some(Ok(st)) => Some(st),
        None | Some(Err(libc::ENOENT)) => None,
        Some(Err(e)) => return Err(Fail::new(e, "lstat", shared.dst(&job.rel))),
    };
    if let Some(st) = ours {
        let vouched = known
            .get()
            .entries
            .as_ref()
            .and_then(|k| k.get(job.rel.as_os_str().as_bytes()))
            .is_some_and(|e| e.matches(&st));
        // Whatever fails in the comparison, the copy that follows does again and reports.
        let same = vouched
            || sys::lstatat(cdir, &job.name).is_ok_and(|theirs| {
                let same = compare::same_outside(&st, &theirs)
                    && compare::same_content((wdir, &job.name, &st), (cdir, &job.name, &theirs), buf).unwrap_or(false);
                if same {
                    #[allow(clippy::unnecessary_cast)]
                    learning.note(&job.rel, &st, theirs.st_ino as u64);
                }
                same
            });
        if same {
            shared.files.fetch_add(1, Ordering::Relaxed);
            shared.bytes.fetch_add(st.st_size as u64, Ordering::Relaxed);
            shared.linked.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
    }
    replace(shared, wdir, &job.name, &job.rel, |tmp| shared.copy_file_as(job, tmp, buf).map(drop))
}
