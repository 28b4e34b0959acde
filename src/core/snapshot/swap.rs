//! Putting a finished capture in place of a checkpoint, with any number of captures and
//! restores of that name running at once: the capture is swapped in by one rename, and a lock
//! keeps the checkpoint it replaces from being removed while a restore still reads it.

use super::{sys, Fail};
use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The lock file of checkpoint `name`; no checkpoint name starts with a dot.
pub(super) fn lock_path(checkpoints: &Path, name: &str) -> PathBuf {
    checkpoints.join(format!(".lock-{name}"))
}

/// The lock of the working directory `wd` (device, inode) among the checkpoints it is captured
/// to: a restore in place holds it exclusively, a capture shared, so that two restores (a page's
/// button and an agent's tool, from two processes) take turns instead of mixing two checkpoints,
/// and no capture reads a working directory halfway through a restore. `@` is in no checkpoint
/// name, so this is no checkpoint's lock. Taken before any checkpoint's lock, by all alike.
fn workdir_lock_path(checkpoints: &Path, wd: (u64, u64)) -> PathBuf {
    checkpoints.join(format!(".lock@workdir-{}-{}", wd.0, wd.1))
}

/// The lock of working directory `wd` (see `workdir_lock_path`), exclusive for a restore in
/// place, shared for a capture; none for a working directory that could not be identified, or
/// where the checkpoints directory takes no lock file (read-only: nothing is captured there).
pub(super) fn lock_workdir(checkpoints: &Path, wd: Option<(u64, u64)>, exclusive: bool) -> Result<Option<Lock>, Fail> {
    let Some(wd) = wd else { return Ok(None) };
    let path = workdir_lock_path(checkpoints, wd);
    let op = if exclusive { libc::LOCK_EX } else { libc::LOCK_SH };
    Lock::where_possible(&path, op).map_err(|e| Fail::new(e.raw_os_error().unwrap_or(libc::EIO), "flock", path))
}

/// A lock on one checkpoint name (`flock` on `.lock-<name>`): captures hold it exclusively to
/// swap a copy in, restores hold it shared while they read. The file exists only while someone
/// holds it. Whoever can hold it exclusively as they let go removes it, and whoever takes it
/// checks that the file locked is still the one at the path (else takes it again), so a removal
/// never lets an exclusive holder in beside another holder.
pub(super) struct Lock {
    file: std::fs::File,
    path: PathBuf,
}

impl Lock {
    pub fn exclusive(path: &Path) -> std::io::Result<Lock> {
        Self::take(path, libc::LOCK_EX, true)
    }

    /// The shared lock, or none where this process can neither make the lock file nor find one
    /// (a read-only checkpoints directory, where none of its captures can run either).
    pub fn shared(path: &Path) -> std::io::Result<Option<Lock>> {
        Self::where_possible(path, libc::LOCK_SH)
    }

    fn where_possible(path: &Path, op: libc::c_int) -> std::io::Result<Option<Lock>> {
        match Self::take(path, op, true) {
            Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES | libc::EROFS | libc::EPERM)) => {
                match Self::take(path, op, false) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    other => other.map(Some),
                }
            }
            other => other.map(Some),
        }
    }

    fn take(path: &Path, op: libc::c_int, create: bool) -> std::io::Result<Lock> {
        loop {
            let file = std::fs::OpenOptions::new().read(true).write(create).create(create).mode(0o644).open(path)?;
            // SAFETY: flock on a descriptor `file` owns.
            while unsafe { libc::flock(file.as_raw_fd(), op) } != 0 {
                let e = sys::errno();
                if e != libc::EINTR {
                    return Err(std::io::Error::from_raw_os_error(e));
                }
            }
            let held = file.metadata()?;
            match std::fs::symlink_metadata(path) {
                Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => {
                    return Ok(Lock { file, path: path.to_path_buf() });
                }
                // Removed, or replaced, by its last holder while this one waited.
                _ => continue,
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Exclusive already, or now if nobody else holds it: nobody can be using the file.
        // SAFETY: flock on a descriptor `self.file` owns.
        if unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            let _ = std::fs::remove_file(&self.path);
        }
        // Closing the file lets go of the lock.
    }
}

