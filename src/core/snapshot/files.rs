//! Copying one entry that is not a directory: a regular file's data, or a link as a link.

use super::copy::{kind_of_mode, Job, Kind, Shared};
use super::*;
use std::ffi::CStr;
use std::os::fd::{OwnedFd, RawFd};

impl Shared<'_> {
    pub(super) fn copy_link(&self, src_dir: RawFd, dst_dir: RawFd, name: &CStr, rel: &Path) -> Result<(), Fail> {
        let target = sys::readlinkat(src_dir, name).map_err(|e| Fail::new(e, "readlink", self.src(rel)))?;
        let st = sys::lstatat(src_dir, name).map_err(|e| Fail::new(e, "lstat", self.src(rel)))?;
        sys::symlinkat(&target, dst_dir, name).map_err(|e| Fail::new(e, "symlink", self.dst(rel)))?;
        // Some filesystems cannot time a link itself; the link is still a faithful copy.
        match sys::lutimensat(dst_dir, name, &st) {
            Ok(()) | Err(libc::EOPNOTSUPP) | Err(libc::ENOSYS) => {}
            Err(e) => return Err(Fail::new(e, "utimensat", self.dst(rel))),
        }
        self.symlinks.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    pub(super) fn copy_file(&self, job: &Job, buf: &mut Vec<u8>) -> Result<(), Fail> {
        let (sdir, ddir) = (job.src_dir.as_raw_fd(), job.dst_dir.as_raw_fd());
        // O_NONBLOCK: an entry that became a FIFO since it was listed must not block the open.
        let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;
        let src = match sys::openat(sdir, &job.name, flags, 0) {
            Ok(fd) => fd,
            Err(libc::ELOOP) => return self.copy_link(sdir, ddir, &job.name, &job.rel),
            Err(e) => return Err(Fail::new(e, "open", self.src(&job.rel))),
        };
        let st = sys::fstat(src.as_raw_fd()).map_err(|e| Fail::new(e, "fstat", self.src(&job.rel)))?;
        match kind_of_mode(st.st_mode) {
            Kind::File => {}
            Kind::Other(kind) => {
                self.skip(&job.rel, kind);
                return Ok(());
            }
            _ => return Err(Fail::new(libc::EISDIR, "open", self.src(&job.rel))),
        }
        let dflags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        let dst = sys::openat(ddir, &job.name, dflags, 0o600).map_err(|e| Fail::new(e, "open", self.dst(&job.rel)))?;
        let size = st.st_size as u64;
        if size > 0 {
            self.copy_data(&src, &dst, job, buf)?;
        }
        sys::fchmod(dst.as_raw_fd(), st.st_mode).map_err(|e| Fail::new(e, "fchmod", self.dst(&job.rel)))?;
        sys::futimens(dst.as_raw_fd(), &st).map_err(|e| Fail::new(e, "futimens", self.dst(&job.rel)))?;
        self.files.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(size, Ordering::Relaxed);
        Ok(())
    }

    fn copy_data(&self, src: &OwnedFd, dst: &OwnedFd, job: &Job, buf: &mut Vec<u8>) -> Result<(), Fail> {
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
            if self.try_range.load(Ordering::Relaxed) {
                let mut copied = 0u64;
                loop {
                    // SAFETY: both descriptors are open; null offsets use and advance the file positions.
                    let n =
                        unsafe { libc::copy_file_range(s, std::ptr::null_mut(), d, std::ptr::null_mut(), 1 << 30, 0) };
                    if n > 0 {
                        copied += n as u64;
                        continue;
                    }
                    if n == 0 {
                        return Ok(());
                    }
                    match sys::errno() {
                        libc::EINTR => continue,
                        libc::EXDEV | libc::ENOSYS | libc::EOPNOTSUPP | libc::EINVAL if copied == 0 => {
                            self.try_range.store(false, Ordering::Relaxed);
                            break;
                        }
                        e => return Err(Fail::new(e, "copy_file_range", self.dst(&job.rel))),
                    }
                }
            }
        }
        if buf.is_empty() {
            buf.resize(256 * 1024, 0);
        }
        loop {
            // SAFETY: `buf` is a live allocation of `buf.len()` bytes.
            let n = unsafe { libc::read(s, buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                match sys::errno() {
                    libc::EINTR => continue,
                    e => return Err(Fail::new(e, "read", self.src(&job.rel))),
                }
            }
            if n == 0 {
                return Ok(());
            }
            let mut off = 0usize;
            while off < n as usize {
                // SAFETY: `off..n` lies within what read just filled.
                let w = unsafe { libc::write(d, buf[off..].as_ptr().cast(), n as usize - off) };
                if w < 0 {
                    match sys::errno() {
                        libc::EINTR => continue,
                        e => return Err(Fail::new(e, "write", self.dst(&job.rel))),
                    }
                }
                off += w as usize;
            }
        }
    }
}
