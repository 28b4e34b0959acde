//! Whether two regular files hold the same bytes, holes included. A file a restore copied back
//! is a new inode that no record vouches for; without a look at its bytes every later capture and
//! restore would copy it again. Only files that already agree on size, mode and mtime are read.

use super::*;
use std::ffi::CStr;
use std::os::fd::{OwnedFd, RawFd};

/// Whether `a` and `b` (lstat results) agree on what a copy carries besides the bytes.
pub(super) fn same_outside(a: &libc::stat, b: &libc::stat) -> bool {
    let reg = |s: &libc::stat| s.st_mode & libc::S_IFMT == libc::S_IFREG;
    reg(a)
        && reg(b)
        && a.st_size == b.st_size
        && a.st_mode & 0o7777 == b.st_mode & 0o7777
        && (a.st_mtime, a.st_mtime_nsec) == (b.st_mtime, b.st_mtime_nsec)
}

fn open(dir: RawFd, name: &CStr, expect: &libc::stat) -> Result<Option<OwnedFd>, i32> {
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;
    let fd = match sys::openat(dir, name, flags, 0) {
        Ok(fd) => fd,
        Err(libc::ENOENT | libc::ELOOP) => return Ok(None),
        Err(e) => return Err(e),
    };
    let st = sys::fstat(fd.as_raw_fd())?;
    // Replaced since it was looked at: not the file compared.
    Ok((st.st_ino == expect.st_ino && st.st_dev == expect.st_dev).then_some(fd))
}

/// Where a file's data lies (Linux: `SEEK_DATA`/`SEEK_HOLE`); none where it cannot say.
#[cfg(target_os = "linux")]
fn data_map(fd: RawFd, size: i64) -> Option<Vec<(i64, i64)>> {
    let mut out = Vec::new();
    let mut pos = 0i64;
    while pos < size {
        // SAFETY: lseek on an open descriptor.
        let data = unsafe { libc::lseek(fd, pos, libc::SEEK_DATA) };
        if data < 0 {
            return (sys::errno() == libc::ENXIO).then_some(out);
        }
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(fd, data, libc::SEEK_HOLE) };
        if hole < 0 {
            return None;
        }
        out.push((data, hole));
        pos = hole;
    }
    Some(out)
}

#[cfg(not(target_os = "linux"))]
fn data_map(_: RawFd, _: i64) -> Option<Vec<(i64, i64)>> {
    None
}

#[allow(clippy::unnecessary_cast)]
fn sparse(st: &libc::stat) -> bool {
    (st.st_blocks as i64) * 512 < st.st_size as i64
}

/// Whether the file `a_name` in `a_dir` and `b_name` in `b_dir`, as `a` and `b` describe them
/// (see `same_outside`), hold the same bytes, with their holes in the same places where either
/// has any. `buf` is scratch space.
pub(super) fn same_content(
    (a_dir, a_name, a): (RawFd, &CStr, &libc::stat),
    (b_dir, b_name, b): (RawFd, &CStr, &libc::stat),
    buf: &mut Vec<u8>,
) -> Result<bool, i32> {
    let (Some(fa), Some(fb)) = (open(a_dir, a_name, a)?, open(b_dir, b_name, b)?) else { return Ok(false) };
    let size: i64 = a.st_size;
    if sparse(a) || sparse(b) {
        match (data_map(fa.as_raw_fd(), size), data_map(fb.as_raw_fd(), size)) {
            (Some(ma), Some(mb)) if ma == mb => {}
            _ => return Ok(false),
        }
    }
    const HALF: usize = 128 * 1024;
    if buf.len() < 2 * HALF {
        buf.resize(2 * HALF, 0);
    }
    let (ba, bb) = buf.split_at_mut(HALF);
    let mut off = 0i64;
    while off < size {
        let want = ((size - off) as usize).min(HALF);
        for (fd, b) in [(fa.as_raw_fd(), &mut ba[..want]), (fb.as_raw_fd(), &mut bb[..want])] {
            let mut got = 0;
            while got < want {
                // SAFETY: `b[got..]` is a live buffer of `want - got` bytes.
                let n = unsafe {
                    libc::pread(fd, b[got..].as_mut_ptr().cast(), want - got, (off + got as i64) as libc::off_t)
                };
                match n {
                    n if n > 0 => got += n as usize,
                    // Shorter than it said: it changed, so not the same.
                    0 => return Ok(false),
                    _ if sys::errno() == libc::EINTR => {}
                    _ => return Err(sys::errno()),
                }
            }
        }
        if ba[..want] != bb[..want] {
            return Ok(false);
        }
        off += want as i64;
    }
    Ok(true)
}
