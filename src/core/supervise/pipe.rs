//! Non-blocking pipe ends driven by tokio's reactor, read and written with plain `read`/`write`
//! syscalls into caller-owned buffers (tokio's `ChildStdout` costs about 2.5× the CPU per byte of
//! a plain reader, measured; the child and the reader share two cores).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use tokio::io::unix::AsyncFd;

pub struct AsyncPipe {
    fd: AsyncFd<OwnedFd>,
    grown: bool,
}

/// One system call (`FIONBIO`), where `F_GETFL` + `F_SETFL` take two: it runs for every pipe of
/// every launch.
fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: ioctl on a descriptor we own, with a valid int.
    if unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONBIO as _, &on) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The default pipe buffer: a read this large found the pipe full.
const DEFAULT_PIPE: usize = 64 * 1024;

/// A larger pipe means fewer wake-ups per megabyte for a fast producer. Best effort.
#[cfg(target_os = "linux")]
fn grow(fd: &OwnedFd) {
    // SAFETY: fcntl on a descriptor we own; failure is harmless.
    unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, 1024 * 1024) };
}

#[cfg(not(target_os = "linux"))]
fn grow(_fd: &OwnedFd) {}

impl AsyncPipe {
    pub fn new(fd: OwnedFd) -> io::Result<Self> {
        set_nonblocking(&fd)?;
        // SAFETY: we own `fd` and it stays open as long as the registration (both live in `Self`).
        let fd = unsafe { AsyncFd::register(fd) }.map_err(io::Error::from)?;
        Ok(Self { fd, grown: false })
    }

    /// Reads what is there. The pipe is grown to 1 MiB the first time a read finds it full, so
    /// only a fast producer pays for the larger buffer (most children write a few lines and
    /// exit: for them it was a system call to set up and pages to free, per pipe).
    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut guard = self.fd.readable().await?;
            match guard.try_io(|inner| raw_read(inner.get_ref(), buf)) {
                Ok(r) => {
                    if !self.grown && matches!(r, Ok(n) if n >= DEFAULT_PIPE) {
                        self.grown = true;
                        grow(self.fd.get_ref());
                    }
                    return r;
                }
                Err(_would_block) => continue,
            }
        }
    }

    /// The descriptor, no longer watched by the runtime (to lend it to another reader).
    pub fn into_fd(self) -> OwnedFd {
        self.fd.into_inner()
    }

    /// Whether a read has found the pipe full (the producer floods).
    pub fn flooded(&self) -> bool {
        self.grown
    }

    /// Waits until a read would not block (data, EOF or an error) without reading. The readiness
    /// is kept, so the next `read` finds it at once.
    pub async fn readable(&self) -> io::Result<()> {
        self.fd.readable().await.map(drop)
    }

    /// One read without waiting: `WouldBlock` when nothing is buffered.
    pub fn read_now(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        raw_read(self.fd.get_ref(), buf)
    }

    /// Writes all of `data`. A terminal's master whose other side is gone reports itself
    /// writable while every write finds it full: that hang-up is an error here, not a retry
    /// without end (a loop that burnt a core and never settled).
    pub async fn write_all(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            let mut guard = self.fd.writable().await?;
            match guard.try_io(|inner| raw_write(inner.get_ref(), data)) {
                Ok(Ok(n)) => data = &data[n..],
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => {
                    if hung_up(self.fd.get_ref()) {
                        return Err(io::Error::from_raw_os_error(libc::EIO));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Whether the other side of `fd` is gone (`POLLHUP` or `POLLERR`), asked without waiting.
fn hung_up(fd: &OwnedFd) -> bool {
    let mut p = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
    // SAFETY: one valid pollfd, a zero timeout.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n > 0 && p.revents & (libc::POLLHUP | libc::POLLERR) != 0
}

fn raw_read(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: buf is valid for buf.len() bytes.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn raw_write(fd: &OwnedFd, data: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: data is valid for data.len() bytes.
        let n = unsafe { libc::write(fd.as_raw_fd(), data.as_ptr().cast(), data.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}
