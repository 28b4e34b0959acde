//! Copying one entry that is not a directory: a regular file's data, or a link as a link.

use super::compare;
use super::copy::{kind_of_mode, Job, Kind, Shared};
use super::*;
use std::ffi::CStr;
use std::os::fd::{OwnedFd, RawFd};

impl Shared<'_> {
    pub(super) fn copy_link(&self, src_dir: RawFd, dst_dir: RawFd, name: &CStr, rel: &Path) -> Result<(), Fail> {
        self.copy_link_as(src_dir, dst_dir, name, name, rel)
    }

    /// Copies the link `name` as `dst_name`, which must not exist.
    pub(super) fn copy_link_as(
        &self,
        src_dir: RawFd,
        dst_dir: RawFd,
        name: &CStr,
        dst_name: &CStr,
        rel: &Path,
    ) -> Result<(), Fail> {
        let read = sys::readlinkat(src_dir, name).and_then(|t| Ok((t, sys::lstatat(src_dir, name)?)));
        let (target, st) = match read {
            Ok(read) => read,
            Err(e) if self.vanished(rel, e) => return Ok(()),
            Err(e) => return Err(Fail::new(e, "readlink", self.src(rel))),
        };
        sys::symlinkat(&target, dst_dir, dst_name).map_err(|e| Fail::new(e, "symlink", self.dst(rel)))?;
        // Some filesystems cannot time a link itself; the link is still a faithful copy.
        match sys::lutimensat(dst_dir, dst_name, &st) {
            Ok(()) | Err(libc::EOPNOTSUPP) | Err(libc::ENOSYS) => {}
            Err(e) => return Err(Fail::new(e, "utimensat", self.dst(rel))),
        }
        self.symlinks.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Links the file from the previous capture when that capture holds the same file: when its
    /// record says the working file is the very one captured then, unchanged since, or else when
    /// the two agree on size, mode and mtime and hold the same bytes (a file a restore copied back
    /// is a new inode no record knows). True when it linked. The link is checked to be the inode
    /// expected, so a checkpoint file put in place by anyone else is never taken.
    fn link_unchanged(&self, job: &Job, buf: &mut Vec<u8>) -> bool {
        let Some(base_dir) = &job.base_dir else { return false };
        let (sdir, ddir, bdir) = (job.src_dir.as_raw_fd(), job.dst_dir.as_raw_fd(), base_dir.as_raw_fd());
        // Whatever fails here, the copy that follows does again and reports.
        let Ok(st) = sys::lstatat(sdir, &job.name) else { return false };
        let vouched = self.base.and_then(|b| b.get(job.rel.as_os_str().as_bytes())).filter(|e| e.matches(&st));
        #[allow(clippy::unnecessary_cast)]
        let stored = match vouched {
            Some(e) => e.stored,
            None => match sys::lstatat(bdir, &job.name) {
                Ok(theirs)
                    if compare::same_outside(&st, &theirs)
                        && compare::same_content((sdir, &job.name, &st), (bdir, &job.name, &theirs), buf)
                            .unwrap_or(false) =>
                {
                    theirs.st_ino as u64
                }
                _ => return false,
            },
        };
        if sys::linkat(bdir, &job.name, ddir, &job.name).is_err() {
            return false;
        }
        #[allow(clippy::unnecessary_cast)]
        match sys::lstatat(ddir, &job.name) {
            Ok(l) if l.st_ino as u64 == stored && l.st_size == st.st_size => {}
            _ => {
                let _ = sys::unlinkat(ddir, &job.name, 0);
                return false;
            }
        }
        self.files.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(st.st_size as u64, Ordering::Relaxed);
        self.linked.fetch_add(1, Ordering::Relaxed);
        match (vouched, &self.record) {
            (Some(e), Some((entries, _))) => {
                let key = job.rel.as_os_str().as_bytes().to_vec();
                entries.lock().unwrap_or_else(|e| e.into_inner()).push((key, *e));
            }
            // Vouched for from now on only once its last change is old enough (see `note`).
            (None, _) => self.note(&job.rel, &st, stored),
            (Some(_), None) => {}
        }
        true
    }

    pub(super) fn copy_file(&self, job: &Job, buf: &mut Vec<u8>) -> Result<(), Fail> {
        if self.link_unchanged(job, buf) {
            return Ok(());
        }
        self.copy_file_as(job, &job.name, buf).map(drop)
    }

    /// Copies the regular file `job.name` to `dst_name` in the job's destination directory, which
    /// must not exist; returns the source's state as it was read, or none where it was no
    /// longer a regular file (copied as the link it became, or skipped).
    pub(super) fn copy_file_as(
        &self,
        job: &Job,
        dst_name: &CStr,
        buf: &mut Vec<u8>,
    ) -> Result<Option<libc::stat>, Fail> {
        let (sdir, ddir) = (job.src_dir.as_raw_fd(), job.dst_dir.as_raw_fd());
        // O_NONBLOCK: an entry that became a FIFO since it was listed must not block the open.
        let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;
        let src = match sys::openat(sdir, &job.name, flags, 0) {
            Ok(fd) => fd,
            Err(libc::ELOOP) => return self.copy_link_as(sdir, ddir, &job.name, dst_name, &job.rel).map(|()| None),
            Err(e) if self.vanished(&job.rel, e) => return Ok(None),
            Err(e) => return Err(Fail::new(e, "open", self.src(&job.rel))),
        };
        let st = sys::fstat(src.as_raw_fd()).map_err(|e| Fail::new(e, "fstat", self.src(&job.rel)))?;
        match kind_of_mode(st.st_mode) {
            Kind::File => {}
            Kind::Other(kind) => {
                self.skip(&job.rel, kind);
                return Ok(None);
            }
            _ => return Err(Fail::new(libc::EISDIR, "open", self.src(&job.rel))),
        }
        let dflags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        let dst = sys::openat(ddir, dst_name, dflags, 0o600).map_err(|e| Fail::new(e, "open", self.dst(&job.rel)))?;
        let size = st.st_size as u64;
        if size > 0 {
            self.copy_data(&src, &dst, &st, job, buf)?;
        }
        sys::fchmod(dst.as_raw_fd(), st.st_mode).map_err(|e| Fail::new(e, "fchmod", self.dst(&job.rel)))?;
        sys::futimens(dst.as_raw_fd(), &st).map_err(|e| Fail::new(e, "futimens", self.dst(&job.rel)))?;
        if self.record.is_some() {
            let made = sys::fstat(dst.as_raw_fd()).map_err(|e| Fail::new(e, "fstat", self.dst(&job.rel)))?;
            #[allow(clippy::unnecessary_cast)]
            self.note(&job.rel, &st, made.st_ino as u64);
        }
        self.files.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(size, Ordering::Relaxed);
        Ok(Some(st))
    }

    fn copy_data(
        &self,
        src: &OwnedFd,
        dst: &OwnedFd,
        st: &libc::stat,
        job: &Job,
        buf: &mut Vec<u8>,
    ) -> Result<(), Fail> {
        let (s, d) = (src.as_raw_fd(), dst.as_raw_fd());
        #[cfg(target_os = "linux")]
        {
            if self.try_clone.load(Ordering::Relaxed) {
                // SAFETY: both descriptors are open; FICLONE reads an int argument.
                if unsafe { libc::ioctl(d, libc::FICLONE, s) } == 0 {
                    self.reflinked.fetch_add(1, Ordering::Relaxed);
                    return Ok(());
                }
                // A refusal that is about the filesystem (not this file) will repeat for every
                // file; anything else falls through to a copy, which reports a real error itself.
                if matches!(sys::errno(), libc::EOPNOTSUPP | libc::EXDEV | libc::EINVAL | libc::ENOTTY | libc::ENOSYS) {
                    self.try_clone.store(false, Ordering::Relaxed);
                }
            }
            // Fewer blocks than bytes: a file with holes, which a plain copy (copy_file_range
            // included) would fill with allocated zeros.
            #[allow(clippy::unnecessary_cast)]
            if (st.st_blocks as i64) * 512 < st.st_size as i64 && self.copy_sparse(s, d, st.st_size as i64, job, buf)? {
                return Ok(());
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = st;
        self.copy_range(s, d, 0, None, job, buf)
    }

    /// Copies only the data of a file with holes (SEEK_DATA, SEEK_HOLE), so its holes stay
    /// holes; false, with nothing written, where the filesystem cannot tell them apart.
    #[cfg(target_os = "linux")]
    fn copy_sparse(&self, s: RawFd, d: RawFd, size: i64, job: &Job, buf: &mut Vec<u8>) -> Result<bool, Fail> {
        let mut pos = 0i64;
        while pos < size {
            // SAFETY: lseek on an open descriptor.
            let data = unsafe { libc::lseek(s, pos, libc::SEEK_DATA) };
            if data < 0 {
                match sys::errno() {
                    // No data after `pos`: the rest is a hole.
                    libc::ENXIO => break,
                    libc::EINVAL | libc::EOPNOTSUPP if pos == 0 => return Ok(false),
                    e => return Err(Fail::new(e, "lseek", self.src(&job.rel))),
                }
            }
            // SAFETY: as above.
            let hole = unsafe { libc::lseek(s, data, libc::SEEK_HOLE) };
            if hole < 0 {
                match sys::errno() {
                    // Truncated since: nothing more to copy.
                    libc::ENXIO => break,
                    e => return Err(Fail::new(e, "lseek", self.src(&job.rel))),
                }
            }
            self.copy_range(s, d, data, Some(hole), job, buf)?;
            pos = hole;
        }
        // The size, with the trailing hole no write made.
        let end = size.max(pos);
        // SAFETY: ftruncate on an open descriptor.
        if unsafe { libc::ftruncate(d, end) } != 0 {
            return Err(Fail::new(sys::errno(), "ftruncate", self.dst(&job.rel)));
        }
        Ok(true)
    }

    /// Copies the bytes `from..to` (to the end of the file without `to`) to the same offsets:
    /// in the kernel where it can, otherwise through `buf`.
    fn copy_range(
        &self,
        s: RawFd,
        d: RawFd,
        from: i64,
        to: Option<i64>,
        job: &Job,
        buf: &mut Vec<u8>,
    ) -> Result<(), Fail> {
        let left = |off: i64| to.map_or(usize::MAX, |t| (t - off).max(0) as usize);
        let mut off = from;
        #[cfg(target_os = "linux")]
        if self.try_range.load(Ordering::Relaxed) {
            loop {
                let want = left(off).min(1 << 30);
                if want == 0 {
                    return Ok(());
                }
                let (mut at_in, mut at_out) = (off as libc::loff_t, off as libc::loff_t);
                // SAFETY: both descriptors are open; the offsets are ours and not the files'.
                let n = unsafe { libc::copy_file_range(s, &mut at_in, d, &mut at_out, want, 0) };
                if n > 0 {
                    off += n as i64;
                    self.new_bytes.fetch_add(n as u64, Ordering::Relaxed);
                    continue;
                }
                if n == 0 {
                    return Ok(());
                }
                match sys::errno() {
                    libc::EINTR => continue,
                    libc::EXDEV | libc::ENOSYS | libc::EOPNOTSUPP | libc::EINVAL if off == from => {
                        self.try_range.store(false, Ordering::Relaxed);
                        break;
                    }
                    e => return Err(Fail::new(e, "copy_file_range", self.dst(&job.rel))),
                }
            }
        }
        if buf.is_empty() {
            buf.resize(256 * 1024, 0);
        }
        loop {
            let want = left(off).min(buf.len());
            if want == 0 {
                return Ok(());
            }
            // SAFETY: `buf` is a live allocation of at least `want` bytes.
            let n = unsafe { libc::pread(s, buf.as_mut_ptr().cast(), want, off as libc::off_t) };
            if n < 0 {
                match sys::errno() {
                    libc::EINTR => continue,
                    e => return Err(Fail::new(e, "read", self.src(&job.rel))),
                }
            }
            if n == 0 {
                return Ok(());
            }
            let mut done = 0usize;
            while done < n as usize {
                // SAFETY: `done..n` lies within what pread just filled.
                let w = unsafe {
                    libc::pwrite(d, buf[done..].as_ptr().cast(), n as usize - done, (off + done as i64) as libc::off_t)
                };
                if w < 0 {
                    match sys::errno() {
                        libc::EINTR => continue,
                        e => return Err(Fail::new(e, "write", self.dst(&job.rel))),
                    }
                }
                done += w as usize;
            }
            off += n as i64;
            self.new_bytes.fetch_add(n as u64, Ordering::Relaxed);
        }
    }
}
