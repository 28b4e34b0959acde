//! The few system calls the copier makes, each retried on EINTR, each returning the errno.
use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

fn retry<T: Copy + PartialOrd + Default>(mut f: impl FnMut() -> T) -> Result<T, i32> {
    loop {
        let r = f();
        if r >= T::default() {
            return Ok(r);
        }
        let e = errno();
        if e != libc::EINTR {
            return Err(e);
        }
    }
}

pub fn openat(dir: RawFd, name: &CStr, flags: libc::c_int, mode: libc::mode_t) -> Result<OwnedFd, i32> {
    let fd = retry(|| unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC, mode as libc::c_uint) })?;
    // SAFETY: a descriptor openat just returned, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub fn open_dir(dir: RawFd, name: &CStr) -> Result<OwnedFd, i32> {
    openat(dir, name, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW, 0)
}

pub fn fstat(fd: RawFd) -> Result<libc::stat, i32> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    retry(|| unsafe { libc::fstat(fd, st.as_mut_ptr()) })?;
    // SAFETY: fstat succeeded, so it filled the struct.
    Ok(unsafe { st.assume_init() })
}

pub fn lstatat(dir: RawFd, name: &CStr) -> Result<libc::stat, i32> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    retry(|| unsafe { libc::fstatat(dir, name.as_ptr(), st.as_mut_ptr(), libc::AT_SYMLINK_NOFOLLOW) })?;
    // SAFETY: fstatat succeeded, so it filled the struct.
    Ok(unsafe { st.assume_init() })
}

pub fn mkdirat(dir: RawFd, name: &CStr, mode: libc::mode_t) -> Result<(), i32> {
    retry(|| unsafe { libc::mkdirat(dir, name.as_ptr(), mode) }).map(drop)
}

pub fn readlinkat(dir: RawFd, name: &CStr) -> Result<CString, i32> {
    let mut buf = vec![0u8; 256];
    loop {
        let n = retry(|| unsafe { libc::readlinkat(dir, name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) })?;
        let n = n as usize;
        if n < buf.len() {
            buf.truncate(n);
            return CString::new(buf).map_err(|_| libc::EINVAL);
        }
        buf.resize(buf.len() * 4, 0);
    }
}

pub fn symlinkat(target: &CStr, dir: RawFd, name: &CStr) -> Result<(), i32> {
    retry(|| unsafe { libc::symlinkat(target.as_ptr(), dir, name.as_ptr()) }).map(drop)
}

pub fn times(st: &libc::stat) -> [libc::timespec; 2] {
    [
        libc::timespec { tv_sec: st.st_atime, tv_nsec: st.st_atime_nsec as _ },
        libc::timespec { tv_sec: st.st_mtime, tv_nsec: st.st_mtime_nsec as _ },
    ]
}

pub fn futimens(fd: RawFd, st: &libc::stat) -> Result<(), i32> {
    let t = times(st);
    retry(|| unsafe { libc::futimens(fd, t.as_ptr()) }).map(drop)
}

pub fn lutimensat(dir: RawFd, name: &CStr, st: &libc::stat) -> Result<(), i32> {
    let t = times(st);
    retry(|| unsafe { libc::utimensat(dir, name.as_ptr(), t.as_ptr(), libc::AT_SYMLINK_NOFOLLOW) }).map(drop)
}

pub fn fchmod(fd: RawFd, mode: libc::mode_t) -> Result<(), i32> {
    retry(|| unsafe { libc::fchmod(fd, mode & 0o7777) }).map(drop)
}

/// chmod of the directory `name` in `dir`, never through a link.
#[cfg(target_os = "linux")]
pub fn chmod_dir_nofollow(dir: RawFd, name: &CStr, mode: libc::mode_t) -> Result<(), i32> {
    // Linux cannot chmod without following a link (fchmodat2 aside, 6.6+), and a directory
    // without permissions cannot be opened to fchmod; an O_PATH descriptor names the very
    // directory, and its /proc link reaches it.
    let fd = openat(dir, name, libc::O_PATH | libc::O_NOFOLLOW | libc::O_DIRECTORY, 0)?;
    let proc = CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).map_err(|_| libc::EINVAL)?;
    retry(|| unsafe { libc::chmod(proc.as_ptr(), mode) }).map(drop)
}

/// chmod of the directory `name` in `dir`, never through a link.
#[cfg(not(target_os = "linux"))]
pub fn chmod_dir_nofollow(dir: RawFd, name: &CStr, mode: libc::mode_t) -> Result<(), i32> {
    retry(|| unsafe { libc::fchmodat(dir, name.as_ptr(), mode, libc::AT_SYMLINK_NOFOLLOW) }).map(drop)
}