fn c_path(p: &Path) -> Result<CString, Fail> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| Fail::new(libc::EINVAL, "rename", p))
}

/// `renameat2` on Linux, `renamex_np` on macOS: an exchange of two names, or a rename that
/// never replaces, each in one step.
#[cfg(any(target_os = "linux", target_os = "macos"))]
mod atomic {
    use super::*;
    #[cfg(target_os = "linux")]
    pub const EXCHANGE: libc::c_uint = libc::RENAME_EXCHANGE;
    #[cfg(target_os = "linux")]
    pub const NOREPLACE: libc::c_uint = libc::RENAME_NOREPLACE;
    #[cfg(target_os = "macos")]
    pub const EXCHANGE: libc::c_uint = libc::RENAME_SWAP;
    #[cfg(target_os = "macos")]
    pub const NOREPLACE: libc::c_uint = libc::RENAME_EXCL;

    pub fn rename(from: &CString, to: &CString, flags: libc::c_uint) -> Result<(), i32> {
        loop {
            // SAFETY: both are NUL-terminated paths that outlive the call.
            #[cfg(target_os = "linux")]
            let r = unsafe {
                libc::syscall(libc::SYS_renameat2, libc::AT_FDCWD, from.as_ptr(), libc::AT_FDCWD, to.as_ptr(), flags)
            };
            // SAFETY: as above.
            #[cfg(target_os = "macos")]
            let r = unsafe { libc::renamex_np(from.as_ptr(), to.as_ptr(), flags) };
            if r == 0 {
                return Ok(());
            }
            match sys::errno() {
                libc::EINTR => continue,
                e => return Err(e),
            }
        }
    }

    /// The filesystem or the kernel has no such rename (EXDEV: overlayfs, for a directory of a
    /// lower layer).
    pub fn unsupported(e: i32) -> bool {
        e == libc::EINVAL || e == libc::ENOSYS || e == libc::ENOTSUP || e == libc::EOPNOTSUPP || e == libc::EXDEV
    }
}

/// Makes `swap_in` take its fallback, so a test covers it where the one-step renames work.
#[cfg(test)]
pub(super) static TWO_RENAMES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn two_renames() -> bool {
    #[cfg(test)]
    return TWO_RENAMES.load(std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(test))]
    false
}

/// Puts the finished copy `tmp` at `target`, in one step where the system allows: the name is
/// never missing and never half there for a reader, and concurrent swaps each replace whole
/// checkpoints (the last one stays). Returns where the replaced checkpoint is now, to remove;
/// `backup` is that place for the fallback of two renames, used where neither `renameat2` nor
/// `renamex_np` works (and safe from this module's own captures by the lock).
pub(super) fn swap_in(tmp: &Path, target: &Path, backup: &Path) -> Result<Option<PathBuf>, Fail> {
    let (tmp_c, target_c) = (c_path(tmp)?, c_path(target)?);
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    if !two_renames() {
        // Other writers (Mastra's own captures, which take no lock) can make the name come and
        // go in between; each turn is one step, and a few are plenty.
        for _ in 0..100 {
            match atomic::rename(&tmp_c, &target_c, atomic::EXCHANGE) {
                Ok(()) => return Ok(Some(tmp.to_path_buf())),
                Err(libc::ENOENT) => {}
                Err(e) if atomic::unsupported(e) => break,
                Err(e) => return Err(Fail::new(e, "rename", tmp)),
            }
            match atomic::rename(&tmp_c, &target_c, atomic::NOREPLACE) {
                Ok(()) => return Ok(None),
                Err(libc::EEXIST) => {}
                Err(e) if atomic::unsupported(e) => break,
                Err(e) => return Err(Fail::new(e, "rename", tmp)),
            }
        }
    }
    let _ = (tmp_c, target_c);
    let moved = match std::fs::rename(target, backup) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(Fail::new(e.raw_os_error().unwrap_or(libc::EIO), "rename", target)),
    };
    if let Err(e) = std::fs::rename(tmp, target) {
        if moved {
            let _ = std::fs::rename(backup, target);
        }
        return Err(Fail::new(e.raw_os_error().unwrap_or(libc::EIO), "rename", tmp));
    }
    Ok(moved.then(|| backup.to_path_buf()))
}
