//! The pseudo-terminal of a child on a terminal: a pair opened and sized before the spawn (the
//! child gets the slave as its stdio and controlling terminal), and the window size set again
//! through the master when the terminal is resized.

use crate::core::launch::command::Pty;
use std::os::fd::{FromRawFd, OwnedFd};

/// A pseudo-terminal pair, both ends close-on-exec (the child gets the slave by `dup2`), the
/// slave not yet anybody's controlling terminal, the window size already set.
pub(crate) fn open_pty(size: &Pty) -> std::io::Result<(OwnedFd, OwnedFd)> {
    let last = std::io::Error::last_os_error;
    // SAFETY: plain system calls on descriptors we own; `name` outlives the calls that use it.
    unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if m < 0 {
            return Err(last());
        }
        let master = OwnedFd::from_raw_fd(m);
        // Some platforms ignore O_CLOEXEC here; a master inherited by a child would keep the
        // terminal from hanging up when the session ends.
        libc::fcntl(m, libc::F_SETFD, libc::FD_CLOEXEC);
        if libc::grantpt(m) != 0 || libc::unlockpt(m) != 0 {
            return Err(last());
        }
        let name = slave_name(m)?;
        let s = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if s < 0 {
            return Err(last());
        }
        let slave = OwnedFd::from_raw_fd(s);
        set_window_size(&master, size.cols, size.rows)?;
        Ok((master, slave))
    }
}

#[cfg(target_os = "linux")]
fn slave_name(master: libc::c_int) -> std::io::Result<std::ffi::CString> {
    let mut buf = [0 as libc::c_char; 128];
    // SAFETY: buf is valid for its length; ptsname_r NUL-terminates on success.
    if unsafe { libc::ptsname_r(master, buf.as_mut_ptr(), buf.len()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: NUL-terminated by ptsname_r.
    Ok(unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_owned())
}

#[cfg(not(target_os = "linux"))]
fn slave_name(master: libc::c_int) -> std::io::Result<std::ffi::CString> {
    // TIOCPTYGNAME: the thread-safe ptsname of macOS (128 bytes).
    let mut buf = [0 as libc::c_char; 128];
    // SAFETY: buf is the 128 bytes the ioctl fills, NUL-terminated.
    if unsafe { libc::ioctl(master, libc::TIOCPTYGNAME as _, buf.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: NUL-terminated by the ioctl.
    Ok(unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_owned())
}

/// TIOCSWINSZ on a terminal's master: the kernel sends SIGWINCH to its foreground group.
pub(crate) fn set_window_size(master: &OwnedFd, cols: u16, rows: u16) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let ws = libc::winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: ioctl with a valid winsize on a descriptor we own.
    if unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ as _, &ws) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