/// A hard link `to` in `to_dir` of `from` in `from_dir`, never following a link.
pub fn linkat(from_dir: RawFd, from: &CStr, to_dir: RawFd, to: &CStr) -> Result<(), i32> {
    retry(|| unsafe { libc::linkat(from_dir, from.as_ptr(), to_dir, to.as_ptr(), 0) }).map(drop)
}

pub fn renameat(from_dir: RawFd, from: &CStr, to_dir: RawFd, to: &CStr) -> Result<(), i32> {
    retry(|| unsafe { libc::renameat(from_dir, from.as_ptr(), to_dir, to.as_ptr()) }).map(drop)
}

pub fn dup(fd: RawFd) -> Result<OwnedFd, i32> {
    let fd = retry(|| unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) })?;
    // SAFETY: a descriptor fcntl just returned, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub fn unlinkat(dir: RawFd, name: &CStr, flags: libc::c_int) -> Result<(), i32> {
    retry(|| unsafe { libc::unlinkat(dir, name.as_ptr(), flags) }).map(drop)
}

/// The names in a directory (without `.` and `..`) and their `d_type`.
/// The entries of directory `dir` but `.` and `..`, with their `d_type`, read from its start.
/// On Linux with `getdents64` on the descriptor itself: a seek and one call per 32 KiB of
/// entries, where the directory stream cost four calls more per directory (a duplicate, two
/// `fcntl`, a rewind, a close) across a walk's thousands of directories.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn entries(dir: &OwnedFd) -> Result<Vec<(CString, u8)>, i32> {
    let fd = dir.as_raw_fd();
    retry(|| unsafe { libc::lseek(fd, 0, libc::SEEK_SET) })?;
    // 8-aligned, as the kernel writes `linux_dirent64` records; not zeroed (32 KiB per
    // directory, a walk lists thousands): only what the kernel wrote is read.
    let mut buf: Vec<u64> = Vec::with_capacity(4096);
    let mut out = Vec::new();
    loop {
        // SAFETY: the kernel writes at most `len` bytes into `buf`.
        let n = retry(|| unsafe {
            libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.capacity() * std::mem::size_of::<u64>())
        })? as usize;
        if n == 0 {
            return Ok(out);
        }
        // SAFETY: the first `n` bytes of `buf` were written by the kernel just now.
        let bytes = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n) };
        let mut at = 0;
        // Each record: inode (8), offset (8), its length (2), d_type (1), the NUL-terminated name.
        while at < n {
            let len = bytes.get(at + 16..at + 18).map_or(0, |l| u16::from_ne_bytes([l[0], l[1]]) as usize);
            let Some(rec) = bytes.get(at..at + len).filter(|_| len > 19) else {
                return Err(libc::EIO);
            };
            let name = &rec[19..];
            let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
            if name != b"." && name != b".." {
                out.push((CString::new(name).map_err(|_| libc::EIO)?, rec[18]));
            }
            at += len;
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn entries(dir: &OwnedFd) -> Result<Vec<(CString, u8)>, i32> {
    // fdopendir takes the descriptor it is given, and a duplicate shares the file offset, so
    // the stream is rewound before reading.
    let dup = retry(|| unsafe { libc::fcntl(dir.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) })?;
    let stream = unsafe { libc::fdopendir(dup) };
    if stream.is_null() {
        let e = errno();
        // SAFETY: fdopendir failed, so the duplicate is still ours to close.
        drop(unsafe { OwnedFd::from_raw_fd(dup) });
        return Err(e);
    }
    unsafe { libc::rewinddir(stream) };
    let mut out = Vec::new();
    let result = loop {
        nix::errno::Errno::clear();
        // SAFETY: a stream fdopendir returned, read by this thread only.
        let ent = unsafe { libc::readdir(stream) };
        if ent.is_null() {
            let e = nix::errno::Errno::last_raw();
            break if e == 0 { Ok(()) } else { Err(e) };
        }
        // SAFETY: readdir returned an entry whose name is NUL-terminated.
        let (name, kind) = unsafe { (CStr::from_ptr((*ent).d_name.as_ptr()), (*ent).d_type) };
        let bytes = name.to_bytes();
        if bytes != b"." && bytes != b".." {
            out.push((name.to_owned(), kind));
        }
    };
    unsafe { libc::closedir(stream) };
    result.map(|()| out)
}
